"""``neom verify``: does a tuned set beat what it replaces, on fresh deals? For every game
(``--game``: its shipped sets, its strategies and data through the Game interface, its games
played by the generic match player :mod:`sim.core.match`).

A set of a strategy file is played against what it replaces (its base strategy at its default
parameters, or the table's ``replaces``) in two fields of ``--players`` seats:

- **tuned**: the field it was tuned in (its ``[sets.NAME.tuning]`` table's ``opponents``, which
  fill the other seats in turn, as ``neom tune`` seats them);
- **mixed**: a field of the other shipped sets, the named field (``strong``) for that player
  count with the set's own seat taken out (the seat of the same name, else the first of the
  same base strategy, else the last).

In each field the set and what it replaces play the same games: the same deals (a master seed
other than the tuning's, so the deals are fresh), the same seat, the same other players; seats
rotate game by game. The set's win share and the replaced one's are shown with 95% Wilson
intervals, and their paired difference (game by game: each game is its own deal, so the pairs
are independent) with a 95% Student-t interval (n - 1 degrees of freedom: it holds at the small
game counts of a quick check as at 8,000, where it is the normal one). The set **passes**
when in both fields that interval lies above 0: its win share is above the one it replaces.
``--write`` stores the figures, the rules version, seed, date and commit as the set's
``[sets.NAME.verification]`` table, which ``neom strategies`` shows; rerunning the whole check
of the shipped sets is ``neom verify --write``.
"""

import sys
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from analysis.core.stats import paired_difference, wilson_interval
from sim.core.commands.options import (
    DEFAULT_GAME,
    THREADS,
    add_game_options,
    add_run_options,
    resolve_game_options,
)
from sim.core.errors import UserError
from sim.core.game import Game, StrategyRegistry
from sim.core.machine import source_commit
from sim.core.match import play_match
from sim.core.registry import get_game
from sim.core.strategies import (
    SET_TABLES,
    StrategyFile,
    StrategySpec,
    read_strategy_file,
    resolve_strategy,
    shipped_file,
    split_strategies,
)
from sim.core.strategy_writer import (
    read_strategy_text,
    replace_whole,
    strategy_file_lock,
    strategy_file_target,
)

DEFAULT_GAMES = 8000
DEFAULT_SEED = 20_261_201  # not a seed any shipped set was tuned with
DEFAULT_FIELD = "strong"


def register(parser) -> None:
    parser.description = (
        "Play each set and what it replaces on the same fresh deals, in the "
        "field it was tuned in and in a mixed field of the other shipped sets; a set passes "
        "when, in both, the 95% interval of its win share's lead over the replaced one is "
        "above 0. --write stores the figures in the strategy file."
    )
    parser.add_argument(
        "--strategy-file",
        type=Path,
        help="the strategy file whose sets to check (default: the shipped tuned sets)",
    )
    parser.add_argument("--sets", help="comma-separated sets to check (default: every set)")
    add_run_options(
        parser, "--games", "--seed", "--workers",
        games={"default": DEFAULT_GAMES, "help": f"games per match ({DEFAULT_GAMES})"},
        seed={"default": DEFAULT_SEED, "help": "master seed of the fresh deals"},
        workers=THREADS,
    )  # fmt: skip
    parser.add_argument(
        "--field",
        default=DEFAULT_FIELD,
        help=f"the named field of the mixed check ({DEFAULT_FIELD})",
    )
    parser.add_argument(
        "--replaces",
        help="compare with this strategy instead of what each set replaces (its tuning "
        "table's replaces, else its base), e.g. an older version of the set",
    )
    parser.add_argument(
        "--write", action="store_true", help="store each set's figures in the strategy file"
    )
    add_game_options(parser, "verify", data=False)  # the sets are checked on the shipped data
    parser.set_defaults(func=run)


@dataclass(frozen=True)
class FieldCheck:
    field: str  # "tuned" or "mixed"
    others: tuple[str, ...]  # the other seats' strategies
    games: int
    share: float  # the set's win share
    share_lo: float
    share_hi: float
    replaced_share: float
    replaced_lo: float
    replaced_hi: float
    lead: float  # paired mean of (set's share - replaced share), game by game
    lead_lo: float
    lead_hi: float

    @property
    def passed(self) -> bool:
        return self.lead_lo > 0.0

    def as_table(self) -> dict:
        table = {"others": list(self.others), "games": self.games}
        for key in ("share", "share_lo", "share_hi", "replaced_share", "replaced_lo"):
            table[key] = round(getattr(self, key), 4)
        for key in ("replaced_hi", "lead", "lead_lo", "lead_hi"):
            table[key] = round(getattr(self, key), 4)
        table["passed"] = self.passed
        return table


