"""The one jit decorator of the compiled core, and what the core needs of Numba around it.

``cache=True`` so compilation is paid once per machine; ``nogil`` so worker threads can share a
process when a caller wants that. Everything in the hot core uses ``@njit`` from here, so
``NUMBA_DISABLE_JIT=1`` turns the whole core into plain Python for parity tests.

Importing this module also makes Numba's inlining (``inline="always"``) copy a function's IR in
time linear in its size (``linear_inline_copy``), files the compile cache of the packages' code
under relative paths and source digests (``ProjectCacheLocator``), so clones and worktrees of
the same code share it, makes processes compiling at once safe for it (``locked_cache_saves``),
and ``has_cached_code`` tells whether a compiled function would load from the compile cache
rather than compile.
"""

import contextlib
import inspect
import os
import sys
import textwrap
from pathlib import Path

import numba
from numba.core import caching

# The keys (sim.core.cache_keys: part of every key, so editing it recompiles everything).
from sim.core.cache_keys import _prune_stale_caches, cache_key


def njit(*args, **kwargs):
    # "_nrt" explicit: a function left without it inherits the flag of whichever function
    # compiles it first (Numba's inherit_if_not_set), so one called first from code compiled
    # _nrt=False would compile without reference counts too, and fail to if it allocates.
    options = {"cache": True, "nogil": True, "_nrt": True}
    options.update(kwargs)
    if args and callable(args[0]):
        return numba.njit(**options)(args[0])
    return numba.njit(*args, **options)


# Interpreted (NUMBA_DISABLE_JIT=1), a C function's "address" is a key into this table of the
# Python functions (strategies.neom.pointer.call_strategy looks them up).
INTERPRETED_CFUNCS: dict[int, object] = {}


class LazyCFunc:
    """A C function of one signature (``numba.cfunc``), compiled (or loaded from the compile
    cache) on first use of ``address``, not when its module is imported, so that
    ``has_cached_code`` can ask about it without compiling it."""

    def __init__(self, py_func, signature, options):
        self.py_func = py_func
        self.signature = signature
        self.options = options
        self._compiled = None
        self.__doc__ = py_func.__doc__

    def compile(self):
        """The compiled ``numba.cfunc`` (compiled or loaded the first time)."""
        if self._compiled is None:
            self._compiled = numba.cfunc(self.signature, **self.options)(self.py_func)
        return self._compiled

    @property
    def cache_hits(self) -> int:
        """1 when this process loaded it from the compile cache, else 0."""
        return 0 if self._compiled is None else self._compiled.cache_hits

    @property
    def cache_misses(self) -> int:
        """1 when this process compiled it, else 0."""
        return 0 if self._compiled is None else 1 - self._compiled.cache_hits

    @property
    def address(self) -> int:
        if numba.config.DISABLE_JIT:
            return self._interpreted_key()
        return self.compile().address

    def _interpreted_key(self) -> int:
        for key, func in INTERPRETED_CFUNCS.items():
            if func is self.py_func:
                return key
        key = len(INTERPRETED_CFUNCS) + 1
        INTERPRETED_CFUNCS[key] = self.py_func
        return key

    def is_cached(self) -> bool:
        """Compiled in this process, or in the compile cache for the current sources."""
        if numba.config.DISABLE_JIT or self._compiled is not None:
            return True
        from numba.core.registry import cpu_target

        try:
            index = caching.FunctionCache(self.py_func)._cache_file._load_index()
        except (AttributeError, OSError, EOFError, ValueError, RuntimeError):
            return False
        target = cpu_target.target_context.codegen().magic_tuple()
        return any(key[1] == target for key in index)


def cfunc(signature, **kwargs):
    """A C function of ``signature`` (``LazyCFunc``), with the options of ``njit`` (cached;
    ``_nrt`` explicit, default True); ``.address`` is what a compiled caller calls.
    Interpreted, ``.address`` is a key of ``INTERPRETED_CFUNCS``."""
    options = {"cache": True, "nogil": True, "_nrt": True}
    options.update(kwargs)
    return lambda func: LazyCFunc(func, signature, options)


# Numba inlines a function (inline="always") by copying its IR, one block at a time, each
# block with a fresh deep-copy memo: every block copies the function's whole scope (all its
# variables) again, so a copy costs blocks x variables, and the nested inlining of the game
# loop and the strategies spent about a third of the cold compile in these copies. Copying the
# blocks with one shared memo gives the same IR (tested: byte-identical LLVM) in linear time.
_COPY_ONE_BLOCK = "new_block = copy.deepcopy(the_ir.blocks[block_label])"
_COPY_SHARED = "new_block = copy.deepcopy(the_ir.blocks[block_label], memo)"
_NEW_BLOCKS = "kernel_copy.blocks = {}"


