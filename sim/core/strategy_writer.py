"""Writing one named set into a strategy file (``neom tune --out FILE``) without touching the
rest of it.

A strategy file is the user's: its other sets and its comment lines stay as they are. A new
set is appended; an existing one is replaced in place (only with ``--overwrite``): its table
header, its lines and the comment lines just above the header (what ``neom tune`` writes
there), up to the comment lines that open the next table. Everything is checked before any game
is played (:func:`claim_set`), and the new text is read back as a strategy file, with every
other set unchanged, before it replaces the old one (whole: a temporary file, renamed).

The commands writing into a strategy file (``neom tune --out``, ``neom verify --write``) take
turns: each takes the writer lock of the file's folder for the moment of its write, reads the
file afresh under it (what another wrote since the claim is kept), and writes through a
temporary file of its own process. A symbolic link is written through to the file it names.
"""

import errno
import os
import re
import stat
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sim.core.errors import UTF8_BOM, UserError, check_text, decode_text, read_input
from sim.core.game import StrategyRegistry
from sim.core.outputs import claim_file, writer_lock
from sim.core.strategies import (
    MAX_STRATEGY_FILE_BYTES,
    is_shipped_file,
    load_strategy_file,
    set_name_problem,
    shipped_file,
)

# How long a command about to write a strategy file waits for another's write to the same
# folder to end (a write takes a moment; the lock of a long command is refused after this).
WRITE_WAIT_S = 120.0

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
    target = strategy_file_target(path, "--out")  # a link is written through to its file
    claim_file(target, "--out", overwrite=True)  # a regular file in a writable folder
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
    whose text :func:`claim_set` returned (a symbolic link: into the file it names). Under the
    writer lock the file is read afresh (another command may have written it since the claim:
    its sets are kept), the result is read back as a strategy file, with every other set
    unchanged, and replaces the file whole (see :func:`replace_whole`)."""
    path = Path(path)
    shown = f"--out {path}"
    claimed = _set_names(text)
    folder = strategy_file_target(path, "--out") if text is not None else path
    with strategy_file_lock(folder, "neom tune --out"):
        target, current, bom, before = path, None, b"", {}
        if path.exists() or path.is_symlink():  # a new file may have been made meanwhile
            target = strategy_file_target(path, "--out")
            current, bom, _ = read_strategy_text(target, shown)
            before = load_strategy_file(registry, target)
            if name in before and name not in claimed:
                raise UserError(
                    f"{shown}: another command wrote a set {name!r} into it meanwhile; choose "
                    "another --name, or pass --overwrite to replace it"
                )
        others = {key: spec.spec for key, spec in before.items() if key != name}

        def check(written: Path) -> None:
            try:
                after = load_strategy_file(registry, written)
            except UserError as exc:
                raise UserError(f"{shown}: the file would not read back ({exc})") from None
            if name not in after or {k: s.spec for k, s in after.items() if k != name} != others:
                raise UserError(f"{shown}: writing the set would change the file's other sets")

        data = bom + with_set(current, name, block).encode("utf-8")
        replace_whole(target, data, shown, check)


def _set_names(text: str | None) -> set[str]:
    """The names of the sets in strategy-file ``text`` (none if there is none)."""
    try:
        sets = tomllib.loads(text or "").get("sets", {})
    except tomllib.TOMLDecodeError:
        return set()
    return set(sets) if isinstance(sets, dict) else set()


# --- writing into a user's strategy file (neom verify --write) ----------------------------------


def strategy_file_target(path, option: str) -> Path:
    """The file a command writing into the existing strategy file ``path`` replaces, checked
    before any game: a symbolic link is written through (its target is the user's file; the
    link stays a link, as an editor keeps it); the target must be a regular file that is not
    read-only. UserError naming ``option`` and ``path`` otherwise."""
    path = Path(path)
    shown = f"{option} {path}"
    try:
        target = path.resolve(strict=True)
    except FileNotFoundError:
        if path.is_symlink():
            raise UserError(
                f"{shown}: a symbolic link to {os.readlink(path)}, which does not exist"
            ) from None
        raise UserError(f"{shown}: does not exist") from None
    except (OSError, RuntimeError) as exc:  # a loop of links
        raise UserError(f"{shown}: cannot follow the path ({exc})") from None
    try:
        info = target.stat()
    except OSError as exc:
        raise UserError(f"{shown}: cannot read it ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise UserError(f"{shown}: not a regular file")
    if os.statvfs(target).f_flag & os.ST_RDONLY:
        raise UserError(f"{shown}: cannot write ({os.strerror(errno.EROFS)})")
    # The mode bits too: root may write anything, but a file made read-only is not to change.
    if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise UserError(f"{shown}: the file is read-only; make it writable (chmod u+w)")
    return target


def read_strategy_text(target: Path, shown: str) -> tuple[str, bytes, dict]:
    """The strategy file's text (a UTF-8 byte-order mark dropped), that mark (b"" if none) and
    its parsed content, read under the limits every input is read under; UserError otherwise."""
    data = read_input(target, "strategy file", MAX_STRATEGY_FILE_BYTES, shown)
    text = decode_text(data, shown)
    check_text(text, "toml", shown)
    try:
        content = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise UserError(f"{shown}: not valid TOML ({exc})") from None
    return text, UTF8_BOM if data.startswith(UTF8_BOM) else b"", content


def replace_whole(
    target: Path, data: bytes, shown: str, check: Callable[[Path], None], rehearse: bool = False
) -> None:
    """Replace file ``target`` by ``data``, whole: written to a temporary name of this process
    beside it (two writers never share one), flushed to disk, given the file's permissions,
    checked (``check(temporary)`` raises UserError if it would not read back), then renamed
    over it. ``rehearse``: everything but the rename (run before the games, it finds a folder
    that is not writable or a full disk then, not after them). The temporary file never
    stays; UserError on any failure, the file untouched."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
        with open(tmp, "wb") as handle:
            if mode is not None:  # else a new file's (the umask's)
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        check(tmp)
        if not rehearse:
            os.replace(tmp, target)
    except OSError as exc:
        raise UserError(f"{shown}: cannot write ({exc.strerror or exc})") from None
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


@contextmanager
def strategy_file_lock(target: Path, command: str) -> Iterator[None]:
    """Hold the writer lock of the strategy file's folder while the file is re-read and
    replaced: writers of one file (``neom verify --write`` of other sets, ``neom tune --out``)
    take turns, each adding to the file as the one before left it."""
    with writer_lock(target.parent, command, what="strategy file's folder", wait_s=WRITE_WAIT_S):
        yield
