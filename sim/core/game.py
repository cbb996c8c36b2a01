"""The Game interface: everything the generic runner, store, manifest, command line, analysis
loader and report know about a game, declared in one place by the game's package.

A game package (``sim/<game>/__init__.py``) defines ``GAME = Game(...)``; the registry
(:mod:`sim.core.registry`) maps game names to those packages. Parts that live above the game's
rules (its compiled game loop and strategies in ``strategies/<game>/``, its report sections in
``analysis/<game>/``) are named by ``"module:attribute"`` strings and imported on first use, so
that ``sim/<game>`` imports only the core and the import graph has no cycle.

The compiled entry point every game provides, with this one signature::

    play_batch(key, game_ids, deal_indices, seat_strategy, strategy_ids, strategy_params,
               data, rules, games_out, players_out, events_out) -> None

- ``key``: uint64[2], the run's master key (:func:`sim.core.rng.master_key`).
- ``game_ids``, ``deal_indices``: int64[n]. Game i's deal (everything chance decides) is seeded
  by ``stream_seed(key, deal_indices[i], DEAL_STREAM)`` and seat s's own stream by
  ``stream_seed(key, game_ids[i], 1 + s)``; a game's results depend on nothing else than these,
  its seats' strategies, ``data`` and ``rules`` (never on the batch or the worker).
- ``seat_strategy``: int32[n, n_players]: for each game, each seat's index into the run's
  strategy list; ``n_players`` is this array's width.
- ``strategy_ids``: int32[m]; ``strategy_params``: float64[m, registry.n_params].
- ``data``: the tuple :attr:`GameData.arrays` returned by the game's loader.
- ``rules``: the int array returned by ``Game.make_rules``.
- ``games_out``: int64[n, len(tables["games"])], one row per game;
  ``players_out``: int64[n, max_players, len(tables["players"])], rows of unused seats left -1;
  ``events_out``: int64[n * events_per_game, len(tables["events"])], game i's events in rows
  ``[i * events_per_game, i * events_per_game + n_events)``, or zero rows for no events.
  Their columns are the fields of the table's record dtype, in order.

The core then stores each table with its record dtype as the Parquet schema: every value is
checked against its field's type (never narrowed silently) and the core adds ``game_id`` to the
players and events tables, ``strategy_name`` and ``win_share`` to the players table, and
``kind_name`` to the events table.

Columns every game must have (the generic analysis reads them): games: ``game_id``,
``deal_seed``, ``n_players``, ``n_winners``, ``n_events``; players: ``seat``, ``strategy``,
``total``, ``rank``, ``win``; events: ``turn``, ``player``, ``kind`` (an index into
``event_kinds``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

TABLES = ("games", "players", "events")
REQUIRED_COLUMNS = {
    "games": ("game_id", "deal_seed", "n_players", "n_winners", "n_events"),
    "players": ("seat", "strategy", "total", "rank", "win"),
    "events": ("turn", "player", "kind"),
}
# Columns the core adds when it stores a batch (a game's dtypes must not declare them).
ADDED_COLUMNS = {
    "games": (),
    "players": ("game_id", "strategy_name", "win_share"),
    "events": ("game_id", "kind_name"),
}


def resolve(reference: str):
    """The object a ``"package.module:attribute"`` reference names (imported on first use)."""
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class RuleOption:
    """One rules option a user can choose: its manifest name, the choices (label -> value
    stored in the rules array) and the default label.

    ``commands``: the commands that offer it (of ``play``, ``simulate``, ``score``).
    ``describe``: label -> the reading in words, for report headers.
    ``flag``: its command-line flag; by default the name's (``first_start``: ``--first-start``).
    """

    name: str
    choices: dict[str, int]
    default: str
    help: str
    commands: tuple[str, ...] = ("play", "simulate", "score")
    describe: dict[str, str] = field(default_factory=dict)
    flag: str = ""

    def __post_init__(self):
        if not self.flag:
            object.__setattr__(self, "flag", "--" + self.name.replace("_", "-"))


@dataclass(frozen=True)
class GameData:
    """A game's data file, validated and compiled (NEOM: the tile catalogue; Tangram City:
    the tile set)."""

    name: str
    source: str  # the file it was read from, as shown to users
    digest: str  # sha256 of the file's bytes
    raw: bytes  # the file's bytes (a run folder keeps this copy)
    reconstructed: bool  # True: not the published game's data (say so wherever it is shown)
    arrays: tuple  # passed to play_batch as ``data``
    snapshot_name: str  # the copy's file name in a run folder ("catalog.toml", "tileset.toml")
    content: object = None  # the game's own richer view (names of tiles, goods, ...)

    @property
    def label(self) -> str:
        """How every output names the data: reconstructions say so, and data a file calls
        real says that this is the file's own claim (nothing here can check it)."""
        if self.reconstructed:
            return f"{self.name} (RECONSTRUCTED: not the published game's data)"
        return f"{self.name} ({NOT_RECONSTRUCTED_CLAIM})"


