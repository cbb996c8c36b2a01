"""The Game declaration of Tangram City against the core's interface (sim/core/game.py): the
record dtypes carry the required columns and none the core adds, the compiled code's column
indices match the dtypes, every reference resolves, and the event buffer is large enough."""

import importlib

import numpy as np
import pytest
from test_tangram_support import run_batch

from analysis.core.balance import Balancing
from analysis.core.compare import Comparing
from analysis.core.experiment import Experimenting
from sim.core.game import ADDED_COLUMNS, REQUIRED_COLUMNS, TABLES, GameData, resolve
from sim.core.registry import get_game
from sim.tangram import GAME
from sim.tangram import constants as K
from sim.tangram import records as R
from sim.tangram.rules import describe_rules, make_rules


def test_the_registry_finds_the_game():
    assert get_game("tangram") is GAME
    assert GAME.name == "tangram" and (GAME.min_players, GAME.max_players) == (1, 5)
    assert GAME.data_flag == "--tileset"


@pytest.mark.parametrize("table", TABLES)
def test_tables_have_the_required_columns(table):
    names = GAME.columns(table)
    assert set(REQUIRED_COLUMNS[table]) <= set(names)
    assert not set(ADDED_COLUMNS[table]) & set(names)
    for name in names:
        assert np.issubdtype(GAME.tables[table][name], np.integer)


def test_column_indices_match_the_dtypes():
    def index(prefix, module=R):
        return {
            name: getattr(module, name)
            for name in dir(module)
            if name.startswith(prefix) and not name.startswith(prefix + "N")
        }

    games = GAME.columns("games")
    assert R.N_GAME_COLS == len(games)
    assert games[R.G_GAME_ID] == "game_id" and games[R.G_DEAL_SEED] == "deal_seed"
    assert games[R.G_N_EVENTS] == "n_events" and games[R.G_FIRST_START] == "first_start"
    assert games[R.G_CARD0] == "card_0" and games[-1] == "card_22"
    players = GAME.columns("players")
    assert R.N_PLAYER_COLS == len(players)
    expected = {
        "P_SEAT": "seat", "P_STRATEGY": "strategy", "P_BOARD": "board",
        "P_START_COLOUR": "start_colour", "P_ROUND1": "round_1",
        "P_ROUNDS_TOTAL": "rounds_total", "P_PLANNING_BONUS": "planning_bonus",
        "P_BALANCE_BONUS": "balance_bonus", "P_RED": "red", "P_GREEN": "green",
        "P_TOTAL": "total", "P_RANK": "rank", "P_WIN": "win",
        "P_TILES_PLACED": "tiles_placed", "P_TILES_DECLINED": "tiles_declined",
        "P_FOUNTAINS": "fountains", "P_FULL_SQUARES": "full_squares", "P_QUARTERS": "quarters",
        "P_DECLINED_MASK": "declined_mask", "P_HAND_ROUNDS": "hand_rounds",
        "P_SHARED_ROUNDS": "shared_rounds", "P_START_ROUNDS": "start_rounds",
    }  # fmt: skip
    assert set(index("P_")) == set(expected)
    for constant, name in expected.items():
        assert players[getattr(R, constant)] == name
    events = GAME.columns("events")
    assert R.N_EVENT_COLS == len(events)
    for constant, column in index("E_").items():
        assert events[column] == constant[2:].lower()
    kinds = {name: value for name, value in index("EV_").items()}
    assert sorted(kinds.values()) == list(range(len(R.EVENT_KINDS)))
    for constant, value in kinds.items():
        assert R.EVENT_KINDS[value] == constant[3:].lower()


def test_every_reference_resolves():
    """Every "module:attribute" of the declaration, under the core's Game of this branch
    (play_one_ref, commands_ref) and of main (play_ref, commands): only the fields the core
    has are declared, and each one given resolves."""
    registry = GAME.strategies
    assert registry.n_params >= max(len(i.param_names) for i in registry.strategies)
    assert callable(GAME.play_batch)
    # An optional reference left at "" (score_ref, entry_ref) means the game has none.
    refs = [getattr(GAME, name) for name in dir(GAME) if name.endswith("_ref")]
    refs = [ref for ref in refs if ref]
    assert len(refs) >= 5
    # The design commands' parts (compare_ref, balance_ref) are their dataclasses.
    parts = (Comparing, Experimenting, Balancing)
    for ref in refs:
        target = resolve(ref)
        assert callable(target) or target is registry or isinstance(target, parts), ref
    for _, module, _ in getattr(GAME, "commands", ()):
        assert callable(importlib.import_module(module).register)
    # sim/tangram imports only the core: the loop and strategies are named, not imported.
    for module in ("sim.tangram", "sim.tangram.engine", "sim.tangram.tileset"):
        source = importlib.import_module(module).__file__
        assert "strategies" not in "".join(
            line for line in open(source) if line.startswith(("import", "from"))
        )


def test_rules_and_data_helpers():
    data = GAME.load_data(None)
    assert isinstance(data, GameData) and data.snapshot_name == "tileset.toml"
    rules = GAME.make_rules(**{o.name: o.default for o in GAME.rule_options})
    assert np.array_equal(rules, make_rules())
    assert GAME.rules_as_dict(rules)["balance_bonus"] == [20, 10, 10, 5, 5, 0]
    assert len(describe_rules(rules)) == 6
    if "describe_rules" in type(GAME).__dataclass_fields__:  # this branch's core
        assert GAME.describe_rules is describe_rules
    flags = [o.flag for o in GAME.rule_options]
    assert len(set(flags)) == len(flags)


def test_the_event_buffer_holds_the_largest_game():
    """5 players with fountains kept, every reading at its most eventful: the events fit the
    rows reserved per game (the docstring of records.EVENTS_PER_GAME counts 239 at most)."""
    data = GAME.load_data(None)
    rules = make_rules(fountain_kept="yes")
    games, _, events, _ = run_batch(data, ["random"], np.zeros((50, 5)), np.arange(50), rules=rules)
    assert games["n_events"].max() <= 239 <= R.EVENTS_PER_GAME
    assert max(len(ev) for ev in events) == games["n_events"].max()


def test_stored_values_fit_their_types():
    """Each column's type is wide enough for its stated bound (run_batch converts every row to
    the record dtypes and raises on any value that does not fit)."""
    data = GAME.load_data(None)
    for n_players in (1, 5):
        run_batch(data, ["greedy"], np.zeros((5, n_players)), np.arange(5))
    assert np.iinfo(GAME.tables["players"]["total"]).max >= 6 * 49 + 2 * 1000
    assert np.iinfo(GAME.tables["players"]["declined_mask"]).max >= (1 << K.N_CARDS) - 1
