"""Checking the parsed TOML of a game's data file against field specifications.

Every game's data loader (NEOM's catalogue, Tangram City's tile set) reads tables of named
fields, each of a kind and with a default, and reports every problem at once, each naming the
file, the entry and the field. The reading is the same for every game; what a kind means
(``"str"``, ``"int"``, ``"pair"``, ...) is the game's, passed in as its ``type_problem``.
"""

import difflib
import unicodedata
from collections.abc import Callable

from sim.core.errors import UserError

# Why a value is not of a kind ("" if it is): a game's own checker of its field kinds.
TypeProblem = Callable[[object, str], str]


def describe(value, max_text: int | None = None) -> str:
    """The value as a message shows it ("the integer 3", "an array", ...); a string longer than
    ``max_text`` characters is cut there, with "..."."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"the integer {_integer(value)}"
    if isinstance(value, float):
        return f"the number {value}"
    if isinstance(value, str):
        if max_text is not None and len(value) > max_text:
            return f'the string "{value[:max_text]}"...'
        return f'the string "{value}"'
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


def _integer(value: int, max_digits: int = 30) -> str:
    """A whole number as a message shows it: its first digits and how many there are when it
    is long (a value past Python's 4,300-digit limit is shown in hexadecimal, which has none)."""
    try:
        digits = str(abs(value))
    except ValueError:
        digits = f"{abs(value):x}"
        sign = "-0x" if value < 0 else "0x"
        return f"{sign}{digits[:max_digits]}... ({len(digits):,} hexadecimal digits)"
    sign = "-" if value < 0 else ""
    if len(digits) <= max_digits:
        return f"{sign}{digits}"
    return f"{sign}{digits[:max_digits]}... ({len(digits):,} digits)"


def suggest(name: str, valid, list_all: bool = True) -> str:
    """A hint for the unknown ``name``: the closest of ``valid``, else (``list_all``) all of
    them."""
    if not valid:
        return " (none are allowed)"
    close = difflib.get_close_matches(name, list(valid), n=1)
    if close:
        return f' (did you mean "{close[0]}"?)'
    if list_all:
        return f" (valid: {', '.join(valid)})"
    return ""


def read_fields(
    raw,
    spec: dict,
    where: str,
    problems: list[str],
    type_problem: TypeProblem,
    noun: str = "field",
    max_text: int | None = None,
):
    """Check a table's keys and value types against ``spec`` (key -> (kind, default, ...)).

    Returns every field of the spec: the value, its default when absent, or None when it is
    missing (required: default None) or of the wrong type (both reported). None if ``raw`` is
    not a table (shown as :func:`describe` with ``max_text``).
    """
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected a table, got {describe(raw, max_text)}")
        return None
    for key in raw:
        if key not in spec:
            problems.append(f'{where}: unknown {noun} "{key}"{suggest(key, spec)}')
    values = {}
    for key, (kind, default, *_) in spec.items():
        if key not in raw:
            if default is None:
                problems.append(f'{where}: {noun} "{key}": missing')
            values[key] = default
            continue
        problem = type_problem(raw[key], kind)
        if problem:
            problems.append(f'{where}: {noun} "{key}": {problem}')
        values[key] = None if problem else raw[key]
    return values


def read_header(
    data: dict,
    top_level_keys,
    header: str,
    spec: dict,
    source: str,
    problems: list[str],
    type_problem: TypeProblem,
    max_text: int | None = None,
):
    """Report unknown top-level keys of the file; return the fields of its ``[header]`` table
    (see :func:`read_fields`), or None when it is missing (reported) or not a table."""
    for key in data:
        if key not in top_level_keys:
            problems.append(
                f'{source}: unknown top-level key "{key}"{suggest(key, top_level_keys)}'
            )
    if header not in data:
        problems.append(
            f'{source}: [{header}]: missing; the file starts with [{header}] name = "..."'
        )
        return None
    where = f"{source}: [{header}]"
    return read_fields(data[header], spec, where, problems, type_problem, max_text=max_text)


def table_array(data: dict, key: str, source: str, problems: list[str]) -> list:
    """The array of tables ``[[key]]`` (empty when absent; reported when not an array)."""
    value = data.get(key, [])
    if not isinstance(value, list):
        problems.append(f'{source}: "{key}" must be an array of tables ([[{key}]])')
        return []
    return value


def lookalike_key(name: str) -> str:
    """Names that look the same compare equal: Unicode compatibility form (NFKC: "é" composed
    or not, full-width letters, ligatures), case and runs of spaces ignored."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def duplicate_names(
    names: list, what: str, source: str, problems: list[str], lookalikes: bool = False
) -> None:
    """Report names used twice (None: no usable name, skipped) and, with ``lookalikes``, names
    that only look different (see :func:`lookalike_key`)."""
    first: dict[str, int] = {}
    looks: dict[str, int] = {}
    for position, name in enumerate(names):
        if name is None:
            continue
        if name in first:
            problems.append(
                f'{source}: {what} "{name}": duplicate name ({what}s #{first[name] + 1} and '
                f"#{position + 1}); {what} names must be unique"
            )
            continue
        first[name] = position
        if not lookalikes:
            continue
        key = lookalike_key(name)
        if key in looks:
            other = names[looks[key]]
            problems.append(
                f'{source}: {what} "{name}": looks the same as {what} "{other}" ({what}s '
                f"#{looks[key] + 1} and #{position + 1} differ only in case, spacing or Unicode "
                "form); rename one"
            )
        else:
            looks[key] = position


# --- names ---------------------------------------------------------------------------------------


def name_problem(name: str) -> str:
    """Why ``name`` cannot name anything ("" if it can): empty, or holding control characters
    (a newline or a terminal escape would garble every message and report that shows it)."""
    if not name.strip():
        return "empty; give it a name"
    if any(unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") for char in name):
        return "contains a control or invisible formatting character"
    return ""


def shown_name(name: str, limit: int = 40) -> str:
    """``name`` quoted for a message about it: control and invisible characters escaped (they
    would garble the terminal), at most ``limit`` characters."""
    text = "".join(
        f"\\u{ord(char):04x}" if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") else char
        for char in name[:limit]
    )
    return f'"{text}{"…" if len(name) > limit else ""}"'


def check_name(fields, where: str, problems: list[str]) -> None:
    """Report an unusable ``fields["name"]`` and blank it (None), so no later check uses it."""
    if fields and isinstance(fields.get("name"), str):
        problem = name_problem(fields["name"])
        if problem:
            problems.append(f'{where}: field "name": {problem}')
            fields["name"] = None


# --- the kind of a file ------------------------------------------------------------------------

STRATEGY_FILE_HEADER = "sets"


def file_kinds() -> dict[str, str]:
    """What a TOML file starting with each top-level table is: every game's data file (by the
    registry) and a strategy file."""
    from sim.core.registry import game_names, get_game

    kinds = {}
    for name in game_names():
        game = get_game(name)
        if game.data_header:
            kinds[game.data_header] = f"a {game.title} {game.data_noun}"
    kinds[STRATEGY_FILE_HEADER] = "a strategy file"
    return kinds


def check_kind(data: dict, header: str, shown: str) -> None:
    """UserError "this is a NEOM catalogue, not a Tangram City tile set" when ``data`` (a
    parsed TOML file expected to start with the table ``header``) lacks it and starts as
    another kind of file does: one line, instead of one problem per missing field."""
    if not isinstance(data, dict) or header in data:
        return
    kinds = file_kinds()
    for other, what in kinds.items():
        if other != header and isinstance(data.get(other), dict):
            raise UserError(f"{shown}: this is {what}, not {kinds.get(header, header)}")