@dataclass(frozen=True)
class Verification:
    name: str
    replaces: str
    players: int
    seed: int
    rules_version: str
    date: str
    commit: str
    checks: tuple[FieldCheck, ...]
    # the set's parameters are what it replaces' own: the same games, a lead of exactly 0
    same_as_replaced: bool = False

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks)

    def as_table(self) -> dict:
        table = {
            "passed": self.passed,
            "rules_version": self.rules_version,
            "replaces": self.replaces,
            "players": self.players,
            "seed": self.seed,
            "date": self.date,
            "commit": self.commit,
        }
        if self.same_as_replaced:  # only then: NEOM's tables keep their keys
            table["same_as_replaced"] = True
        for check in self.checks:
            table[check.field] = check.as_table()
        return table


def game_shares(match, which: int) -> np.ndarray:
    """Strategy ``which``'s win share in each game (one seat of it per game)."""
    return match.game_shares(which)


def _game(game: Game | None) -> Game:
    return game if game is not None else get_game(DEFAULT_GAME)


def _registry(registry: StrategyRegistry | None) -> StrategyRegistry:
    return registry if registry is not None else _game(None).strategies


def paired_lead(a: np.ndarray, b: np.ndarray) -> dict:
    """Mean of ``a - b`` (paired, game by game) with its 95% Student-t interval."""
    from scipy.stats import t

    n = a.size
    return paired_difference(a, b, z=float(t.ppf(0.975, n - 1)) if n > 1 else np.nan)


def check_field(
    tables,
    field: str,
    candidate: StrategySpec,
    replaced: StrategySpec,
    others: list[StrategySpec],
    n_players: int,
    games: int,
    seed: int,
    workers: int = 1,
    game: Game | None = None,
) -> FieldCheck:
    """The set and what it replaces, each in seat 0 of the lineup (``others`` filling the other
    seats in turn), on the same ``games`` deals of ``seed``, seats rotating; ``tables``: the
    game's data (its compiled ``arrays``)."""
    from strategies.tools.tune import lineup

    game = _game(game)
    seats = lineup(n_players, len(others))
    shares = []
    for spec in (candidate, replaced):
        match = play_match(game, tables, [spec, *others], seats, games, seed, workers=workers)
        shares.append(game_shares(match, 0))
    lead = paired_lead(shares[0], shares[1])
    (lo_a, hi_a), (lo_b, hi_b) = (wilson_interval(s.sum(), s.size) for s in shares)
    used = tuple(others[k - 1].label for k in sorted(set(seats) - {0}))
    return FieldCheck(
        field,
        used,
        games,
        float(shares[0].mean()),
        float(lo_a),
        float(hi_a),
        float(shares[1].mean()),
        float(lo_b),
        float(hi_b),
        lead["mean"],
        lead["lo"],
        lead["hi"],
    )


def seated(others: list[StrategySpec], n_players: int) -> list[tuple[str, tuple]]:
    """The strategy and parameters of each other seat as :func:`check_field` seats ``others``
    in its first game (the games rotate that lineup)."""
    from strategies.tools.tune import lineup

    return [
        (others[k - 1].name, tuple(others[k - 1].params))
        for k in lineup(n_players, len(others))[1:]
    ]


def mixed_field(
    name: str,
    spec: StrategySpec,
    field: list[str],
    named: dict,
    registry: StrategyRegistry | None = None,
) -> list[str]:
    """The field's list without the set's own seat: the seat of its name, else the first seat
    of the same base strategy, else the last seat."""
    names = [entry.strip() for entry in field]
    if name in names:
        drop = names.index(name)
    else:
        bases = [resolve_strategy(_registry(registry), entry, named).name for entry in names]
        drop = bases.index(spec.name) if spec.name in bases else len(names) - 1
    return names[:drop] + names[drop + 1 :]