def linear_inline_copy() -> bool:
    """Patch Numba's ``InlineWorker.inline_ir`` to copy a callee's blocks with one deep-copy
    memo. Returns whether the patch is in place; a Numba whose code differs from the expected
    one is left alone (it then only compiles slower)."""
    from numba.core import inline_closurecall

    worker = inline_closurecall.InlineWorker
    if getattr(worker.inline_ir, "_linear_copy", False):
        return True
    try:
        source = textwrap.dedent(inspect.getsource(worker.inline_ir))
    except (OSError, TypeError):
        return False
    if source.count(_COPY_ONE_BLOCK) != 1 or source.count(_NEW_BLOCKS) != 1:
        return False
    indent = source.split(_NEW_BLOCKS)[0].rsplit("\n", 1)[1]
    source = source.replace(_COPY_ONE_BLOCK, _COPY_SHARED).replace(
        _NEW_BLOCKS, f"{_NEW_BLOCKS}\n{indent}memo = {{}}"
    )
    namespace = {}
    code = compile(source, inline_closurecall.__file__, "exec")
    exec(code, vars(inline_closurecall), namespace)
    patched = namespace["inline_ir"]
    patched._linear_copy = True
    worker.inline_ir = patched
    return True


LINEAR_INLINE_COPY = linear_inline_copy()


class ProjectCacheLocator(caching._CacheLocator):
    """Files a compiled function of the packages (``sim``, ``strategies``) under
    ``<cache base>/<its file's relative folder>/<file stem>-<digest>/``, stamped with that digest
    (``sim.cache_key``: its module's sources and every package module it imports). Numba's own
    locators name the folder after a hash of the file's absolute path, so a second clone or a
    worktree compiled everything again; and they stamp it with the file's content only, so an
    edit in an imported module ran stale code. Files elsewhere: Numba's own locators."""

    _touched: set[str] = set()  # folders whose last use this process has marked

    def __init__(self, py_func, py_file, folder: str, stamp: str):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = folder
        self._stamp = stamp

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return self._stamp

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        base = os.environ.get("NEOM_NUMBA_CACHE_BASE")
        module = sys.modules.get(getattr(py_func, "__module__", None) or "")
        own_globals = module is not None and py_func.__globals__ is vars(module)
        key = cache_key(py_file, own_globals) if base else None
        if key is None:
            return None
        relative, stamp = key
        self = cls(py_func, py_file, os.path.join(base, relative), stamp)
        try:
            self.ensure_cache_path()
        except OSError:
            return None
        self._mark_used()
        return self

    def _mark_used(self) -> None:
        """Mark the folder used now and delete its module's folders of older source versions
        but the few most recently used (``sim._prune_stale_caches``), once per process."""
        if self._cache_path in self._touched:
            return
        self._touched.add(self._cache_path)
        folder = Path(self._cache_path)
        with contextlib.suppress(OSError):
            os.utime(folder)
        prefix = folder.name[: -len(self._stamp)]
        _prune_stale_caches(folder.parent, folder.name, prefix=prefix)


def _install_locator() -> bool:
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    if ProjectCacheLocator not in impl._locator_classes:
        impl._locator_classes.insert(0, ProjectCacheLocator)
    return impl._locator_classes[0] is ProjectCacheLocator


PROJECT_CACHE_LOCATOR = _install_locator()


def locked_cache_saves() -> bool:
    """Make Numba's cache index updates hold a lock on the index (``fcntl``): a save reads the
    index, adds its entry under the first free data-file number and writes both back, so two
    processes saving different signatures of one function at once could each write entry 1,
    and one index would then name the other's code. With the lock they take turns. Returns
    whether the lock is in place (not where ``fcntl`` is missing: compile there one process
    at a time)."""
    try:
        import fcntl
    except ImportError:
        return False
    save = caching.IndexDataCacheFile.save
    if getattr(save, "_locked", False):
        return True

    def locked_save(self, key, data):
        with open(self._index_path + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return save(self, key, data)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    locked_save._locked = True
    caching.IndexDataCacheFile.save = locked_save
    return True


LOCKED_CACHE_SAVES = locked_cache_saves()


def has_cached_code(dispatcher) -> bool:
    """Whether ``dispatcher`` has compiled code for this machine, in this process or in
    Numba's compile cache for the current sources (``ProjectCacheLocator`` keys its entries
    on them), for any argument types: a command that always calls it with the same
    types would load rather than compile. Never compiles anything. A C function
    (``LazyCFunc``) likewise; an object made of compiled parts (``.compiled_parts()``, such as
    a NEOM lineup's entry) when every part has."""
    if isinstance(dispatcher, LazyCFunc):
        return dispatcher.is_cached()
    if hasattr(dispatcher, "compiled_parts"):
        return all(has_cached_code(part) for part in dispatcher.compiled_parts())
    if numba.config.DISABLE_JIT or dispatcher.signatures:
        return True
    try:  # the cache index keys are (argument types, target machine, code hashes)
        index = dispatcher._cache._cache_file._load_index()
        target = dispatcher.targetctx.codegen().magic_tuple()
    except (AttributeError, OSError, EOFError, ValueError):
        return False
    return any(key[1] == target for key in index)
