"""Every input check total (issue 35): a malformed or unused ``--scheduler``, a player count
no game has, a ``--min-n`` below 2, options ``balance --all`` would ignore, a strategy
parameter given twice, a user's set or field named like a shipped one, the documented
``python -m`` modules, a report of a run being written, runs on different catalogues of one
name side by side, ``--check`` against the same games, and the wording of names and
articles: each one line naming the problem, non-zero exit, nothing written."""

import json
import os
import shutil
import sys

import polars as pl
import pytest
from catalog_fixture import tile, to_toml, valid_catalog
from run_helpers import one_line_error, placeholder_figures, small_run

from sim.core.cli import main
from sim.core.errors import UserError, read_input
from sim.core.strategies import parse_strategy, seat_strategies
from strategies.neom.registry import REGISTRY


@pytest.fixture(autouse=True)
def no_rendering(monkeypatch):
    """The reports here are checked by their files, tables and text, not their images."""
    placeholder_figures(monkeypatch)


RANDOM4 = "random,random,random,random"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Small runs: NEOM on two catalogues of one name in folders of one name, the same games
    twice, a Tangram City run."""
    root = tmp_path_factory.mktemp("checks")
    paths = {}
    for index, vp in enumerate((1, 9)):
        catalog = valid_catalog()
        catalog["catalog"].update(name="My catalogue", reconstructed=False)
        tile(catalog, "Treasury").update(vp=vp)
        data = root / f"catalog{index}.toml"
        data.write_text(to_toml(catalog), encoding="utf-8")
        paths[f"named{index}"] = root / f"place{index}" / "run"  # one folder name
        small_run(paths[f"named{index}"], "neom", ("random",) * 4, 4, 8, 5, data=data)
    for name in ("plain", "again"):
        paths[name] = root / name
        small_run(paths[name], "neom", ("random",) * 4, 4, 8, 5)
    paths["tangram"] = root / "tangram"
    small_run(paths["tangram"], "tangram", ("random", "random"), 2, 4, 5)
    return paths


# --- --scheduler (J3, m9) -----------------------------------------------------------------------

BAD_ADDRESSES = ["not an address", "tcp://[::1", "foo://bar:1", "localhost", "tcp://h:99999", ""]


@pytest.mark.parametrize("address", BAD_ADDRESSES)
def test_simulate_refuses_a_malformed_scheduler_before_writing(tmp_path, capsys, address):
    """It was a ValueError traceback from distributed, with the run left marked running."""
    out = tmp_path / "run"
    argv = ["simulate", "--games", "4", "--strategies", RANDOM4, "--workers", "1"]
    code = main([*argv, "--backend", "dask", "--scheduler", address, "--out", str(out)])
    one_line_error(capsys, code, "--scheduler", repr(address))
    assert not out.exists()


@pytest.mark.parametrize("address", ["not an address", "foo://bar:1"])
def test_report_and_balance_refuse_a_malformed_scheduler(runs, tmp_path, capsys, address):
    out = tmp_path / "report"
    code = main(["report", str(runs["plain"]), "--backend", "dask", "--scheduler", address,
                 "--out", str(out)])  # fmt: skip
    one_line_error(capsys, code, "--scheduler", repr(address))
    assert not out.exists()
    code = main(["balance", "Treasury", "--backend", "dask", "--scheduler", address])
    one_line_error(capsys, code, "--scheduler", repr(address))


@pytest.mark.parametrize("command", ["simulate", "report", "balance"])
def test_a_scheduler_without_the_dask_backend_is_refused(runs, tmp_path, capsys, command):
    """It was silently ignored (the games played locally)."""
    out = tmp_path / "out"
    argv = {
        "simulate": ["simulate", "--games", "4", "--strategies", RANDOM4, "--out", str(out)],
        "report": ["report", str(runs["plain"]), "--out", str(out)],
        "balance": ["balance", "Treasury"],
    }[command]
    code = main([*argv, "--scheduler", "tcp://127.0.0.1:8786"])
    one_line_error(capsys, code, "--scheduler needs --backend dask")
    assert not out.exists()


# --- --players and --min-n on every command (J4, m7) --------------------------------------------


# The commands that take both --players and --min-n ({out}: a folder that must stay unwritten).
PLAYERS_AND_MIN_N = [
    ["balance", "Treasury"],
    ["balance", "--all", "--out", "{out}"],
    ["compare", "--strategies", RANDOM4, "--out", "{out}"],
]


def command_id(argv) -> str:
    return " ".join(argv[:2])


@pytest.mark.parametrize("players", ["0", "9", "-1"])
@pytest.mark.parametrize(
    "argv",
    [
        *PLAYERS_AND_MIN_N,
        ["experiment", "cornerstone", "Treasury", "--mode", "force", "--strategies", RANDOM4],
        ["simulate", "--strategies", RANDOM4, "--out", "{out}"],
        ["play", "--strategies", "random"],
        ["tune", "--base", "builder", "--opponents", "greedy"],
        ["ladder"],
    ],
    ids=command_id,
)
def test_players_outside_what_the_game_allows_is_one_line(tmp_path, capsys, argv, players):
    """balance --players 0 was a ZeroDivisionError; --players 9 a games-multiple message."""
    out = tmp_path / "out"
    argv = [a.replace("{out}", str(out)) for a in argv]
    err = one_line_error(capsys, main([*argv, "--players", players]), f"--players {players}")
    assert "must be between" in err and "multiple" not in err
    assert not out.exists()


@pytest.mark.parametrize("min_n", ["0", "-5", "1"])
@pytest.mark.parametrize(
    "argv", [*PLAYERS_AND_MIN_N, ["report", "{run}", "--out", "{out}"]], ids=command_id
)
def test_min_n_below_two_is_refused_everywhere(runs, tmp_path, capsys, argv, min_n):
    out = tmp_path / "out"
    argv = [a.replace("{out}", str(out)).replace("{run}", str(runs["plain"])) for a in argv]
    one_line_error(capsys, main([*argv, "--min-n", min_n]), f"--min-n {min_n}", "at least 2")
    assert not out.exists()


# --- balance --all: options it would ignore (m5) ------------------------------------------------


@pytest.mark.parametrize("option", ["--json", "--work"])
def test_balance_all_refuses_the_options_of_one_item(tmp_path, capsys, option):
    out, target = tmp_path / "out", tmp_path / "target"
    code = main(["balance", "--all", "--out", str(out), option, str(target)])
    one_line_error(capsys, code, "--json and --work belong to neom balance NAME")
    assert not out.exists() and not target.exists()


# --- strategy specs and files (m6) --------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        "expert:playouts=32,playouts=1",
        "greedy:money_weight=1, money_weight=2",
        "tuned_builder_4p:deny=1,deny=0",
    ],
)
def test_a_parameter_given_twice_is_refused(spec):
    with pytest.raises(UserError, match="given twice"):
        seat_strategies(REGISTRY, [spec] * 4, 4)


def test_a_parameter_given_twice_on_the_command_line_is_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["simulate", "--games", "4", "--out", str(out), "--players", "1"]
    code = main([*argv, "--strategies", "greedy:money_weight=1,money_weight=2"])
    one_line_error(capsys, code, "'money_weight' given twice")
    assert not out.exists()
    assert parse_strategy(REGISTRY, "greedy:money_weight=2").spec == "greedy:money_weight=2"


@pytest.mark.parametrize(
    "text, words",
    [
        ('[sets.tuned_builder_4p]\nbase = "builder"\n', ["[sets.tuned_builder_4p]", "shipped set"]),
        ('[sets.strong]\nbase = "builder"\n', ["[sets.strong]", "shipped field"]),
        ('[fields.strong]\n1 = ["greedy"]\n', ["[fields.strong]", "shipped field"]),
        ('[fields.tuned_denier_2p]\n1 = ["greedy"]\n', ["[fields.tuned_denier_2p]", "shipped set"]),
    ],
)
def test_a_users_set_or_field_may_not_take_a_shipped_name(tmp_path, capsys, text, words):
    """It silently replaced the shipped one (a field) or was never used (a set named like a
    field)."""
    path = tmp_path / "mine.toml"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "run"
    argv = ["simulate", "--games", "4", "--players", "1", "--strategies", "greedy"]
    code = main([*argv, "--strategy-file", str(path), "--out", str(out)])
    one_line_error(capsys, code, *words)
    assert not out.exists()
    one_line_error(capsys, main(["strategies", "--strategy-file", str(path)]), *words)


def test_tune_refuses_a_shipped_name_before_playing(tmp_path, capsys):
    out = tmp_path / "mine.toml"
    argv = ["tune", "--base", "builder", "--opponents", "greedy", "--players", "2"]
    code = main([*argv, "--name", "tuned_builder_2p", "--out", str(out)])
    one_line_error(capsys, code, "--name 'tuned_builder_2p'", "shipped")
    assert not out.exists()


# --- documented modules behind the command line's error handling (M1) ---------------------------


def _module(capsys, module: str, *args: str) -> tuple[int, str]:
    """``python -m MODULE ARGS``'s exit code and stderr. Run in this process: runpy runs the
    module's ``__main__`` block as ``-m`` does, without a second Python's start-up."""
    import runpy
    import warnings

    argv = sys.argv
    try:
        sys.argv = [module, *args]
        with pytest.raises(SystemExit) as done, warnings.catch_warnings():
            # runpy notes that the module was imported already (by the tests): harmless here
            warnings.filterwarnings("ignore", "'.*' found in sys.modules", RuntimeWarning)
            runpy.run_module(module, run_name="__main__", alter_sys=True)
    finally:
        sys.argv = argv
    return done.value.code, capsys.readouterr().err


@pytest.mark.parametrize("which, words", [
    ("missing", ["no such run folder"]),
    ("tangram", ["a Tangram City run"]),
    ("plain", ["played without --events"]),
])  # fmt: skip
def test_catalog_figures_refuses_in_one_line(runs, tmp_path, capsys, which, words):
    path = tmp_path / "missing" if which == "missing" else runs[which]
    code, err = _module(capsys, "analysis.neom.catalog_figures", str(path))
    assert code == 1, err
    assert err.startswith("python -m analysis.neom.catalog_figures: error: "), err
    assert err.count("\n") == 1 and all(word in err for word in words), err


# --- a report of a run being written names the writer (m10) -------------------------------------


def test_a_report_of_a_run_being_written_names_the_writer(runs, tmp_path, capsys):
    from sim.core.outputs import writer_lock

    run = tmp_path / "run"
    shutil.copytree(runs["plain"], run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "running"
    (run / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "report"
    with writer_lock(run, "neom simulate --resume", "run folder"):
        code = main(["report", str(run), "--out", str(out)])
    err = one_line_error(capsys, code, "being written by", f"PID {os.getpid()}")
    assert "--resume" not in err.replace("neom simulate --resume)", "")  # the writer's command
    assert not out.exists()
    # Without a live writer the advice is to continue the run.
    one_line_error(capsys, main(["report", str(run), "--out", str(out)]), "--resume")


# --- labels by digest, --check against the same games (M3, m8) ----------------------------------


def test_runs_on_catalogues_of_one_name_are_labelled_by_digest(runs, tmp_path):
    """Two runs named run, on two catalogues both called My catalogue: one label before."""
    out = tmp_path / "report"
    assert main(["report", str(runs["named0"]), str(runs["named1"]), "--out", str(out)]) == 0
    table = pl.read_csv(out / "tables" / "combined_strategies.csv")
    labels = sorted(set(table["run"]))
    assert len(labels) == 2, labels
    digests = [json.loads((runs[n] / "manifest.json").read_text())["data"]["digest"]
               for n in ("named0", "named1")]  # fmt: skip
    for digest in digests:
        assert sum(digest[:12] in label for label in labels) == 1, (digest, labels)
    # The wide tables (a column per run, by index) say which data each run is on.
    (combined,) = set(pl.read_csv(out / "tables" / "combined_cornerstones.csv")["data"])
    assert all(label in combined for label in labels), (combined, labels)


def test_check_against_the_same_games_is_refused(runs, tmp_path, capsys):
    """The same field, seed, catalogue and rules: every finding was called robust."""
    out = tmp_path / "report"
    code = main(["report", str(runs["plain"]), "--check", str(runs["again"]), "--out", str(out)])
    one_line_error(capsys, code, "--check", "the same games")
    assert not out.exists()


# --- wording (m12) ------------------------------------------------------------------------------


def test_a_named_tile_with_an_unusable_name_is_shown_by_it():
    """It was called "tile #2 (no name)"."""
    from sim.neom.catalog import validate

    data = valid_catalog()
    data["tiles"][1]["name"] = "Park\x1b[31m"
    problems = validate(data, "test.toml")
    assert any('tile #2 ("Park\\u001b[31m")' in p for p in problems), problems
    assert not any("(no name)" in p for p in problems), problems


def test_tile_set_warnings_name_the_command():
    from sim.tangram.tileset import TEMPLATE, load_tileset, tileset_warnings

    warnings = tileset_warnings(load_tileset(TEMPLATE))
    assert warnings and all("neom tileset witness" in w for w in warnings), warnings
    assert not any("python -m" in w for w in warnings)


def test_an_article_before_a_vowel(tmp_path):
    path = tmp_path / "neom-listing.json"
    path.write_text("x" * 20)
    with pytest.raises(UserError, match="the limit for an output listing"):
        read_input(path, "output listing", 10)
