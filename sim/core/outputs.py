"""What a command writes, and only that: output folders with their own listing, explicit output
files, one writer at a time, and resuming an interrupted command made of runs.

**Output folders** (``neom report``, ``neom compare``, ``neom experiment``, and ``neom balance``)
carry a listing, ``neom-listing.json``, as a run folder's manifest lists its files::

    {"command": "neom compare", "status": "running" | "complete", "created": ..., "updated": ...,
     "parameters": {"--seed": 1, ...},      # what the result depends on (for --resume)
     "runs": ["runs/baseline", ...],         # run folders of the command (their own manifests)
     "files": {"index.html": {"bytes": 1234, "sha256": "..."}, ...}}

- :func:`claim_folder` is called before any game is played: ``--out`` must be new, empty, or a
  folder whose listing says this command wrote it; any other folder is refused and nothing in
  it is touched (a folder that merely holds an ``index.html`` is not a report).
- ``--overwrite`` removes exactly what the listing names: its files, each only if its size and
  sha256 are still what the command wrote (a file changed since is refused by name, before
  anything is removed), and its run folders by their own manifests
  (:func:`sim.core.store.remove_run_folder`). Files the listing does not name are the user's:
  kept.
- :func:`publish` moves a result built whole in a staging folder into place: the listed files
  of the previous result (unchanged) are replaced, the listing is written before the files it
  names, each file is renamed into place whole.
- **Never through a symbolic link**: a listed run folder or file, a file about to be published,
  or any folder on the way to one, that is (or passes through) a link is refused in one line
  (:func:`check_owned_paths`) before anything is touched; a removal marks the listing
  interrupted before its first deletion, so one that fails halfway is never "complete".
- :func:`staging_folder` holds a lock on its folder while the command lives; the next command
  on the output removes those of killed commands (:func:`clean_dead_staging`).

**Resume** (for commands whose result is run folders plus a report): ``claim_folder(...,
resume=True, parameters=...)`` continues the result the listing describes when its
``parameters`` are the same (else one line naming the first that differs); a complete result is
``Claim.state == "complete"``: say so and write nothing. The command then resumes each run
folder (``RunConfig(resume=True)``: a complete run is not played again) and publishes the
report. A sketch, as ``neom compare`` does it (``analysis/core/compare.py``)::

    with writer_lock(out, "neom compare"):
        claim = claim_folder(out, "neom compare", overwrite=..., resume=..., parameters=...,
                             runs=("runs/baseline", "runs/candidate"))
        if claim.state == "complete":
            note("already complete; nothing to do"); return 0
        for name in claim.runs: run_simulation(replace(config, resume=True, out=out / name))
        with staging_folder(out) as staging:
            build_the_report(staging)
            publish(staging, claim)

**Explicit output files** (``--json FILE``, ``tune --out FILE``): :func:`claim_file` refuses,
before any game, a path that exists (unless ``--overwrite``), is a folder, or whose folder is
missing or not writable; :func:`write_file` writes it whole (temporary file, renamed).

**One writer at a time**: :func:`writer_lock` holds the operating system's lock (``flock``) on
the folder for the whole command; a second writer gets one line naming the live one (PID, host,
start time), read from ``.neom-writer.json``, which the holder writes beside and removes at the
end.
"""

import fcntl
import json
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sim.core.errors import UserError, check_text, decode_text, read_input
from sim.core.files import (
    WRITER,
    _holder,
    entry_is_sound,
    file_digest,
    file_problem,
    open_temporary,
    read_small,
)

LISTING = "neom-listing.json"
MAX_LISTING_BYTES = 16_000_000
STATUS_RUNNING = "running"
STATUS_COMPLETE = "complete"
_TEMPORARY = re.compile(r"\.(.+)\.\d+\.tmp")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def entry_of(path: Path) -> dict:
    """A listing entry: the file's size and sha256."""
    return {"bytes": path.stat().st_size, "sha256": file_digest(path)}


