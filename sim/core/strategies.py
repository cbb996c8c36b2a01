"""Strategy specs for every game: ``name`` or ``name:param=value,...``, named parameter sets,
named fields, and the checks that keep a parameter vector finite and in range.

A game's strategies are a :class:`sim.core.game.StrategyRegistry`. Every strategy gets a
float64 vector of ``registry.n_params`` entries, filled from its defaults and the user's spec.
A strategy file (and the game's shipped file of tuned sets) is TOML::

    [sets.cautious_builder]
    base = "builder"      # any strategy of the game
    reserve = 1.2         # parameters of that strategy (others keep the base's defaults)

    [sets.cautious_builder.tuning]        # optional: how the set was made (free-form table)
    [sets.cautious_builder.verification]  # optional: how it was checked (``neom verify``)

    [fields.strong]                       # a named field: one table of players per count
    description = "the verified tuned sets"
    2 = ["cautious_builder", "denier"]    # exactly 2 strategies for 2-player games
    4 = ["cautious_builder", "merchant", "industrialist", "denier"]

A set keeps its own name in results (``StrategySpec.label``) and its base's canonical spec
(``StrategySpec.spec``, with every parameter), so runs record exactly what was played. A field
stands for a whole table: ``--strategies strong`` is expanded by :func:`seat_strategies` (the
one place every command goes through) to the field's list for the run's player count.
"""

import math
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from sim.core.errors import UserError, check_text, decode_text, read_input
from sim.core.fields import STRATEGY_FILE_HEADER, check_kind
from sim.core.game import StrategyInfo, StrategyRegistry

MAX_STRATEGY_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class StrategySpec:
    name: str  # the strategy of the registry that plays it
    id: int
    params: np.ndarray  # float64[registry.n_params]
    spec: str  # canonical: name, then every parameter that differs from its default
    # What results call it: a named set's own name (with the user's overrides after ":"),
    # else ``spec``.
    label: str = ""

    def __post_init__(self):
        if not self.label:
            object.__setattr__(self, "label", self.spec)


@dataclass(frozen=True)
class Field:
    """A named field: for each player count it lists, one strategy spec per seat."""

    name: str
    description: str
    tables: dict[int, tuple[str, ...]]


@dataclass(frozen=True)
class StrategyFile:
    """A strategy file read and checked: its sets, their extra tables (``tuning``,
    ``verification``: what made and checked each set) and its fields."""

    path: Path
    sets: dict[str, StrategySpec]
    tables: dict[str, dict[str, dict]]  # set name -> table name -> its content
    fields: dict[str, Field]


# Tables a set may carry beside its parameters; the file format leaves their content free.
SET_TABLES = ("tuning", "verification")
MAX_FIELD_PLAYERS = 99


def _check_value(info: StrategyInfo, key: str, value: float, spec: str) -> None:
    if not math.isfinite(value):
        raise UserError(f"parameter {key!r} of strategy {info.name!r} in {spec!r} must be finite")
    if info.bounds:
        low, high = info.bounds[info.param_names.index(key)]
        if not low <= value <= high:
            raise UserError(
                f"parameter {key!r} of strategy {info.name!r} in {spec!r} is {value:g}: "
                f"must be between {low:g} and {high:g}"
            )
    if key in info.whole and value != int(value):
        raise UserError(
            f"parameter {key!r} of strategy {info.name!r} in {spec!r} is {value:g}: "
            "must be a whole number"
        )


def parse_strategy(registry: StrategyRegistry, spec: str) -> StrategySpec:
    """``name`` or ``name:param=value,...`` -> StrategySpec; UserError on any mistake (a
    parameter given twice too: which value should win is the user's to say)."""
    _check_repeats(spec)
    return _parse(registry, spec)


def _check_repeats(spec: str) -> None:
    _, _, rest = spec.strip().partition(":")
    seen = set()
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key = item.partition("=")[0].strip()
        if key in seen:
            raise UserError(f"parameter {key!r} given twice in {spec!r}; give it once")
        seen.add(key)