# How data whose file says ``reconstructed = false`` is labelled: the user's claim, as such.
NOT_RECONSTRUCTED_CLAIM = "its file says: not a reconstruction"
# The name note of a file that claims not to be a reconstruction but holds exactly the shipped
# reconstruction's content (its names and descriptions aside): labelled a reconstruction.
COPY_NOTE = "a copy of the shipped reconstruction"


def same_arrays(first: tuple, second: tuple) -> bool:
    """Two data files compile to the same game (``GameData.arrays``): names aside, the same."""
    return len(first) == len(second) and all(
        a.shape == b.shape and np.array_equal(a, b) for a, b in zip(first, second, strict=True)
    )


@dataclass(frozen=True)
class StrategyInfo:
    """A strategy of a game: its name, the integer id the compiled dispatch switches on, what
    it does, its parameters (name, default, allowed range; ``whole``: the ones that count
    something and must be whole numbers)."""

    name: str
    id: int
    description: str
    param_names: tuple[str, ...] = ()
    defaults: tuple[float, ...] = ()
    bounds: tuple[tuple[float, float], ...] = ()  # per parameter; empty: any finite value
    whole: tuple[str, ...] = ()


@dataclass(frozen=True)
class StrategyRegistry:
    """A game's strategies: ``n_params`` slots per parameter vector; ``named_sets`` optional
    file of named parameter sets shipped with the game (tuned weights); ``ladder`` the default
    skill ladder of ``neom ladder``, weakest first."""

    strategies: tuple[StrategyInfo, ...]
    n_params: int
    named_sets: Path | None = None
    ladder: tuple[str, ...] = ()

    def by_name(self) -> dict[str, StrategyInfo]:
        return {info.name: info for info in self.strategies}


