"""The planted catalogue of issue 39's walkthrough (``python -m analysis.tools.plant_catalogue``):
the three plants and nothing else on a copy of the shipped default; a base that has moved on is
refused, one line, rather than planted by a different amount."""

import tomllib

import pytest

from analysis.tools import plant_catalogue as P
from sim.core.cli import guarded
from sim.core.errors import UserError
from sim.neom.catalog import DEFAULT_CATALOG, load_catalog


def _by_name(text: str) -> dict:
    return {t["name"]: t for t in tomllib.loads(text)["tiles"]}


def test_the_three_plants_change_three_numbers_of_the_default(tmp_path, capsys):
    out = tmp_path / "planted.toml"
    assert P.main([str(out)]) == 0
    base, planted = _by_name(DEFAULT_CATALOG.read_text()), _by_name(out.read_text())
    changed = {(name, key): (base[name].get(key), tile.get(key))
               for name, tile in planted.items() for key in set(tile) | set(base[name])
               if tile.get(key) != base[name].get(key)}  # fmt: skip
    assert changed == {
        ("City Archive", "vp"): (4, 10),
        ("Family Homes", "vp"): (2, 6),
        ("Gold Refinery", "cost"): (2, 10),
    }
    load_catalog(out)  # a valid catalogue
    assert "planted Gold Refinery: cost 2 -> 10" in capsys.readouterr().out


def test_a_base_that_moved_on_is_refused(tmp_path, capsys):
    moved = P.plant(DEFAULT_CATALOG.read_text(), {("City Archive", "vp"): (None, 5)})
    with pytest.raises(UserError, match="is 5 in the base, not 4"):
        P.plant(moved, P.THREE_PLANTS)
    code = guarded(lambda: P.main([str(tmp_path / "x.toml"), "--set", "Nowhere:vp=3"]), "plant")
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "no tile, cornerstone or Disaster" in err
    code = guarded(lambda: P.main([str(tmp_path / "x.toml"), "--set", "City Archive=9"]), "plant")
    assert code == 1 and "expected ITEM:PATH=N" in capsys.readouterr().err
