"""Run folders: the manifest, the data snapshot and the Parquet tables of a simulation run.

A run folder holds ``manifest.json``, a copy of the game's data file (NEOM: ``catalog.toml``) and
one Parquet file per batch and table: ``games/batch-000123.parquet``, ``players/...`` and,
with events, ``events/...``. Tables hold only per-game content (no batch-relative numbers), so
they do not depend on how the run was split.

A run folder owns only what it wrote. The manifest's ``files`` lists every file the tool wrote
(path -> bytes, sha256 and, for a batch file, rows); while a session runs, each batch is first
recorded in ``journal.jsonl`` (append-only, fsync'ed) and only then renamed into place, so every
visible batch file is listed somewhere, even after ``kill -9``. Each file is written to a hidden
temporary name (``.NAME.PID.tmp``) and renamed, so a visible file is always whole.

- ``--overwrite`` removes exactly the files listed, each only if its size and sha256 are still
  what the run wrote (and the tool's temporary files, its table folders once empty); it refuses
  a folder holding anything else, naming the first foreign entry, and a listed file changed
  since (:func:`check_run_removal`); a folder is never removed as a whole. A data snapshot is
  the run's only if listed (or, for a folder written without a listing, if its sha256 is the
  manifest's data digest): a manifest merely naming a file does not make it the run's.
- One writer at a time: ``simulate`` holds ``sim.core.outputs.writer_lock`` on the folder
  (its ``.neom-writer.json`` names the holder while it lives).
- ``report`` and ``--resume`` check every batch against the listing (size and sha256): a batch
  file that is missing, truncated or altered is damaged; files the run did not write are never
  read (an extra or duplicated batch file is not counted) and are named.
- The manifest says ``"status": "complete"`` only after the last batch is written and listed.
"""

import fcntl
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sim.core.batch import BatchOutput, records, used_event_rows
from sim.core.errors import UserError, check_text, decode_text, read_input
from sim.core.files import WRITER, entry_is_sound, file_digest, file_problem, open_temporary
from sim.core.game import Game

MANIFEST = "manifest.json"
JOURNAL = "journal.jsonl"
GAMES = "games"
PLAYERS = "players"
EVENTS = "events"
TABLE_NAMES = (GAMES, PLAYERS, EVENTS)
STATUS_RUNNING = "running"
STATUS_COMPLETE = "complete"

# A run has at most MAX_BATCHES batches (its listing stays a few tens of MB); a manifest or a
# journal larger than these limits is refused before it is read.
MAX_BATCHES = 100_000
MAX_MANIFEST_BYTES = 128_000_000
MAX_JOURNAL_BYTES = 256_000_000

NEVER_WRITTEN = "not written yet"

_COMPRESSION = "zstd"
_BATCH_FILE = re.compile(r"batch-(\d{6,})\.parquet")
_TEMPORARY = re.compile(r"\.(.+)\.\d+\.tmp")


def batch_file_name(index: int) -> str:
    return f"batch-{index:06d}.parquet"


def batch_path(table: str, index: int) -> str:
    """A batch file's path in the run folder, as the manifest lists it."""
    return f"{table}/{batch_file_name(index)}"


# pyarrow's pa.array and pa.table ask pandas whether their input is one of its objects, which
# imports pandas (about 0.2 s of CPU) in every process that writes a batch; the batch's columns
# are plain numbers and two short lists of names, so they are handed to Arrow as buffers.
def _numbers(values: np.ndarray) -> pa.Array:
    """A numeric column as an Arrow array without a copy where it is contiguous."""
    values = np.ascontiguousarray(values)
    if values.dtype.kind not in "iuf":
        return pa.array(values)
    return pa.Array.from_buffers(
        pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)]
    )


