"""``neom verify --write`` writes its strategy file safely (issue 35 S2, m1, J1, M2): the file
is checked (path, encoding, TOML, the write itself) before any game is played; it is read
afresh under the writer lock when the figures are written, so two commands writing other sets
of one file both land; a symbolic link is written through to its target; a write that fails
after the games leaves no temporary file and prints the figures."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from run_helpers import one_line_error, tmpfs, two_player_set

from sim.core.cli import main

ROOT = Path(__file__).resolve().parent.parent

# Two sets playing greedy against random (the lineups compile quickly), in a field of the
# file's own (not named like a shipped one).
VERIFY_FILE = (
    "# my sets\n"
    + two_player_set("planted", "random")
    + "\n# the other\n"
    + two_player_set("other", "random")
    + '\n[fields.light]\n2 = ["random", "greedy"]\n'
)
VERIFY = ["verify", "--games", "10", "--seed", "5", "--field", "light", "--write"]


def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def verified(path: Path) -> set[str]:
    """The sets of the strategy file that have a verification table."""
    data = tomllib.loads(path.read_bytes().decode("utf-8-sig"))
    return {name for name, entries in data["sets"].items() if "verification" in entries}


def leftovers(folder: Path) -> list[str]:
    """Hidden files left beside the strategy file (temporary files, the writer file)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def no_game_played(capsys, code: int, *words: str) -> None:
    """Refused in one line, before any game (verify reports each field it played)."""
    captured = capsys.readouterr()
    assert "played" not in captured.err and not captured.out, captured
    assert code == 1 and captured.err.count("\n") == 1, captured.err
    for word in words:
        assert word in captured.err, captured.err


def test_a_utf8_byte_order_mark_is_kept_and_the_figures_written(tmp_path, capsys):
    """J1: a file with a UTF-8 byte-order mark (read by every other command) played every game,
    then the write failed on the mark with a TOML traceback."""
    path = write(tmp_path / "s.toml", b"\xef\xbb\xbf" + VERIFY_FILE.encode())
    assert main([*VERIFY, "--strategy-file", str(path), "--sets", "planted"]) == 0
    assert "wrote the verification of 1 set(s)" in capsys.readouterr().out
    assert path.read_bytes().startswith(b"\xef\xbb\xbf# my sets\n")  # the user's encoding
    assert verified(path) == {"planted"}
    assert leftovers(tmp_path) == []


def test_names_and_tables_of_any_shape_are_written_as_they_were(tmp_path, capsys):
    """The file is laid out anew: a set named "my set" was written as [sets.my set] (not TOML:
    the file was left unreadable), an array of tables in a set's table landed at the top of the
    file (no longer a strategy file)."""
    text = VERIFY_FILE.replace("[sets.planted", '[sets."my set"')
    text = text.replace(
        "seed = 1\n",
        'seed = 1\nnote = nan\n[[sets."my set".tuning.runs]]\n'
        'budget = 100\n[[sets."my set".tuning.runs]]\nbudget = 200\n',
        1,
    )
    path = write(tmp_path / "s.toml", text)
    before = tomllib.loads(text)
    assert main([*VERIFY, "--strategy-file", str(path), "--sets", "my set"]) == 0
    after = tomllib.loads(path.read_text())
    assert set(after["sets"]["my set"]) == {"base", "tuning", "verification"}
    runs = after["sets"]["my set"]["tuning"]["runs"]
    assert runs == before["sets"]["my set"]["tuning"]["runs"] == [{"budget": 100}, {"budget": 200}]
    assert after["sets"]["other"] == before["sets"]["other"] and set(after) == {"sets", "fields"}
    assert main(["strategies", "--strategy-file", str(path)]) == 0


def test_a_layout_that_would_change_the_file_is_refused(tmp_path, monkeypatch):
    """The new layout is parsed back before it is written: anything it would change or drop
    refuses the write (checked before the games with placeholder tables)."""
    from analysis.tools import verify
    from sim.core.errors import UserError

    text = VERIFY_FILE
    monkeypatch.setattr(verify, "strategy_file_text", lambda data, old: old.replace("[fields", "#"))
    with pytest.raises(UserError, match="cannot be laid out anew"):
        verify.verification_text(tmp_path / "s.toml", tomllib.loads(text), text, {"other": {}})