def _relative(rel) -> bool:
    """A path inside the folder: relative, no '..', no empty or '.' parts."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel:
        return False
    return all(part not in ("", ".", "..") for part in rel.split("/"))


def symlink_on_path(root: Path, rel: str) -> str:
    """The first part of ``rel`` (a path inside folder ``root``) that is a symbolic link: the
    link's path relative to ``root`` ("" when none). Every component is checked, not only the
    last: removing or writing ``root/lnk/file`` through a linked folder ``lnk`` would reach a
    file outside the output. Stops at the first component that is missing (nothing below it can
    lead anywhere)."""
    current, parts = Path(root), rel.split("/")
    for depth, part in enumerate(parts, 1):
        current = current / part
        try:
            mode = current.lstat().st_mode
        except OSError:
            return ""
        if stat.S_ISLNK(mode):
            return "/".join(parts[:depth])
        if not stat.S_ISDIR(mode):
            return ""
    return ""


def check_owned_paths(path: Path, rels, shown: str = "") -> None:
    """UserError naming the first of ``rels`` (paths inside output folder ``path`` that a
    command would remove or write) that is, or passes through, a symbolic link: an output never
    follows one, so nothing outside it is removed or written (the link may stand for a run or a
    folder of the user's anywhere)."""
    for rel in rels:
        link = symlink_on_path(path, rel)
        if link:
            what = (
                f"{rel} is a symbolic link"
                if link == rel
                else (f"{rel} passes through the symbolic link {link}")
            )
            raise UserError(
                f"{shown or path}: {what}: will not remove or write anything through it "
                "(replace the link by the folder or file itself, or choose another --out)"
            )


def _valid_files(files) -> dict[str, dict]:
    """The entries of a listing's ``files`` that name a file inside the folder with a size and
    sha256; anything else is never trusted with a deletion."""
    valid = {}
    for rel, entry in (files or {}).items() if isinstance(files, dict) else ():
        if not _relative(rel) or rel in (LISTING, WRITER) or not isinstance(entry, dict):
            continue
        if not entry_is_sound(entry):
            continue
        valid[rel] = {"bytes": entry["bytes"], "sha256": entry["sha256"]}
    return valid


# --- one writer at a time ------------------------------------------------------------------------


@contextmanager
def writer_lock(
    path, command: str, what: str = "folder", check=None, wait_s: float = 0.0
) -> Iterator:
    """Hold the lock on folder ``path`` (made if missing) while the block runs: one writer at a
    time. The lock is the operating system's (``flock`` on the folder itself, so it needs no
    file in it and ends with the process, ``kill -9`` included); the holder's PID, host, start
    time and command are written to ``.neom-writer.json`` for the next writer's message, and
    removed at the end. A second writer: UserError naming the live one. Folders made for the
    lock are removed again if the block leaves them empty (a refusal writes nothing).
    ``what``: the folder in messages ("run folder", "report folder"). ``check``: called with
    the lock held but before anything is written into the folder (a folder that is not the
    command's is refused untouched); the block gets its result (else the path). ``wait_s``:
    how long to wait for a live writer to end before refusing (for a write of a moment)."""
    path = Path(path)
    made = [folder for folder in (path, *path.parents) if not folder.exists()]
    try:
        path.mkdir(parents=True, exist_ok=True)
        handle = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except FileExistsError:
        raise UserError(f"{path}: exists and is not a folder") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot write the {what} ({exc.strerror or exc})") from None
    try:
        try:
            _flock(handle, wait_s)
        except BlockingIOError:
            raise UserError(
                f"{path}: another neom command is writing it: {_holder(path)}; wait for it to "
                "end or stop it"
            ) from None
        except OSError as exc:  # a file system without locks (some network mounts)
            print(
                f"neom: note: {path}: cannot lock the folder ({exc.strerror}); make sure no "
                "other neom command writes to it",
                file=sys.stderr,
            )
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": now(),
            "command": command,
        }
        data = (json.dumps(info) + "\n").encode("utf-8")
        # Say who writes at once into a folder that is new or empty (two commands started
        # together), else only once ``check`` has found the folder to be the command's.
        early = _is_empty(path) and not path.is_symlink()  # a link: said once checked
        if early:
            _say(path, data)
        checked = check() if check is not None else path
        if not early:
            _say(path, data)
        try:
            yield checked
        finally:
            try:
                (path / WRITER).unlink(missing_ok=True)
            except OSError:
                pass
    finally:
        os.close(handle)
        for folder in made:  # deepest first
            try:
                folder.rmdir()
            except OSError:
                break