def tuned_field(
    tuning: dict, named: dict, where: str, registry: StrategyRegistry | None = None
) -> list[StrategySpec]:
    """The opponents a set was tuned against: exactly as they played when the tuning table
    has their specs (``opponent_specs``: a named set re-tuned since keeps its old weights
    here), else as their names resolve now."""
    from sim.core.strategies import parse_strategy

    registry = _registry(registry)
    opponents = tuning["opponents"]
    exact = tuning.get("opponent_specs")
    if exact is None:
        return [resolve_strategy(registry, o, named) for o in opponents]
    if not isinstance(exact, list) or len(exact) != len(opponents):
        raise UserError(f"{where}: opponent_specs must list one spec per opponent")
    try:
        return [
            replace(parse_strategy(registry, spec), label=label)
            for spec, label in zip(exact, opponents, strict=True)
        ]
    except UserError as exc:
        raise UserError(f"{where}: opponent_specs: {exc}") from None


def verify_set(
    tables,
    name: str,
    spec: StrategySpec,
    tuning: dict,
    named: dict,
    fields: dict,
    field_name: str,
    games: int,
    seed: int,
    workers: int = 1,
    progress=None,
    against: str | None = None,
    game: Game | None = None,
) -> Verification:
    game = _game(game)
    registry = game.strategies
    where = f"set {name!r}"
    players = tuning.get("players")
    opponents = tuning.get("opponents")
    if not isinstance(players, int) or not isinstance(opponents, list) or not opponents:
        raise UserError(
            f"{where}: its [sets.{name}.tuning] table must give players (a number) and "
            "opponents (a list of strategies): the field it was tuned in"
        )
    if tuning.get("seed") == seed:
        raise UserError(
            f"{where} was tuned on the deals of seed {seed}: verify with another --seed"
        )
    replaces = against or tuning.get("replaces", tuning.get("base", spec.name))
    if not isinstance(replaces, str):
        raise UserError(f"{where}: its tuning table's replaces must name a strategy")
    replaced = resolve_strategy(registry, replaces, named)
    tuned_others = tuned_field(tuning, named, where, registry)
    field = fields.get(field_name)
    if field is None or players not in field.tables:
        raise UserError(f"{where}: no field {field_name!r} with a {players}-player list")
    mixed_others = [
        resolve_strategy(registry, o, named)
        for o in mixed_field(name, spec, list(field.tables[players]), named, registry)
    ]
    checks = []
    for step, (field_label, others) in enumerate(
        (("tuned", tuned_others), ("mixed", mixed_others))
    ):
        start = time.perf_counter()
        if step == 1 and seated(mixed_others, players) == seated(tuned_others, players):
            # The same strategies in the same seats of the same deals: the same games (Tangram
            # City's strong field of default planners is its sets' tuning field), not replayed.
            used = tuple(o.label for o in others)
            checks.append(replace(checks[0], field=field_label, others=used))
            if progress:
                progress(f"{name}: mixed field: the tuned field's games (the same seats)")
            continue
        checks.append(
            check_field(
                tables, field_label, spec, replaced, others, players, games, seed, workers, game
            )
        )
        if progress:
            seconds = time.perf_counter() - start
            progress(
                f"{name}: {field_label} field ({', '.join(o.label for o in others)}): "
                f"{2 * games:,} games in {seconds:.0f} s ({2 * games / seconds:,.0f} games/s)"
                + (f"; the other field about {seconds:.0f} s more" if step == 0 else "")
            )
    return Verification(
        name,
        replaced.label,
        players,
        seed,
        game.rules_version,
        datetime.now(UTC).strftime("%Y-%m-%d"),
        source_commit(),
        tuple(checks),
        spec.id == replaced.id and np.array_equal(spec.params, replaced.params),
    )


def describe(v: Verification) -> list[str]:
    """The figures as ``neom verify`` prints them (``neom strategies`` shows the same)."""
    from sim.core.commands.strategies import verification_lines

    lines = verification_lines(v.name, v.as_table())
    return [f"{v.name}: {lines[0]}", *lines[1:]]


class Progress:
    """Prints each field check's line on stderr with the checks done, the time so far and
    the time left at the mean pace (every check plays the same number of games)."""

    def __init__(self, checks: int):
        self.checks = checks
        self.done = 0
        self.start = time.perf_counter()

    def __call__(self, text: str) -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.start
        left = elapsed / self.done * (self.checks - self.done)
        print(
            f"  played {text} [{self.done}/{self.checks} checks, {elapsed:.0f} s, "
            f"about {left:.0f} s left]",
            file=sys.stderr,
            flush=True,
        )


