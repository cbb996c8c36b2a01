"""Named fields (``--strategies strong``), named sets keeping their names in results, and the
verification of tuned sets (``neom verify``; issue 30 parts 1 and 2)."""

import json
import tomllib

import polars as pl
import pytest
from run_helpers import two_player_set

from sim.core.cli import main
from sim.core.errors import UserError
from sim.core.registry import get_game
from sim.core.store import RunFolder, read_run
from sim.core.strategies import read_strategy_file, seat_strategies, shipped_file
from strategies.neom.registry import REGISTRY, resolve_strategy
from strategies.tools.tune import opponent_specs

FIELD_FILE = """
[sets.careful]
base = "builder"
reserve = 1.5

[sets.careful.tuning]
players = 2
opponents = ["builder"]

[fields.mine]
description = "a test field"
2 = ["careful", "greedy"]
3 = ["careful", "greedy:money_weight=2", "tuned_builder_4p"]
"""


def write(tmp_path, text, name="mine.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_field_expands_to_its_list_for_the_player_count(tmp_path):
    path = write(tmp_path, FIELD_FILE)
    two = seat_strategies(REGISTRY, ["mine"], 2, path)
    assert [s.label for s in two] == ["careful", "greedy"]
    assert two[0].spec == "builder:reserve=1.5"
    three = seat_strategies(REGISTRY, ["mine"], 3, path)
    assert [s.label for s in three] == ["careful", "greedy:money_weight=2", "tuned_builder_4p"]
    assert three[2].name == "builder"  # a shipped set, named by a user's field
    # the shipped field, for every player count it lists
    shipped = shipped_file(REGISTRY).fields["strong"]
    for players, names in shipped.tables.items():
        specs = seat_strategies(REGISTRY, ["strong"], players)
        assert [s.label for s in specs] == list(names)


@pytest.mark.parametrize(
    ("texts", "players", "message"),
    [
        (["mine", "greedy"], 3, "stands for a whole table; give it alone (--strategies mine)"),
        (["mine"], 4, "the field has no list for 4 players (it has lists for 2, 3)"),
        (["mine:vp=2"], 2, "the field 'mine' takes no parameters"),
        (["careful", "greedy"], 3, "lists 2 strategies but --players is 3"),
    ],
)
def test_a_field_used_wrongly_is_one_clear_line(tmp_path, texts, players, message):
    with pytest.raises(UserError) as caught:
        seat_strategies(REGISTRY, texts, players, write(tmp_path, FIELD_FILE))
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[fields.f]\n2 = ["greedy"]\n', "the 2-player list names 1 strategy: give exactly 2"),
        ('[fields.f]\n2 = ["greedy", "nobody"]\n', "[fields.f], 2 players: unknown strategy"),
        ("[fields.f]\ntwo = []\n", "unknown key 'two'"),
        ('[fields.f]\n2 = "greedy,greedy"\n', "2 must be a list of strategy names"),
        ("[fields.f]\ndescription = 'x'\n", "no player count listed"),
        ('[fields.greedy]\n1 = ["random"]\n', "'greedy' is a built-in strategy"),
        ('[sets.f]\nbase = "greedy"\n[fields.f]\n1 = ["f"]\n', "'f' is also a set's name"),
        ('[sets.f]\nbase = "greedy"\n[sets.f.notes]\nx = 1\n', "unknown table [notes]"),
        ("[other]\n", "expected at least one [sets.NAME] or [fields.NAME] table"),
    ],
)
def test_strategy_file_field_mistakes_are_one_clear_line(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(UserError) as caught:
        read_strategy_file(REGISTRY, path, shipped_file(REGISTRY))
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_a_set_with_overrides_is_named_by_the_set_and_the_overrides():
    spec = resolve_strategy("tuned_builder_2p:deny=0.3")
    assert spec.label == "tuned_builder_2p:deny=0.3"
    assert spec.spec.startswith("builder:") and "deny=0.3" in spec.spec
    assert resolve_strategy("builder:deny=0.3").label == "builder:deny=0.3"


def test_simulate_with_a_field_records_set_names_and_their_exact_parameters(tmp_path, capsys):
    """Issue 27: the tables name a tuned set by its name, the manifest keeps what was played."""
    out = tmp_path / "run"
    args = ["simulate", "--players", "2", "--games", "4", "--strategies", "strong"]
    assert main([*args, "--workers", "1", "--out", str(out)]) == 0, capsys.readouterr().err
    manifest = RunFolder(out).read_manifest()
    expected = seat_strategies(REGISTRY, ["strong"], 2)
    assert [s["name"] for s in manifest["strategies"]] == [s.label for s in expected]
    for entry, spec in zip(manifest["strategies"], expected, strict=True):
        assert entry["spec"] == spec.spec and entry["params"] == [float(p) for p in spec.params]
        assert entry["strategy"] == "builder" or entry["strategy"] == "denier"
    names = read_run(out).players.select("strategy_name").unique().collect()
    assert sorted(names["strategy_name"].to_list()) == sorted(s.label for s in expected)
    # the same run resumes (names and parameters unchanged)
    capsys.readouterr()
    assert main([*args, "--workers", "1", "--out", str(out), "--resume"]) == 0


def test_play_takes_a_field(capsys):
    assert main(["play", "--players", "2", "--strategies", "strong", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    first = seat_strategies(REGISTRY, ["strong"], 2)[0]
    assert f"seat 0: {first.label} ({first.spec})" in out


def test_tune_opponents_field_leaves_out_the_tuned_sets_own_seat(tmp_path):
    path = write(tmp_path, FIELD_FILE)
    assert opponent_specs("mine", 3, path, "careful", "builder") == (
        "greedy:money_weight=2",
        "tuned_builder_4p",
    )
    four = shipped_file(REGISTRY).fields["strong"].tables[4]
    assert opponent_specs("strong", 4, None, "tuned_merchant_4p", "merchant") == tuple(
        n for n in four if n != "tuned_merchant_4p"
    )
    with pytest.raises(UserError, match="3 strategies for the 2 other seats"):
        opponent_specs("mine", 3, path, "other_name", "denier")
    with pytest.raises(UserError, match="2 strategies for the 1 other seat of"):
        opponent_specs("greedy,builder", 2, None, "x", "builder")


VERIFY_FILE = (
    two_player_set("planted", "random")
    + "\n"
    + two_player_set("same", "greedy", seed=None)
    + "\n[fields.mixed]  # a user's field may not be named strong (issue 35 m6): --field mixed\n"
    + '2 = ["planted", "greedy"]\n'
)


def test_verify_finds_a_planted_lead_and_no_lead_where_there_is_none(tmp_path, capsys):
    """Known answers: greedy replacing random leads in both fields (its interval above 0); a
    set identical to what it replaces plays the same games (lead exactly 0: not verified).
    --write stores the figures, which neom strategies shows."""
    path = write(tmp_path, VERIFY_FILE)
    args = ["verify", "--strategy-file", str(path), "--games", "40", "--write"]
    args += ["--field", "mixed"]
    assert main(args) == 1  # one set did not pass
    out = capsys.readouterr().out
    assert "planted: passed against random" in out and "same: FAILED against greedy" in out
    data = tomllib.loads(path.read_text())
    planted = data["sets"]["planted"]["verification"]
    assert planted["passed"] is True
    assert planted["rules_version"] == get_game("neom").rules_version
    assert planted["tuned"]["others"] == ["random"] and planted["mixed"]["others"] == ["greedy"]
    for field in ("tuned", "mixed"):
        check = planted[field]
        assert check["games"] == 40 and check["lead_lo"] > 0
    # Against random, greedy wins most games; in the mixed field it meets greedy (itself), so
    # its share is a coin's, only above random's 0.
    assert planted["tuned"]["share"] >= 0.5 and planted["mixed"]["share"] > 0
    assert planted["mixed"]["replaced_share"] == 0  # random never beats greedy
    same = data["sets"]["same"]["verification"]
    assert same["passed"] is False
    assert same["tuned"]["lead"] == 0 and same["tuned"]["lead_lo"] == 0
    assert data["sets"]["planted"]["tuning"]["seed"] == 1  # the rest of the file kept
    assert main(["strategies", "--strategy-file", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "verified: passed against random (2 players, rules" in shown
    assert "tuned field (random), 40 games: win share 1.000" in shown


def test_verify_refuses_the_tuning_deals(tmp_path, capsys):
    path = write(tmp_path, VERIFY_FILE)
    args = ["verify", "--strategy-file", str(path), "--sets", "planted", "--seed", "1"]
    assert main([*args, "--games", "20"]) == 1
    assert "was tuned on the deals of seed 1: verify with another --seed" in (
        capsys.readouterr().err
    )


def shipped_tables():
    shipped = shipped_file(REGISTRY)
    return shipped, {name: shipped.tables.get(name, {}) for name in shipped.sets}


def test_every_shipped_set_was_tuned_and_verified_under_the_games_rules():
    """A set tuned or verified under other rules is stale: re-tune it (neom tune) and
    re-verify it (neom verify --write); the strong field names verified sets only."""
    rules = get_game("neom").rules_version
    shipped, tables = shipped_tables()
    for name, extra in tables.items():
        assert extra.get("tuning", {}).get("rules_version") == rules, name
        verification = extra.get("verification", {})
        assert verification.get("rules_version") == rules, name
        assert verification.get("passed") is True, name
    for players, names in shipped.fields["strong"].tables.items():
        assert set(names) <= set(shipped.sets), players


@pytest.mark.slow
def test_shipped_sets_pass_their_verification_again_on_a_smaller_sample(capsys):
    """Every shipped set beats what it replaces on 3,000 fresh games per match in both
    fields (another seed than the stored verification's)."""
    _, tables = shipped_tables()
    args = ["verify", "--games", "3000", "--seed", "777", "--workers", "2"]
    code = main(args)
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count(": passed against") == len(tables)


def test_manifest_json_names_every_entry(tmp_path):
    """The manifest's strategy entries keep every key the analysis reads."""
    out = tmp_path / "run"
    args = ["simulate", "--players", "2", "--games", "2", "--strategies", "random,greedy"]
    assert main([*args, "--workers", "1", "--out", str(out)]) == 0
    entries = json.loads((out / "manifest.json").read_text())["strategies"]
    assert [e["name"] for e in entries] == [e["spec"] for e in entries] == ["random", "greedy"]
    frame = read_run(out).players.select("strategy_name").collect()
    assert set(frame["strategy_name"]) == {"random", "greedy"}
    assert isinstance(frame, pl.DataFrame)


def test_tune_stores_how_the_set_was_made_and_verify_replays_its_field(tmp_path, capsys):
    """neom tune --opponents strong: the set is tuned against the strong field's other seat,
    and its tuning table (players, opponents, seed, rules version) is what verify replays."""
    out = tmp_path / "tuned.toml"
    args = ["tune", "--base", "builder", "--opponents", "strong", "--players", "2"]
    # A user's file may not reuse the shipped set's name (issue 35 m6): the set takes the
    # seat of the field's first builder all the same.
    args += ["--budget", "160", "--seed", "5", "--name", "my_builder_2p"]
    assert main([*args, "--out", str(out), "--no-progress"]) == 0
    tuning = tomllib.loads(out.read_text())["sets"]["my_builder_2p"]["tuning"]
    field = shipped_file(REGISTRY).fields["strong"].tables[2]
    others = [name for name in field if name != "tuned_builder_2p"]
    assert tuning["opponents"] == list(others) and tuning["players"] == 2
    assert tuning["seed"] == 5 and tuning["base"] == "builder"
    assert tuning["rules_version"] == get_game("neom").rules_version
    capsys.readouterr()
    main(["verify", "--strategy-file", str(out), "--games", "20"])
    printed = capsys.readouterr().out
    assert f"tuned field ({', '.join(others)}), 20 games" in printed
    assert f"mixed field ({', '.join(others)}), 20 games" in printed


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--sets", "nobody"], "--sets: no set 'nobody' in"),
        (["--games", "3"], "--games 3: at least 10"),
        (["--workers", "0"], "--workers 0: at least 1"),
        (["--sets", "bare"], "its [sets.bare.tuning] table must give players"),
        (["--sets", "planted", "--field", "weak"], "no field 'weak' with a 2-player list"),
    ],
)
def test_verify_mistakes_are_one_clear_line(tmp_path, capsys, extra, message):
    path = write(tmp_path, VERIFY_FILE + '\n[sets.bare]\nbase = "greedy"\n')
    before = path.read_text()
    assert main(["verify", "--strategy-file", str(path), "--write", *extra]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert path.read_text() == before  # nothing written


def test_replacing_a_set_replaces_its_own_tables_and_keeps_the_rest():
    """neom tune --out FILE --overwrite onto a file whose set has tuning and verification
    tables: the old tables go with the old set (a re-tuned set is not verified), the next
    set and the fields stay."""
    from sim.core.strategy_writer import with_set

    text = (
        "# old\n[sets.a]\nbase = 'greedy'\n\n[sets.a.tuning]\nplayers = 2\n\n"
        "[sets.a.verification]\npassed = true\n\n[sets.a.verification.tuned]\nlead = 0.1\n\n"
        "# b's comment\n[sets.b]\nbase = 'builder'\n\n[fields.f]\n2 = ['a', 'b']\n"
    )
    block = "# new\n[sets.a]\nbase = 'greedy'\nmoney_weight = 2\n\n[sets.a.tuning]\nplayers = 4\n"
    data = tomllib.loads(with_set(text, "a", block))
    assert data["sets"]["a"] == {"base": "greedy", "money_weight": 2, "tuning": {"players": 4}}
    assert data["sets"]["b"] == {"base": "builder"} and data["fields"]["f"]["2"] == ["a", "b"]
    assert "# b's comment" in with_set(text, "a", block)
