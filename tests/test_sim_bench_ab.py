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


def test_tangram_lineups_are_timed_and_their_games_compared(capsys):
    # Tangram City: one name fills 4 seats, a + lineup one seat each; both sides play the same
    # games (their digests agree, else the comparison stops).
    argv = [str(ROOT), str(ROOT), "--game", "tangram", "--rounds", "2"]
    assert bench_ab.main([*argv, "--jobs", "greedy:5,planner:samples=1+random:2"]) == 0
    out = capsys.readouterr().out
    assert "tangram: 4-player games/s" in out
    assert any(row.strip().startswith("planner:samples=1+random") for row in out.splitlines())


def test_sides_that_play_different_games_are_refused(monkeypatch):
    answers = iter([(10.0, "aaaa"), (11.0, "bbbb")])
    monkeypatch.setattr(bench_ab, "start_worker", lambda *a: FakeWorker())
    monkeypatch.setattr(bench_ab, "ask", lambda *a: next(answers))
    with pytest.raises(SystemExit, match="played different greedy games"):
        bench_ab.compare([ROOT, ROOT], [("greedy", 1)], rounds=1, core=-1, game="tangram")


class FakeWorker:
    """A worker that has started and stops when asked."""

    def __init__(self):
        self.stdout = self
        self.stdin = self

    def readline(self):
        return "ready\n"

    def close(self):
        pass

    def wait(self):
        return 0
