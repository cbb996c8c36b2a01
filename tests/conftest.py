"""Fixtures shared by the test files: the shipped data, loaded once per test module (as each
file's own fixture did; a file that needs other data defines a fixture of the same name)."""

import pytest

from sim.neom.catalog import load_catalog
from sim.tangram.tileset import load_tileset


@pytest.fixture(scope="module")
def tables():
    """NEOM's default catalogue, compiled (sim.neom.catalog.load_catalog)."""
    return load_catalog()


@pytest.fixture(scope="module")
def data():
    """Tangram City's default tile set (sim.tangram.tileset.load_tileset)."""
    return load_tileset()
