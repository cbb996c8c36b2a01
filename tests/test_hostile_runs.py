"""Hostile and careless use of run folders (issue 21): a run folder owns only what it wrote,
damaged or foreign batch files are found and never counted, write failures and interrupts are
one line and leave a resumable run, every session is recorded, workers never outlive the
command, Ctrl-C under Dask is one line. Small runs (8 games), so the suite stays fast."""

import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from run_helpers import SIMULATE, SMALL, interrupt_after, one_line_error, placeholder_figures

from sim.core import store
from sim.core.cli import main
from sim.core.runner import run_simulation
from sim.core.store import RunFolder, read_run


@pytest.fixture(autouse=True)
def no_rendering(monkeypatch):
    """The reports here are checked by their files, tables and text, not their images."""
    placeholder_figures(monkeypatch)


ROOT = Path(__file__).resolve().parent.parent


def simulate(out: Path, *args: str) -> int:
    return main([*SIMULATE, "--out", str(out), *args])


def tables_of(path) -> dict[str, pl.DataFrame]:
    run = read_run(path)
    return {"games": run.games.collect(), "players": run.players.collect()}


def manifest_of(path) -> dict:
    return json.loads((Path(path) / "manifest.json").read_text())


def files_in(path: Path) -> set[str]:
    return {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("reference") / "run"
    run_simulation(replace(SMALL, out=path))
    return path, tables_of(path)


@pytest.fixture
def run(reference, tmp_path):
    """A fresh copy of the complete reference run."""
    path = tmp_path / "run"
    shutil.copytree(reference[0], path)
    return path


# --- a run folder owns only what it wrote ----------------------------------------------------


def test_the_manifest_lists_every_file_with_its_size_checksum_and_rows(run):
    manifest = manifest_of(run)
    listed = manifest["files"]
    assert files_in(run) == set(listed) | {"manifest.json"}
    for rel, entry in listed.items():
        data = (run / rel).read_bytes()
        assert entry["bytes"] == len(data)
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
    assert sum(listed[f"players/batch-00000{i}.parquet"]["rows"] for i in range(4)) == 32
    assert manifest["counts"] == {"batches": 4, "games": 8, "players": 32}


def test_overwrite_refuses_a_folder_holding_anything_else_and_deletes_nothing(run, capsys):
    (run / "src").mkdir()
    (run / "src" / "main.py").write_text("print('mine')")
    (run / "README.md").write_text("mine")
    before = {rel: (run / rel).read_bytes() for rel in files_in(run)}
    one_line_error(capsys, simulate(run, "--overwrite"), "holds README.md,", "will not overwrite")
    assert {rel: (run / rel).read_bytes() for rel in files_in(run)} == before


def test_overwrite_never_takes_a_project_with_a_manifest_json_for_a_run(tmp_path, capsys):
    """The reported case: a project folder holding its own manifest.json."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.js").write_text("app")
    (project / "manifest.json").write_text('{"name": "my-app", "version": "1.0"}')
    code = simulate(project, "--overwrite")
    one_line_error(capsys, code, "manifest.json", "not a neom run manifest", "will not overwrite")
    assert files_in(project) == {"src/app.js", "manifest.json"}


def test_overwrite_removes_exactly_the_runs_files(run, tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("outside the run folder")
    manifest = manifest_of(run)
    # A hostile listing naming files outside the folder (or the folder's own manifest) is never
    # trusted with a deletion.
    entry = {"bytes": 1, "sha256": "0" * 64}
    for hostile in ("../victim.txt", str(victim), "games/../../victim.txt"):
        manifest["files"][hostile] = entry
    (run / "manifest.json").write_text(json.dumps(manifest))
    (run / "games" / ".batch-000001.parquet.99.tmp").write_bytes(b"half")  # a killed write
    assert simulate(run, "--overwrite", "--seed", "4") == 0, capsys.readouterr().err
    assert victim.read_text() == "outside the run folder"
    manifest = manifest_of(run)
    assert manifest["seed"] == 4
    assert files_in(run) == set(manifest["files"]) | {"manifest.json"}


def test_a_foreign_file_in_a_table_folder_blocks_overwrite_too(run, capsys):
    (run / "players" / "notes.txt").write_text("mine")
    one_line_error(capsys, simulate(run, "--overwrite"), "players/notes.txt")
    assert (run / "players" / "notes.txt").read_text() == "mine"
    assert (run / "players" / "batch-000000.parquet").is_file()


# --- damaged, missing, extra and duplicated batch files --------------------------------------


@pytest.mark.parametrize("damage", ["truncated", "empty", "deleted", "replaced"])
def test_report_on_a_damaged_batch_names_it_and_says_to_resume(run, tmp_path, capsys, damage):
    batch = run / "players" / "batch-000001.parquet"
    if damage == "truncated":
        batch.write_bytes(batch.read_bytes()[:100])
    elif damage == "empty":
        batch.write_bytes(b"")
    elif damage == "deleted":
        batch.unlink()
    else:  # whole and readable, but another batch's content
        shutil.copyfile(run / "players" / "batch-000002.parquet", batch)
    out = tmp_path / "report"
    code = main(["report", str(run), "--out", str(out)])
    one_line_error(capsys, code, "batch 1 is damaged", "players/batch-000001.parquet", "--resume")
    assert not out.exists()


def test_resume_replays_a_damaged_batch_and_restores_the_tables(run, reference, capsys):
    (run / "players" / "batch-000001.parquet").write_bytes(b"PAR1")
    (run / "games" / "batch-000003.parquet").write_bytes(b"")
    assert simulate(run, "--resume") == 0
    captured = capsys.readouterr()
    assert "playing again 2 damaged batches" in captured.err
    assert "games: 8 (4 resumed)" in captured.out
    manifest = manifest_of(run)
    assert manifest["status"] == "complete"
    assert [s["games"] for s in manifest["sessions"]] == [8, 4]
    for name, frame in tables_of(run).items():
        assert frame.equals(reference[1][name]), name


def test_extra_and_duplicated_batch_files_are_never_counted(run, reference, tmp_path, capsys):
    players = run / "players"
    shutil.copyfile(players / "batch-000000.parquet", players / "batch-000099.parquet")
    shutil.copyfile(players / "batch-000000.parquet", players / "batch-000000 (copy).parquet")
    tables = read_run(run)
    assert tables.players.collect().equals(reference[1]["players"])
    assert tables.ignored == ("players/batch-000000 (copy).parquet", "players/batch-000099.parquet")
    # The report reads 8 games, not 12, and names what it ignored.
    from analysis.core.load import open_run

    assert open_run(run).players.collect().height == 32
    err = capsys.readouterr().err
    assert "ignoring what the run did not write: players/batch-000000 (copy).parquet" in err


def test_resume_ignores_and_names_files_it_did_not_write(run, reference, capsys):
    (run / "players" / "batch-000002.parquet").unlink()
    (run / "players" / "batch-000007.parquet").write_bytes(b"someone else's")
    (run / "notes.txt").write_text("mine")
    assert simulate(run, "--resume") == 0
    err = capsys.readouterr().err
    assert "ignoring what the run did not write: notes.txt, players/batch-000007.parquet" in err
    assert (run / "notes.txt").read_text() == "mine"
    assert (run / "players" / "batch-000007.parquet").read_bytes() == b"someone else's"
    assert tables_of(run)["players"].equals(reference[1]["players"])


def test_resume_checks_everything_before_it_marks_the_run_running(run, capsys):
    """Something in the way of a batch to play: refused, and the manifest is untouched (it
    used to say "running" after a crash, and report then asked for the resume that crashed)."""
    (run / "players" / "batch-000001.parquet").unlink()
    (run / "players" / "batch-000001.parquet").mkdir()  # not a file the run can replace
    manifest = (run / "manifest.json").read_bytes()
    one_line_error(capsys, simulate(run, "--resume"), "players/batch-000001.parquet", "move it")
    assert (run / "manifest.json").read_bytes() == manifest
    assert manifest_of(run)["status"] == "complete"


def test_report_checks_the_data_snapshot_against_the_manifest(run, tmp_path, capsys):
    with open(run / "catalog.toml", "a") as handle:
        handle.write("# edited after the run\n")
    out = tmp_path / "report"
    code = main(["report", str(run), "--out", str(out)])
    one_line_error(capsys, code, "catalog.toml", "does not match the manifest")
    assert not out.exists()


@pytest.mark.parametrize(
    "text, words",
    [
        ("[]", ["not a JSON object"]),
        ('"complete"', ["not a JSON object"]),
        ("42", ["not a JSON object"]),
        ("{", ["cannot read the run manifest"]),
        ('{"status": 5}', ["field 'status'"]),
        ("[" * 100_000 + "]" * 100_000, ["nested more than"]),
    ],
)
def test_a_manifest_that_is_not_a_run_manifest_is_one_line(run, tmp_path, capsys, text, words):
    (run / "manifest.json").write_text(text)
    code = main(["report", str(run), "--out", str(tmp_path / "report")])
    one_line_error(capsys, code, "manifest.json", *words)
    one_line_error(capsys, simulate(run, "--resume"), "manifest.json", *words)
    one_line_error(capsys, simulate(run, "--overwrite"), "manifest.json", *words)
    assert (run / "manifest.json").read_text() == text


# --- write failures --------------------------------------------------------------------------


def fail_writes_after(monkeypatch, calls: int, error: int) -> None:
    """Every fsync after the first ``calls`` fails with ``error`` (a full disk, a folder made
    read-only mid-run); earlier writes go through."""
    real = os.fsync
    count = {"n": 0}

    def fsync(fd):
        count["n"] += 1
        if count["n"] > calls:
            raise OSError(error, os.strerror(error))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("calls", [0, 1, 2, 5])
@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_write_failure_is_one_line_and_the_run_resumes(
    reference, tmp_path, capsys, monkeypatch, calls, error
):
    """Fails at the manifest (0), the snapshot (1), the journal (2) or a batch (5)."""
    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        fail_writes_after(patch, calls, error)
        one_line_error(capsys, simulate(out), os.strerror(error))
    assert not list(out.rglob(".*.tmp"))  # nothing half-written left behind
    if (out / "manifest.json").exists():
        assert manifest_of(out)["status"] == "running"
        assert simulate(out, "--resume") == 0, capsys.readouterr().err
    else:
        assert simulate(out) == 0, capsys.readouterr().err
    for name, frame in tables_of(out).items():
        assert frame.equals(reference[1][name]), name


def _mount_tmpfs(path: Path, size: str, *options: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    command = ["mount", "-t", "tmpfs", "-o", ",".join([f"size={size}", *options]), "tmpfs"]
    result = subprocess.run([*command, str(path)], capture_output=True)
    return result.returncode == 0


@pytest.fixture
def tmpfs(tmp_path):
    """Mount tiny tmpfs folders (needs the right to mount, else the test is skipped)."""
    mounted = []

    def make(name: str, size: str, *options: str) -> Path:
        path = tmp_path / name
        if shutil.which("mount") is None or not _mount_tmpfs(path, size, *options):
            pytest.skip("cannot mount a tmpfs here")
        mounted.append(path)
        return path

    yield make
    for path in mounted:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def test_a_really_full_disk_is_one_line(tmpfs, capsys):
    disk = tmpfs("full", "48k")
    code = main([*SIMULATE[:2], "200", *SIMULATE[3:], "--events", "--out", str(disk / "run")])
    one_line_error(capsys, code, "No space left on device")
    assert not list(disk.rglob(".*.tmp"))


def test_a_really_read_only_folder_is_one_line(reference, tmpfs, tmp_path, capsys):
    disk = tmpfs("ro", "1m")
    shutil.copytree(reference[0], disk / "run")
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    one_line_error(capsys, simulate(disk / "run", "--overwrite"), "Read-only file system")
    one_line_error(capsys, simulate(disk / "new"), "Read-only file system")
    out = disk / "report"
    one_line_error(capsys, main(["report", str(disk / "run"), "--out", str(out)]), "Read-only")
    assert files_in(disk / "run") == files_in(reference[0])


def test_a_report_that_fails_leaves_no_half_written_folder(run, tmp_path, capsys, monkeypatch):
    import analysis.core.report as report

    def full_disk(run_path, out, **options):
        (out / "figures").mkdir(parents=True)
        (out / "figures" / "a.png").write_bytes(b"png")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(out / "summary.md"))

    def crash(run_path, out, **options):
        (out / "tables").mkdir(parents=True)
        raise ValueError("'yerr' must not contain negative values")

    out = tmp_path / "reports" / "run"
    monkeypatch.setattr(report, "build_report", full_disk)
    code = main(["report", str(run), "--out", str(out)])
    one_line_error(capsys, code, str(out), "No space left on device")
    assert not (tmp_path / "reports").exists()
    monkeypatch.setattr(report, "build_report", crash)
    with pytest.raises(ValueError):
        main(["report", str(run), "--out", str(out)])
    assert not (tmp_path / "reports").exists()
    monkeypatch.undo()
    (tmp_path / "reports").mkdir()
    code = main(["report", str(tmp_path / "no-such-run"), "--out", str(out)])
    one_line_error(capsys, code, "no such run folder")
    assert list((tmp_path / "reports").iterdir()) == []


def test_a_report_replaces_a_previous_report_but_no_other_folder(run, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out)]) == 0
    first = files_in(out)
    assert {"index.html", "summary.md"} <= first
    (out / "my-notes.md").write_text("mine")
    assert main(["report", str(run), "--out", str(out)]) == 0
    assert files_in(out) == first | {"my-notes.md"}
    assert (out / "my-notes.md").read_text() == "mine"
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    capsys.readouterr()
    code = main(["report", str(run), "--out", str(run / "players")])
    one_line_error(capsys, code, "not written by neom report")


# --- every session is recorded ---------------------------------------------------------------


def test_an_interrupted_session_is_recorded_and_games_per_s_counts_it(
    tmp_path, capsys, monkeypatch
):
    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        interrupt_after(patch, 2)
        assert simulate(out) == 130
    assert capsys.readouterr().err == "neom: interrupted\n"
    manifest = manifest_of(out)
    assert manifest["status"] == "running"
    (session,) = manifest["sessions"]
    assert (session["ended"], session["games"], session["batches"]) == ("interrupted", 4, 2)
    assert simulate(out, "--resume") == 0
    manifest = manifest_of(out)
    assert [(s["ended"], s["games"]) for s in manifest["sessions"]] == [
        ("interrupted", 4),
        ("complete", 4),
    ]
    wall = sum(s["wall_s"] for s in manifest["sessions"])
    assert manifest["timings"]["wall_s"] == pytest.approx(wall, abs=0.002)
    assert manifest["timings"]["games_per_s"] == pytest.approx(8 / wall, rel=0.01)


def test_a_killed_session_is_recovered_from_the_journal(tmp_path, capsys, monkeypatch):
    """A session that could not record itself (kill -9, a full disk at the end) is found in
    the folder's journal by the next --resume and recorded as killed."""
    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        interrupt_after(patch, 3)
        real = store.RunFolder.write_manifest
        writes = {"n": 0}

        def write_manifest(self, manifest):
            writes["n"] += 1
            if writes["n"] > 1:  # the session's closing record never lands
                raise store.UserError("disk gone")
            real(self, manifest)

        patch.setattr(store.RunFolder, "write_manifest", write_manifest)
        assert simulate(out) == 130
    capsys.readouterr()
    assert manifest_of(out)["sessions"] == []
    assert (out / "journal.jsonl").is_file()
    assert simulate(out, "--resume") == 0
    assert "a session killed after 6 games is recorded" in capsys.readouterr().err
    manifest = manifest_of(out)
    assert [(s["ended"], s["games"]) for s in manifest["sessions"]] == [
        ("killed", 6),
        ("complete", 2),
    ]
    assert not (out / "journal.jsonl").exists()
    assert files_in(out) == set(manifest["files"]) | {"manifest.json"}


def test_a_value_the_store_cannot_hold_is_one_line_and_recorded(tmp_path, capsys, monkeypatch):
    """The store's checked narrowing, last line of defence: one line, the session recorded as
    failed, no batch half-written."""
    import sim.core.runner as runner

    real = runner.play_games

    def overflowing(plan, game_ids):
        output = real(plan, game_ids)
        if game_ids[0] >= 4:
            output.players[0, 0, 3] = 2**40  # a score far beyond int32
        return output

    monkeypatch.setattr(runner, "play_games", overflowing)
    out = tmp_path / "run"
    one_line_error(capsys, simulate(out), "game 4: players column", "does not fit int32")
    manifest = manifest_of(out)
    assert [(s["ended"], s["games"]) for s in manifest["sessions"]] == [("failed", 4)]
    assert len(manifest["files"]) == 1 + 2 * 2  # the snapshot and two whole batches


# --- limits ----------------------------------------------------------------------------------


def test_workers_are_capped_at_the_cores_available(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    out = tmp_path / "run"
    assert simulate(out, "--workers", "100000") == 0
    assert "neom: note: --workers 100000 capped at the 1 core available" in capsys.readouterr().err
    assert manifest_of(out)["sessions"][0]["workers"] == 1


@pytest.mark.parametrize(
    "args, words",
    [
        (["--batch-size", "1000000000"], ["--batch-size 1000000000: at most 10,000"]),
        (["--games", "10000000000", "--batch-size", "4"], ["batches, at most", "--batch-size"]),
        (["--seed", str(2**64)], ["--seed", "must be an integer from 0 to"]),
        (["--workers", "0"], ["--workers 0: must be at least 1"]),
    ],
)
def test_run_options_beyond_their_limits_are_one_line(tmp_path, capsys, args, words):
    one_line_error(capsys, simulate(tmp_path / "run", *args), *words)
    assert not (tmp_path / "run").exists()


# --- processes -------------------------------------------------------------------------------


def _neom(*args: str) -> list[str]:
    return [sys.executable, "-m", "sim.core.cli", *args]


def _wait_for_batches(out: Path, count: int, process, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if len(list((out / "players").glob("batch-*.parquet"))) >= count:
            return
        time.sleep(0.05)
    pytest.fail(f"no {count} batches in {timeout} s: {process.poll()}")


def _as_from_a_terminal() -> None:
    """In the child before it runs: Ctrl-C handled by default and not blocked, as in a command
    a terminal starts. The test process may have inherited SIGINT ignored or blocked (pytest-xdist
    workers, a library's thread): the command would keep that, as POSIX commands do, and play on
    (seen twice in the whole suite: returncode 0)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity") else True,
    reason="needs 2 cores for worker processes",
)
def test_killing_only_the_parent_leaves_no_worker_behind(tmp_path, capsys):
    psutil = pytest.importorskip("psutil")
    out = tmp_path / "run"
    args = ["simulate", "--games", "2000", "--batch-size", "4", "--workers", "2", "--seed", "3"]
    args += ["--strategies", "random,random,random,random", "--out", str(out)]
    process = subprocess.Popen(
        _neom(*args), cwd=ROOT, start_new_session=True, stderr=subprocess.DEVNULL
    )
    try:
        _wait_for_batches(out, 4, process)
        children = psutil.Process(process.pid).children(recursive=True)
        assert children, "the run started no worker process"
        os.kill(process.pid, signal.SIGKILL)  # the parent alone, as an OOM killer would
        process.wait()
        gone, alive = psutil.wait_procs(children, timeout=10)
        assert not alive, f"workers outlived the command: {[p.pid for p in alive]}"
    finally:
        os.killpg(process.pid, signal.SIGKILL) if process.poll() is None else None
        for child in psutil.Process().children(recursive=True):
            if child.pid != process.pid and out.name in " ".join(child.cmdline()):
                child.kill()
    # What the next --resume records of the killed session: from the journal, every visible
    # batch listed.
    assert manifest_of(out)["sessions"] == []
    folder = RunFolder(out)
    done = folder.complete_batches(("games", "players"))
    journal = folder.read_journal(set())
    (killed,) = journal.sessions
    assert killed["ended"] == "killed" and killed["games"] >= 4 * len(done) and killed["wall_s"] > 0
    assert {f"players/batch-{i:06d}.parquet" for i in done} <= set(journal.files)


@pytest.mark.parametrize("backend", ["dask", "local"])
def test_ctrl_c_is_one_line_and_recorded(tmp_path, backend):
    """A terminal's Ctrl-C reaches every process of the group: the workers ignore it, the
    command stops them and says so in one line (Dask printed ~70 lines of tracebacks)."""
    if backend == "dask":
        pytest.importorskip("distributed")
    out = tmp_path / "run"
    args = ["simulate", "--games", "4000", "--batch-size", "4", "--workers", "2", "--seed", "3"]
    args += ["--strategies", "random,random,random,random", "--backend", backend]
    process = subprocess.Popen(
        _neom(*args, "--out", str(out)),
        cwd=ROOT,
        start_new_session=True,
        preexec_fn=_as_from_a_terminal,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for_batches(out, 4, process)
        os.killpg(process.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole group
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130
    assert err == "neom: interrupted\n", err
    (session,) = manifest_of(out)["sessions"]
    assert session["ended"] == "interrupted" and session["games"] > 0
