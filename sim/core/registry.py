"""The games this tool plays, by name. The only place where the core names a game package:
each is imported on first use, and must define ``GAME`` (:class:`sim.core.game.Game`)."""

import importlib

from sim.core.errors import UserError
from sim.core.game import Game

DEFAULT_GAME = "neom"
GAME_PACKAGES = {
    "neom": "sim.neom",
    "tangram": "sim.tangram",
}


def game_names() -> tuple[str, ...]:
    return tuple(GAME_PACKAGES)


def get_game(name: str | None = None) -> Game:
    """The game called ``name`` (the default game for None); UserError for an unknown name."""
    name = DEFAULT_GAME if name is None else name
    package = GAME_PACKAGES.get(name)
    if package is None:
        raise UserError(f"unknown game {name!r}; valid games: {', '.join(GAME_PACKAGES)}")
    return importlib.import_module(package).GAME