def _parse(registry: StrategyRegistry, spec: str) -> StrategySpec:
    """:func:`parse_strategy` without the check for repeated parameters (a set's values with
    the user's overrides after them: the overrides win)."""
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    known = registry.by_name()
    info = known.get(name)
    if info is None:
        raise UserError(
            f"unknown strategy {name!r} in {spec!r}; valid strategies: {', '.join(known)}"
        )
    params = np.zeros(registry.n_params, dtype=np.float64)
    params[: len(info.defaults)] = info.defaults
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in info.param_names:
            names = ", ".join(info.param_names) or "none"
            raise UserError(
                f"bad parameter {item!r} for strategy {name!r} in {spec!r}; "
                f"expected param=value with param one of: {names}"
            )
        try:
            number = float(value)
        except ValueError:
            raise UserError(
                f"parameter {key!r} of strategy {name!r} in {spec!r} is not a number: {value!r}"
            ) from None
        _check_value(info, key, number, spec)
        params[info.param_names.index(key)] = number
    changed = [
        f"{key}={params[k]:g}"
        for k, key in enumerate(info.param_names)
        if params[k] != info.defaults[k]
    ]
    canonical = name + (":" + ",".join(changed) if changed else "")
    return StrategySpec(name, info.id, params, canonical)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def set_name_problem(registry: StrategyRegistry, name: str, bare: bool = False) -> str:
    """Why ``name`` cannot name a set of a strategy file ("" if it can): empty, a built-in
    strategy's name, or holding ':' or ',' (a strategy spec's separators); with ``bare``,
    anything but letters, digits, '_' and '-' (a TOML bare key: what ``neom tune`` writes)."""
    if not name.strip():
        return "a set name may not be empty"
    if name in registry.by_name():
        return f"{name!r} is a built-in strategy; choose another name"
    if ":" in name or "," in name:
        return "a set name may not contain ':' or ','"
    if bare and not _BARE_KEY.fullmatch(name):
        return "a set name is letters, digits, '_' and '-' only"
    return ""