@dataclass(frozen=True)
class Game:
    """A game as the core sees it. References written ``"module:attribute"`` are resolved on
    first use (see the module docstring)."""

    name: str  # the --game value
    title: str
    rules_version: str  # bump when a rule change changes games; recorded in every manifest
    min_players: int
    max_players: int
    tables: dict[str, np.dtype]  # "games", "players", "events" -> record dtype
    event_kinds: tuple[str, ...]  # event kind index -> name
    events_per_game: int  # rows reserved per game in the event buffer
    data_flag: str  # command-line option naming the data file ("--catalog", "--tileset")
    load_data: Callable[[Path | None], GameData]  # None: the shipped default
    rule_options: tuple[RuleOption, ...]
    make_rules: Callable[..., np.ndarray]  # keyword arguments: option name -> value
    rules_as_dict: Callable[[np.ndarray], dict]  # the manifest's "rules" entry
    strategies_ref: str  # -> StrategyRegistry
    play_batch_ref: str  # -> the compiled play_batch above
    play_ref: str  # -> show_game(args, data, rules, specs) -> exit code: ``neom play``
    report_ref: str  # -> add_sections(report, run): the game's report sections
    score_ref: str = ""  # -> score_file(path, data, rules) -> dict (``neom score``); "" if none
    # The game's own commands: (name, module whose register(parser) defines it, one-line help).
    commands: tuple[tuple[str, str, str], ...] = ()
    compile_seconds: float = 60.0  # a cold compile of play_batch here (said while compiling)
    # -> play_batch_for(strategy_ids) -> the compiled play_batch (same signature) that plays a
    # lineup of these strategies, when a game has several entries ("": play_batch for all).
    entry_ref: str = ""
    # -> compile_estimate(strategy_ids) -> (the entry's name, seconds of its cold compile): what
    # the compile notice says for that lineup ("": the game's title and compile_seconds).
    compile_estimate_ref: str = ""
    # -> a module whose compiled pieces sim.tools.build_cache builds one by one: PIECES (name
    # -> (seconds of its cold compile, the pieces it calls)), compile_piece(name) and
    # is_piece_cached(name) ("": one piece per entry, each compiled by a call on zero games).
    pieces_ref: str = ""
    # The data file's kind: the top-level table it starts with ("catalog") and what it is
    # called ("catalogue"), so that another kind of file given instead is named in one line.
    data_header: str = ""
    data_noun: str = "data file"
    # Shipped data files the data flag also takes by name instead of a path (load_data
    # resolves them; a file of that name comes first).
    data_names: tuple[str, ...] = ()
    # Legal but suspicious designs of a data file, one message each (the validator's warnings).
    data_warnings: Callable[[GameData], list[str]] | None = None
    # Entries of the manifest's "rules" that are experiment interventions (not rules options
    # and not the rules' own tables, such as Tangram City's bonus tables).
    intervention_rules: tuple[str, ...] = ()
    # The game's parts of the generic design commands (``analysis.core.compare``,
    # ``.experiment``, ``.balance``): what it compares, its interventions, its levers. "": the
    # command refuses this game in one line.
    compare_ref: str = ""  # -> analysis.core.compare.Comparing
    experiment_ref: str = ""  # -> analysis.core.experiment.Experimenting
    balance_ref: str = ""  # -> analysis.core.balance.Balancing
    # -> probe(report, run): ``neom report --probe``'s replays of the flagged items, before the
    # sections (NEOM: their VP slopes); "": --probe is refused for this game.
    probe_ref: str = ""
    score_unit: str = "VP"  # what a final score counts, in the report's words ("points")

    @property
    def strategies(self) -> StrategyRegistry:
        return resolve(self.strategies_ref)

    @property
    def play_batch(self):
        """The default compiled entry (every strategy that has no entry of its own)."""
        return resolve(self.play_batch_ref)

    def play_batch_for(self, strategy_ids):
        """The compiled entry that plays a lineup of these strategy ids: a game may compile
        some strategies only in an entry of their own, used only by lineups naming them."""
        if self.entry_ref:
            return resolve(self.entry_ref)(strategy_ids)
        return self.play_batch

    def compile_estimate(self, strategy_ids) -> tuple[str, float]:
        """What the compile notice calls the entry of a lineup of these strategy ids, and
        how long its cold compile takes here (before this machine measured one)."""
        if self.compile_estimate_ref:
            name, seconds = resolve(self.compile_estimate_ref)(strategy_ids)
            return f"{self.title} ({name})", seconds
        return self.title, self.compile_seconds

    def columns(self, table: str) -> tuple[str, ...]:
        return self.tables[table].names


@dataclass(frozen=True)
class GameRecord:
    """One game played by ``play_one``: each table's rows as record arrays of the game's
    dtypes (players: the seats played; events: this game's), plus what produced them."""

    game: np.ndarray  # one record (shape ()) of tables["games"]
    players: np.ndarray  # records of tables["players"], one per seat
    events: np.ndarray  # records of tables["events"]
    rules: np.ndarray
    strategies: tuple[str, ...]  # canonical strategy specs, one per seat
    extra: dict = field(default_factory=dict)  # anything else the game's log needs
