"""Where the compiled core still counts references: increfs per game, and per compiled function.

    python -m strategies.tools.nrt_audit --strategy random [--games 20] [--functions]
    python -m strategies.tools.nrt_audit --game tangram --strategy planner+greedy+greedy+random

Runs in a fresh process with an empty compile cache of its own (a temporary folder): the count
is compiled into the code (Numba's ``NRT_incref``/``NRT_decref`` are rebuilt to bump a counter
before anything compiles, ``docs/engine.md``), and a function loaded from a cache cannot show
its LLVM IR. So it compiles the strategy's entry cold (minutes) and never touches the
project's cache. Prints the increfs and decrefs per game (all calls, and those on a real
array: a null meminfo is counted but skipped), and with ``--functions`` each compiled
function's ``NRT_incref`` call sites and allocation sites in its own optimized body and whether
it is compiled ``_nrt=False``, most call sites first. NEOM games are 4-player games of
``sim.tools.bench.run_games`` from game 1000; Tangram City games are 4-player games of
``sim.tangram.bench.play`` (a strategy name in every seat, or a lineup ``a+b+c+d``).
"""

import argparse
import ctypes
import os
import re
import sys
import tempfile

# Counters: [increfs, increfs of a non-null meminfo, decrefs, decrefs of a non-null meminfo].
COUNTS = (ctypes.c_uint64 * 4)()


def _install_counting() -> None:
    """Rebuild Numba's NRT_incref/NRT_decref to bump COUNTS (the study's COUNT_RC, shared
    docs/engine-proto/nrt_knobs.py, without its call-site ring): must run before Numba
    compiles anything, and the address of COUNTS is baked into the code (never cache it)."""
    import numba.core.runtime.nrtdynmod as nrtdynmod
    from llvmlite import ir
    from numba.core import cgutils

    i64 = ir.IntType(64)
    base = ctypes.addressof(COUNTS)

    def bump(builder, k):
        slot = builder.inttoptr(ir.Constant(i64, base + 8 * k), i64.as_pointer())
        builder.store(builder.add(builder.load(slot), ir.Constant(i64, 1)), slot)

    def counted(module, name, first):
        """``name`` (NRT_incref or NRT_decref) rebuilt to bump COUNTS[first] on every call and
        COUNTS[first + 1] on a non-null meminfo: its builder and pointer, past that check."""
        fn = cgutils.get_or_insert_function(module, nrtdynmod.incref_decref_ty, name)
        fn.attributes.add("noinline")
        builder = ir.IRBuilder(fn.append_basic_block())
        [ptr] = fn.args
        bump(builder, first)
        with cgutils.if_unlikely(builder, cgutils.is_null(builder, ptr)):
            builder.ret_void()
        bump(builder, first + 1)
        return builder, ptr

    def incref(module, atomic_incr):
        builder, ptr = counted(module, "NRT_incref", 0)
        builder.call(atomic_incr, [builder.bitcast(ptr, atomic_incr.args[0].type)])
        builder.ret_void()

    def decref(module, atomic_decr):
        builder, ptr = counted(module, "NRT_decref", 2)
        calldtor = ir.Function(
            module,
            ir.FunctionType(ir.VoidType(), [nrtdynmod._pointer_type]),
            name="NRT_MemInfo_call_dtor",
        )
        builder.fence("release")
        new = builder.call(atomic_decr, [builder.bitcast(ptr, atomic_decr.args[0].type)])
        with cgutils.if_unlikely(builder, builder.icmp_unsigned("==", new, new.type(0))):
            builder.fence("acquire")
            builder.call(calldtor, [ptr])
        builder.ret_void()

    nrtdynmod._define_nrt_incref = incref
    nrtdynmod._define_nrt_decref = decref


# What a function's own optimized body calls: references counted, memory allocated.
INCREF = re.compile(r"call void @NRT_incref\(")
ALLOC = re.compile(r"call [^@]*@NRT_(MemInfo_alloc|MemInfo_new|Allocate)\w*\(")


