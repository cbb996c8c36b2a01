"""Strategy files: named parameter sets usable wherever a strategy name is.

A strategy file is TOML::

    [sets.cautious_builder]
    base = "builder"      # any registered strategy
    reserve = 1.2         # parameters of that strategy (others keep the base's defaults)
    vp = 1.1

``load_strategy_file(path)`` returns ``{name: StrategySpec}``; ``resolve_strategy(spec,
named)`` reads a command-line spec that may use those names (``cautious_builder`` or
``cautious_builder:vp=1.3``). A set's spec string is its base's canonical spec, so runs
record exactly which parameters were played.
"""

import tomllib
from pathlib import Path

from sim.core.errors import UserError
from strategies.neom.registry import STRATEGIES, StrategySpec, parse_strategy


def load_strategy_file(path) -> dict[str, StrategySpec]:
    """Named parameter sets of a strategy file; UserError naming the file and set on any
    mistake (unknown base, unknown parameter, value not a number, name of a strategy)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"strategy file {path} does not exist") from None
    except OSError as exc:
        raise UserError(f"cannot read strategy file {path}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"strategy file {path} is not valid TOML: {exc}") from None
    sets = data.get("sets")
    if not isinstance(sets, dict) or not sets:
        raise UserError(f"strategy file {path}: expected at least one [sets.NAME] table")
    unknown = sorted(set(data) - {"sets"})
    if unknown:
        raise UserError(f"strategy file {path}: unknown top-level key(s) {', '.join(unknown)}")
    named = {}
    for name, fields in sets.items():
        where = f"strategy file {path}, [sets.{name}]"
        if name in STRATEGIES:
            raise UserError(f"{where}: {name!r} is a built-in strategy; choose another name")
        if ":" in name or "," in name:
            raise UserError(f"{where}: a set name may not contain ':' or ','")
        if not isinstance(fields, dict):
            raise UserError(f"{where}: expected a table")
        base = fields.get("base")
        if not isinstance(base, str):
            raise UserError(f"{where}: 'base' must name a strategy ({', '.join(STRATEGIES)})")
        values = []
        for key, value in fields.items():
            if key == "base":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise UserError(f"{where}: {key} = {value!r} is not a number")
            values.append(f"{key}={value!r}")
        try:
            named[name] = parse_strategy(":".join([base, ",".join(values)]))
        except UserError as exc:
            raise UserError(f"{where}: {exc}") from None
    return named


def resolve_strategy(spec: str, named: dict[str, StrategySpec] | None = None) -> StrategySpec:
    """A spec naming a built-in strategy or a set of ``named`` (optionally ``:param=value``
    overrides on top of the set's values)."""
    name, _, rest = spec.strip().partition(":")
    base = (named or {}).get(name.strip())
    if base is None:
        return parse_strategy(spec)
    if not rest.strip():
        return base
    info = STRATEGIES[base.name]
    inherited = [f"{key}={float(base.params[k])!r}" for k, key in enumerate(info.param_names)]
    return parse_strategy(f"{base.name}:{','.join(inherited)},{rest}")


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