def _names(names) -> pa.Array:
    """A list of names as an Arrow string array."""
    data = [str(name).encode("utf-8") for name in names]
    offsets = np.zeros(len(data) + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([len(item) for item in data])
    return pa.StringArray.from_buffers(
        len(data), pa.py_buffer(offsets), pa.py_buffer(b"".join(data))
    )


def _table(columns: dict) -> pa.Table:
    """A table of numpy columns and Arrow arrays, in the order given."""
    arrays = [c if isinstance(c, pa.Array) else _numbers(c) for c in columns.values()]
    return pa.Table.from_arrays(arrays, names=list(columns))


def _arrow(frame: np.ndarray) -> dict[str, np.ndarray]:
    return {name: frame[name] for name in frame.dtype.names}


def batch_tables(game: Game, output: BatchOutput, strategy_names) -> dict[str, pa.Table]:
    """The stored tables of one batch: each output as rows of its record dtype (values checked,
    ``sim.core.batch.records``), the players of the seats actually played with the game id,
    strategy name and win share, the events each game wrote with the game id and kind name."""
    games_out = output.games
    game_ids = games_out[:, game.tables[GAMES].names.index("game_id")]
    games = records(games_out, game.tables[GAMES], GAMES, game_ids)
    players_dtype = game.tables[PLAYERS]
    used = output.players[:, :, players_dtype.names.index("seat")] >= 0
    game_rows = np.nonzero(used)[0]
    players = records(output.players[used], players_dtype, PLAYERS, game_ids[game_rows])
    columns = {"game_id": game_ids[game_rows], **_arrow(players)}
    names = _names(strategy_names)
    columns["strategy_name"] = pc.take(names, _numbers(players["strategy"].astype(np.int64)))
    n_winners = games["n_winners"][game_rows].astype(np.float64)
    columns["win_share"] = players["win"] / n_winners
    tables = {GAMES: _table(_arrow(games)), PLAYERS: _table(columns)}
    if output.events is not None:
        n_events_col = game.tables[GAMES].names.index("n_events")
        rows = used_event_rows(games_out, n_events_col, game.events_per_game)
        counts = games_out[:, n_events_col]
        event_ids = np.repeat(game_ids, counts)
        events = records(output.events[rows], game.tables[EVENTS], EVENTS, event_ids)
        kinds = _names(game.event_kinds)
        tables[EVENTS] = _table(
            {
                "game_id": event_ids,
                **_arrow(events),
                "kind_name": pc.take(kinds, _numbers(events["kind"].astype(np.int64))),
            }
        )
    return tables


# Every Parquet file names the data its games were played on (key-value metadata), so a table
# copied out of its run folder still says whether it describes a reconstruction.
DATA_LABEL_KEY = b"neom-sim.data"
RECONSTRUCTED_KEY = b"neom-sim.reconstructed"


def data_metadata(label: str, reconstructed: bool) -> dict[bytes, bytes]:
    """The key-value metadata naming a batch's data (empty when there is no label)."""
    if not label:
        return {}
    return {
        DATA_LABEL_KEY: label.encode("utf-8"),
        RECONSTRUCTED_KEY: b"true" if reconstructed else b"false",
    }


def file_data_label(path) -> tuple[str, bool] | None:
    """(label, reconstructed) stored in a Parquet file, or None when it names no data."""
    metadata = pq.read_schema(path).metadata or {}
    if DATA_LABEL_KEY not in metadata:
        return None
    return metadata[DATA_LABEL_KEY].decode("utf-8"), metadata.get(RECONSTRUCTED_KEY) == b"true"


def parquet_bytes(table: pa.Table, metadata: dict[bytes, bytes] | None = None) -> bytes:
    if metadata:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=_COMPRESSION)
    return sink.getvalue().to_pybytes()


def encode_batch(
    game: Game, output: BatchOutput, strategy_names, data_label: tuple[str, bool] = ("", False)
) -> dict[str, bytes]:
    """The Parquet files of one batch, by table name (events only when recorded), each naming
    its data (``data_label``: the data's label and whether it is a reconstruction)."""
    metadata = data_metadata(*data_label)
    return {
        name: parquet_bytes(table, metadata)
        for name, table in batch_tables(game, output, strategy_names).items()
    }


