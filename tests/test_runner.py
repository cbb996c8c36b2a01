"""neom simulate: same tables whatever the workers, batch size or backend; resume after kill -9;
a killed Dask worker; seat rotation; clear errors; tables readable by polars, pandas, DuckDB."""

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from run_helpers import SMALL

from sim.core.cli import main
from sim.core.runner import run_simulation
from sim.core.store import EVENTS, GAMES, PLAYERS, STATUS_COMPLETE, RunFolder, read_run
from sim.neom.catalog import DEFAULT_CATALOG
from sim.neom.constants import V_NO_DISASTERS

STRATEGIES = ("greedy", "random", "greedy:money_weight=2", "random")
# A small run with every table; the kill tests use smaller batches so that they land mid-run.
BASE = replace(SMALL, strategies=STRATEGIES, games=240, seed=7, batch_size=40, events=True)


def tables(path) -> dict[str, pl.DataFrame]:
    run = read_run(path)
    return {
        GAMES: run.games.collect(),
        PLAYERS: run.players.collect(),
        EVENTS: run.events.collect(),
    }


def assert_same_tables(path, expected: dict[str, pl.DataFrame]) -> None:
    got = tables(path)
    for name, frame in expected.items():
        assert got[name].equals(frame), f"{name} table differs from the reference run"


def batch_count(path: Path) -> int:
    """Complete batches in a run folder (all of its tables written)."""
    return len(RunFolder(path).complete_batches((GAMES, PLAYERS, EVENTS)))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("reference") / "run"
    run_simulation(replace(BASE, out=path))
    return path, tables(path)


def test_reference_run_is_complete_and_consistent(reference):
    path, ref = reference
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["status"] == STATUS_COMPLETE
    assert manifest["counts"] == {
        "batches": 6,
        GAMES: 240,
        PLAYERS: 960,
        EVENTS: ref[EVENTS].height,
    }
    assert ref[GAMES]["game_id"].to_list() == list(range(240))
    # Every game's events are stored, tagged with its id, in its count.
    per_game = ref[EVENTS].group_by("game_id").len().sort("game_id")
    n_events = ref[GAMES].select("game_id", "n_events").filter(pl.col("n_events") > 0)
    assert per_game["len"].to_list() == n_events["n_events"].to_list()
    players = ref[PLAYERS]
    assert players["strategy_name"].to_list()[:4] == [STRATEGIES[s] for s in (0, 1, 2, 3)]
    win_share = players.group_by("game_id").agg(pl.col("win_share").sum())["win_share"]
    assert (win_share - 1.0).abs().max() < 1e-12
    snapshot = (path / "catalog.toml").read_bytes()
    assert snapshot == DEFAULT_CATALOG.read_bytes()
    assert hashlib.sha256(snapshot).hexdigest() == manifest["data"]["digest"]


def test_tables_do_not_depend_on_workers_or_batch_size(reference, tmp_path):
    _, ref = reference
    run_simulation(replace(BASE, out=tmp_path / "w2", workers=2))
    assert_same_tables(tmp_path / "w2", ref)
    run_simulation(replace(BASE, out=tmp_path / "b7", batch_size=7))
    assert batch_count(tmp_path / "b7") == 35
    assert_same_tables(tmp_path / "b7", ref)


# slow: a Dask cluster's start (about 5 s) for what two faster tests cover: the same tables
# over Dask (test_dask_worker_killed_mid_run_still_gives_the_same_tables) and a cluster the
# command starts itself (test_hostile_runs.py::test_ctrl_c_is_one_line_and_recorded[dask])
@pytest.mark.slow
def test_dask_backend_gives_the_same_tables(reference, tmp_path):
    _, ref = reference
    run_simulation(replace(BASE, out=tmp_path / "dask", backend="dask", workers=2, batch_size=25))
    assert_same_tables(tmp_path / "dask", ref)


