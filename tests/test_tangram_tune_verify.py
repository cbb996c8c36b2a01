"""``neom tune --game tangram`` and ``neom verify --game tangram`` (issue 40 part 2): the tuning
and verification machinery is game-generic (the game supplies its strategies, data and rules
through the Game interface), so Tangram City's tuned planner sets are made and checked as
NEOM's are. The quick cases play greedy against random (fast lineups); the shipped sets'
own figures are read from their file, written by ``neom verify --game tangram --write``."""

import tomllib

import numpy as np
import pytest
from run_helpers import two_player_set
from scipy.stats import t

from analysis.tools.verify import paired_lead
from sim.core.cli import main
from sim.core.registry import get_game
from sim.core.strategies import seat_strategies, shipped_file
from strategies.tangram.registry import (
    GREEDY_BALANCE_WEIGHT,
    PLANNER_BALANCE_WEIGHT,
    STRATEGIES,
)
from strategies.tools.tune import tunable_slots

VERIFY_FILE = (
    two_player_set("planted", "random")
    + "\n"
    + two_player_set("same", "greedy", seed=None)
    + '\n[fields.mixed]\n2 = ["planted", "greedy"]\n'
)


def test_only_value_weights_are_tuned_not_the_search_budget():
    """The planner's samples and candidates (whole numbers: its search budget) stay fixed."""
    assert tunable_slots(STRATEGIES, "planner") == [PLANNER_BALANCE_WEIGHT]
    assert tunable_slots(STRATEGIES, "greedy") == [GREEDY_BALANCE_WEIGHT]
    assert tunable_slots(STRATEGIES, "random") == []


def test_tune_writes_a_tangram_set_with_its_tuning_table(tmp_path, capsys):
    out = tmp_path / "sets.toml"
    args = ["tune", "--game", "tangram", "--base", "greedy", "--opponents", "random"]
    args += ["--players", "2", "--budget", "100", "--seed", "7", "--no-progress"]
    assert main([*args, "--name", "quick", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# neom tune --game tangram --base greedy --opponents random")
    quick = tomllib.loads(text)["sets"]["quick"]
    assert quick["base"] == "greedy" and "balance_weight" in quick
    tuning = quick["tuning"]
    assert tuning["rules_version"] == get_game("tangram").rules_version
    assert tuning["players"] == 2 and tuning["opponents"] == ["random"]
    assert tuning["share"] > 0.5 and tuning["base_share"] > 0.5  # greedy beats random
    assert main(["strategies", "--game", "tangram", "--strategy-file", str(out)]) == 0
    assert "quick: greedy" in capsys.readouterr().out


def test_tune_refuses_a_strategy_without_value_weights(capsys):
    args = ["tune", "--game", "tangram", "--base", "random", "--opponents", "greedy"]
    assert main([*args, "--budget", "100", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has no parameters to tune" in err


def test_verify_finds_a_planted_lead_and_none_where_there_is_none(tmp_path, capsys):
    """Known answers on Tangram City: greedy replacing random leads in both fields; a set
    identical to what it replaces plays the same games (lead exactly 0: not verified)."""
    path = tmp_path / "sets.toml"
    path.write_text(VERIFY_FILE)
    args = ["verify", "--game", "tangram", "--strategy-file", str(path), "--games", "30"]
    assert main([*args, "--field", "mixed", "--write"]) == 1  # "same" does not pass
    captured = capsys.readouterr()
    assert "planted: passed against random" in captured.out
    assert "same: FAILED against greedy" in captured.out
    assert "checks, " in captured.err and "s left]" in captured.err  # progress with time left
    sets = tomllib.loads(path.read_text())["sets"]
    planted, same = sets["planted"]["verification"], sets["same"]["verification"]
    assert planted["passed"] is True and planted["players"] == 2
    assert planted["rules_version"] == get_game("tangram").rules_version
    assert planted["tuned"]["lead_lo"] > 0 and planted["mixed"]["lead_lo"] > 0
    assert same["passed"] is False and same["tuned"]["lead"] == 0
    assert same["same_as_replaced"] is True and "same_as_replaced" not in planted
    assert "it plays as what it replaces" in captured.out
    assert main(["strategies", "--game", "tangram", "--strategy-file", str(path)]) == 0
    assert "verified: passed against random (2 players, rules tangram-" in capsys.readouterr().out


def test_a_mixed_field_seating_as_the_tuned_one_is_not_replayed(tmp_path, capsys):
    """The strong field of default planners is the tuned sets' own tuning field: the same
    strategies in the same seats play the same games, so the mixed check reuses them."""
    path = tmp_path / "sets.toml"
    path.write_text(
        two_player_set("planted", "random") + '\n[fields.same]\n2 = ["planted", "random"]\n'
    )
    args = ["verify", "--game", "tangram", "--strategy-file", str(path), "--games", "20"]
    assert main([*args, "--field", "same", "--write"]) == 0
    err = capsys.readouterr().err
    assert err.count(" games in ") == 1 and "mixed field: the tuned field's games" in err
    verification = tomllib.loads(path.read_text())["sets"]["planted"]["verification"]
    tuned, mixed = verification["tuned"], verification["mixed"]
    assert mixed["others"] == tuned["others"] == ["random"]
    assert mixed == tuned  # the same figures, not a second sample


def test_the_lead_interval_is_students_t_at_small_n():
    """At 5 games the normal interval would be too narrow: the t quantile on 4 degrees of
    freedom (2.78) is used instead of 1.96."""
    a = np.array([1.0, 0.0, 1.0, 1.0, 0.5])
    b = np.zeros(5)
    lead = paired_lead(a, b)
    half = t.ppf(0.975, 4) * (a - b).std(ddof=1) / np.sqrt(5)
    assert lead["lo"] == pytest.approx(lead["mean"] - half)
    assert lead["hi"] == pytest.approx(lead["mean"] + half)


def test_a_missing_set_is_one_line(capsys):
    assert main(["verify", "--game", "tangram", "--sets", "tuned_nothing_9p"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no set 'tuned_nothing_9p'" in err


def shipped():
    return shipped_file(STRATEGIES)


def test_the_strong_field_seats_a_tuned_set_only_where_it_passed_its_verification():
    """For 2-5 players the strong field seats the tuned planner set of that count in every
    seat when the set passed ``neom verify --game tangram`` (tuned and verified under the
    game's rules, on fresh deals), else the default planner it did not beat; solo games have
    no opponent to tune against: the planner."""
    rules = get_game("tangram").rules_version
    strong = shipped().fields["strong"]
    assert strong.tables[1] == ("planner",)
    for players in range(2, 6):
        name = f"tuned_planner_{players}p"
        tables = shipped().tables[name]
        assert tables["tuning"]["players"] == players
        assert tables["tuning"]["rules_version"] == rules
        verification = tables["verification"]
        assert verification["rules_version"] == rules and verification["players"] == players
        assert verification["seed"] != tables["tuning"]["seed"]  # fresh deals
        seated = name if verification["passed"] else "planner"
        assert strong.tables[players] == (seated,) * players
        seats = seat_strategies(STRATEGIES, ("strong",), players)
        assert {s.name for s in seats} == {"planner"}
