"""Symbolic links never lead an output's removal or writing outside it (issue 35): a run folder,
a listed file, or any folder on the way to one that is (or passes through) a symbolic link is
refused in one line naming it, before anything is removed; a removal that fails halfway leaves
the listing saying "interrupted"; staging folders of killed commands are cleaned by the next
command on that output; the live writer's note is read without blocking and printed escaped; a
``--json`` file inside the command's own ``--out`` is refused before any game."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_helpers import one_line_error

from sim.core import store
from sim.core.cli import main

LISTING = "neom-listing.json"  # sim.core.outputs.LISTING
COMPARE = ["compare", "--players", "2", "--games", "8", "--strategies", "random,random"]
COMPARE += ["--workers", "1"]
EXPERIMENT = ["experiment", "cornerstone", "Central Park", "--mode", "ban", "--games", "8"]
EXPERIMENT += ["--players", "2", "--strategies", "random,random", "--workers", "1"]
BALANCE_ALL = ["balance", "--all", "--games", "8", "--strategies", "random,random,random,random"]
BALANCE_ALL += ["--workers", "1", "--max-evals", "1", "--quiet"]
COMMANDS = {"compare": COMPARE, "experiment": EXPERIMENT, "balance --all": BALANCE_ALL}


def contents(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` (links not followed) with its bytes."""
    found = {}
    for root, _, files in os.walk(path):
        for name in files:
            file = Path(root) / name
            if not file.is_symlink():
                found[file.relative_to(path).as_posix()] = file.read_bytes()
    return found


def listing_of(out: Path) -> dict:
    return json.loads((out / LISTING).read_text())


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Each command's output, made once (copied by the tests that change it)."""
    made = {}
    for name, argv in COMMANDS.items():
        out = tmp_path_factory.mktemp("results") / name.replace(" --", "-")
        assert main([*argv, "--out", str(out)]) == 0, name
        made[name] = out
    return made


def copy_of(results, name: str, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(results[name], out, symlinks=True)
    return out


# --- C1: a run folder replaced by a symbolic link to a run elsewhere --------------------------


@pytest.mark.parametrize("name", list(COMMANDS))
@pytest.mark.parametrize("linked", ["run folder", "parent folder"])
def test_overwrite_never_removes_a_run_a_symlink_leads_to(results, tmp_path, capsys, name, linked):
    out = copy_of(results, name, tmp_path)
    rel = listing_of(out)["runs"][0]
    # The run elsewhere: a whole run of the user's, which the link now stands for.
    elsewhere = tmp_path / "elsewhere"
    if linked == "run folder":
        shutil.move(out / rel, elsewhere)
        (out / rel).symlink_to(elsewhere, target_is_directory=True)
        link = rel
    else:
        if "/" not in rel:
            pytest.skip(f"{name} keeps its runs at the top of its folder")
        link = rel.split("/")[0]
        shutil.move(out / link, elsewhere)
        (out / link).symlink_to(elsewhere, target_is_directory=True)
    outside, inside, listing = contents(elsewhere), contents(out), (out / LISTING).read_bytes()
    code = main([*COMMANDS[name], "--out", str(out), "--overwrite"])
    one_line_error(capsys, code, link, "symbolic link")
    assert contents(elsewhere) == outside
    assert contents(out) == inside and (out / LISTING).read_bytes() == listing
    # --resume is refused just the same (it would write the run elsewhere).
    one_line_error(capsys, main([*COMMANDS[name], "--out", str(out), "--resume"]), link)
    assert contents(elsewhere) == outside


def test_a_removal_that_fails_halfway_leaves_the_listing_interrupted(
    results, tmp_path, capsys, monkeypatch
):
    out = copy_of(results, "compare", tmp_path)
    real = store.RunFolder.remove_journal
    calls = []

    def fail_on_the_second_run(self):
        calls.append(self.path)
        if len(calls) == 2:
            raise PermissionError(13, "Permission denied", str(self.journal_path))
        real(self)

    with monkeypatch.context() as patch:
        patch.setattr(store.RunFolder, "remove_journal", fail_on_the_second_run)
        code = main([*COMPARE, "--out", str(out), "--overwrite"])
    one_line_error(capsys, code, "Permission denied")
    assert len(calls) == 2 and not (out / listing_of(out)["runs"][0]).exists()
    assert listing_of(out)["status"] != "complete"
    one_line_error(capsys, main([*COMPARE, "--out", str(out)]), "interrupted", "--resume")
    assert main([*COMPARE, "--out", str(out), "--resume"]) == 0
    assert "already complete" not in capsys.readouterr().err
    assert listing_of(out)["status"] == "complete"
    fresh = results["compare"]
    for rel in ("tables/items.csv", "findings.json"):
        assert (out / rel).read_bytes() == (fresh / rel).read_bytes(), rel


# --- S1: listed paths through a linked folder; a linked folder where the report writes ----------


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A small run and its report."""
    from dataclasses import replace

    from run_helpers import SMALL

    from sim.core.runner import run_simulation

    base = tmp_path_factory.mktemp("report")
    run_simulation(replace(SMALL, out=base / "run"))
    assert main(["report", str(base / "run"), "--out", str(base / "report")]) == 0
    return base


def list_entry(out: Path, rel: str, data: bytes) -> None:
    import hashlib

    listing = listing_of(out)
    listing["files"][rel] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (out / LISTING).write_text(json.dumps(listing))


@pytest.mark.parametrize("case", ["listed file", "listed folder", "figures"])
def test_a_report_never_removes_or_writes_through_a_linked_folder(report, tmp_path, capsys, case):
    out = tmp_path / "report"
    shutil.copytree(report / "report", out, symlinks=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "victim.txt").write_text("the user's file")
    if case == "listed file":  # the entry's size and sha256 are the outside file's
        (out / "lnk").symlink_to(elsewhere, target_is_directory=True)
        list_entry(out, "lnk/victim.txt", b"the user's file")
        link = "lnk"
    elif case == "listed folder":  # its file is gone: only its (outside, empty) folder is left
        (elsewhere / "empty").mkdir()
        (out / "lnk").symlink_to(elsewhere, target_is_directory=True)
        list_entry(out, "lnk/empty/gone.txt", b"gone")
        link = "lnk"
    else:  # the report's own figures, moved elsewhere and linked back
        shutil.move(out / "figures", elsewhere / "figures")
        (out / "figures").symlink_to(elsewhere / "figures", target_is_directory=True)
        link = "figures"
    outside = contents(elsewhere)
    folders = sorted(p.relative_to(elsewhere) for p in elsewhere.rglob("*") if p.is_dir())
    code = main(["report", str(report / "run"), "--out", str(out)])
    one_line_error(capsys, code, link, "symbolic link")
    assert contents(elsewhere) == outside
    assert sorted(p.relative_to(elsewhere) for p in elsewhere.rglob("*") if p.is_dir()) == folders
