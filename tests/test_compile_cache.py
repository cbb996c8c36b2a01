"""The compile cache is keyed on the sources compiled code depends on, and on nothing else."""

import shutil
from pathlib import Path

import sim

ROOT = Path(sim.__file__).resolve().parent.parent


def copy_packages(tmp_path):
    for package in sim.PACKAGES:
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return tmp_path


def relative(paths):
    return {p.relative_to(ROOT).as_posix() for p in paths}


def test_the_key_covers_the_compiled_modules_and_what_they_import():
    sources = relative(sim._compiled_sources(ROOT))
    # Compiled modules, and the constants and registries their compiled code reads.
    for needed in (
        "sim/neom/engine.py",
        "strategies/neom/play.py",
        "sim/neom/constants.py",
        "sim/neom/records.py",
        "sim/core/rng.py",
        "strategies/neom/evaluate.py",
        "strategies/neom/registry.py",
        "strategies/neom/archetypes.py",
    ):
        assert needed in sources
    # Drivers run only in Python.
    for driver in (
        "sim/core/cli.py",
        "sim/core/runner.py",
        "sim/tools/bench.py",
        "sim/tools/bench_ab.py",
        "strategies/tools/tune.py",
        "analysis/core/ladder.py",
    ):
        assert driver not in sources


def test_editing_a_driver_keeps_the_cache_and_editing_a_constant_starts_a_new_one(tmp_path):
    root = copy_packages(tmp_path)
    before = sim._sources_digest(root)
    with open(root / "sim" / "tools" / "bench_ab.py", "a") as f:
        f.write("\n# a driver edited\n")
    assert sim._sources_digest(root) == before
    with open(root / "sim" / "neom" / "constants.py", "a") as f:
        f.write("\nNEW_CONSTANT = 1\n")
    assert sim._sources_digest(root) != before


def test_only_the_most_recently_used_caches_of_other_versions_are_kept(tmp_path):
    """Each edit of compiled code starts a cache folder: the older ones beyond the few most
    recently used are deleted when a new one starts; folders not named like a digest stay."""
    import os

    for age, name in enumerate(["a" * 16, "b" * 16, "c" * 16, "d" * 16, "e" * 16]):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "index.nbi").write_text("x")
        os.utime(folder, (1000 - age, 1000 - age))  # "a" used last, "e" first
    (tmp_path / "my-notes").mkdir()
    sim._prune_stale_caches(tmp_path, "f" * 16, keep=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a" * 16, "b" * 16, "c" * 16, "my-notes"]
    sim._prune_stale_caches(tmp_path, "a" * 16, keep=1)  # the current folder is never counted
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a" * 16, "b" * 16, "my-notes"]
