"""``python -m strategies.tools.bench`` times the named strategies and writes its JSON summary."""

import json

from strategies.tools import bench


def test_bench_writes_games_per_second(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["--games", "3", "--replays", "2", "--strategies", "greedy,builder"]
    argv += ["--field-games", "8"]
    assert bench.main(argv) == 0
    results = json.loads((tmp_path / bench.RESULTS).read_text())
    assert results["games"] == 3 and results["replays"] == 2
    assert set(results["games_per_second"]) == {"greedy", "builder"}
    assert all(rate > 0 for rate in results["games_per_second"].values())
    # The reported rate is the best replay: never below the median of the replays.
    for name, median in results["games_per_second_median"].items():
        assert 0 < median <= results["games_per_second"][name]
    assert results["field"] == bench.FIELD and results["field_games"] == 8
    assert results["field_workers"] >= 1 and results["field_games_per_second"] > 0
    out = capsys.readouterr().out
    assert "builder" in out and f"{bench.FIELD}: " in out


def test_bench_rejects_zero_replays(capsys):
    try:
        bench.main(["--replays", "0", "--field-games", "0"])
    except SystemExit as exit:
        assert exit.code != 0
    else:
        raise AssertionError("--replays 0 was accepted")
    assert "--replays must be at least 1" in capsys.readouterr().err
