"""The one jit decorator of the compiled core, and what the core needs of Numba around it.

``cache=True`` so compilation is paid once per machine; ``nogil`` so worker threads can share a
process when a caller wants that. Everything in the hot core uses ``@njit`` from here, so
``NUMBA_DISABLE_JIT=1`` turns the whole core into plain Python for parity tests.

Importing this module also makes Numba's inlining (``inline="always"``) copy a function's IR in
time linear in its size (``linear_inline_copy``), and ``has_cached_code`` tells whether a
compiled function would load from the compile cache rather than compile.
"""

import inspect
import textwrap

import numba


def njit(*args, **kwargs):
    options = {"cache": True, "nogil": True}
    options.update(kwargs)
    if args and callable(args[0]):
        return numba.njit(**options)(args[0])
    return numba.njit(*args, **options)


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


def has_cached_code(dispatcher) -> bool:
    """Whether ``dispatcher`` has compiled code for this machine, in this process or in
    Numba's compile cache for the current sources (``sim._numba_cache_dir`` keys the cache
    folder on them), for any argument types: a command that always calls it with the same
    types would load rather than compile. Never compiles anything."""
    if numba.config.DISABLE_JIT or dispatcher.signatures:
        return True
    try:  # the cache index keys are (argument types, target machine, code hashes)
        index = dispatcher._cache._cache_file._load_index()
        target = dispatcher.targetctx.codegen().magic_tuple()
    except (AttributeError, OSError, EOFError, ValueError):
        return False
    return any(key[1] == target for key in index)