WRITE = "--write"
COMMAND = "neom verify --write"


def claim_verification(
    path: Path, names, shipped: StrategyFile | None, registry: StrategyRegistry | None = None
) -> Path:
    """Check, before any game is played, that the verification of sets ``names`` can be
    written into strategy file ``path``: its path (a symbolic link is written through to its
    target, which is returned), its encoding (a UTF-8 byte-order mark is kept), its TOML and
    the sets in it, and the write itself, rehearsed (a file with placeholder tables is
    written beside it, read back as a strategy file and removed: a read-only folder or a
    full disk is found now, not after the games)."""
    target = strategy_file_target(path, WRITE)
    placeholder = {"passed": False, "date": "", "commit": ""}
    text, bom, data = read_strategy_text(target, f"{WRITE} {path}")
    new_text = verification_text(path, data, text, {name: placeholder for name in names})
    replace_whole(
        target,
        bom + new_text.encode("utf-8"),
        f"{WRITE} {path}",
        reads_back(shipped, path, registry),
        rehearse=True,
    )
    return target


def reads_back(shipped: StrategyFile | None, path: Path, registry: StrategyRegistry | None = None):
    """A check that a written file reads back as a strategy file (UserError naming ``path``)."""
    registry = _registry(registry)

    def check(written: Path) -> None:
        try:
            read_strategy_file(registry, written, shipped)
        except UserError as exc:
            raise UserError(f"{WRITE} {path}: the file would not read back ({exc})") from None

    return check


def verification_text(path: Path, data: dict, text: str, tables: dict[str, dict]) -> str:
    """The strategy file (``data``, parsed from ``text``) with each ``tables[name]`` as set
    name's ``verification`` table (replacing the one before), laid out anew (see
    :func:`strategy_file_text`) and checked to parse back to exactly that content."""
    import tomllib

    sets = data.get("sets")
    for name, table in tables.items():
        if not isinstance(sets, dict) or not isinstance(sets.get(name), dict):
            raise UserError(f"{WRITE} {path}: no longer has the set {name!r} as a table")
        sets[name]["verification"] = table
    new_text = strategy_file_text(data, text)
    try:
        same = _canonical(tomllib.loads(new_text)) == _canonical(data)
    except tomllib.TOMLDecodeError:
        same = False
    if not same:
        raise UserError(
            f"{WRITE} {path}: the file cannot be laid out anew without changing it (write the "
            "figures by hand)"
        )
    return new_text


def write_verification(
    path: Path,
    target: Path,
    results: list[Verification],
    shipped: StrategyFile | None,
    registry: StrategyRegistry | None = None,
) -> None:
    """Store each result as its set's ``verification`` table in strategy file ``path``
    (``target``: the file it is, :func:`claim_verification`). Under the writer lock the file
    is read afresh (another command may have written it meanwhile: the verification of other
    sets, a tuned set), laid out anew with the new tables, read back and moved over whole."""
    shown = f"{WRITE} {path}"
    with strategy_file_lock(target, COMMAND):
        text, bom, data = read_strategy_text(target, shown)
        tables = {result.name: result.as_table() for result in results}
        new_text = verification_text(path, data, text, tables)
        replace_whole(
            target, bom + new_text.encode("utf-8"), shown, reads_back(shipped, path, registry)
        )


def _canonical(data: dict) -> str:
    """``data`` as text to compare (nan equal to itself, dates as written)."""
    import json

    return json.dumps(data, sort_keys=True, default=str)


def verification_toml(results: list[Verification]) -> str:
    """The results' ``verification`` tables as TOML (printed when they cannot be written)."""
    out = []
    for result in results:
        out += [*toml_table(f"sets.{toml_key(result.name)}.verification", result.as_table()), ""]
    return "\n".join(out).rstrip() + "\n"


