"""Tangram City's part of ``neom experiment`` (:mod:`analysis.core.experiment`,
``Game.experiment_ref``): a City Tile forced on a seat or banned.

Every seat is offered every card (text 004: "all Cards ... must be played by all players"), so
there is nothing to deal a tile to; the interventions are rules entries ``force_tile``/
``force_seat`` and ``ban_tile`` (TANGRAM_RULES.md X3). Force: the seat may not decline the
tile while it has a legal placement. Ban: the tile's card is taken out of the shuffled deck
before the deal, so 22 cards are played and the final round has 2. Holding the tile is placing
it (a seat places it or declines it for good).
"""

from analysis.core.experiment import Experimenting, find_by_name
from sim.core.errors import UserError


def find_tile(tileset, name: str) -> int:
    """Index of the City Tile called ``name`` (case folded); one line naming close matches."""
    names = {n: t for t, n in enumerate(tileset.tile_names)}
    return find_by_name(names, name, f"no City Tile named {name!r} in tile set {tileset.name}")


def holdings_of(players, events, deals, tile: int, kind: str):
    """Per (game, seat) of ``players``: ``held`` and ``placed`` (both: the seat placed the
    tile), with the seat's ``win_share``, ``total`` and ``deal`` (``deals``: game_id -> deal).
    Frames of a run (lazy) or of a chunk."""
    import polars as pl

    from sim.tangram.records import EV_PLACE

    placed = (
        events.lazy()
        .filter((pl.col("kind") == EV_PLACE) & (pl.col("tile") == tile))
        .select(
            "game_id", pl.col("player").cast(pl.Int32).alias("seat"), pl.lit(True).alias("placed")
        )
        .unique()
    )
    return (
        players.lazy()
        .select("game_id", pl.col("seat").cast(pl.Int32), "win_share", "total")
        .join(deals.lazy(), on="game_id")
        .join(placed, on=["game_id", "seat"], how="left")
        .with_columns(pl.col("placed").fill_null(False))
        .with_columns(pl.col("placed").alias("held"))
        .collect()
    )


def tileset_and_rules_options(rules_are: str) -> tuple[tuple[str, dict], ...]:
    """``--tileset`` and ``--rules``, Tangram City's options of a design command (``neom
    experiment``, ``neom balance``); ``rules_are``: what the rules given are for."""
    rules_help = (
        f"{rules_are}: readings and the bonus tables, e.g. "
        "balance_bonus=20/10/10/5/5/0,planning_bonus=15 (default: as printed)"
    )
    return (
        ("--tileset", {"default": None, "help": "tile set file (default: built-in)"}),
        ("--rules", {"default": None, "metavar": "NAME=VALUE,...", "help": rules_help}),
    )


def _shared_rules(args) -> dict:
    """The rules both runs play with: ``--rules`` (readings and bonus tables), checked."""
    from analysis.core.compare import parse_rules
    from analysis.tangram.compare import COMPARING
    from sim.core.registry import get_game

    game = get_game("tangram")
    given = parse_rules(args.rules or "", "--rules", game, COMPARING.rules_tables)
    game.make_rules(**given)  # every value checked before a game is played
    return given


def _check(data, tile: int, mode: str, args) -> None:
    if mode == "force" and not 0 <= args.seat < args.players:
        raise UserError(f"--seat {args.seat}: must be between 0 and {args.players - 1}")


def _interventions(mode: str, tile: int, seat: int) -> dict:
    return {"force_tile": tile, "force_seat": seat} if mode == "force" else {"ban_tile": tile}


def _rules_entry(args) -> dict:
    from sim.tangram.rules import make_rules, rules_as_dict

    return rules_as_dict(make_rules(**_shared_rules(args)))


EXPERIMENTING = Experimenting(
    kinds=(("tile", "a City Tile"),),
    find=lambda data, name, kind: find_tile(data.content, name),
    item_name=lambda data, tile: data.content.tile_names[tile],
    check=_check,
    interventions=_interventions,
    holdings_of=holdings_of,
    events=lambda kind: True,  # who placed the tile: the log
    force_words="Force: seat {seat} may not decline the tile while it has a legal placement "
    "(in the final round: while the tile is in hand and fits), so it places it whenever it "
    "fits.",
    presence_words="the share of games in which each seat placed the tile (every seat is "
    "offered every card; holding it is placing it, so both columns agree; a banned tile's "
    "card is taken out of the deck).",
    item_noun="tile",
    options=tileset_and_rules_options("the rules both runs play with"),
    shared_rules=_shared_rules,
    parameters=lambda args, digest: {"--tileset": digest, "--rules": _rules_entry(args)},
    result_entries=lambda args: {"rules": _rules_entry(args)},
)
