"""The headline of the measured ladder (docs/strategies.md), kept short: the best tuned set
of strategies/neom/tuned.toml beats greedy in 2-player games."""

from pathlib import Path

import pytest

from sim.neom.catalog import load_catalog
from strategies.neom.registry import load_strategy_file, parse_strategy
from strategies.tools.arena import play_match
from strategies.tools.ladder import wilson

TUNED = Path(__file__).resolve().parent.parent / "strategies" / "neom" / "tuned.toml"
BEST = "tuned_builder"


@pytest.mark.slow
def test_best_tuned_set_beats_greedy_in_two_player_games():
    """4,000 2-player games, seats rotating: the win rate's 95% interval lies above 1/2."""
    games = 4000
    tuned = load_strategy_file(TUNED)[BEST]
    match = play_match(
        load_catalog(), [tuned, parse_strategy("greedy")], [0, 1], games, 77, workers=2
    )
    low, _ = wilson(match.win_share(0) * games, games)
    assert low > 0.5
