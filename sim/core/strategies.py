"""Strategy specs for every game: ``name`` or ``name:param=value,...``, named parameter sets,
and the checks that keep a parameter vector finite and in range.

A game's strategies are a :class:`sim.core.game.StrategyRegistry`. Every strategy gets a
float64 vector of ``registry.n_params`` entries, filled from its defaults and the user's spec.
A strategy file (and the game's shipped file of tuned sets) is TOML::

    [sets.cautious_builder]
    base = "builder"      # any strategy of the game
    reserve = 1.2         # parameters of that strategy (others keep the base's defaults)

A set's spec string is its base's canonical spec, so runs record exactly what was played.
"""

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim.core.errors import UserError, check_text, decode_text, read_input
from sim.core.fields import STRATEGY_FILE_HEADER, check_kind
from sim.core.game import StrategyInfo, StrategyRegistry

MAX_STRATEGY_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class StrategySpec:
    name: str
    id: int
    params: np.ndarray  # float64[registry.n_params]
    spec: str  # canonical: name, then every parameter that differs from its default


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
    """``name`` or ``name:param=value,...`` -> StrategySpec; UserError on any mistake."""
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


def load_strategy_file(registry: StrategyRegistry, path) -> dict[str, StrategySpec]:
    """Named parameter sets of a strategy file; UserError naming the file and set on any
    mistake (unknown base, unknown parameter, value not a finite number, a strategy's name)."""
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
    sets = data.get("sets")
    if not isinstance(sets, dict) or not sets:
        raise UserError(f"strategy file {path}: expected at least one [sets.NAME] table")
    unknown = sorted(set(data) - {"sets"})
    if unknown:
        raise UserError(f"strategy file {path}: unknown top-level key(s) {', '.join(unknown)}")
    known = registry.by_name()
    named = {}
    for name, fields in sets.items():
        where = f"strategy file {path}, [sets.{name}]"
        problem = set_name_problem(registry, name)
        if problem:
            raise UserError(f"{where}: {problem}")
        if not isinstance(fields, dict):
            raise UserError(f"{where}: expected a table")
        base = fields.get("base")
        if not isinstance(base, str):
            raise UserError(f"{where}: 'base' must name a strategy ({', '.join(known)})")
        values = []
        for key, value in fields.items():
            if key == "base":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise UserError(f"{where}: {key} = {value!r} is not a number")
            values.append(f"{key}={value!r}")
        try:
            named[name] = parse_strategy(registry, ":".join([base, ",".join(values)]))
        except UserError as exc:
            raise UserError(f"{where}: {exc}") from None
    return named


def shipped_sets(registry: StrategyRegistry) -> dict[str, StrategySpec]:
    """The named sets the game ships (tuned weights), usable by name everywhere."""
    return load_strategy_file(registry, registry.named_sets) if registry.named_sets else {}


def resolve_strategy(
    registry: StrategyRegistry, spec: str, named: dict[str, StrategySpec] | None = None
) -> StrategySpec:
    """A spec naming a strategy, a set the game ships or a set of ``named`` (a user's file),
    optionally with ``:param=value`` overrides on top of the set's values."""
    name, _, rest = spec.strip().partition(":")
    base = ({**shipped_sets(registry), **(named or {})}).get(name.strip())
    if base is None:
        return parse_strategy(registry, spec)
    if not rest.strip():
        return base
    info = registry.by_name()[base.name]
    inherited = [f"{key}={float(base.params[k])!r}" for k, key in enumerate(info.param_names)]
    return parse_strategy(registry, f"{base.name}:{','.join(inherited)},{rest}")


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