def body_of(llvm: str, symbol: str) -> str:
    """The text of the definition of ``symbol`` in an LLVM module ('' when not there)."""
    start = llvm.find(f'@"{symbol}"(')
    if start < 0:
        start = llvm.find(f"@{symbol}(")
    if start < 0:
        return ""
    line_start = llvm.rfind("\n", 0, start) + 1
    if not llvm.startswith("define", line_start):
        return ""
    end = llvm.find("\n}\n", start)
    return llvm[line_start : end + 3]


def function_sites(dispatcher) -> list[tuple[str, int, int, bool]]:
    """(signature, NRT_incref call sites, allocation call sites, compiled _nrt=False) of each
    compiled signature of ``dispatcher``, read from its optimized LLVM IR (fresh compile)."""
    rows = []
    no_nrt = dispatcher.targetoptions.get("_nrt") is False
    for sig, result in dispatcher.overloads.items():
        body = body_of(result.library.get_llvm_str(), result.fndesc.mangled_name)
        rows.append((str(sig), len(INCREF.findall(body)), len(ALLOC.findall(body)), no_nrt))
    return rows


def compiled_dispatchers():
    """Every compiled dispatcher of the NEOM core and its strategies (the strategy families'
    C functions, ``strategies.neom.pieces``, only call them)."""
    from numba.core.registry import CPUDispatcher

    seen = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith(("sim.", "strategies.")) or module is None:
            continue
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value.overloads:
                seen[id(value)] = value
    return sorted(seen.values(), key=lambda d: d.py_func.__qualname__)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strategy", default="random", help="a name, or several: a,b,c")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--functions", action="store_true")
    parser.add_argument("--game", choices=("neom", "tangram"), default="neom")
    args = parser.parse_args(argv)
    if args.games < 1:
        raise SystemExit("nrt_audit: --games must be at least 1")
    if "numba" in sys.modules:
        raise SystemExit("nrt_audit: run it as its own process (Numba already imported)")
    # Both: importing sim already pointed the project's cache locator (NEOM_NUMBA_CACHE_BASE) at
    # the shared cache, which would load uncounted code, or keep this counting code for others.
    cache = tempfile.mkdtemp(prefix="nrt_audit_")
    os.environ["NUMBA_CACHE_DIR"] = cache
    os.environ["NEOM_NUMBA_CACHE_BASE"] = cache
    _install_counting()

    if args.game == "tangram":
        from sim.tangram.bench import play
        from sim.tangram.tileset import load_tileset

        data = load_tileset()

        def games(strategy, n):
            try:
                play(strategy, 4, n, data)
            except KeyError:
                raise SystemExit(
                    f"nrt_audit: unknown Tangram City strategy in {strategy!r}"
                ) from None

    else:
        from sim.neom.catalog import load_catalog
        from sim.tools.bench import run_games

        tables = load_catalog()

        def games(strategy, n):
            run_games(tables, strategy, 1000, n)

    n = args.games
    for strategy in args.strategy.split(","):  # several: one cold compile of what they share
        games(strategy, 1)  # compiles
        for k in range(4):
            COUNTS[k] = 0
        games(strategy, n)
        print(
            f"{strategy}, 4 players, {n} games: per game {COUNTS[0] / n:.0f} increfs "
            f"({COUNTS[1] / n:.0f} non-null), {COUNTS[2] / n:.0f} decrefs "
            f"({COUNTS[3] / n:.0f} non-null)",
            flush=True,
        )
    if args.functions:
        rows = []
        for dispatcher in compiled_dispatchers():
            for sig, increfs, allocs, no_nrt in function_sites(dispatcher):
                name = f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}"
                rows.append((increfs, allocs, no_nrt, name, sig))
        print("incref sites  alloc sites  _nrt=False  function (signature)")
        for increfs, allocs, no_nrt, name, sig in sorted(rows, key=lambda r: (-r[0], r[3])):
            sig = sig if len(sig) <= 90 else sig[:87] + "..."  # a Game type is pages long
            print(f"{increfs:12d} {allocs:12d}  {'yes' if no_nrt else '   '}         {name} {sig}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