def _flock(handle: int, wait_s: float) -> None:
    """Take the lock, trying again for ``wait_s`` seconds (BlockingIOError after that)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


def _say(path: Path, data: bytes) -> None:
    try:
        _write_atomic(path / WRITER, data)
    except OSError:
        pass  # a read-only folder: nothing will be written, nobody needs to be told who


# --- writing whole files --------------------------------------------------------------------------


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a hidden temporary name beside ``path`` (``.NAME.PID.tmp``), then
    rename it into place: a visible file is always whole."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open_temporary(tmp) as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def claim_file(path, option: str, overwrite: bool = False) -> Path:
    """Check an explicit output file before any game is played: refused when it exists
    (unless ``overwrite``), is a folder, or its folder is missing or not writable."""
    path = Path(path)
    shown = f"{option} {path}"
    if path.is_dir():
        raise UserError(f"{shown}: is a folder; give a file name")
    if path.exists() or path.is_symlink():
        if not overwrite:
            raise UserError(f"{shown}: exists; pass --overwrite to replace it")
        if not path.is_file():
            raise UserError(f"{shown}: exists and is not a regular file")
    parent = path.parent
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise UserError(f"{shown}: its folder {parent} {what}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"{shown}: cannot write into {parent} (permission denied)")
    return path


def check_outside(path, option: str, folder, folder_option: str = "--out") -> None:
    """Refuse, before any game, an output file at or inside the output folder a command owns
    (it would be written into the folder unlisted, or onto the folder itself, after all the
    games)."""
    file, owned = Path(path).resolve(), Path(folder).resolve()
    if file == owned or file.is_relative_to(owned):
        raise UserError(
            f"{option} {path}: is inside {folder_option} {folder}, which the command writes "
            f"itself; give a file outside it"
        )


def write_file(path, data: bytes | str, option: str = "") -> None:
    """Write an output file whole (see :func:`claim_file`); UserError on a write failure."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        _write_atomic(path, data)
    except OSError as exc:
        shown = f"{option} {path}" if option else str(path)
        raise UserError(f"{shown}: cannot write ({exc.strerror or exc})") from None


# --- output folders ------------------------------------------------------------------------------


def read_listing(path: Path) -> dict | None:
    """The listing of output folder ``path`` (None: it has none); UserError when it is not a
    listing this tool writes."""
    where = path / LISTING
    if not where.is_file():
        return None
    text = decode_text(read_input(where, "output listing", MAX_LISTING_BYTES), str(where))
    check_text(text, "json", str(where))
    try:
        listing = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UserError(f"{where}: not a neom output listing ({exc})") from None
    if not isinstance(listing, dict) or not isinstance(listing.get("command"), str):
        raise UserError(f"{where}: not a neom output listing")
    listing["files"] = _valid_files(listing.get("files"))
    runs = listing.get("runs") if isinstance(listing.get("runs"), list) else []
    listing["runs"] = [rel for rel in runs if _relative(rel)]
    if not isinstance(listing.get("parameters"), dict):
        listing["parameters"] = {}
    return listing


