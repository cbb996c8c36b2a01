"""NEOM (Paul Dennen, Lookout Games 2018) behind the Game interface (``sim.core.game``).

The rules and their compiled engine live here (catalogue, tables, grid, effects, scoring,
engine); the compiled game loop and the strategies in ``strategies/neom``; the report sections
and experiments in ``analysis/neom``. RULES.md records every rule, its reading and its test.
"""

from pathlib import Path

from sim.core.game import Game, GameData, RuleOption
from sim.neom import constants as K
from sim.neom import records as R
from sim.neom.catalog import SHIPPED_CATALOGS, read_catalog
from sim.neom.tables import make_rules, rules_as_dict

CATALOG_SNAPSHOT = "catalog.toml"


def load_data(path: Path | None = None) -> GameData:
    """The catalogue file at ``path`` (None: the shipped reconstruction), validated."""
    tables, raw = read_catalog(path)
    return GameData(
        name=tables.name,
        source=tables.source,
        digest=tables.digest,
        raw=raw,
        reconstructed=tables.reconstructed,
        arrays=tables.arrays,
        snapshot_name=CATALOG_SNAPSHOT,
        content=tables,
    )


def data_warnings(data: GameData) -> list[str]:
    """The validator's warnings about a catalogue (``neom catalog validate``)."""
    from sim.neom.catalog import catalog_warnings

    return catalog_warnings(data.content)


RULE_OPTIONS = (
    RuleOption(
        name="variant",
        choices=dict(K.VARIANT_NAMES),
        default="standard",
        help="game variant (RULES.md P13)",
        commands=("play", "simulate"),
        describe={
            "standard": "standard game: players select the Disasters",
            "no-disasters": "no-disasters variant: Disasters replaced by city tiles, "
            "protection tiles score extra VP",
            "random-disasters": "random-disasters variant: each generation's Disaster strikes "
            "everyone on a turn drawn at setup and shown to the players",
            "beginner": "beginner variant: no cornerstone draft, one random cornerstone each "
            "(the Contract Office may swap it)",
        },
    ),
    RuleOption(
        name="neighborhood_through_any",
        flag="--neighborhoods",
        choices={"any": 1, "residential": 0},
        default="any",
        help="a Neighborhood's road chain may pass through any tile (default) or only through "
        "Residential tiles (RULES.md S3)",
        describe={
            "any": "Neighborhoods: road chains may pass through any tile (text 002)",
            "residential": "Neighborhoods: road chains through Residential tiles only "
            "(text 001: directly connected)",
        },
    ),
    RuleOption(
        name="solo_tileset",
        choices={"1": 1, "4": 4, "5": 5},
        default="1",
        help="solo games: 1 (1+ tiles), 4 (1+ and 4+) or 5 (all)",
        commands=("play", "simulate"),
        describe={
            "1": "solo tile set: 1+ tiles (24 per generation)",
            "4": "solo tile set: 1+ and 4+ tiles (32 per generation)",
            "5": "solo tile set: all tiles (40 per generation)",
        },
    ),
)


GAME = Game(
    name="neom",
    title="NEOM",
    rules_version="neom-2",
    min_players=1,
    max_players=R.MAX_PLAYERS,
    tables=R.TABLES,
    event_kinds=R.EVENT_KIND_NAMES,
    events_per_game=R.MAX_EVENTS_PER_GAME,
    data_flag="--catalog",
    data_header="catalog",
    data_noun="catalogue",
    data_names=tuple(SHIPPED_CATALOGS),
    data_warnings=data_warnings,
    intervention_rules=("force_tile", "force_seat", "ban_tile"),
    load_data=load_data,
    rule_options=RULE_OPTIONS,
    make_rules=make_rules,
    rules_as_dict=rules_as_dict,
    strategies_ref="strategies.neom.registry:REGISTRY",
    play_batch_ref="strategies.neom.entries:play_batch",
    # a lineup's entry compiles only its strategies (strategies.neom.entries)
    entry_ref="strategies.neom.entries:play_batch_for",
    compile_estimate_ref="strategies.neom.entries:compile_estimate",
    pieces_ref="strategies.neom.entries",  # the loop and each family compiled on its own
    play_ref="analysis.neom.play_log:show_game",
    report_ref="analysis.neom.report:add_sections",
    compare_ref="analysis.neom.compare:COMPARING",
    experiment_ref="analysis.neom.experiment:EXPERIMENTING",
    balance_ref="analysis.neom.balance_cli:BALANCING",
    probe_ref="analysis.neom.vp_probe:probe_report",
    score_ref="sim.neom.commands.score:score_file",
    compile_seconds=40.0,  # the loop (strategies.neom.entries.PIECES)
    commands=(("catalog", "sim.neom.commands.catalog", "check, show or start a tile catalogue"),),
)
