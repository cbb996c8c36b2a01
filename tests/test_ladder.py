"""The headline of the measured ladder (docs/strategies.md), kept short: the best tuned set
of strategies/neom/tuned.toml (the strong field's first 2-player set) beats greedy in 2-player
games."""

import json

import numpy as np
import pytest

from analysis.core.ladder import clustered_rate
from analysis.core.stats import wilson_interval
from sim.core.cli import main
from sim.core.strategies import shipped_file
from sim.neom.catalog import load_catalog
from strategies.neom.registry import REGISTRY, parse_strategy, resolve_strategy
from strategies.tools.arena import play_match

BEST = shipped_file(REGISTRY).fields["strong"].tables[2][0]


@pytest.mark.slow
def test_best_tuned_set_beats_greedy_in_two_player_games():
    """4,000 2-player games, seats rotating: the win rate's 95% interval lies above 1/2."""
    games = 4000
    tuned = resolve_strategy(BEST)
    match = play_match(
        load_catalog(), [tuned, parse_strategy("greedy")], [0, 1], games, 77, workers=2
    )
    low, _ = wilson_interval(match.win_share(0) * games, games)
    assert low > 0.5


def test_neom_ladder_prints_and_writes_each_rung_against_the_one_below(tmp_path, capsys):
    """``neom ladder --rungs random,greedy,builder``: one line and one JSON object per rung
    above the first, with its win rate and interval; greedy beats random outright."""
    out = tmp_path / "ladder.json"
    args = ["ladder", "--rungs", "random,greedy,builder", "--games", "40", "--workers", "1"]
    assert main([*args, "--seed", "3", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [(r["rung"], r["below"], r["players"], r["games"]) for r in rows] == [
        ("greedy", "random", 2, 40),
        ("builder", "greedy", 2, 40),
    ]
    for row in rows:
        assert 0.0 <= row["lo"] <= row["win_rate"] <= row["hi"] <= 1.0
    assert rows[0]["win_rate"] == 1.0 and rows[0]["lo"] > 0.9
    printed = capsys.readouterr().out
    assert "greedy vs random: 1.000 [" in printed and "builder vs greedy: " in printed


def test_clustered_rate_widens_the_interval_when_deals_decide_the_game():
    """Two seatings of each deal, the same win rate: when each deal splits one win, one loss
    the interval is Wilson's on all games; when the deal decides (both games of a deal won,
    or both lost) the games are half as informative and the interval wider."""
    deal = np.repeat(np.arange(50), 2)
    split = np.tile([1.0, 0.0], 50)  # each deal: one win, one loss: no deal effect
    decided = np.repeat(np.tile([1.0, 0.0], 25), 2)  # each deal won twice or lost twice
    rate_a, lo_a, hi_a = clustered_rate(split, deal)
    rate_b, lo_b, hi_b = clustered_rate(decided, deal)
    assert rate_a == rate_b == 0.5
    assert hi_b - lo_b > 1.3 * (hi_a - lo_a)
    low, high = wilson_interval(50, 100)
    assert (lo_a, hi_a) == pytest.approx((float(low), float(high)))


@pytest.mark.slow
def test_default_ladder_each_rung_wins_sixty_percent_against_the_one_below(tmp_path):
    """NEOM's default ladder (strategies/neom/registry.py; docs/strategies.md): every rung
    wins at least 60% of 1,000 2-player games against the rung below, on a seed of its own."""
    out = tmp_path / "ladder.json"
    assert (
        main(["ladder", "--games", "1000", "--seed", "99", "--workers", "2", "--json", str(out)])
        == 0
    )
    rows = json.loads(out.read_text())
    assert len(rows) >= 4  # five rungs at least
    for row in rows:
        assert row["win_rate"] >= 0.6, row
