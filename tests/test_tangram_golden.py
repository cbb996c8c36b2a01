"""Tangram City's golden games: the stored tables of fixed runs (every player count, every
strategy, the planner at its defaults in the default field, two rules readings), digested column
by column as tests/golden.py does for NEOM. They prove that a change of the compiled loop or of a
strategy (the planner's speed work, issue 40) plays the same games. A change here must be on
purpose, with its reason in the commit that rewrites the file
(``python tests/test_tangram_golden.py --write``)."""

import json
import sys
import tempfile
from pathlib import Path

import pytest
from golden import golden_run

GOLDEN_FILE = Path(__file__).with_name("golden_tangram.json")
# name -> (players, strategies, rules options, deals): every seat's strategy meets every player
# count at least once; the planner's default budget plays in the default field.
CASES = {
    "p1-greedy": (1, ["greedy"], {}, 2),
    "p2-planner-small": (2, ["planner:samples=2,candidates=2", "random"], {}, 2),
    "p3-mixed-kept": (3, ["greedy", "random", "planner:samples=3"], {"fountain_kept": 1}, 1),
    "p4-default-field": (4, ["planner", "greedy", "greedy", "random"], {}, 1),
    "p5-mixed-red": (
        5,
        ["random", "greedy:balance_weight=1", "planner:samples=2,candidates=3", "greedy", "random"],
        {"start_colour": "red"},
        1,
    ),
}


def run_case(name: str, out: Path) -> dict[str, dict[str, str]]:
    players, strategies, rules, deals = CASES[name]
    return golden_run(out, "tangram", strategies, players, deals, 20261202, rules)


GOLDEN = json.loads(GOLDEN_FILE.read_text()) if GOLDEN_FILE.exists() else {}


def test_golden_file_has_every_case():
    assert set(GOLDEN) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tangram_golden_tables_are_unchanged(name, tmp_path):
    digests = run_case(name, tmp_path / name)
    for table, columns in GOLDEN[name].items():
        changed = sorted(
            c for c in set(columns) | set(digests[table]) if columns.get(c) != digests[table].get(c)
        )
        assert not changed, f"{name}: {table} columns changed: {', '.join(changed)}"


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    with tempfile.TemporaryDirectory() as tmp:
        result = {name: run_case(name, Path(tmp) / name) for name in CASES}
    GOLDEN_FILE.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN_FILE} ({len(result)} cases)")
