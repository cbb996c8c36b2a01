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
from pathlib import Path

import pytest
from run_helpers import one_line_error, placeholder_figures

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


@pytest.fixture(scope="module", autouse=True)
def no_rendering():
    """The reports here are checked by their files and listings, not their images. For the
    whole module, so that the outputs its module fixtures make are not rendered either (a
    function's fixture starts after those)."""
    with pytest.MonkeyPatch.context() as patch:
        placeholder_figures(patch)
        yield


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


def test_a_link_at_a_temporary_name_is_replaced_not_written_through(report, tmp_path):
    """Files are written under a predictable temporary name (``.NAME.PID.tmp``) and renamed: a
    link put at that name is removed, not written through (nor renamed into place)."""
    out = tmp_path / "report"
    shutil.copytree(report / "report", out)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file")
    (out / f".{LISTING}.{os.getpid()}.tmp").symlink_to(victim)
    assert main(["report", str(report / "run"), "--out", str(out)]) == 0
    assert victim.read_text() == "the user's file"
    assert not (out / LISTING).is_symlink() and listing_of(out)["status"] == "complete"


# --- m3: staging folders of killed commands ----------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
STALLED_REPORT = """
import sys, time
import sim.core.outputs as outputs

def stalled(staging, claim):  # the report is built: killed before it is published
    print("staged", flush=True)
    time.sleep(600)

outputs.publish = stalled
from analysis.core.report import Report

def figure(self, name, fig, alt):  # placeholder figures (run_helpers): not rendered
    (self.out / "figures" / f"{name}.png").write_bytes(b"\\x89PNG placeholder")
    return ""

Report.figure = figure
from sim.core.cli import main
sys.exit(main(["report", sys.argv[1], "--out", sys.argv[2]]))
"""
LIVE_STAGING = """
import sys, time
from sim.core.outputs import staging_folder

with staging_folder(sys.argv[1]):
    print("staged", flush=True)
    time.sleep(600)
"""


def started(script: str, *args: str) -> subprocess.Popen:
    """A Python process running ``script``, once it has printed "staged"."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, "-c", script, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout.readline() == "staged\n", process.wait(timeout=60)
    return process


def hidden(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.name.startswith(".")}


def test_the_next_report_cleans_the_staging_folder_of_a_killed_one(report, tmp_path, capsys):
    out = tmp_path / "report"
    shutil.copytree(report / "report", out)
    # A folder of the user's named like a staging folder, and a live command's staging folder.
    (tmp_path / ".report.mine.neom-staging").mkdir()
    processes = [started(LIVE_STAGING, str(out))]
    try:
        live = hidden(tmp_path)
        processes.append(started(STALLED_REPORT, str(report / "run"), str(out)))
        left = hidden(tmp_path) - live
        processes[-1].send_signal(signal.SIGKILL)
        processes[-1].wait(timeout=60)
        assert len(left) == 1  # the killed report's
        assert main(["report", str(report / "run"), "--out", str(out)]) == 0
        assert hidden(tmp_path) == live  # the killed one's cleaned; the others kept
    finally:
        for process in processes:
            process.kill()
            process.wait(timeout=60)


# --- m4: the live writer's note ---------------------------------------------------------------


@pytest.mark.parametrize("note", ["control characters", "a pipe"])
def test_a_writer_note_is_read_without_blocking_and_printed_escaped(report, tmp_path, capsys, note):
    from sim.core.outputs import writer_lock

    out = tmp_path / "report"
    shutil.copytree(report / "report", out)
    argv = ["report", str(report / "run"), "--out", str(out)]
    with writer_lock(out, "neom report"):  # a live writer (this process)
        path = out / ".neom-writer.json"
        path.unlink()
        if note == "control characters":
            info = {"pid": 4242, "host": "evil\n\x1b[2Jhost", "started": "\x07now", "command": "x"}
            path.write_text(json.dumps(info))
            err = one_line_error(capsys, main(argv), "another neom command", "PID 4242", "evil\\n")
            assert "\x1b" not in err and "\x07" not in err
            return
        os.mkfifo(path)
        second = subprocess.run(
            [sys.executable, "-m", "sim.core.cli", *argv],
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            capture_output=True,
            text=True,
            timeout=120,  # a blocking read of the pipe would wait for ever
        )
        assert second.returncode == 1, second.stderr
        assert second.stderr.count("\n") == 1 and "another neom command" in second.stderr


# --- m11: --json inside the command's own --out --------------------------------------------------


@pytest.mark.parametrize("name", ["compare", "experiment"])
@pytest.mark.parametrize("where", [".", "findings.json"])
def test_json_inside_its_own_out_is_refused_before_any_game(
    tmp_path, capsys, monkeypatch, name, where
):
    """``--json OUT`` (a new folder): the folder is made, the games played, then the file cannot
    be written; ``--json OUT/findings.json`` into an empty ``--out``: a file the listing does
    not name is written into the output."""
    import sim.core.runner as runner

    def never(*args, **kwargs):
        raise AssertionError("games were played before the output was checked")

    monkeypatch.setattr(runner, "run_simulation", never)
    out = tmp_path / "out"
    if where != ".":
        out.mkdir()
    target = out if where == "." else out / where
    code = main([*COMMANDS[name], "--out", str(out), "--json", str(target)])
    one_line_error(capsys, code, "--json", "inside --out")
    assert (list(out.iterdir()) == []) if where != "." else not out.exists()
