"""`neom catalog validate | show | template`: exit codes, messages, JSON, the banner."""

import json
import tomllib

import pytest
from catalog_fixture import tile, to_toml, valid_catalog

from sim.core.cli import main
from sim.neom.catalog import RECONSTRUCTED_BANNER, TEMPLATE


@pytest.fixture
def catalogue_file(tmp_path):
    def write(data=None, name="mine.toml"):
        path = tmp_path / name
        path.write_text(to_toml(valid_catalog() if data is None else data), encoding="utf-8")
        return str(path)

    return write


def test_validate_valid_file(catalogue_file, capsys):
    path = catalogue_file()
    assert main(["catalog", "validate", path]) == 0
    out = capsys.readouterr().out
    # The fixture never uses three of its goods: the validator's orphaned-goods warnings.
    assert out == (
        f"{path}: valid (145 tiles: 21 cornerstones, 40 gen1, 40 gen2, 40 gen3, 4 substitutes; "
        "10 goods, 6 boards; 3 warnings)\n"
    )


def test_validate_lists_each_problem_on_its_own_line(catalogue_file, capsys):
    data = valid_catalog()
    tile(data, "Treasury")["requires"] = ["Stel"]
    tile(data, "Park")["roads"] = "NN"
    path = catalogue_file(data)
    assert main(["catalog", "validate", path]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f'{path}: tile "Park": field "roads": "NN" repeats "N"; each road letter at most once',
        f'{path}: tile "Treasury": field "requires": unknown good "Stel" (did you mean "Steel"?)',
        f"{path}: invalid (2 problems)",
    ]


def test_validate_syntax_error(tmp_path, capsys):
    path = tmp_path / "broken.toml"
    path.write_text('[catalog]\nname = "unterminated\n', encoding="utf-8")
    assert main(["catalog", "validate", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{path}: TOML syntax error: ")
    assert "line 2" in err[0]
    assert "Traceback" not in "\n".join(err)


def test_validate_missing_file_is_one_line(tmp_path, capsys):
    path = tmp_path / "absent.toml"
    assert main(["catalog", "validate", str(path)]) == 1
    assert capsys.readouterr().err == f"neom: error: {path}: catalogue file not found\n"


def test_show_default_starts_with_name_and_banner(capsys):
    assert main(["catalog", "show"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith('Catalogue "')
    assert lines[0].endswith(RECONSTRUCTED_BANNER)
    assert any(line.split()[:2] == ["0", "Modular"] for line in lines)


def test_show_without_reconstructed_flag_has_no_banner(catalogue_file, capsys):
    data = valid_catalog()
    data["catalog"]["reconstructed"] = False
    assert main(["catalog", "show", catalogue_file(data)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == 'Catalogue "Test set"'
    assert "RECONSTRUCTED" not in out


def test_show_one_deck_as_aligned_table(catalogue_file, capsys):
    assert main(["catalog", "show", catalogue_file(), "--deck", "gen2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    table = lines[lines.index("") + 1 :]
    assert table[0].split()[:3] == ["#", "name", "deck"]
    assert len(table) == 1 + 41  # header, 40 tiles and the Disaster's substitute
    assert all(" gen2 " in row for row in table[1:])
    # Columns line up: every row has its deck column where the header has it.
    deck_column = table[0].index("deck")
    assert all(row[deck_column : deck_column + 4] == "gen2" for row in table[1:])
    treasury = next(row for row in table if " Treasury " in row)
    assert "Steel | $5" in treasury
    assert any("substitute for Fire" in row for row in table)


def test_show_json_is_the_whole_catalogue(catalogue_file, capsys):
    assert main(["catalog", "show", catalogue_file(), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["catalog"]["name"] == "Test set"
    assert data["catalog"]["reconstructed"] is True
    assert data["catalog"]["banner"] == RECONSTRUCTED_BANNER
    assert len(data["catalog"]["digest"]) == 64
    assert len(data["tiles"]) == 151
    assert data["goods"][-1] == {"name": "Jewels", "tier": "luxury", "invented": True}
    assert data["boards"][1] == {
        "name": "Natural Gas board",
        "good": "Natural Gas",
        "roads": "NES",
        "center": "City Center (Natural Gas board)",
    }
    foundry = next(t for t in data["tiles"] if t["name"] == "Steel Foundry")
    assert (foundry["requires"], foundry["produces"], foundry["players"]) == (
        ["Ore", "Coal"],
        ["Steel"],
        1,
    )


def test_show_invalid_file_reports_problems(catalogue_file, capsys):
    data = valid_catalog()
    data["boards"] = data["boards"][:3]
    path = catalogue_file(data)
    assert main(["catalog", "show", path]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{path}: 3 boards, need at least 5 [[boards]]",
        f"{path}: invalid (1 problem)",
    ]


def test_template_prints_the_packaged_skeleton(capsys):
    assert main(["catalog", "template"]) == 0
    out = capsys.readouterr().out
    assert out == TEMPLATE.read_text(encoding="utf-8")
    assert tomllib.loads(out)["catalog"]["name"]


def test_validate_prints_warnings_on_stderr_and_still_succeeds(catalogue_file, capsys):
    data = valid_catalog()
    tile(data, "Glassworks")["players"] = 4
    tile(data, "Gen1 House 4-0")["players"] = 1
    path = catalogue_file(data)
    assert main(["catalog", "validate", path]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"{path}: valid (") and "4 warnings)" in captured.out
    assert captured.err.endswith(
        f'warning: {path}: tile "Jeweller": field "requires": good "Glass" is produced only by '
        "tiles with a higher player-count icon, so with fewer than 4 players this requirement "
        "can never be met\n"
    )