def read_strategy_file(
    registry: StrategyRegistry, path, shipped: "StrategyFile | None" = None
) -> StrategyFile:
    """A strategy file's sets, their tables and its fields; UserError naming the file and the
    set or field on any mistake (unknown base, unknown parameter, value not a finite number, a
    built-in strategy's name, a field's list of the wrong length or naming an unknown
    strategy). A field may name the file's own sets, the ``shipped`` sets and any strategy."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise UserError(f"strategy file {path} does not exist")
    # Size before reading, nesting before parsing (sim.core.errors).
    shown = f"strategy file {path}"
    text = decode_text(read_input(path, "strategy file", MAX_STRATEGY_FILE_BYTES, shown), shown)
    check_text(text, "toml", shown)
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise UserError(f"strategy file {path} is not valid TOML: {exc}") from None
    check_kind(data, STRATEGY_FILE_HEADER, shown)
    sets, fields = data.get("sets", {}), data.get("fields", {})
    if not isinstance(sets, dict) or not isinstance(fields, dict) or not (sets or fields):
        raise UserError(
            f"strategy file {path}: expected at least one [sets.NAME] or [fields.NAME] table"
        )
    unknown = sorted(set(data) - {"sets", "fields"})
    if unknown:
        raise UserError(f"strategy file {path}: unknown top-level key(s) {', '.join(unknown)}")
    known = registry.by_name()
    named: dict[str, StrategySpec] = {}
    tables: dict[str, dict[str, dict]] = {}
    # A user's set or field named like a shipped one would silently replace it (or, a set
    # named like a field, never be used): refused, unless this is the shipped file itself.
    taken = {}
    if shipped is not None and not is_shipped_file(path, shipped.path):
        taken = {name: "set" for name in shipped.sets} | {name: "field" for name in shipped.fields}
    for name, entries in sets.items():
        where = f"strategy file {path}, [sets.{name}]"
        _check_name(registry, name, where)
        _check_not_shipped(name, taken, where)
        if not isinstance(entries, dict):
            raise UserError(f"{where}: expected a table")
        base = entries.get("base")
        if not isinstance(base, str):
            raise UserError(f"{where}: 'base' must name a strategy ({', '.join(known)})")
        values = []
        tables[name] = {}
        for key, value in entries.items():
            if key == "base":
                continue
            if isinstance(value, dict):
                if key not in SET_TABLES:
                    raise UserError(
                        f"{where}: unknown table [{key}] (a set may have: {', '.join(SET_TABLES)})"
                    )
                tables[name][key] = value
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise UserError(f"{where}: {key} = {value!r} is not a number")
            values.append(f"{key}={value!r}")
        try:
            spec = parse_strategy(registry, ":".join([base, ",".join(values)]))
        except UserError as exc:
            raise UserError(f"{where}: {exc}") from None
        named[name] = replace(spec, label=name)
    usable = {**(shipped.sets if shipped else {}), **named}
    read = {}
    for name, entries in fields.items():
        where = f"strategy file {path}, [fields.{name}]"
        _check_name(registry, name, where)
        _check_not_shipped(name, taken, where)
        if name in named:
            raise UserError(f"{where}: {name!r} is also a set's name; choose another name")
        read[name] = _read_field(registry, name, entries, usable, where)
    return StrategyFile(path, named, tables, read)


def _check_name(registry: StrategyRegistry, name: str, where: str) -> None:
    """A set's or a field's name: the rules of :func:`set_name_problem`."""
    problem = set_name_problem(registry, name)
    if problem:
        raise UserError(f"{where}: {problem}")


def is_shipped_file(path: Path, shipped: Path) -> bool:
    """Whether ``path`` is the shipped file, or the temporary copy ``neom tune --out`` reads
    back before replacing it (sim.core.strategy_writer.write_set)."""
    try:
        path, shipped = Path(path).resolve(), Path(shipped).resolve()
    except OSError:
        return False
    temporary = re.fullmatch(rf"\.{re.escape(shipped.name)}\.[0-9]+\.tmp", path.name)
    return path == shipped or (path.parent == shipped.parent and temporary is not None)


def _check_not_shipped(name: str, taken: dict[str, str], where: str) -> None:
    if name in taken:
        raise UserError(
            f"{where}: {name!r} is the name of a shipped {taken[name]} (neom strategies); "
            "choose another name"
        )


def _read_field(registry: StrategyRegistry, name: str, entries, usable: dict, where: str) -> Field:
    if not isinstance(entries, dict):
        raise UserError(f"{where}: expected a table")
    description = entries.get("description", "")
    if not isinstance(description, str):
        raise UserError(f"{where}: description = {description!r} is not a string")
    lists: dict[int, tuple[str, ...]] = {}
    for key, value in entries.items():
        if key == "description":
            continue
        if not (key.isdigit() and 1 <= int(key) <= MAX_FIELD_PLAYERS):
            raise UserError(
                f"{where}: unknown key {key!r}: expected description or a player count "
                f'(2 = ["a", "b"])'
            )
        players = int(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UserError(f"{where}: {key} must be a list of strategy names")
        if len(value) != players:
            raise UserError(
                f"{where}: the {players}-player list names {len(value)} "
                f"strateg{'y' if len(value) == 1 else 'ies'}: give exactly {players}, one per seat"
            )
        for spec in value:
            try:
                _resolve(registry, spec, usable)
            except UserError as exc:
                raise UserError(f"{where}, {players} players: {exc}") from None
        lists[players] = tuple(v.strip() for v in value)
    if not lists:
        raise UserError(f'{where}: no player count listed (e.g. 2 = ["a", "b"])')
    return Field(name, description, dict(sorted(lists.items())))


def load_strategy_file(registry: StrategyRegistry, path) -> dict[str, StrategySpec]:
    """The named parameter sets of a strategy file (see :func:`read_strategy_file`)."""
    return read_strategy_file(registry, path, shipped_file(registry)).sets


def shipped_file(registry: StrategyRegistry) -> StrategyFile | None:
    """The file of named sets and fields the game ships (tuned weights), usable by name
    everywhere; None if the game ships none."""
    if not registry.named_sets:
        return None
    return read_strategy_file(registry, registry.named_sets)


def shipped_sets(registry: StrategyRegistry) -> dict[str, StrategySpec]:
    """The named sets the game ships (tuned weights), usable by name everywhere."""
    shipped = shipped_file(registry)
    return shipped.sets if shipped else {}


def resolve_strategy(
    registry: StrategyRegistry, spec: str, named: dict[str, StrategySpec] | None = None
) -> StrategySpec:
    """A spec naming a strategy, a set the game ships or a set of ``named`` (a user's file),
    optionally with ``:param=value`` overrides on top of the set's values."""
    return _resolve(registry, spec, {**shipped_sets(registry), **(named or {})})


def _resolve(registry: StrategyRegistry, spec: str, named: dict[str, StrategySpec]):
    name, _, rest = spec.strip().partition(":")
    base = named.get(name.strip())
    if base is None:
        return parse_strategy(registry, spec)
    overrides = [item.strip() for item in rest.split(",") if item.strip()]
    if not overrides:
        return base
    _check_repeats(spec)
    info = registry.by_name()[base.name]
    inherited = [f"{key}={float(base.params[k])!r}" for k, key in enumerate(info.param_names)]
    resolved = _parse(registry, f"{base.name}:{','.join(inherited + overrides)}")
    return replace(resolved, label=f"{name.strip()}:{','.join(overrides)}")


def seat_strategies(
    registry: StrategyRegistry,
    texts,
    n_players: int,
    strategy_file=None,
    option: str = "--strategies",
    one_for_all: bool = False,
) -> list[StrategySpec]:
    """The strategy of every seat of an ``n_players`` game from a command line's specs: a field
    name alone stands for its list for ``n_players`` (a user's ``strategy_file`` may add sets
    and fields, never of a shipped one's name); ``one_for_all`` lets one spec
    fill every seat. UserError unless there is exactly one strategy per seat."""
    shipped = shipped_file(registry)
    user = read_strategy_file(registry, strategy_file, shipped) if strategy_file else None
    named = {**(shipped.sets if shipped else {}), **(user.sets if user else {})}
    fields = {**(shipped.fields if shipped else {}), **(user.fields if user else {})}
    texts = expand_field(tuple(texts), n_players, fields, option)
    specs = [_resolve(registry, text, named) for text in texts]
    if one_for_all and len(specs) == 1:
        specs *= n_players
    if len(specs) != n_players:
        listed = f"{len(specs)} strateg{'y' if len(specs) == 1 else 'ies'}"
        also = ", or one for all" if one_for_all else ""
        raise UserError(
            f"{option} lists {listed} but --players is {n_players}: give one strategy per "
            f"seat{also}, or a field's name ({', '.join(fields) or 'none defined'})"
        )
    return specs


def expand_field(texts: tuple[str, ...], n_players: int, fields: dict, option: str):
    """``texts`` with a field's name replaced by its list for ``n_players``; unchanged when it
    names no field. UserError when a field is not alone, has parameters, or has no list for
    ``n_players``."""
    for text in texts:
        name, colon, _ = text.strip().partition(":")
        field = fields.get(name.strip())
        if field is None:
            continue
        if colon:
            raise UserError(f"{option} {text!r}: the field {field.name!r} takes no parameters")
        if len(texts) > 1:
            raise UserError(
                f"{option} {','.join(texts)!r}: the field {field.name!r} stands for a whole "
                f"table; give it alone ({option} {field.name})"
            )
        if n_players not in field.tables:
            counts = ", ".join(str(n) for n in field.tables)
            raise UserError(
                f"{option} {field.name}: the field has no list for {n_players} players "
                f"(it has lists for {counts})"
            )
        return field.tables[n_players]
    return texts


def split_strategies(text: str, option: str = "--strategies") -> tuple[str, ...]:
    """Split a command line's ``a,b:x=1,y=2,c`` into specs: a piece with ``=`` but no ``:``
    is one more parameter of the spec before it. ``option`` names the flag in errors."""
    specs: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if "=" in piece and ":" not in piece and specs:
            specs[-1] += "," + piece
        elif piece:
            specs.append(piece)
        else:
            raise UserError(f"{option} {text!r}: empty strategy name")
    return tuple(specs)
