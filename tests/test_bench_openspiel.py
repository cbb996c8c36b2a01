"""The OpenSpiel yardstick (``sim.tools.bench_openspiel``): its options and its hearts rollouts.
Speed itself is measured by the benchmark, never here."""

import pytest

from sim.core.cli import guarded
from sim.tools import bench_openspiel


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--rounds", "0"], "--rounds 0: must be 1 or more"),
        (["--hearts-games", "-3"], "--hearts-games -3: must be 1 or more"),
    ],
)
def test_bad_options_are_one_line(argv, message, capsys):
    assert guarded(lambda: bench_openspiel.main(argv), "bench") == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_hearts_rollouts_play_whole_games():
    pyspiel = pytest.importorskip("pyspiel", reason="optional: pip install -e '.[bench]'")
    # A 4-player hearts game deals 52 cards and plays 52: at least 104 moves a game, and the
    # same seed plays the same games.
    moves = bench_openspiel.hearts_rollouts(3, seed=5)
    assert moves >= 3 * 104 and moves == bench_openspiel.hearts_rollouts(3, seed=5)
    assert pyspiel.load_game("hearts").num_players() == 4