def test_resume_after_kill_9_gives_the_uninterrupted_tables(reference, tmp_path):
    """A run killed at a random moment (SIGKILL, workers included) and resumed ends with
    exactly the tables of the uninterrupted run, no game lost or duplicated."""
    _, ref = reference
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "sim.core.cli", "simulate", "--players", "4", "--games", "240"]
    command += ["--strategies", ",".join(STRATEGIES), "--seed", "7", "--batch-size", "4"]
    command += ["--events", "--workers", "2", "--out", str(out)]
    process = subprocess.Popen(
        command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    # A random point measured in progress, so that it lands mid-run on any machine.
    kill_after = random.randint(1, 30)
    deadline = time.monotonic() + 60
    while batch_count(out) < kill_after and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    done = batch_count(out)
    assert 0 < done < 60, f"kill after {kill_after} batches did not land mid-run ({done})"
    assert json.loads((out / "manifest.json").read_text())["status"] == "running"

    result = run_simulation(replace(BASE, out=out, batch_size=4, resume=True))
    assert result.batches_resumed == done
    assert result.games_played == 240 - 4 * result.batches_resumed
    assert_same_tables(out, ref)
    assert not list(out.rglob(".*.tmp"))


def test_resume_cleans_partial_batches_and_temporary_files(reference, tmp_path):
    """A batch with only some of its tables, or a half-written file, is played again."""
    _, ref = reference
    out = tmp_path / "partial"
    run_simulation(replace(BASE, out=out))
    (out / PLAYERS / "batch-000002.parquet").unlink()
    (out / EVENTS / "batch-000004.parquet").rename(out / EVENTS / ".batch-000004.parquet.9.tmp")
    (out / GAMES / "batch-000005.parquet").unlink()
    result = run_simulation(replace(BASE, out=out, resume=True))
    assert result.batches_resumed == 3
    assert result.games_played == 120
    assert_same_tables(out, ref)
    assert not list(out.rglob(".*.tmp"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["games"] for s in manifest["sessions"]] == [240, 120]


def test_dask_worker_killed_mid_run_still_gives_the_same_tables(reference, tmp_path):
    """Dask reschedules the batch of a worker killed with SIGKILL; the tables are unchanged."""
    from distributed import Client, LocalCluster

    _, ref = reference
    out = tmp_path / "dask-killed"
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        victim, pid = next(iter(client.run(os.getpid).items()))
        # Its nanny is told not to start it again: the other worker takes its batch (a new
        # worker process would cost its start-up, about a third of this test's CPU).
        (nanny,) = [n for n in cluster.workers.values() if n.worker_address == victim]
        config = replace(
            BASE, out=out, backend="dask", scheduler=cluster.scheduler_address, batch_size=4
        )
        errors = []

        def simulate():
            try:
                run_simulation(config)
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

        runner = threading.Thread(target=simulate)
        runner.start()
        deadline = time.monotonic() + 60
        while batch_count(out) < 2 and runner.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        killed_at = batch_count(out)
        nanny.close_gracefully()
        os.kill(pid, signal.SIGKILL)
        runner.join(120)
        assert not errors, errors
        assert 0 < killed_at < 60, f"the kill did not land mid-run ({killed_at} batches)"
        assert victim not in client.run(os.getpid)  # gone: its batch was played elsewhere
    assert_same_tables(out, ref)


def test_rotate_plays_every_deal_once_from_each_seat(reference):
    """--seats rotate: each deal is played P times; every strategy sits in every seat once on
    the same deal (same deal seed), so each strategy has every seat equally often."""
    _, ref = reference
    players = ref[PLAYERS].join(ref[GAMES].select("game_id", "deal_seed"), on="game_id")
    assert ref[GAMES]["deal_seed"].n_unique() == 60
    assert (ref[GAMES].group_by("deal_seed").len()["len"] == 4).all()
    seats = players.group_by("deal_seed", "strategy").agg(pl.col("seat").sort())
    assert all(s == [0, 1, 2, 3] for s in seats["seat"].to_list())
    per_seat = players.group_by("strategy", "seat").len()["len"]
    assert per_seat.len() == 16 and (per_seat == 60).all()


def test_tables_are_readable_with_pandas_and_duckdb(reference):
    path, ref = reference
    players = pd.read_parquet(path / PLAYERS)
    assert len(players) == ref[PLAYERS].height
    assert str(players["seat"].dtype) == "int8"
    assert (
        players.sort_values(["game_id", "seat"])["total"].tolist()
        == ref[PLAYERS]["total"].to_list()
    )
    games = pl.read_parquet(str(path / GAMES / "*.parquet"))
    assert games.equals(ref[GAMES])
    duckdb = pytest.importorskip("duckdb")
    glob = str(path / PLAYERS / "*.parquet")
    wins = duckdb.sql(f"select sum(win_share) from '{glob}'").fetchall()[0][0]
    assert wins == pytest.approx(240)


def simulate_cli(tmp_path, *args: str):
    argv = ["simulate", "--games", "8", "--strategies", "random,random,random,random"]
    return main(argv + ["--out", str(tmp_path / "out"), "--workers", "1", *args])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--strategies", "random,bogus,random,random"], "unknown strategy 'bogus'"),
        (["--strategies", "random,random"], "--strategies lists 2 strategies but --players is 4"),
        (["--players", "6", "--strategies", "random," * 5 + "random"], "--players 6: must be"),
        (["--players", "0", "--strategies", "random"], "--players 0: must be between 1 and 5"),
        (["--games", "10"], "--games 10 is not a multiple of --players 4"),
        (["--batch-size", "0"], "--batch-size 0: must be at least 1"),
        (["--scheduler", "tcp://localhost:1"], "--scheduler needs --backend dask"),
        (["--catalog", "no-such-file.toml"], "no-such-file.toml"),
    ],
)
def test_bad_options_are_one_line_errors_and_write_nothing(tmp_path, capsys, args, message):
    assert simulate_cli(tmp_path, *args) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_unknown_strategy_error_lists_the_valid_ones(tmp_path, capsys):
    assert simulate_cli(tmp_path, "--strategies", "random,nope,random,random") == 1
    assert "valid strategies: random, greedy" in capsys.readouterr().err


