"""The cornerstone diagnostic (``python -m analysis.neom.cornerstone_why``, docs/strategies.md):
a planted known answer. A seat whose cornerstone weight is huge builds every cornerstone it can,
so the diagnostic must show that seat building more often than its unplanted self on the same
deals, and never losing a buildable cornerstone to a sale."""

import csv

from analysis.neom import cornerstone_why

PLANTED = "tuned_builder_4p"


def _by_set(tmp_path, name, *extra):
    out = tmp_path / f"{name}.csv"
    args = ["--games", "4", "--seed", "1", "--by-set", "--out", str(out), *extra]
    assert cornerstone_why.main(args) == 0
    rows = [r for r in csv.DictReader(out.open()) if r["set"] == PLANTED]
    drafters = sum(int(r["drafters"]) for r in rows)
    built = sum(float(r["built_rate"]) * int(r["drafters"]) for r in rows) / drafters
    lost_to_sale = sum(float(r["lost_to_sell"]) * int(r["drafters"]) for r in rows) / drafters
    shares = [
        sum(float(r[k]) for k in ("share_listed", "share_limit", "share_coins", "share_other"))
        for r in rows
    ]
    return drafters, built, lost_to_sale, shares


def test_a_seat_that_prizes_cornerstones_is_seen_building_them(tmp_path):
    _, base_built, base_lost_to_sale, shares = _by_set(tmp_path, "base")
    planted = f"{PLANTED}={PLANTED}:cornerstone=200"
    drafters, built, lost_to_sale, _ = _by_set(tmp_path, "planted", "--set", planted)
    assert all(abs(s - 1) < 1e-9 for s in shares)  # every held action has exactly one reason
    assert drafters >= 10
    assert built > base_built + 0.1 and built > 0.85
    assert lost_to_sale == 0 < base_lost_to_sale


def test_a_malformed_override_is_one_line(capsys):
    assert cornerstone_why.main(["--set", "tuned_builder_4p"]) == 2
    assert capsys.readouterr().err.strip() == "--set 'tuned_builder_4p': expected NAME=SPEC"


def test_an_existing_out_file_is_refused_before_any_game(tmp_path, capsys):
    out = tmp_path / "why.csv"
    out.write_text("mine")
    assert cornerstone_why.main(["--games", "1", "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"--out {out}: exists; pass --overwrite to replace it"
    assert out.read_text() == "mine"
