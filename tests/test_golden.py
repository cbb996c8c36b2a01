"""The golden games (tests/golden.py): every case's stored tables, column by column, are the
ones committed in tests/golden_neom.json. A change here must be on purpose, with its reason in
the commit that rewrites the file (``python -m tests.golden --write``)."""

import json

import pytest
from golden import GOLDEN_FILE, cases, run_case

GOLDEN = json.loads(GOLDEN_FILE.read_text())


def test_golden_cases_cover_every_player_count_and_variant():
    chosen = cases()
    assert set(chosen) == set(GOLDEN)
    combos = {(c["players"], c["variant"]) for c in chosen.values()}
    assert combos >= {(p, v) for p in range(1, 6) for v in ("standard", "beginner")}
    assert len(combos) == 20


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_game_tables_are_unchanged(name, tmp_path):
    digests = run_case(cases()[name], tmp_path / name)
    for table, columns in GOLDEN[name].items():
        changed = sorted(
            c for c in set(columns) | set(digests[table]) if columns.get(c) != digests[table].get(c)
        )
        assert not changed, f"{name}: {table} columns changed: {', '.join(changed)}"
