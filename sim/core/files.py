"""The file primitives every writer of the tool shares: a file's digest and whether it is still
the one a listing names, the writer's note (``.neom-writer.json``) read in words, and files
opened or read without following a link or blocking on a pipe.

Both the run store (:mod:`sim.core.store`) and the command outputs built on it
(:mod:`sim.core.outputs`: claims, staging, publishing) use these; they live below both, so that
the two import each other in one direction only.
"""

import hashlib
import json
import os
import re
import stat
import time
from pathlib import Path

WRITER = ".neom-writer.json"
MAX_WRITER_BYTES = 4096
_SHA256 = re.compile(r"[0-9a-f]{64}")
_HASH_CHUNK = 1 << 20


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def file_problem(path: Path, entry: dict) -> str:
    """Why the file at ``path`` is not the one ``entry`` lists ("" if it is, "missing" if it is
    gone)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size != entry["bytes"]:
        return f"{info.st_size} bytes, not the {entry['bytes']} written"
    try:
        same = file_digest(path) == entry["sha256"]
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    return "" if same else "content differs (sha256)"


def entry_is_sound(entry: dict) -> bool:
    """A listing entry's size is a whole number of bytes and its digest a sha256 (the only
    entries trusted with a deletion)."""
    size, digest = entry.get("bytes"), entry.get("sha256")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return False
    return isinstance(digest, str) and _SHA256.fullmatch(digest) is not None


def printable(value, limit: int = 120) -> str:
    """``value`` as text safe to print on one line: control characters (a newline, a terminal's
    escape sequences) escaped, at most ``limit`` characters."""
    text = str(value)
    text = "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _holder(path: Path, wait_s: float = 2.0) -> str:
    """The live writer of ``path`` in words, from its ``.neom-writer.json`` (waiting a moment
    for a writer that has just taken the lock to write it). The note is read without blocking
    and within a size limit (a pipe put there is not read), and printed escaped."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            data = read_small(path / WRITER, MAX_WRITER_BYTES)
            info = json.loads(data) if data is not None else None
            pid = info["pid"]
            if isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid < 1 << 32:
                raise ValueError(pid)
            return (
                f"PID {pid} on {printable(info['host'])}, started {printable(info['started'])} "
                f"({printable(info['command'])})"
            )
        except (ValueError, KeyError, TypeError, RecursionError):
            if time.monotonic() > deadline:
                return "a process that has not yet said which"
            time.sleep(0.05)


def open_temporary(tmp: Path):
    """Open the temporary file ``tmp`` (a predictable ``.NAME.PID.tmp``) for writing, made
    afresh: whatever is at that name (a killed process's leftover, or a link put there) is
    removed first (a link itself, never its target) and the file is created exclusively,
    never through a link."""
    tmp.unlink(missing_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    return os.fdopen(os.open(tmp, flags, 0o666), "wb")


def read_small(path: Path, limit: int = 4096) -> bytes | None:
    """The bytes of a small regular file the tool wrote (a writer's or a staging folder's
    note), None when it is missing, not a regular file (a pipe would block the reader: it is
    opened without blocking and not read), a link, unreadable, or larger than ``limit``."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(handle, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks) if size <= limit else None
    except OSError:
        return None
    finally:
        os.close(handle)
