"""The reconstruction label wherever data is shown (issue 27): ``neom ladder`` (screen and
``--json``, with ``--tileset``) and ``neom tileset witness`` name their data; data whose file
says ``reconstructed = false`` is shown as that file's own claim, and a copy of the shipped
reconstruction that claims so is still labelled a reconstruction."""

import json
import tomllib

from catalog_fixture import to_toml, valid_catalog

from sim.core.cli import main
from sim.core.game import COPY_NOTE, NOT_RECONSTRUCTED_CLAIM
from sim.neom import GAME as NEOM
from sim.neom.catalog import DEFAULT_CATALOG
from sim.tangram import GAME as TANGRAM
from sim.tangram.tileset import DEFAULT_TILESET

RECONSTRUCTED = "RECONSTRUCTED: not the published game's data"


def claims_real(path) -> str:
    text = path.read_text(encoding="utf-8")
    assert "reconstructed = true" in text
    return text.replace("reconstructed = true", "reconstructed = false", 1)


def test_a_copy_of_the_shipped_reconstruction_is_still_a_reconstruction(tmp_path):
    for game, default in ((NEOM, DEFAULT_CATALOG), (TANGRAM, DEFAULT_TILESET)):
        copy = tmp_path / default.name
        copy.write_text(claims_real(default), encoding="utf-8")
        data = game.load_data(copy)
        assert data.reconstructed, game.name
        assert COPY_NOTE in data.label and RECONSTRUCTED in data.label, data.label


def _changed_tileset(tmp_path):
    """The default tile set with other start pieces (so other data), claiming to be real."""
    data = tomllib.loads(claims_real(DEFAULT_TILESET))
    for board in data["boards"]:
        board.pop("witness")
    data["tileset"]["name"] = "My tiles"
    data["boards"][0].update(square=[0, 0], triangle=[0, 1, "SW"])
    path = tmp_path / "mine.toml"
    path.write_text(to_toml(data), encoding="utf-8")
    return path


def test_data_a_file_calls_real_is_shown_as_the_files_claim(tmp_path):
    catalog = valid_catalog()
    catalog["catalog"].update(name="My catalogue", reconstructed=False)
    path = tmp_path / "mine.toml"
    path.write_text(to_toml(catalog), encoding="utf-8")
    assert NEOM.load_data(path).label == f"My catalogue ({NOT_RECONSTRUCTED_CLAIM})"
    tiles = TANGRAM.load_data(_changed_tileset(tmp_path))
    assert not tiles.reconstructed and tiles.label == f"My tiles ({NOT_RECONSTRUCTED_CLAIM})"


def test_tangram_ladder_names_its_data_on_screen_and_in_json(tmp_path, capsys):
    argv = ["ladder", "--game", "tangram", "--rungs", "random,greedy", "--games", "4"]
    argv += ["--workers", "1", "--seed", "3"]
    out = tmp_path / "ladder.json"
    assert main([*argv, "--json", str(out)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Tangram City ladder") and RECONSTRUCTED in first
    (row,) = json.loads(out.read_text())
    assert row["reconstructed"] is True and RECONSTRUCTED in row["data"]
    mine = _changed_tileset(tmp_path)
    assert main([*argv, "--tileset", str(mine), "--json", str(out), "--overwrite"]) == 0
    assert NOT_RECONSTRUCTED_CLAIM in capsys.readouterr().out.splitlines()[0]
    (row,) = json.loads(out.read_text())
    assert row["reconstructed"] is False and NOT_RECONSTRUCTED_CLAIM in row["data"]


def test_tileset_witness_names_its_tile_set(capsys, monkeypatch):
    from sim.tangram import witness

    monkeypatch.setattr(witness, "find_tiling", lambda *args, **kwargs: None)
    assert main(["tileset", "witness"]) == 1  # no tiling found (the search is stubbed)
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("# tile set: ") and RECONSTRUCTED in first
