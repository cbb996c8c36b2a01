"""Metric functions on hand-built numbers with known answers."""

import math

import numpy as np
import pytest

from analysis.core.stats import (
    adjust,
    benjamini_hochberg,
    bootstrap_interval,
    holm,
    mean_interval,
    paired_difference,
    seat_balance,
    wilson_interval,
    win_shares,
)
from analysis.core.strategies import bradley_terry


def test_wilson_interval_known_values():
    lo, hi = wilson_interval(5, 10)
    assert (lo, hi) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson_interval(np.array([1, 0]), np.array([2, 0]))
    assert lo[0] == pytest.approx(0.0945, abs=1e-4) and math.isnan(lo[1]) and math.isnan(hi[1])


def test_win_shares_split_ties():
    """ "In case of a tie, enjoy your shared victory": k tied winners get 1/k each."""
    shares = win_shares([1, 1, 0, 0], [2, 2, 2, 2])
    assert shares.tolist() == [0.5, 0.5, 0.0, 0.0]
    assert win_shares([1, 0, 0], [1, 1, 1]).tolist() == [1.0, 0.0, 0.0]


def test_paired_difference_mean_and_interval():
    result = paired_difference([3, 5, 7], [1, 2, 3])  # differences 2, 3, 4: sd 1
    assert result["mean"] == 3.0
    assert result["se"] == pytest.approx(1 / math.sqrt(3))
    assert result["lo"] == pytest.approx(3 - 1.959964 / math.sqrt(3), abs=1e-5)
    assert result["hi"] == pytest.approx(3 + 1.959964 / math.sqrt(3), abs=1e-5)
    assert result["p"] < 1e-6
    with pytest.raises(ValueError):
        paired_difference([1, 2], [1])


def test_mean_interval_edge_cases():
    one = mean_interval([4.0])
    assert one["mean"] == 4.0 and math.isnan(one["lo"]) and math.isnan(one["p"])
    flat = mean_interval([0.0, 0.0, 0.0])
    assert flat["p"] == 1.0 and flat["lo"] == flat["hi"] == 0.0
    symmetric = mean_interval([-1.0, 1.0, -1.0, 1.0])
    assert symmetric["p"] == pytest.approx(1.0)


def test_holm_and_benjamini_hochberg_known_values():
    p = [0.01, 0.04, 0.03, 0.005]
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert benjamini_hochberg(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # step-down keeps the order
    adjusted = adjust([0.01, math.nan, 0.02], "bh")
    assert adjusted[0] == pytest.approx(0.02) and math.isnan(adjusted[1])


def test_seat_balance_is_one_minus_largest_gap():
    assert seat_balance([0.30, 0.25, 0.20, 0.25]) == pytest.approx(0.9)
    assert seat_balance(np.array([[0.5, 0.5], [0.6, 0.4]])) == pytest.approx([1.0, 0.8])


def test_bootstrap_interval_covers_the_estimate_and_is_reproducible():
    rng = np.random.default_rng(1)
    rows = rng.normal(0.0, 1.0, size=(400, 2)) + [0.0, 0.5]
    lo, hi = bootstrap_interval(rows, lambda means: means[:, 1] - means[:, 0], n_boot=400)
    estimate = rows[:, 1].mean() - rows[:, 0].mean()
    assert lo < estimate < hi and hi - lo < 0.5
    assert bootstrap_interval(rows, lambda m: m[:, 0], n_boot=50) == bootstrap_interval(
        rows, lambda m: m[:, 0], n_boot=50
    )


def test_bradley_terry_recovers_known_strengths():
    strength = np.array([1.0, 2.0, 4.0])
    meetings = 1000.0
    wins = meetings * strength[:, None] / (strength[:, None] + strength[None, :])
    np.fill_diagonal(wins, 0.0)
    fitted = bradley_terry(wins, prior_ties=0.0)
    assert fitted / fitted[0] == pytest.approx(strength, rel=1e-6)
    unbeaten = bradley_terry(np.array([[0.0, 10.0], [0.0, 0.0]]))
    assert np.isfinite(unbeaten).all() and unbeaten[0] > unbeaten[1]
