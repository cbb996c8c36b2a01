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
from sim.tangram.rules import RULE_OPTIONS, make_rules, rules_as_dict

RULES_VERSION = "tangram-1"


def load_data(path: Path | None = None) -> GameData:
    from sim.tangram.tileset import load_tileset

    return load_tileset(path)


def data_warnings(data: GameData) -> list[str]:
    """The validator's warnings about a tile set (``neom tileset validate``)."""
    from sim.tangram.tileset import tileset_warnings

    return tileset_warnings(data)


GAME = Game(
    name="tangram",
    title="Tangram City",
    rules_version=RULES_VERSION,
    min_players=K.MIN_PLAYERS,
    max_players=K.MAX_PLAYERS,
    tables=R.TABLES,
    event_kinds=R.EVENT_KINDS,
    events_per_game=R.EVENTS_PER_GAME,
    data_flag="--tileset",
    data_header="tileset",
    data_noun="tile set",
    data_warnings=data_warnings,
    load_data=load_data,
    rule_options=RULE_OPTIONS,
    make_rules=make_rules,
    rules_as_dict=rules_as_dict,
    strategies_ref="strategies.tangram.registry:STRATEGIES",
    play_batch_ref="strategies.tangram.play:play_batch",
    play_ref="analysis.tangram.play_log:show_game",
    report_ref="analysis.tangram.sections:add_sections",
    compare_ref="analysis.tangram.compare:COMPARING",
    balance_ref="analysis.tangram.balance:BALANCING",
    experiment_ref="analysis.tangram.experiment:EXPERIMENTING",
    intervention_rules=("force_tile", "force_seat", "ban_tile"),
    score_ref="sim.tangram.score:score_file",
    score_unit="points",  # Tangram City scores points, not victory points
    compile_seconds=30.0,  # a cold compile of play_batch (docs/tangram.md: 24-31 s CPU)
    commands=(
        (
            "tileset",
            "sim.tangram.commands",
            "Tangram City tile sets: validate, template, show, witness",
        ),
    ),
)