def file_entry(data: bytes, parquet: bool = False) -> dict:
    """A listed file: its size, sha256 and, for a Parquet file, its rows."""
    entry = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    if parquet:
        entry["rows"] = pq.read_metadata(pa.BufferReader(data)).num_rows
    return entry


def batch_entries(index: int, files: dict[str, bytes]) -> dict[str, dict]:
    """The listing entries of batch ``index``'s Parquet files (table name -> bytes)."""
    return {batch_path(table, index): file_entry(data, True) for table, data in files.items()}


def listed_counts(files: dict[str, dict], tables, n_batches: int) -> dict[str, int]:
    """A complete run's ``counts``: its batches and each table's rows, from the listing."""
    rows = {
        table: sum(files[batch_path(table, index)]["rows"] for index in range(n_batches))
        for table in tables
    }
    return {"batches": n_batches} | rows


def _temporary(path: Path) -> Path:
    # Hidden name: globs like players/*.parquet never see a half-written file.
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _write_temporary(path: Path, data: bytes) -> Path:
    tmp = _temporary(path)
    try:
        with open_temporary(tmp) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _write_atomic(path: Path, data: bytes) -> None:
    os.replace(_write_temporary(path, data), path)


def _write_error(path: Path, exc: OSError, what: str = "write") -> UserError:
    reason = exc.strerror or str(exc)
    return UserError(f"{path}: cannot {what} ({reason})")


def listed_names(names: list[str], limit: int = 3) -> str:
    """The first few of ``names`` and how many more, for a one-line message."""
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


@dataclass(frozen=True)
class Damage:
    """A listed file that is not as the run wrote it."""

    index: int  # the batch (-1: the data snapshot)
    path: str  # relative to the run folder
    why: str

    def __str__(self) -> str:
        return f"{self.path}: {self.why}"


@dataclass
class Listing:
    """What a run folder holds of the run: its files by path (bytes, sha256, rows), and the
    sessions the journal recorded that the manifest does not yet have."""

    files: dict[str, dict] = field(default_factory=dict)
    sessions: list[dict] = field(default_factory=list)  # recovered from the journal


def manifest_field(manifest: dict, key: str, kind, where, check=None):
    """``manifest[key]`` checked to be of ``kind`` (and ``check(value)``); UserError naming the
    manifest and the field otherwise."""
    value = manifest.get(key)
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok or (check is not None and not check(value)):
        shown = json.dumps(value)[:60] if key in manifest else "missing"
        raise UserError(f"{where}: not a neom run manifest (field {key!r}: {shown})")
    return value


