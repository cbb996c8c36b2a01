"""NEOM's part of ``neom experiment`` (:mod:`analysis.core.experiment`,
``Game.experiment_ref``): cornerstones and generation tiles forced on a seat or banned.

The interventions are rules options ``RO_FORCE_TILE``/``RO_FORCE_SEAT`` or ``RO_BAN_TILE``,
applied after the deal (see ``sim.neom.engine.apply_interventions``). Force gives the seat the
tile for certain: a cornerstone is its first draft pick (always owned), a generation tile its
selection on the first turn of the tile's generation (it still chooses to place or sell it);
see ``sim.neom.engine.forced_choice`` and RULES.md X1.
"""

import numpy as np

from analysis.core.experiment import Experimenting, find_by_name
from sim.core.errors import UserError
from sim.neom import constants as K

GENERATION_DECKS = (K.DECK_GEN1, K.DECK_GEN2, K.DECK_GEN3)


def find_tile(tables, name: str, kind: str) -> int:
    """Index of the cornerstone (kind "cornerstone") or generation tile called ``name``."""
    decks = (K.DECK_CORNERSTONE,) if kind == "cornerstone" else GENERATION_DECKS
    names = {
        tables.tile_names[t]: t for t in range(tables.n_tiles) if tables.tiles[t, K.C_DECK] in decks
    }
    what = "cornerstone" if kind == "cornerstone" else "generation tile"
    return find_by_name(names, name, f"no {what} named {name!r} in catalogue {tables.name}")


def _deck_tiles(deck: int, n_players: int, tables, rules) -> np.ndarray:
    """The tiles of ``deck`` in play for this player count and variant (``build_deck``)."""
    from sim.neom import engine as E

    out = np.empty(tables.n_tiles, dtype=np.int64)
    return out[: E.build_deck(deck, n_players, tables.tiles, rules, out)]


def check_intervention(tables, tile: int, mode: str, seat: int, n_players: int, rules) -> None:
    """Raise a UserError when the intervention cannot be applied to every deal of the run."""
    from sim.neom import engine as E
    from sim.neom.records import MAX_PLAYERS

    name = tables.tile_names[tile]
    deck = int(tables.tiles[tile, K.C_DECK])
    if mode == "force" and not 0 <= seat < n_players:
        raise UserError(f"--seat {seat}: must be between 0 and {n_players - 1}")
    if deck != K.DECK_CORNERSTONE and n_players < 2:
        raise UserError(
            "generation tile experiments need 2 to 5 players (solo packs are not hands)"
        )
    in_play = _deck_tiles(deck, n_players, tables, rules)
    what = "the cornerstones" if deck == K.DECK_CORNERSTONE else f"the Generation {deck} deck"
    if tile not in in_play:
        raise UserError(f"{name!r} is not in {what} with {n_players} players in this variant")
    if mode != "ban":
        return
    if deck == K.DECK_CORNERSTONE:
        if in_play.size <= n_players * E.cornerstone_hand_size(n_players, rules):
            raise UserError(f"cannot ban a cornerstone with {n_players} players: all are dealt")
    elif (
        in_play.size <= E.HAND_SIZE * n_players
        and _deck_tiles(deck, MAX_PLAYERS, tables, rules).size == in_play.size
    ):
        raise UserError(
            f"cannot ban a generation tile with {n_players} players: the deck is dealt out exactly"
        )


def holdings_of(players, events, deals, tile: int, kind: str):
    """Per (game, seat) of ``players``: ``held`` (drafted the cornerstone / selected the
    generation tile) and ``placed`` (placed it), with the seat's outcome and ``deal``
    (``deals``: game_id -> deal). Frames of a run (lazy) or of a chunk."""
    import polars as pl

    from analysis.neom.load import CS_GEN_COLUMNS, DRAFTED_COLUMNS
    from sim.neom.records import EV_CORNERSTONE, EV_PLACE, EV_SELECT

    seats = players.lazy().select("game_id", "seat", "win_share", "total", *DRAFTED_COLUMNS,
                                  *CS_GEN_COLUMNS).join(deals.lazy(), on="game_id")  # fmt: skip
    if kind == "cornerstone":
        held = pl.any_horizontal(pl.col(c) == tile for c in DRAFTED_COLUMNS)
        placed = pl.any_horizontal(
            (pl.col(d) == tile) & (pl.col(g) > 0)
            for d, g in zip(DRAFTED_COLUMNS, CS_GEN_COLUMNS, strict=True)
        )
        frame = seats.with_columns(held.alias("held"), placed.alias("placed"))
    else:
        marks = (
            events.lazy()
            .filter(pl.col("tile") == tile)
            .select("game_id", pl.col("player").cast(pl.Int32).alias("seat"), "kind")
            .group_by("game_id", "seat")
            .agg(
                (pl.col("kind") == EV_SELECT).any().alias("held"),
                pl.col("kind").is_in([EV_PLACE, EV_CORNERSTONE]).any().alias("placed"),
            )
        )
        frame = (
            seats.with_columns(pl.col("seat").cast(pl.Int32))
            .join(marks, on=["game_id", "seat"], how="left")
            .with_columns(pl.col("held", "placed").fill_null(False))
        )
    return frame.drop(*DRAFTED_COLUMNS, *CS_GEN_COLUMNS).collect()


def _find(data, name: str, kind: str) -> int:
    return find_tile(data.content, name, kind)


def _check(data, tile: int, mode: str, args) -> None:
    from sim.neom.tables import make_rules

    variant = K.VARIANT_NAMES[args.variant or "standard"]
    check_intervention(data.content, tile, mode, args.seat, args.players, make_rules(variant))


def _interventions(mode: str, tile: int, seat: int) -> dict:
    return {"force_tile": tile, "force_seat": seat} if mode == "force" else {"ban_tile": tile}


EXPERIMENTING = Experimenting(
    kinds=(("cornerstone", "a cornerstone"), ("tile", "a generation tile")),
    find=_find,
    item_name=lambda data, tile: data.content.tile_names[tile],
    check=_check,
    interventions=_interventions,
    holdings_of=holdings_of,
    events=lambda kind: kind == "tile",  # who selected and placed a generation tile: the log
    force_words="Force: seat {seat} takes the tile for certain (a cornerstone as its first "
    "draft pick; a generation tile as its selection on the first turn of the tile's "
    "generation, then placed or sold as the seat chooses), so its holding is 100% in the "
    "intervention run.",
    presence_words="the share of games in which each seat held the tile (drafted the "
    "cornerstone, or selected the generation tile) and placed it.",
    item_noun="tile",
    options=(
        (
            "--catalog",
            {
                "default": None,
                "help": "catalogue file or a shipped one's name "
                "(default, reconstruction_v1, reconstruction_v2) (default: built-in)",
            },
        ),
        (
            "--variant",
            {
                "default": None,
                "choices": sorted(K.VARIANT_NAMES),
                "help": "NEOM's variant (standard)",
            },
        ),
    ),  # fmt: skip
    shared_rules=lambda args: {"variant": K.VARIANT_NAMES[args.variant or "standard"]},
    parameters=lambda args, digest: {"--catalog": digest, "--variant": args.variant or "standard"},
    result_entries=lambda args: {"variant": args.variant or "standard"},
)
