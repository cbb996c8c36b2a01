"""``python -m sim.bench_ab``: paired timing of two checkouts on the same games."""

from pathlib import Path

import pytest

from sim.tools import bench_ab

ROOT = Path(__file__).resolve().parent.parent


def test_workers_time_the_same_games_in_turns(capsys):
    # This checkout against itself: both workers play games 1000.. and report games/s.
    assert bench_ab.main([str(ROOT), str(ROOT), "--jobs", "random:20", "--rounds", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 alternated rounds" in out
    line = next(row for row in out.splitlines() if row.strip().startswith("random"))
    assert "(20 games)" in line and "new/old" in line


def test_rounds_alternate_and_every_round_is_kept():
    rates = bench_ab.compare([ROOT], [("random", 10), ("greedy", 2)], rounds=3, core=-1)
    assert set(rates) == {(0, "random"), (0, "greedy")}
    assert all(len(r) == 3 and min(r) > 0 for r in rates.values())


@pytest.mark.parametrize("jobs", ["random", "random:0", ":5", "random:x"])
def test_bad_jobs_are_refused_by_name(jobs):
    with pytest.raises(SystemExit, match="STRATEGY:GAMES"):
        bench_ab.parse_jobs(jobs)


def test_a_folder_without_the_project_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="not a checkout"):
        bench_ab.main([str(tmp_path), str(ROOT), "--rounds", "1"])


def test_a_worker_that_cannot_start_is_named(tmp_path):
    with pytest.raises(SystemExit, match="did not start"):
        bench_ab.compare([ROOT], [("no_such_strategy", 1)], rounds=1, core=-1)
