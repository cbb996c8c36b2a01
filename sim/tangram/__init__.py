"""Tangram City (Uwe Rosenberg, Korea Boardgames 2023), the project's second game.

Rules: shared/rules/004 and TANGRAM_RULES.md (rule -> reading -> test). The tile set is data
(:mod:`sim.tangram.tileset`); the packaged default is a RECONSTRUCTION. This package holds the
rules and data only; the compiled game loop and the strategies are in ``strategies/tangram``,
the report sections in ``analysis/tangram``, named below by ``"module:attribute"``.
"""

from pathlib import Path

from sim.core.game import Game, GameData
from sim.tangram import constants as K
from sim.tangram import records as R
from sim.tangram.rules import RULE_OPTIONS, describe_rules, make_rules, rules_as_dict

RULES_VERSION = "tangram-1"


def load_data(path: Path | None = None) -> GameData:
    from sim.tangram.tileset import load_tileset

    return load_tileset(path)


# Every reference the core's Game knows, in both its shapes: this branch's (play_one_ref,
# commands_ref, describe_rules) and main's restructured one (play_ref, commands,
# compile_seconds). Only the fields this core's Game has are given.
_DECLARATION = {
    "name": "tangram",
    "title": "Tangram City",
    "rules_version": RULES_VERSION,
    "min_players": K.MIN_PLAYERS,
    "max_players": K.MAX_PLAYERS,
    "tables": R.TABLES,
    "event_kinds": R.EVENT_KINDS,
    "events_per_game": R.EVENTS_PER_GAME,
    "data_flag": "--tileset",
    "load_data": load_data,
    "rule_options": RULE_OPTIONS,
    "make_rules": make_rules,
    "rules_as_dict": rules_as_dict,
    "strategies_ref": "strategies.tangram.registry:STRATEGIES",
    "play_batch_ref": "strategies.tangram.play:play_batch",
    "play_one_ref": "strategies.tangram.play:play_one",
    "play_ref": "analysis.tangram.play_log:show_game",
    "report_ref": "analysis.tangram.sections:add_sections",
    "score_ref": "sim.tangram.score:score_file",
    "commands_ref": "sim.tangram.commands:register",
    "commands": (("tileset", "sim.tangram.commands"),),
    "describe_rules": describe_rules,
    "compile_seconds": 30.0,  # a cold compile of play_batch (docs/tangram.md: 24-31 s CPU)
}
GAME = Game(**{k: v for k, v in _DECLARATION.items() if k in Game.__dataclass_fields__})