@dataclass(frozen=True)
class RunFolder:
    path: Path

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    @property
    def journal_path(self) -> Path:
        return self.path / JOURNAL

    def is_empty(self) -> bool:
        """Nothing in the folder but the lock's note of who writes it."""
        return not self.path.exists() or all(e.name == WRITER for e in self.path.iterdir())

    def is_run(self) -> bool:
        return self.manifest_path.is_file()

    # --- the manifest ----------------------------------------------------------------------

    def read_manifest(self) -> dict:
        """The manifest: a JSON object (size and nesting checked before parsing); UserError
        naming the file otherwise."""
        where = self.manifest_path
        data = read_input(where, "run manifest", MAX_MANIFEST_BYTES)
        text = decode_text(data, str(where))
        check_text(text, "json", str(where))
        try:
            manifest = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise UserError(f"{where}: cannot read the run manifest ({exc})") from None
        if not isinstance(manifest, dict):
            raise UserError(f"{where}: not a neom run manifest (not a JSON object)")
        statuses = (STATUS_RUNNING, STATUS_COMPLETE)
        manifest_field(manifest, "status", str, where, statuses.__contains__)
        return manifest

    def write_manifest(self, manifest: dict) -> None:
        data = json.dumps(manifest, indent=2, sort_keys=False) + "\n"
        try:
            _write_atomic(self.manifest_path, data.encode("utf-8"))
        except OSError as exc:
            raise _write_error(self.manifest_path, exc) from None

    def create(self, tables: tuple[str, ...], snapshot_name: str, data: bytes, manifest) -> None:
        """Make the folder with its manifest first (so it is a run folder from then on, listing
        the snapshot before it is written), its table folders and the snapshot of the game's
        data file (rewritten only when it differs)."""
        manifest.setdefault("files", {})[snapshot_name] = file_entry(data)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{self.path}: cannot write the run folder ({exc.strerror})") from None
        self.write_manifest(manifest)
        try:
            for table in tables:
                (self.path / table).mkdir(exist_ok=True)
            snapshot = self.path / snapshot_name
            if not snapshot.is_file() or snapshot.read_bytes() != data:
                _write_atomic(snapshot, data)
        except OSError as exc:
            raise UserError(f"{self.path}: cannot write the run folder ({exc.strerror})") from None

    # --- batches ---------------------------------------------------------------------------

    def write_batch(self, index: int, files: dict[str, bytes]) -> None:
        """Write a batch's files (no journal: for folders whose manifest lists no files)."""
        for table, data in files.items():
            _write_atomic(self.path / table / batch_file_name(index), data)

    def write_listed_batch(
        self, index: int, files: dict[str, bytes], games: int, session: str, elapsed: float
    ) -> dict[str, dict]:
        """Write a batch's files under temporary names, record them in the journal (fsync'ed),
        then rename them into place; return their listing entries. UserError on a write
        failure (full disk, read-only folder), with nothing visible half-written."""
        entries = batch_entries(index, files)
        written = []
        try:
            for table, data in files.items():
                target = self.path / table / batch_file_name(index)
                written.append((_write_temporary(target, data), target))
            line = {"session": session, "batch": index, "games": games}
            self._journal(line | {"t": round(elapsed, 3), "files": entries})
            for tmp, target in written:
                os.replace(tmp, target)
        except OSError as exc:
            for tmp, _ in written:
                tmp.unlink(missing_ok=True)
            where = Path(exc.filename) if exc.filename else self.path
            raise _write_error(where, exc) from None
        return entries

    def start_session(self, session: dict) -> None:
        """Record a session's start in the journal (so that a killed session is accounted)."""
        try:
            self._journal({"session": session["id"], "start": session})
        except OSError as exc:
            raise _write_error(self.journal_path, exc) from None

    def _journal(self, line: dict) -> None:
        """Append one line; if it cannot be made durable, take it back (best effort), so the
        journal never lists a batch whose files were not renamed into place."""
        text = json.dumps(line, separators=(",", ":")) + "\n"
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW  # never through a link
        with os.fdopen(os.open(self.journal_path, flags, 0o666), "ab") as handle:
            size = handle.tell()
            try:
                handle.write(text.encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
            except OSError:
                try:
                    handle.truncate(size)
                except OSError:
                    pass
                raise

    def remove_journal(self) -> None:
        self.journal_path.unlink(missing_ok=True)

    def read_journal(self, known_sessions: set[str]) -> Listing:
        """The files and sessions the journal recorded, the sessions in ``known_sessions`` (ids
        already in the manifest) left out. Lines that are not whole records (the last one of a
        killed session may be cut short) are skipped: their batch is not listed, so it is
        played again."""
        listing = Listing()
        if not self.journal_path.is_file():
            return listing
        data = read_input(self.journal_path, "run journal", MAX_JOURNAL_BYTES)
        sessions: dict[str, dict] = {}
        for raw in data.split(b"\n"):
            try:
                line = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if not isinstance(line, dict) or not isinstance(line.get("session"), str):
                continue
            sid = line["session"]
            if isinstance(line.get("start"), dict):
                sessions.setdefault(sid, dict(line["start"]) | {"batches": 0, "games": 0})
            elif isinstance(line.get("files"), dict) and isinstance(line.get("batch"), int):
                listing.files.update(_valid_entries(line["files"]))
                session = sessions.get(sid)
                if session is not None and isinstance(line.get("games"), int):
                    session["batches"] += 1
                    session["games"] += line["games"]
                    if isinstance(line.get("t"), int | float):
                        session["wall_s"] = line["t"]
        for sid, session in sessions.items():
            if sid in known_sessions or not session["games"]:
                continue  # recorded already, or it played nothing
            wall = session.get("wall_s", 0.0)
            session.update(
                wall_s=wall,
                games_per_s=round(session["games"] / wall, 1) if wall > 0 else None,
                ended="killed",
            )
            listing.sessions.append(session)
        return listing

    # --- what the folder holds -------------------------------------------------------------

    def listing(self, manifest: dict) -> dict[str, dict] | None:
        """The manifest's file listing (None: a folder written without one)."""
        files = manifest.get("files")
        if files is None:
            return None
        if not isinstance(files, dict):
            raise UserError(f"{self.manifest_path}: not a neom run manifest (field 'files')")
        return _valid_entries(files)

    def verify(self, files: dict[str, dict], tables, n_batches: int) -> tuple[set[int], list]:
        """Check each batch of the run against the listing: (complete batches, damages in
        batch order). A batch is complete when each of its tables' files is listed and has
        the listed size and sha256; nothing unlisted is read."""
        complete, damages = set(), []
        for index in range(n_batches):
            problems = [
                Damage(index, rel, why)
                for rel in (batch_path(table, index) for table in tables)
                if (why := self._file_problem(rel, files.get(rel)))
            ]
            if problems:
                damages.extend(problems)
            else:
                complete.add(index)
        return complete, damages

    def _file_problem(self, rel: str, entry: dict | None) -> str:
        """Why the file ``rel`` is not as listed ("" if it is)."""
        if entry is None:
            return NEVER_WRITTEN
        return file_problem(self.path / rel, entry)

    def snapshot_problem(self, manifest: dict, files: dict | None) -> str:
        """Why the data snapshot differs from the data the run used ("" if it does not): its
        listing entry (size, sha256) and the manifest's data digest. A folder without a
        snapshot is fine unless the listing says the run wrote one."""
        data = manifest.get("data")
        name = data.get("snapshot") if isinstance(data, dict) else None
        if not isinstance(name, str) or not name or "/" in name:
            return ""
        if files is not None and name in files:
            why = self._file_problem(name, files[name])
            if why:
                return f"{name}: {why}"
        digest = data.get("digest")
        snapshot = self.path / name
        if not isinstance(digest, str) or not digest or not snapshot.is_file():
            return ""
        try:
            same = file_digest(snapshot) == digest
        except OSError as exc:
            return f"{name}: unreadable ({exc.strerror})"
        return "" if same else f"{name}: content differs from the data the run used (sha256)"

    def foreign(self, owned: set[str], tables) -> list[str]:
        """Entries of the folder the run did not write (relative paths, sorted; a foreign
        folder is named, not entered): anything but the manifest, the journal, the files in
        ``owned``, the tool's temporary files and its table folders."""
        found = []
        for entry in sorted(os.scandir(self.path), key=lambda e: e.name):
            name = entry.name
            if name in tables and entry.is_dir(follow_symlinks=False):
                for inner in sorted(os.scandir(entry.path), key=lambda e: e.name):
                    rel = f"{name}/{inner.name}"
                    ours = rel in owned or self._is_temporary(inner.name, name, owned)
                    if not (ours and inner.is_file(follow_symlinks=False)):
                        found.append(rel)
                continue
            ours = name in (MANIFEST, JOURNAL, WRITER) or name in owned
            ours = ours or self._is_temporary(name, "", owned)
            if not (ours and entry.is_file(follow_symlinks=False)):
                found.append(name)
        return found

    @staticmethod
    def _is_temporary(name: str, table: str, owned: set[str]) -> bool:
        """A temporary file of the tool (``.NAME.PID.tmp``) for a file it writes there: a
        batch file in a table folder; the manifest or a listed file at the top."""
        match = _TEMPORARY.fullmatch(name)
        if not match:
            return False
        inner = match.group(1)
        if table:
            return _BATCH_FILE.fullmatch(inner) is not None
        return inner == MANIFEST or inner in owned

    def remove_temporary(self, owned: set[str], tables) -> None:
        """Delete the tool's temporary files (a killed session's half-written files)."""
        for folder, table in [(self.path, ""), *((self.path / t, t) for t in tables)]:
            if folder.is_dir() and not folder.is_symlink():
                for entry in os.scandir(folder):
                    ours = self._is_temporary(entry.name, table, owned)
                    if ours and entry.is_file(follow_symlinks=False):
                        os.unlink(entry.path)

    def remove(self, owned: set[str], tables) -> None:
        """Delete exactly what the run wrote: the files in ``owned``, the journal and temporary
        files, the table folders once empty, the manifest last (so that an interrupted removal
        leaves a run folder). The caller has checked (:func:`check_run_removal`) that nothing
        foreign is there and that every file of ``owned`` is as the run wrote it."""
        try:
            self.remove_temporary(owned, tables)
            for rel in sorted(owned):
                (self.path / rel).unlink(missing_ok=True)
            self.remove_journal()
            for table in tables:
                folder = self.path / table
                if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
                    folder.rmdir()
            self.manifest_path.unlink(missing_ok=True)
        except OSError as exc:
            where = Path(exc.filename) if exc.filename else self.path
            raise UserError(f"{where}: cannot remove the old run ({exc.strerror})") from None

    # --- globbing (folders written without a listing, progress in tests) --------------------

    def batch_files(self, table: str) -> dict[int, Path]:
        folder = self.path / table
        files = folder.glob("batch-*.parquet") if folder.is_dir() else ()
        found = {}
        for file in files:
            match = _BATCH_FILE.fullmatch(file.name)
            if match:
                found[int(match.group(1))] = file
        return found

    def complete_batches(self, tables: tuple[str, ...]) -> set[int]:
        """Indices of the batches whose every table file exists."""
        return set.intersection(*(set(self.batch_files(table)) for table in tables))


def _valid_entries(files: dict) -> dict[str, dict]:
    """The entries of a listing that name a file the tool can have written: a batch file of a
    table, or a plain file name at the top (the data snapshot); never a path leaving the
    folder. Anything else is not the tool's, so it is never deleted or trusted."""
    valid = {}
    for rel, entry in files.items():
        if not isinstance(rel, str) or not isinstance(entry, dict):
            continue
        table, _, name = rel.rpartition("/")
        if table:
            if table not in TABLE_NAMES or not _BATCH_FILE.fullmatch(name):
                continue
        elif name in ("", ".", "..", MANIFEST, JOURNAL) or name in TABLE_NAMES:
            continue
        if not entry_is_sound(entry):
            continue
        rows = entry.get("rows", 0)
        if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
            continue
        valid[rel] = entry
    return valid


def run_tables(manifest: dict) -> tuple[str, ...]:
    return (GAMES, PLAYERS, EVENTS) if manifest.get("events") else (GAMES, PLAYERS)


def run_batches(manifest: dict, where) -> int:
    """The number of batches of a run, from its manifest."""
    games = manifest_field(manifest, "games", int, where, lambda v: v >= 1)
    size = manifest_field(manifest, "batch_size", int, where, lambda v: v >= 1)
    n_batches = -(-games // size)
    if n_batches > MAX_BATCHES:
        raise UserError(f"{where}: not a neom run manifest ({n_batches} batches)")
    return n_batches


def read_run_manifest(folder: RunFolder, action: str) -> dict:
    """The manifest of a folder about to be resumed or overwritten: refused unless it is a
    neom run manifest (a folder that merely holds some manifest.json is not a run)."""
    try:
        manifest = folder.read_manifest()
        manifest_field(manifest, "game", str, folder.manifest_path)
        run_batches(manifest, folder.manifest_path)
    except UserError as exc:
        raise UserError(f"{exc}: will not {action} {folder.path}") from None
    return manifest


def _snapshot_name(manifest: dict) -> str:
    data = manifest.get("data")
    name = data.get("snapshot") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name and "/" not in name else ""


def owned_files(folder: RunFolder, manifest: dict, files: dict | None) -> set[str]:
    """The files a run folder's listing (manifest and journal) says the run wrote. A folder
    written without a listing (an older version): the run's own batch files by name, and its
    data snapshot only if its sha256 is the manifest's data digest."""
    owned = set(files or ())
    if files is None:
        n_batches = run_batches(manifest, folder.manifest_path)
        owned |= {batch_path(t, i) for t in TABLE_NAMES for i in range(n_batches)}
        name = _snapshot_name(manifest)
        digest = manifest["data"].get("digest") if name else None
        snapshot = folder.path / name
        if name and snapshot.is_file() and not snapshot.is_symlink():
            try:
                if file_digest(snapshot) == digest:
                    owned.add(name)
            except OSError:
                pass
    return owned


def check_run_removal(path, action: str = "overwrite") -> set[str]:
    """What removing run folder ``path``'s run takes (``--overwrite``): the files it wrote,
    after checking that the folder holds nothing else (UserError naming the first foreign
    entry) and that every listed file still present is as the run wrote it (UserError naming
    the first changed one). Nothing is removed here."""
    folder = RunFolder(Path(path))
    if folder.path.is_symlink():  # its files are another folder's, wherever the link leads
        raise UserError(
            f"{folder.path}: is a symbolic link, not a run folder: will not {action} it "
            "(replace the link by the folder itself, or choose another --out)"
        )
    if folder.is_empty():
        return set()
    if not folder.is_run():
        raise UserError(
            f"{folder.path}: not empty and not a run folder (no {MANIFEST}): will not {action} it"
        )
    manifest = read_run_manifest(folder, action)
    files = folder.listing(manifest)
    if files is not None:
        known = {s.get("id") for s in manifest.get("sessions") or () if isinstance(s, dict)}
        files |= folder.read_journal(known).files
    owned = owned_files(folder, manifest, files)
    foreign = folder.foreign(owned, TABLE_NAMES)
    if foreign:
        raise UserError(
            f"{folder.path}: holds {foreign[0]}, which the run did not write: will not "
            f"{action} it (move it away, or choose another --out)"
        )
    for rel in sorted(files or ()):
        why = folder._file_problem(rel, files[rel])
        if why and why != "missing":
            raise UserError(
                f"{folder.path}: {rel} changed since the run wrote it ({why}): will not "
                f"{action} it (move it away, or choose another --out)"
            )
    return owned


def remove_run_folder(path, owned: set[str], keep_folder: bool = False) -> None:
    """Remove a run checked by :func:`check_run_removal`, and its folder if then empty (unless
    ``keep_folder``: ``simulate --overwrite`` writes the new run there)."""
    folder = RunFolder(Path(path))
    if folder.path.is_symlink():
        raise UserError(f"{folder.path}: is a symbolic link, not a run folder: will not remove it")
    if not folder.path.is_dir():
        return
    if owned or folder.is_run():
        folder.remove(owned, TABLE_NAMES)
    if not keep_folder and not any(folder.path.iterdir()):
        folder.path.rmdir()


def damage_message(path: Path, damages: list[Damage]) -> str:
    """One line naming the first damaged batch (and how many more there are)."""
    others = len({d.index for d in damages}) - 1
    more = f" and {others} more damaged batch{'es' if others > 1 else ''}" if others else ""
    return f"{path}: batch {damages[0].index} is damaged ({damages[0]}){more}"


@dataclass(frozen=True)
class RunTables:
    manifest: dict
    games: pl.LazyFrame
    players: pl.LazyFrame
    events: pl.LazyFrame | None  # None when the run did not record events
    ignored: tuple[str, ...] = ()  # files in the folder the run did not write (never read)
    paths: dict = field(default_factory=dict)  # table -> its batch files, in batch order


def live_writer(path: Path) -> str | None:
    """The command writing folder ``path`` now, in words; None when no command holds its
    writer lock (``sim.core.outputs.writer_lock``). A shared lock is tried and dropped at
    once: it fails exactly while a writer holds the exclusive one."""
    from sim.core.files import _holder

    try:
        handle = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder(path)
    except OSError:  # a file system without locks: nothing to tell
        return None
    finally:
        os.close(handle)  # also drops a shared lock taken
    return None


def read_run(path) -> RunTables:
    """The tables of a complete run folder as polars LazyFrames (files in batch order), after
    checking every batch file and the data snapshot against the manifest."""
    folder = RunFolder(Path(path))
    if not folder.is_run():
        raise UserError(f"{folder.path}: not a run folder (no {MANIFEST})")
    manifest = folder.read_manifest()
    if manifest["status"] != STATUS_COMPLETE:
        writer = live_writer(folder.path)
        if writer is not None:  # --resume would be refused by its lock: name the writer
            raise UserError(
                f"{folder.path}: the run is not complete: it is being written by {writer}; "
                "wait for it to end"
            )
        raise UserError(
            f"{folder.path}: the run is not complete (continue it with neom simulate --resume)"
        )
    tables = run_tables(manifest)
    files = folder.listing(manifest)
    repair = "; repair the run with neom simulate --resume and the options it was run with"
    if files is None:
        # Written without a listing (an older version): batches by name, the
        # run's own indices only when its manifest says how many there are.
        found = {table: folder.batch_files(table) for table in tables}
        if "batch_size" in manifest:
            n_batches = run_batches(manifest, folder.manifest_path)
            for table in tables:
                missing = [i for i in range(n_batches) if i not in found[table]]
                if missing:
                    rel = batch_path(table, missing[0])
                    raise UserError(f"{folder.path}: batch {missing[0]} is missing ({rel})")
            found = {t: {i: f for i, f in found[t].items() if i < n_batches} for t in tables}
        paths = {t: [str(found[t][i]) for i in sorted(found[t])] for t in tables}
        owned = {f"{t}/{f.name}" for t in tables for f in found[t].values()}
    else:
        n_batches = run_batches(manifest, folder.manifest_path)
        complete, damages = folder.verify(files, tables, n_batches)
        if damages:
            raise UserError(damage_message(folder.path, damages) + repair)
        paths = {t: [str(folder.path / batch_path(t, i)) for i in sorted(complete)] for t in tables}
        owned = set(files)
    problem = folder.snapshot_problem(manifest, files)
    if problem:
        raise UserError(f"{folder.path}: the data snapshot does not match the manifest ({problem})")
    data = manifest.get("data")
    snapshot = data.get("snapshot") if isinstance(data, dict) else None
    if isinstance(snapshot, str) and snapshot and "/" not in snapshot:
        owned.add(snapshot)
    ignored = tuple(folder.foreign(owned, tables))

    def scan(table: str) -> pl.LazyFrame:
        return pl.scan_parquet(paths[table])

    events = scan(EVENTS) if EVENTS in tables else None
    return RunTables(manifest, scan(GAMES), scan(PLAYERS), events, ignored, paths)
