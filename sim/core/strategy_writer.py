"""Writing one named set into a strategy file (``neom tune --out FILE``) without touching the
rest of it.

A strategy file is the user's: its other sets and its comment lines stay as they are. A new
set is appended; an existing one is replaced in place (only with ``--overwrite``): its table
header, its lines and the comment lines just above the header (what ``neom tune`` writes
there), up to the comment lines that open the next table. Everything is checked before any game
is played (:func:`claim_set`), and the new text is read back as a strategy file, with every
other set unchanged, before it replaces the old one (whole: a temporary file, renamed).
"""

import os
import re
from pathlib import Path

from sim.core.errors import UserError
from sim.core.game import StrategyRegistry
from sim.core.outputs import claim_file
from sim.core.strategies import is_shipped_file, load_strategy_file, set_name_problem, shipped_file

_TABLE_HEADER = re.compile(r"\s*\[")
_COMMENT = re.compile(r"\s*#")


def _header(name: str) -> re.Pattern:
    quoted = re.escape(name)
    return re.compile(rf"\s*\[\s*sets\s*\.\s*(?:{quoted}|\"{quoted}\"|'{quoted}')\s*\]\s*(?:#.*)?")


def _subtable(name: str) -> re.Pattern:
    """The header of one of the set's own tables (``[sets.NAME.tuning]``, ...)."""
    quoted = re.escape(name)
    return re.compile(rf"\s*\[\s*sets\s*\.\s*(?:{quoted}|\"{quoted}\"|'{quoted}')\s*\.")


def claim_set(registry: StrategyRegistry, path, name: str, overwrite: bool) -> str | None:
    """Check that set ``name`` can be written to strategy file ``path``: a bare name of no
    built-in strategy; a file that is new, or a strategy file (refused otherwise, even with
    ``--overwrite``: it is not this command's to replace) that does not yet have the set (or
    ``overwrite``). Returns the file's text (None: a new file)."""
    problem = set_name_problem(registry, name, bare=True)
    if problem:
        raise UserError(f"--name {name!r}: {problem}")
    path = Path(path)
    shipped = shipped_file(registry)
    # A user's file may not reuse a shipped name (it would shadow it); the shipped file may.
    if (
        shipped
        and name in {**shipped.sets, **shipped.fields}
        and not is_shipped_file(path, shipped.path)
    ):
        raise UserError(f"--name {name!r}: the name of a shipped set or field; choose another")
    if not (path.exists() or path.is_symlink()):
        claim_file(path, "--out")
        return None
    claim_file(path, "--out", overwrite=True)  # a regular file in a writable folder
    try:
        sets = load_strategy_file(registry, path)
    except UserError as exc:
        raise UserError(
            f"--out {path}: not a strategy file this command can add to ({exc}): will not "
            "write into it"
        ) from None
    text = path.read_text(encoding="utf-8-sig")
    if name in sets:
        if not overwrite:
            raise UserError(
                f"--out {path}: already has the set {name!r}; pass --overwrite to replace it "
                "(the file's other sets are kept), or choose another --name"
            )
        if _block(text.splitlines(), name) is None:
            raise UserError(
                f"--out {path}: set {name!r} is not written as a [sets.{name}] table, so it "
                "cannot be replaced in place; edit the file by hand or choose another --name"
            )
    return text


def _block(lines: list[str], name: str) -> tuple[int, int] | None:
    """Lines [start, end) of set ``name``: the comment lines just above its header, the
    header, its lines and its own tables (``[sets.NAME.tuning]``, ...) up to the next table
    (less the blank and comment lines just above it)."""
    header, own = _header(name), _subtable(name)
    starts = [i for i, line in enumerate(lines) if header.fullmatch(line)]
    if len(starts) != 1:
        return None
    start = end = starts[0]
    while start > 0 and _COMMENT.match(lines[start - 1]):
        start -= 1
    end += 1
    while end < len(lines) and (not _TABLE_HEADER.match(lines[end]) or own.match(lines[end])):
        end += 1
    while end > starts[0] + 1 and (not lines[end - 1].strip() or _COMMENT.match(lines[end - 1])):
        end -= 1
    return start, end


def with_set(text: str | None, name: str, block: str) -> str:
    """The strategy file's text with set ``name`` written as ``block`` (appended, or replacing
    the set in place)."""
    if not text:
        return block
    lines = text.splitlines()
    found = _block(lines, name)
    if found is None:
        return text.rstrip("\n") + "\n\n" + block
    start, end = found
    return "\n".join([*lines[:start], *block.rstrip("\n").split("\n"), *lines[end:]]) + "\n"


def write_set(registry: StrategyRegistry, path, name: str, block: str, text: str | None) -> None:
    """Write set ``name`` (``block``: its TOML, comment first) into strategy file ``path``,
    whose text :func:`claim_set` returned; the result is read back as a strategy file, with
    every other set unchanged, before it replaces the file."""
    path = Path(path)
    before = load_strategy_file(registry, path) if text is not None else {}
    new_text = with_set(text, name, block)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(new_text, encoding="utf-8")
        try:
            after = load_strategy_file(registry, tmp)
        except UserError as exc:
            raise UserError(f"--out {path}: the file would not read back ({exc})") from None
        others = {key: spec.spec for key, spec in before.items() if key != name}
        if name not in after or {k: s.spec for k, s in after.items() if k != name} != others:
            raise UserError(f"--out {path}: writing the set would change the file's other sets")
        os.replace(tmp, path)
    except OSError as exc:
        raise UserError(f"--out {path}: cannot write ({exc.strerror or exc})") from None
    finally:
        tmp.unlink(missing_ok=True)
