"""Every output folder and file is owned (issue 25): report and compare folders carry their own
listing (``neom-listing.json``) as run folders do, ``--out`` refuses a folder the command did not
write, ``--overwrite`` removes exactly what a listing names and only files still as written;
explicit output files (``--json FILE``, ``tune --out``) are not replaced without
``--overwrite`` and are checked before any game is played; ``tune --out`` onto a strategy file
adds or replaces only its own set; ``--resume`` of a complete run writes nothing; an
interrupted ``compare`` resumes."""

import hashlib
import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from run_helpers import (
    SIMULATE,
    SMALL,
    interrupt_after,
    one_line_error,
    placeholder_figures,
    tmpfs,
)

from sim.core.cli import main
from sim.core.runner import run_simulation
from sim.core.strategies import load_strategy_file
from strategies.neom.registry import REGISTRY

COMPARE = ["compare", "--players", "2", "--games", "8", "--strategies", "random,greedy"]
COMPARE += ["--workers", "1"]
LISTING = "neom-listing.json"  # sim.core.outputs.LISTING


@pytest.fixture(autouse=True)
def no_rendering(monkeypatch):
    """The reports here are checked by their files and listings, not their images."""
    placeholder_figures(monkeypatch)


def contents(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` with its bytes (the folder's state, to compare)."""
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def user_folder(path: Path) -> dict[str, bytes]:
    """A folder of the user's that happens to look like a report."""
    (path / "figures").mkdir(parents=True)
    (path / "tables").mkdir()
    (path / "index.html").write_text("<p>my home page</p>")
    (path / "summary.md").write_text("my summary")
    (path / "figures" / "holiday.png").write_bytes(b"\x89PNG mine")
    (path / "tables" / "budget.csv").write_text("a,b\n1,2\n")
    return contents(path)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("reference") / "run"
    run_simulation(replace(SMALL, out=path))
    return path


@pytest.fixture
def run(reference, tmp_path):
    path = tmp_path / "run"
    shutil.copytree(reference, path)
    return path


def never(*args, **kwargs):
    raise AssertionError("games were played before the output was checked")


# --- report and compare folders ---------------------------------------------------------------


def test_report_refuses_a_folder_it_did_not_write(run, tmp_path, capsys):
    out = tmp_path / "site"
    before = user_folder(out)
    code = main(["report", str(run), "--out", str(out)])
    one_line_error(capsys, code, str(out), "not written by neom report")
    assert contents(out) == before


def test_a_report_folder_lists_every_file_it_wrote(run, tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out)]) == 0
    listing = json.loads((out / LISTING).read_text())
    assert listing["command"] == "neom report"
    files = listing["files"]
    assert set(files) == set(contents(out)) - {LISTING}
    assert {"index.html", "summary.md", "findings.json"} <= set(files)
    for rel, entry in files.items():
        data = (out / rel).read_bytes()
        assert entry == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def test_a_new_report_replaces_only_listed_files_still_as_written(run, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out)]) == 0
    (out / "figures" / "my-sketch.png").write_bytes(b"mine")
    (out / "notes.md").write_text("mine")
    assert main(["report", str(run), "--out", str(out)]) == 0
    assert (out / "figures" / "my-sketch.png").read_bytes() == b"mine"
    assert (out / "notes.md").read_text() == "mine"
    # A listed file the user has since edited is not the report's any more: refused, kept.
    (out / "summary.md").write_text("my edited summary")
    before = contents(out)
    code = main(["report", str(run), "--out", str(out)])
    one_line_error(capsys, code, "summary.md", "changed since neom report wrote it")
    assert contents(out) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("overwrite", [False, True])
def test_compare_refuses_a_folder_it_did_not_write(tmp_path, capsys, monkeypatch, overwrite):
    import sim.core.runner as runner

    monkeypatch.setattr(runner, "run_simulation", never)
    out = tmp_path / "site"
    before = user_folder(out)
    flags = ["--overwrite"] if overwrite else []
    err = one_line_error(
        capsys, main([*COMPARE, "--out", str(out), *flags]), "not written by neom compare"
    )
    assert "earlier" not in err
    assert contents(out) == before


BALANCE_ALL = ["balance", "--all", "--games", "8", "--strategies", "random,random,random,random"]
BALANCE_ALL += ["--workers", "1", "--max-evals", "1", "--quiet"]


@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.parametrize("option", ["--out", "--work"])
def test_balance_refuses_a_folder_it_did_not_write(
    tmp_path, capsys, monkeypatch, overwrite, option
):
    """neom balance --all's --out and neom balance NAME's --work are claimed before any game."""
    import sim.core.runner as runner

    monkeypatch.setattr(runner, "run_simulation", never)
    out = tmp_path / "site"
    before = user_folder(out)
    flags = ["--overwrite"] if overwrite else []
    argv = BALANCE_ALL if option == "--out" else ["balance", "Central Park", *BALANCE_ALL[2:]]
    command = "neom balance --all" if option == "--out" else "neom balance"
    err = one_line_error(
        capsys, main([*argv, option, str(out), *flags]), f"not written by {command}"
    )
    assert option in err and "earlier" not in err
    assert contents(out) == before


def test_balance_folders_list_their_runs_and_overwrite_removes_exactly_them(tmp_path, capsys):
    out = tmp_path / "pass"
    assert main([*BALANCE_ALL, "--out", str(out)]) == 0
    listing = json.loads((out / LISTING).read_text())
    assert listing["command"] == "neom balance --all" and listing["status"] == "complete"
    (out / "notes.md").write_text("mine")
    listed = set(listing["files"]) | {
        rel
        for folder in listing["runs"]
        for rel in (f"{folder}/{n}" for n in contents(out / folder))
    }
    assert set(contents(out)) - {LISTING, "notes.md"} == listed
    one_line_error(capsys, main([*BALANCE_ALL, "--out", str(out)]), "--overwrite")
    assert main([*BALANCE_ALL, "--out", str(out), "--overwrite", "--seed", "2"]) == 0
    assert (out / "notes.md").read_text() == "mine"
    (out / "log.md").write_text("my edits")
    before = contents(out)
    code = main([*BALANCE_ALL, "--out", str(out), "--overwrite"])
    one_line_error(capsys, code, "log.md", "changed since neom balance --all wrote it")
    assert contents(out) == before
    # --work keeps the candidates' runs, listed, and a later search uses them again.
    work = tmp_path / "work"
    item = ["balance", "Central Park", *BALANCE_ALL[2:], "--lever", "vp", "--work", str(work)]
    assert main(item) == 0
    listing = json.loads((work / LISTING).read_text())
    assert listing["command"] == "neom balance" and listing["status"] == "complete"
    assert {p.parent.as_posix() for p in work.glob("runs/*/manifest.json")} == {
        (work / rel).as_posix() for rel in listing["runs"]
    }
    kept = contents(work)
    assert main(item) == 0
    assert {k: v for k, v in contents(work).items() if k != LISTING} == {
        k: v for k, v in kept.items() if k != LISTING
    }


def test_compare_overwrite_removes_exactly_its_listing(tmp_path, capsys):
    out = tmp_path / "compare"
    assert main([*COMPARE, "--out", str(out)]) == 0
    (out / "notes.md").write_text("mine")
    one_line_error(capsys, main([*COMPARE, "--out", str(out)]), "--overwrite")
    assert main([*COMPARE, "--out", str(out), "--overwrite", "--seed", "2"]) == 0
    assert (out / "notes.md").read_text() == "mine"
    listing = json.loads((out / LISTING).read_text())
    assert set(contents(out)) - {LISTING, "notes.md"} == set(listing["files"]) | {
        rel
        for folder in listing["runs"]
        for rel in (f"{folder}/{name}" for name in contents(out / folder))
    }
    (out / "index.html").write_text("my edits")
    before = contents(out)
    code = main([*COMPARE, "--out", str(out), "--overwrite"])
    one_line_error(capsys, code, "index.html", "changed since neom compare wrote it")
    assert contents(out) == before


# --- run folders: --overwrite trusts only what is still as written ----------------------------


def test_overwrite_never_deletes_a_file_a_manifest_merely_names(run, capsys):
    """A manifest naming README.md as its data snapshot does not make README.md the run's."""
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["data"]["snapshot"] = "README.md"
    (run / "manifest.json").write_text(json.dumps(manifest))
    (run / "README.md").write_text("my readme")
    code = main([*SIMULATE, "--out", str(run), "--overwrite"])
    one_line_error(capsys, code, "README.md")
    assert (run / "README.md").read_text() == "my readme"


def test_overwrite_refuses_a_listed_file_changed_since_the_run_wrote_it(run, capsys):
    (run / "catalog.toml").write_text("# my edits to the run's copy\n")
    before = contents(run)
    code = main([*SIMULATE, "--out", str(run), "--overwrite"])
    one_line_error(capsys, code, "catalog.toml", "changed since")
    assert contents(run) == before


# --- explicit output files -----------------------------------------------------------------------


def _commands(tmp_path):
    """(argv without the output file's option, its option, function playing the games)."""
    return {
        "play": (
            ["play", "--players", "2", "--strategies", "random,random", "--seed", "1"],
            "--json",
            "sim.core.commands.play:warm_up",
        ),
        "ladder": (
            ["ladder", "--rungs", "random,greedy", "--games", "4", "--workers", "1"],
            "--json",
            "analysis.core.ladder:play_rung",
        ),
        "compare": (
            [*COMPARE, "--out", str(tmp_path / "c")],
            "--json",
            "sim.core.runner:run_simulation",
        ),
        "experiment": (
            ["experiment", "cornerstone", "Central Park", "--games", "8", "--workers", "1"]
            + ["--strategies", "random,random,random,random", "--out", str(tmp_path / "e")],
            "--json",
            "sim.core.runner:run_simulation",
        ),
        "balance": (
            ["balance", "Central Park", "--games", "8", "--workers", "1", "--lever", "vp"]
            + ["--strategies", "random,random,random,random", "--quiet"],
            "--json",
            "sim.core.runner:run_simulation",
        ),
        "tune": (
            ["tune", "--base", "builder", "--opponents", "random", "--players", "2"]
            + ["--budget", "100", "--no-progress"],
            "--out",
            "strategies.tools.tune:tune",
        ),
    }


def _patch(monkeypatch, reference: str) -> None:
    import importlib

    module, _, name = reference.partition(":")
    monkeypatch.setattr(importlib.import_module(module), name, never)


@pytest.mark.parametrize("command", ["play", "ladder", "compare", "experiment", "balance", "tune"])
def test_an_existing_output_file_is_not_replaced_without_overwrite(
    tmp_path, capsys, monkeypatch, command
):
    argv, option, plays = _commands(tmp_path)[command]
    _patch(monkeypatch, plays)
    target = tmp_path / "mine.json"
    target.write_text("my data")
    code = main([*argv, option, str(target)])
    # tune adds its set to a strategy file; any other file is never its to replace.
    words = ["not a strategy file"] if command == "tune" else ["exists", "--overwrite"]
    one_line_error(capsys, code, str(target), *words)
    assert target.read_text() == "my data"


@pytest.mark.parametrize("command", ["play", "ladder", "compare", "experiment", "balance", "tune"])
@pytest.mark.parametrize("where", ["no-such-folder/out.json", "a-folder", "a-file/out.json"])
def test_a_bad_output_path_is_refused_before_any_game(
    tmp_path, capsys, monkeypatch, command, where
):
    argv, option, plays = _commands(tmp_path)[command]
    _patch(monkeypatch, plays)
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "a-file").write_text("x")
    target = tmp_path / where
    one_line_error(capsys, main([*argv, option, str(target)]), str(target))


def test_play_replaces_its_json_with_overwrite(tmp_path, capsys):
    argv, option, _ = _commands(tmp_path)["play"]
    target = tmp_path / "game.json"
    target.write_text("old")
    assert main([*argv, option, str(target), "--overwrite"]) == 0
    assert json.loads(target.read_text())["players"] == 2


# --- tune --out and --name -----------------------------------------------------------------------

MY_FILE = """# my strategy sets

# the cautious builder
[sets.mine]
base = "builder"
deny = 0.5
"""


def tune(tmp_path, *args) -> int:
    argv, _, _ = _commands(tmp_path)["tune"]
    return main([*argv, *args])


def test_tune_adds_its_set_to_a_strategy_file_and_keeps_the_others(tmp_path, capsys):
    path = tmp_path / "sets.toml"
    path.write_text(MY_FILE)
    assert tune(tmp_path, "--out", str(path), "--name", "other") == 0
    text = path.read_text()
    assert text.startswith(MY_FILE)
    sets = load_strategy_file(REGISTRY, path)
    assert set(sets) == {"mine", "other"} and sets["mine"].spec == "builder:deny=0.5"
    # The same name again: refused without --overwrite, before the budget is spent.
    code = tune(tmp_path, "--out", str(path), "--name", "mine")
    one_line_error(capsys, code, "mine", "--overwrite")
    assert path.read_text() == text
    assert tune(tmp_path, "--out", str(path), "--name", "mine", "--overwrite") == 0
    replaced = path.read_text()
    assert replaced.startswith("# my strategy sets\n")
    assert "the cautious builder" not in replaced and "deny = 0.5\n" not in replaced
    other = text[text.index("[sets.other]") :]
    other_block = text[text.rindex("\n#", 0, text.index("[sets.other]")) + 1 :]
    assert other_block in replaced or other in replaced
    assert set(load_strategy_file(REGISTRY, path)) == {"mine", "other"}


def test_tune_refuses_a_file_that_is_not_a_strategy_file(tmp_path, capsys, monkeypatch):
    _patch(monkeypatch, "strategies.tools.tune:tune")
    path = tmp_path / "notes.toml"
    path.write_text("my notes, not TOML at all\n")
    one_line_error(capsys, tune(tmp_path, "--out", str(path), "--overwrite"), str(path))
    assert path.read_text() == "my notes, not TOML at all\n"


@pytest.mark.parametrize(
    "args, words",
    [
        (["--name", "my set]"], ["--name", "my set]"]),
        (["--name", "a:b"], ["--name", "a:b"]),
        (["--name", "a,b"], ["--name", "a,b"]),
        (["--name", "greedy"], ["--name", "greedy", "built-in"]),
        (["--name", ""], ["--name"]),
        (["--workers", "0"], ["--workers 0"]),
        (["--workers", "-3"], ["--workers -3"]),
    ],
)
def test_tune_checks_its_options_before_the_budget_is_spent(
    tmp_path, capsys, monkeypatch, args, words
):
    _patch(monkeypatch, "strategies.tools.tune:tune")
    one_line_error(capsys, tune(tmp_path, *args), *words)


# --- bookkeeping ---------------------------------------------------------------------------------


def test_resume_of_a_complete_run_says_so_and_writes_nothing(run, capsys):
    before = contents(run)
    mtimes = {p: p.stat().st_mtime_ns for p in run.rglob("*")}
    assert main([*SIMULATE, "--out", str(run), "--resume"]) == 0
    captured = capsys.readouterr()
    assert "already complete" in captured.err and "nothing to do" in captured.err
    assert contents(run) == before
    assert {p: p.stat().st_mtime_ns for p in run.rglob("*")} == mtimes


def test_resume_of_a_complete_run_on_a_read_only_folder(reference, tmp_path, capsys):
    with tmpfs(tmp_path / "ro", "1m") as disk:
        shutil.copytree(reference, disk / "run")
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        assert main([*SIMULATE, "--out", str(disk / "run"), "--resume"]) == 0
        assert "already complete" in capsys.readouterr().err
        assert contents(disk / "run") == contents(reference)


def test_an_interrupted_compare_resumes_to_the_same_result(tmp_path, capsys):
    out, fresh = tmp_path / "compare", tmp_path / "fresh"
    with pytest.MonkeyPatch.context() as patch:
        interrupt_after(patch, 1)  # the baseline's batch is written, the candidate's is not
        assert main([*COMPARE, "--out", str(out)]) == 130
    capsys.readouterr()
    err = one_line_error(capsys, main([*COMPARE, "--out", str(out)]), "interrupted", "--resume")
    assert "earlier" not in err
    # Other options are another comparison: not resumed.
    one_line_error(capsys, main([*COMPARE, "--out", str(out), "--resume", "--seed", "9"]), "--seed")
    assert main([*COMPARE, "--out", str(out), "--resume"]) == 0
    assert main([*COMPARE, "--out", str(fresh)]) == 0
    for name in ("items", "strategies", "seats"):
        resumed = pl.read_csv(out / "tables" / f"{name}.csv")
        assert resumed.equals(pl.read_csv(fresh / "tables" / f"{name}.csv")), name
    baseline = json.loads((out / "runs" / "baseline" / "manifest.json").read_text())
    assert [s["ended"] for s in baseline["sessions"]] == ["complete"]
    # Resuming a complete comparison: said, nothing written.
    before = contents(out)
    assert main([*COMPARE, "--out", str(out), "--resume"]) == 0
    assert "already complete" in capsys.readouterr().err
    assert contents(out) == before


# --- the core helpers (sim.core.outputs), as neom balance will use them -------------------------


def test_publish_never_replaces_a_file_it_did_not_write(tmp_path):
    from sim.core.errors import UserError
    from sim.core.outputs import claim_folder, publish, staging_folder

    out = tmp_path / "out"
    out.mkdir()

    def result(**files):
        claim = claim_folder(out, "neom thing", replaces_own=True)
        with staging_folder(out) as staging:
            for name, text in files.items():
                (staging / name).write_text(text)
            publish(staging, claim)

    result(a="first")
    (out / "b").write_text("mine")
    before = contents(out)
    with pytest.raises(UserError, match="b was not written by neom thing"):
        result(a="second", b="theirs")
    assert contents(out) == before
    result(c="third")  # a's listing entry is replaced; the user's b is kept
    assert {p.name for p in out.iterdir()} == {"b", "c", LISTING}


def test_runs_listed_as_they_come_are_resumed_and_overwritten(tmp_path):
    from sim.core.errors import UserError
    from sim.core.outputs import claim_folder, writer_lock

    out = tmp_path / "balance"
    with writer_lock(out, "neom thing", check=lambda: claim_folder(out, "neom thing")) as claim:
        first = claim.add_run("runs/candidate-1")
        run_simulation(replace(SMALL, out=first))
    listing = json.loads((out / LISTING).read_text())
    assert listing["runs"] == ["runs/candidate-1"] and listing["status"] == "running"
    with pytest.raises(UserError, match="interrupted neom thing"):
        claim_folder(out, "neom thing")
    assert claim_folder(out, "neom thing", resume=True).runs == ["runs/candidate-1"]
    with pytest.raises(UserError, match="different --seed"):
        claim_folder(out, "neom thing", resume=True, parameters={"--seed": 2})
    (out / "runs" / "candidate-1" / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="notes.txt, which the run did not write"):
        claim_folder(out, "neom thing", overwrite=True)
    (out / "runs" / "candidate-1" / "notes.txt").unlink()
    claim_folder(out, "neom thing", overwrite=True)
    assert list(out.iterdir()) == []