def test_a_read_only_strategy_file_is_refused_before_the_games(tmp_path, capsys):
    """M2: a read-only file was found only after every game (or, as root, replaced anyway)."""
    path = write(tmp_path / "s.toml", VERIFY_FILE)
    path.chmod(0o444)
    code = main([*VERIFY, "--strategy-file", str(path), "--sets", "planted"])
    no_game_played(capsys, code, f"--write {path}: the file is read-only")
    assert path.read_text() == VERIFY_FILE and leftovers(tmp_path) == []


@pytest.fixture
def small_disk(tmp_path):
    """A folder on a file system of its own, 64 kB, to make read-only or fill."""
    with tmpfs(tmp_path / "disk", "64k") as disk:
        yield disk


def fill(disk: Path) -> None:
    """Fill the file system of ``disk`` to the last byte."""
    try:
        with open(disk / "filler", "wb", buffering=0) as handle:
            while True:
                handle.write(b"x" * 1024)
    except OSError:
        pass


@pytest.mark.parametrize("how", ["read-only", "full"])
def test_a_folder_that_cannot_be_written_is_refused_before_the_games(small_disk, capsys, how):
    """M2: a read-only folder or a full disk was found only after every game (leaving an empty
    temporary file). The write is rehearsed before the first game."""
    path = write(small_disk / "s.toml", VERIFY_FILE)
    if how == "read-only":
        subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    else:
        fill(small_disk)
    code = main([*VERIFY, "--strategy-file", str(path), "--sets", "planted"])
    reason = "Read-only file system" if how == "read-only" else "No space left on device"
    no_game_played(capsys, code, f"--write {path}: cannot write ({reason})")
    assert path.read_text() == VERIFY_FILE
    assert leftovers(small_disk) == []


def test_a_symbolic_link_is_written_through_to_its_target(tmp_path, capsys):
    """m1: the link was replaced by a regular file and its target left as it was. Decision: the
    link is the user's way of naming the file, so the file it names gets the figures and the
    link stays a link."""
    (tmp_path / "real").mkdir()
    target = write(tmp_path / "real" / "s.toml", VERIFY_FILE)
    link = tmp_path / "link.toml"
    link.symlink_to(target)
    assert main([*VERIFY, "--strategy-file", str(link), "--sets", "planted"]) == 0
    assert link.is_symlink() and link.resolve() == target
    assert verified(target) == {"planted"}
    assert leftovers(tmp_path) == [] and leftovers(tmp_path / "real") == []


def test_a_dangling_link_is_one_line(tmp_path, capsys):
    link = tmp_path / "link.toml"
    link.symlink_to(tmp_path / "gone.toml")
    code = main([*VERIFY, "--strategy-file", str(link)])
    one_line_error(capsys, code, str(link))
    assert link.is_symlink() and not (tmp_path / "gone.toml").exists()


def run_verify(argv: list[str], *, before_write: str = "", sync: Path | None = None):
    """``neom verify`` in a process of its own; ``before_write``: Python run once the games are
    played (after the figures are printed), before the file is written."""
    script = f"""
import sys, time
from pathlib import Path
import analysis.tools.verify as verify
shown = verify.describe
def describe(result):
    lines = shown(result)
    sync = {str(sync)!r}
{textwrap_indent(before_write)}
    return lines
verify.describe = describe
from sim.core.cli import main
sys.exit(main({argv!r}))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def textwrap_indent(code: str) -> str:
    return "\n".join("    " + line for line in code.splitlines())


# Both processes wait for each other once their games are played, then parse the file slowly:
# each reads it before the other has written it, unless the writes take turns.
MEET_THEN_READ_SLOWLY = """
import os, tomllib
Path(sync, str(os.getpid())).touch()
deadline = time.monotonic() + 300
while len(list(Path(sync).iterdir())) < 2 and time.monotonic() < deadline:
    time.sleep(0.01)
parse = tomllib.loads
def slow(*args, **kwargs):
    time.sleep(0.5)
    return parse(*args, **kwargs)