def test_unwritable_output_is_an_error(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code = main(
        ["simulate", "--games", "4", "--strategies", "random,random,random,random"]
        + ["--workers", "1", "--out", str(blocker / "run")]
    )
    assert code == 1
    assert "cannot write the run folder" in capsys.readouterr().err


def test_existing_run_needs_resume_or_overwrite(tmp_path, capsys):
    assert simulate_cli(tmp_path) == 0
    manifest = (tmp_path / "out" / "manifest.json").read_bytes()
    capsys.readouterr()
    assert simulate_cli(tmp_path) == 1
    assert "pass --resume to continue it or --overwrite" in capsys.readouterr().err
    assert (tmp_path / "out" / "manifest.json").read_bytes() == manifest
    assert simulate_cli(tmp_path, "--resume", "--seed", "2") == 1
    assert "different --seed (the run used 1, not 2)" in capsys.readouterr().err
    assert simulate_cli(tmp_path, "--resume", "--events") == 1
    assert "different --events" in capsys.readouterr().err
    assert simulate_cli(tmp_path, "--resume") == 0
    assert "already complete (8 games); nothing to do" in capsys.readouterr().err
    assert simulate_cli(tmp_path, "--overwrite", "--seed", "2") == 0
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["seed"] == 2


def test_a_folder_that_is_not_a_run_is_never_touched(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    for flag in ((), ("--overwrite",), ("--resume",)):
        assert simulate_cli(tmp_path, *flag) == 1
        assert "not a run folder" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["notes.txt"]


def test_cli_prints_the_summary_and_the_manifest_records_the_run(tmp_path, capsys):
    assert simulate_cli(tmp_path, "--seats", "shuffle", "--variant", "no-disasters") == 0
    out = capsys.readouterr().out
    for line in ("games: 8", "wall time:", "games/s:", f"output: {tmp_path / 'out'}"):
        assert line in out
    assert (
        "data: NEOM default (reconstructed, v3: rebalanced for use) (RECONSTRUCTED: not the" in out
    )
    manifest = RunFolder(tmp_path / "out").read_manifest()
    # The command this call gave, not the test process's own argv (under pytest-xdist a
    # worker's sys.argv is not a neom command at all).
    assert manifest["command"] == (
        "neom simulate --games 8 --strategies random,random,random,random --out "
        f"{tmp_path / 'out'} --workers 1 --seats shuffle --variant no-disasters"
    )
    assert manifest["seats"] == "shuffle" and manifest["game"] == "neom"
    assert manifest["rules"]["variant"] == V_NO_DISASTERS
    assert set(manifest["versions"]) == {
        "python",
        "numpy",
        "numba",
        "polars",
        "pyarrow",
        "neom-sim",
    }
    assert [s["name"] for s in manifest["strategies"]] == ["random"] * 4


def test_reading_options_reach_the_rules_and_block_a_mismatched_resume(tmp_path, capsys):
    """RULES.md S3: --neighborhoods residential plays the narrower reading; the manifest
    records it, and a resume under the other reading is refused."""
    args = ("--neighborhoods", "residential", "--solo-tileset", "4")
    assert simulate_cli(tmp_path, *args) == 0
    manifest = RunFolder(tmp_path / "out").read_manifest()
    assert manifest["rules"]["neighborhood_through_any"] == 0
    assert manifest["rules"]["solo_tileset"] == 4
    capsys.readouterr()
    assert simulate_cli(tmp_path, "--resume") == 1
    assert "cannot resume with a different rules options" in capsys.readouterr().err