def write_listing(path: Path, listing: dict) -> None:
    listing["updated"] = now()
    data = (json.dumps(listing, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        _write_atomic(path / LISTING, data)
    except OSError as exc:
        raise UserError(f"{path / LISTING}: cannot write ({exc.strerror or exc})") from None


def _is_empty(path: Path) -> bool:
    return not path.exists() or all(entry.name == WRITER for entry in path.iterdir())


@dataclass
class Claim:
    """An output folder a command may write: ``state`` "new" (nothing of the command's there),
    "replace" (an earlier result, to be replaced when the new one is published), "resume"
    (an interrupted result with the same parameters, to be continued) or "complete" (asked to
    resume a result that is complete: nothing to do)."""

    path: Path
    command: str
    state: str
    listing: dict = field(default_factory=dict)

    @property
    def runs(self) -> list[str]:
        return list(self.listing.get("runs", []))

    def add_run(self, rel: str) -> Path:
        """List run folder ``rel`` (inside the claimed folder) before it is made, for a command
        that learns its runs as it goes (``neom balance``'s candidates); returns its path. An
        interrupted command resumes the runs it listed; ``--overwrite`` removes them."""
        if not _relative(rel):
            raise ValueError(f"not a folder inside {self.path}: {rel!r}")
        check_owned_paths(self.path, [rel])
        if rel not in self.listing.setdefault("runs", []):
            self.listing["runs"].append(rel)
            write_listing(self.path, self.listing)
        return self.path / rel


def _first_difference(before: dict, after: dict) -> str | None:
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            return (
                f"{key} (the earlier result used {json.dumps(before.get(key))}, not "
                f"{json.dumps(after.get(key))})"
            )
    return None


def _changed(path: Path, listing: dict, command: str) -> None:
    """UserError naming the first listed file that is there but no longer as ``command`` wrote
    it: it is the user's now, and nothing is replaced or removed."""
    for rel, entry in sorted(listing["files"].items()):
        why = file_problem(path / rel, entry)
        if why and why != "missing":
            raise UserError(
                f"{path}: {rel} changed since {command} wrote it ({why}): will not replace it "
                "(move it away, or choose another --out)"
            )


def claim_folder(
    path,
    command: str,
    *,
    option: str = "--out",
    overwrite: bool = False,
    resume: bool = False,
    replaces_own: bool = False,
    parameters: dict | None = None,
    runs: tuple[str, ...] = (),
) -> Claim:
    """Check output folder ``path`` for ``command`` before any game is played (see the module
    docstring); with ``overwrite``, remove what the earlier result's listing names. A new
    result's listing (status running, ``parameters``, ``runs``) is written at once, so every
    run folder the command then makes is listed before it exists. ``replaces_own``: an earlier
    result of the command is replaced without ``--overwrite`` (a report is rebuilt from its
    runs). Call it holding :func:`writer_lock`."""
    path = Path(path)
    shown = f"{option} {path}"
    parameters = dict(parameters or {})
    if resume and overwrite:
        raise UserError("--resume and --overwrite exclude each other")
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise UserError(f"{shown}: exists and is not a folder")
    clean_dead_staging(path)
    listing = read_listing(path) if path.is_dir() else None
    if listing is None:
        if not _is_empty(path):
            raise UserError(
                f"{shown}: not empty and not written by {command} (no {LISTING}): will not "
                "write into it; choose a new or empty folder"
            )
        return _fresh(path, command, parameters, runs)
    if listing["command"] != command:
        raise UserError(
            f"{shown}: written by {listing['command']}, not {command}: will not write into it"
        )
    # Whatever the command goes on to do (resume, replace, remove), it never goes through a
    # link: the whole listing is checked before anything is touched.
    check_owned_paths(path, [*listing["runs"], *listing["files"]], shown)
    interrupted = listing.get("status") != STATUS_COMPLETE
    if resume:
        difference = _first_difference(listing["parameters"], parameters)
        if difference is not None:
            raise UserError(f"{shown}: cannot resume with a different {difference}")
        if not interrupted:
            return Claim(path, command, "complete", listing)
        _changed(path, listing, command)
        return Claim(path, command, "resume", listing)
    if overwrite:
        _remove(path, listing, command)
        return _fresh(path, command, parameters, runs)
    if replaces_own:
        _changed(path, listing, command)
        return Claim(path, command, "replace", listing)
    if interrupted:
        raise UserError(
            f"{shown}: holds an interrupted {command} (started {listing.get('created', '?')}): "
            "pass --resume to continue it or --overwrite to replace it"
        )
    raise UserError(f"{shown}: holds an earlier {command}; pass --overwrite to replace it")


def _fresh(path: Path, command: str, parameters: dict, runs) -> Claim:
    listing = {
        "command": command,
        "status": STATUS_RUNNING,
        "created": now(),
        "parameters": parameters,
        "runs": list(runs),
        "files": {},
    }
    if runs:
        write_listing(path, listing)
    return Claim(path, command, "new", listing)


def _remove(path: Path, listing: dict, command: str) -> None:
    """Remove what an earlier result's listing names (checked first, all of it: a changed
    file or a foreign entry in one of its run folders refuses the whole removal)."""
    from sim.core.store import check_run_removal, remove_run_folder

    _changed(path, listing, command)
    folders = [path / rel for rel in listing["runs"] if (path / rel).exists()]
    plans = [check_run_removal(folder) for folder in folders]
    # Checked, all of it; from the first deletion on, the listing says "interrupted": a removal
    # that fails halfway is never taken for a complete result (``--resume`` plays it again).
    write_listing(path, listing | {"status": STATUS_RUNNING})
    try:
        for folder, plan in zip(folders, plans, strict=True):
            remove_run_folder(folder, plan)
        for rel, entry in sorted(listing["files"].items()):
            if not file_problem(path / rel, entry):
                (path / rel).unlink()
        _remove_empty_parents(path, [*listing["files"], *listing["runs"]])
        (path / LISTING).unlink(missing_ok=True)
    except OSError as exc:
        where = exc.filename or path
        raise UserError(f"{where}: cannot remove the earlier {command} ({exc.strerror})") from None


def _remove_empty_parents(path: Path, rels) -> None:
    """Remove the folders the listed paths were in (deepest first), where now empty."""
    folders = {parent for rel in rels for parent in Path(rel).parents if str(parent) != "."}
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        target = path / folder
        if symlink_on_path(path, folder.as_posix()):
            continue  # a folder reached through a link is not the output's
        if target.is_dir() and not any(target.iterdir()):
            target.rmdir()


STAGING_SUFFIX = ".neom-staging"
STAGING_NOTE = "neom-staging.json"
STAGING_RESULT = "result"


@contextmanager
def staging_folder(out) -> Iterator[Path]:
    """A folder to build a result in (so a failure leaves ``out`` as it was), removed at the
    end: ``result/`` inside a hidden folder beside ``out`` (``.OUT.XXXX.neom-staging``) that
    also holds a note of the command (pid, host) and whose lock (``flock``) the command holds
    while it lives, so that the next command on ``out`` can tell a killed command's staging
    folder from a live one and remove it (:func:`clean_dead_staging`)."""
    out = Path(out)
    clean_dead_staging(out)
    outer = handle = None
    try:
        outer = Path(
            tempfile.mkdtemp(prefix=f".{out.name}.", suffix=STAGING_SUFFIX, dir=out.parent)
        )
        handle = os.open(outer, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass  # no locks on this file system: the folder is never taken for a dead one's
        note = {"pid": os.getpid(), "host": socket.gethostname(), "out": out.name}
        (outer / STAGING_NOTE).write_text(json.dumps(note) + "\n", encoding="utf-8")
        staging = outer / STAGING_RESULT
        staging.mkdir()
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)  # mkdtemp's folder is private; a result is not
    except OSError as exc:
        if outer is not None:
            shutil.rmtree(outer, ignore_errors=True)
        if handle is not None:
            os.close(handle)
        raise UserError(f"{out}: cannot write ({exc.strerror})") from None
    try:
        yield staging
    finally:
        shutil.rmtree(outer, ignore_errors=True)  # wholly ours
        os.close(handle)


def clean_dead_staging(out) -> list[Path]:
    """Remove the staging folders beside ``out`` that commands killed before they could
    (``kill -9``, a power cut) left behind; return them. Only a folder proven to be a staging
    folder of this tool whose command has ended is removed: a hidden folder named as
    :func:`staging_folder` names them (not a link), holding its note, written on this host,
    and whose lock nobody holds (the operating system drops it with the process)."""
    out = Path(out)
    removed = []
    try:
        entries = list(os.scandir(out.parent))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(f".{out.name}.") and name.endswith(STAGING_SUFFIX)):
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        if not _staging_of_this_host(entry.path, out.name):
            continue
        try:
            handle = os.open(entry.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(handle)
            continue  # a live command's (or no locks here: cannot tell, so kept)
        try:
            shutil.rmtree(entry.path)  # links inside are removed, never followed
            removed.append(Path(entry.path))
        except OSError:
            pass  # not removable (permissions): left as it is, nothing else depends on it
        finally:
            os.close(handle)
    return removed


def _staging_of_this_host(path: str, out_name: str) -> bool:
    data = read_small(Path(path) / STAGING_NOTE)
    try:
        note = json.loads(data) if data is not None else None
    except (ValueError, RecursionError):
        return False
    if not isinstance(note, dict):
        return False
    return note.get("host") == socket.gethostname() and note.get("out") == out_name


def publish(staging: Path, claim: Claim) -> None:
    """Move the files built in ``staging`` into the claimed folder: the earlier result's listed
    files (still as written) are removed, a file the user put where a new one goes is refused
    (before anything moves), the listing (status complete) names every new file."""
    out = claim.path
    old = claim.listing.get("files", {}) if claim.state != "new" else {}
    new = {
        p.relative_to(staging).as_posix(): entry_of(p)
        for p in sorted(staging.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }
    check_owned_paths(out, [*old, *new])
    for rel in new:
        target = out / rel
        if target.is_dir() and not target.is_symlink():
            raise UserError(f"{out}: {rel} is a folder where {claim.command} writes a file")
        if (target.exists() or target.is_symlink()) and rel not in old:
            raise UserError(
                f"{out}: {rel} was not written by {claim.command} and is where it writes: "
                "move it away"
            )
    _changed(out, {"files": old}, claim.command)
    listing = dict(claim.listing)
    listing.update(status=STATUS_RUNNING, files={**old, **new})
    try:
        write_listing(out, listing)  # every file about to be there is listed first
        for rel in sorted(set(old) - set(new)):
            if not file_problem(out / rel, old[rel]):
                (out / rel).unlink()
        _remove_empty_parents(out, set(old) - set(new))
        for rel in new:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / rel, out / rel)
    except OSError as exc:
        where = exc.filename or out
        raise UserError(f"{where}: cannot write ({exc.strerror or exc})") from None
    listing.update(status=STATUS_COMPLETE, files=new)
    write_listing(out, listing)
    claim.listing = listing
