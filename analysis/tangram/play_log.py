"""``neom play --game tangram``: the game's log (``Game.play_ref`` on the restructured core).

``show_game(args, data, rules, specs)`` plays one game with ``args.players``, ``args.seed``
and one strategy spec per seat, prints it turn by turn (the tile set's label first: a
reconstruction says so) and, with ``args.json``, writes the ``play --json`` object
(:mod:`sim.tangram.story`).
"""

import json

from sim.core.outputs import write_file
from sim.tangram.rules import make_rules
from sim.tangram.story import record_json, record_lines
from strategies.tangram.play import play_one


def show_game(args, data, rules, specs) -> int:
    """``rules``: the rules options by name (or a rules array)."""
    rules = make_rules(**rules) if isinstance(rules, dict) else rules
    record = play_one(data, args.players, specs, args.seed, rules, True)
    for line in record_lines(record, data):
        print(line)
    if getattr(args, "json", None):
        write_file(args.json, json.dumps(record_json(record, data), indent=1), "--json")
    return 0
