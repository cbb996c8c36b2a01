"""``python -m strategies.bench`` times the named strategies and writes its JSON summary."""

import json

from strategies import bench


def test_bench_writes_games_per_second(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert bench.main(["--games", "3", "--strategies", "greedy,builder"]) == 0
    results = json.loads((tmp_path / bench.RESULTS).read_text())
    assert results["games"] == 3
    assert set(results["games_per_second"]) == {"greedy", "builder"}
    assert all(rate > 0 for rate in results["games_per_second"].values())
    assert "builder" in capsys.readouterr().out