def toml_key(name: str) -> str:
    """A key as TOML writes it: bare when it can be, else quoted."""
    import json
    import re

    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def toml_table(name: str, values: dict, array: bool = False) -> list[str]:
    """A table's lines (``[name]``, or ``[[name]]`` for an ``array`` item, then its plain
    keys), then its sub-tables' and arrays of tables' in turn (written inside a table's lines,
    they would land at the top of the file)."""
    import tomlkit

    def tables(value) -> bool:
        return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)

    plain = {k: v for k, v in values.items() if not isinstance(v, dict) and not tables(v)}
    head = f"[[{name}]]" if array else f"[{name}]"
    out = [head, tomlkit.dumps(plain).rstrip()] if plain else [head]
    for key, value in values.items():
        if isinstance(value, dict):
            out += ["", *toml_table(f"{name}.{toml_key(key)}", value)]
        elif tables(value):
            for item in value:
                out += ["", *toml_table(f"{name}.{toml_key(key)}", item, array=True)]
    return out


def strategy_file_text(data: dict, old_text: str = "") -> str:
    """A strategy file's TOML: the leading comment of ``old_text``, then every set (the comment
    lines above its header in ``old_text``, its parameters, then its tables), then the fields."""
    lines = old_text.splitlines()
    header = []
    for line in lines:
        if not line.startswith("#"):
            break
        header.append(line)
    comments: dict[str, list[str]] = {}
    for k, line in enumerate(lines):
        if line.startswith("[sets.") and line.endswith("]") and line.count(".") == 1:
            above = k
            while above > len(header) and lines[above - 1].startswith("#"):
                above -= 1
            comments[line[len("[sets.") : -1]] = lines[above:k]

    out = [*header, ""] if header else []
    for name, values in data.get("sets", {}).items():
        ordered = {key: value for key, value in values.items() if not isinstance(value, dict)}
        ordered |= {key: values[key] for key in SET_TABLES if key in values}
        out += [*comments.get(name, []), *toml_table(f"sets.{toml_key(name)}", ordered), ""]
    for name, values in data.get("fields", {}).items():
        out += [*toml_table(f"fields.{toml_key(name)}", values), ""]
    return "\n".join(out).rstrip() + "\n"


def run(args) -> int:
    game, _, _ = resolve_game_options(args, "verify")
    registry = game.strategies
    if args.games < 10:
        raise UserError(f"--games {args.games}: at least 10")
    if args.workers < 1:
        raise UserError(f"--workers {args.workers}: at least 1")
    shipped = shipped_file(registry)
    if shipped is None and args.strategy_file is None:
        raise UserError(f"--game {game.name}: {game.title} ships no tuned sets to verify")
    path = args.strategy_file or registry.named_sets
    chosen: StrategyFile = (
        read_strategy_file(registry, path, shipped) if args.strategy_file else shipped
    )
    named = {**(shipped.sets if shipped else {}), **chosen.sets}
    fields = {**(shipped.fields if shipped else {}), **chosen.fields}
    names = split_strategies(args.sets, "--sets") if args.sets else tuple(chosen.sets)
    for name in names:
        if name not in chosen.sets:
            raise UserError(f"--sets: no set {name!r} in {path} ({', '.join(chosen.sets)})")
    # Everything --write needs is checked before the first game (the file is read afresh
    # when the figures are written: others may write other sets into it meanwhile).
    # The shipped file is read (and read back) on its own; a user's beside the shipped sets.
    beside = shipped if args.strategy_file else None
    target = claim_verification(Path(path), names, beside, registry) if args.write else None
    tables = game.load_data(None)
    results = []
    progress = Progress(2 * len(names))
    for name in names:
        tuning = chosen.tables.get(name, {}).get("tuning", {})
        result = verify_set(
            tables,
            name,
            chosen.sets[name],
            tuning,
            named,
            fields,
            args.field,
            args.games,
            args.seed,
            args.workers,
            progress=progress,
            against=args.replaces,
            game=game,
        )
        results.append(result)
        print("\n".join(describe(result)), flush=True)
    if args.write:
        try:
            write_verification(Path(path), target, results, beside, registry)
        except UserError:
            # The figures are not lost: the tables to paste into the file, then the error.
            print(f"# not written to {path}: the verification tables\n")
            print(verification_toml(results), end="", flush=True)
            raise
        print(f"wrote the verification of {len(results)} set(s) to {path}")
    failed = [r.name for r in results if not r.passed]
    if failed:
        print(f"not verified: {', '.join(failed)}")
    return 1 if failed else 0