tomllib.loads = slow
"""


def test_two_verify_writes_of_other_sets_both_land(tmp_path):
    """S2: two verify --write of one file, of different sets, both said "wrote" but one set's
    figures were lost (each wrote the file as it had read it), or one failed on the other's
    temporary file (one fixed name). Now each takes the writer lock of the file's folder, reads
    the file afresh under it and writes through a temporary file of its own."""
    path = write(tmp_path / "s.toml", VERIFY_FILE)
    sync = tmp_path / "sync"
    sync.mkdir()
    argv = [*VERIFY, "--strategy-file", str(path)]
    runs = [
        run_verify([*argv, "--sets", name], before_write=MEET_THEN_READ_SLOWLY, sync=sync)
        for name in ("planted", "other")
    ]
    outputs = [run.communicate(timeout=1200) for run in runs]
    for run, (out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
        assert "wrote the verification of 1 set(s)" in out, out
    assert verified(path) == {"planted", "other"}
    assert leftovers(tmp_path) == []


FILE_SIZE_LIMIT = """
import resource
limit = Path({path!r}).stat().st_size + 300
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
"""


def test_a_write_that_fails_after_the_games_keeps_the_figures(tmp_path):
    """M2: a disk that fills during the games lost the whole check and left a temporary file.
    Simulated with a limit on the size of files the process writes, set after the games (the
    file with its new figures is larger): the write fails, no temporary file is left, the file
    is as it was, and the figures are printed as the tables to paste in."""
    path = write(tmp_path / "s.toml", VERIFY_FILE)
    argv = [*VERIFY, "--strategy-file", str(path), "--sets", "planted"]
    run = run_verify(argv, before_write=FILE_SIZE_LIMIT.format(path=str(path)))
    out, err = run.communicate(timeout=1200)
    assert run.returncode == 1, err
    lines = [line for line in err.splitlines() if not line.startswith("  played ")]
    assert len(lines) == 1 and lines[0].startswith(f"neom: error: --write {path}: cannot write")
    assert path.read_text() == VERIFY_FILE and leftovers(tmp_path) == []
    tables = tomllib.loads(out[out.index("[sets.planted.verification]") :])
    figures = tables["sets"]["planted"]["verification"]
    assert figures["tuned"]["games"] == 10 and figures["seed"] == 5


# --- tune --out: the same writer ----------------------------------------------------------------


def tune(out: Path, name: str) -> list[str]:
    return [
        *("tune", "--base", "greedy", "--opponents", "random", "--players", "2"),
        *("--budget", "100", "--no-progress", "--name", name, "--out", str(out)),
    ]


def test_tune_writes_through_a_symbolic_link(tmp_path, capsys):
    """m1 for tune --out: the link was replaced by a regular file."""
    (tmp_path / "real").mkdir()
    target = write(tmp_path / "real" / "s.toml", VERIFY_FILE)
    link = tmp_path / "link.toml"
    link.symlink_to(target)
    assert main(tune(link, "tuned_greedy")) == 0
    assert link.is_symlink() and link.resolve() == target
    sets = tomllib.loads(target.read_text())["sets"]
    assert set(sets) == {"planted", "other", "tuned_greedy"}
    assert leftovers(tmp_path) == [] and leftovers(tmp_path / "real") == []


def test_tune_keeps_what_another_command_wrote_during_its_games(tmp_path, capsys, monkeypatch):
    """tune --out read the file when it was claimed and wrote that text back with its set: a
    set written meanwhile (by verify --write, another tune) made it fail after every game
    ("would change the file's other sets"). It reads the file afresh under the writer lock."""
    from strategies.tools import tune as tuning

    path = write(tmp_path / "s.toml", VERIFY_FILE)
    played = tuning.tune

    def play_then_another_writes(*args, **kwargs):
        result = played(*args, **kwargs)
        path.write_text(path.read_text() + '\n[sets.meanwhile]\nbase = "random"\n')
        return result

    monkeypatch.setattr(tuning, "tune", play_then_another_writes)
    assert main(tune(path, "tuned_greedy")) == 0
    sets = tomllib.loads(path.read_text())["sets"]
    assert set(sets) == {"planted", "other", "meanwhile", "tuned_greedy"}
    assert leftovers(tmp_path) == []
