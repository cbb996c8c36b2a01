"""``python -m strategies.bench`` times the named strategies and writes its JSON summary."""

import json

from strategies import bench


def test_bench_writes_games_per_second(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["--games", "3", "--strategies", "greedy,builder", "--field-games", "8"]
    assert bench.main(argv) == 0
    results = json.loads((tmp_path / bench.RESULTS).read_text())
    assert results["games"] == 3
    assert set(results["games_per_second"]) == {"greedy", "builder"}
    assert all(rate > 0 for rate in results["games_per_second"].values())
    assert results["field"] == bench.FIELD and results["field_games"] == 8
    assert results["field_workers"] >= 1 and results["field_games_per_second"] > 0
    out = capsys.readouterr().out
    assert "builder" in out and f"{bench.FIELD}: " in out
