"""The report points to the fix: for each flagged cornerstone or tile, its VP equivalent and the
command that tests or fixes it (``neom balance NAME ...``, ``neom experiment ...``).

The VP equivalent converts a win-share effect into VP with the run's own exchange rate: the
slope of the seats' win share above expected on their score lead (VP above the mean of the
other seats of the game), fitted over every seat of the run. In the default run it is about
4.5 pct-pts per VP, the "1 VP is about 4-5 pct-pts" rule of thumb, measured. For a cornerstone
the drafters' own score lead is shown beside it. ``neom balance`` then measures the slope of
the item's own levers, which is what a fix should use.
"""

import math
import shlex
from pathlib import Path

import polars as pl

from analysis.core.batches import Reduction, value
from analysis.core.reduce import CoMoments
from analysis.core.tabulate import EXPECTED, chunk_outcomes

KIND_COMMAND = {"cornerstone": "cornerstone", "tile": "tile"}


def _rate_reduce(chunk) -> dict:
    outcomes = chunk.memo(chunk_outcomes)
    return {"seats": CoMoments.of(outcomes, (), "score_diff", "residual")}


def _rate_finish(stats: dict, run) -> float:
    seats = stats.get("seats")
    row = seats.frame.row(0, named=True) if seats is not None and seats.frame.height else None
    if row is None or row["n"] < 3:
        return math.nan
    return row["cxy"] / row["cxx"] if row["cxx"] > 0 else math.nan


# The run's exchange rate between win share and score lead, chunk by chunk.
VP_RATE = Reduction(
    "neom.vp_rate", _rate_reduce, _rate_finish, needs=(EXPECTED,), tables=("games", "players")
)


def win_share_per_vp(run) -> float:
    """The run's exchange rate: OLS slope of the seats' win share above expected on their
    score lead, in win share per VP (NaN when the run cannot give one)."""
    return value(run, VP_RATE)


def _is_default(source: str) -> bool:
    from sim.neom.catalog import DEFAULT_CATALOG

    return source == DEFAULT_CATALOG.name or Path(source).resolve() == DEFAULT_CATALOG.resolve()


def _field_options(run) -> str:
    manifest = run.manifest
    options = [
        "--players", str(manifest.get("players", 4)),
        "--strategies", ",".join(run.strategy_names),
    ]  # fmt: skip
    source = str(manifest.get("data", {}).get("source", ""))
    if source and not _is_default(source):
        options += ["--catalog", source]
    return shlex.join(options)


def next_step(kind: str, row: dict, run, per_vp: float) -> str:
    """The "next step" text of a flagged ``kind`` (cornerstone or tile) finding, its table
    row ``row`` (name, effect, flag; a cornerstone's ``score_diff``)."""
    name = str(row["tile_name"])
    effect = float(row["effect"])
    words = "too strong" if effect > 0 else "too weak"
    vp = effect / per_vp if per_vp and math.isfinite(per_vp) and per_vp > 0 else math.nan
    parts = [f"{name}"]
    if math.isfinite(vp):
        parts.append(
            f"is about {abs(vp):.1f} VP {words} ({100 * effect:+.1f} pct-pts at this run's "
            f"{100 * per_vp:.1f} pct-pts per VP of score lead"
        )
        lead = row.get("score_diff")
        if kind == "cornerstone" and lead is not None and math.isfinite(float(lead)):
            parts[-1] += f"; its drafters lead by {float(lead):+.1f} VP"
        parts[-1] += ")"
    options = _field_options(run)
    quoted = shlex.quote(name)
    mode = "ban" if effect > 0 else "force"
    parts.append(
        f"- find the value that brings it into the band: `neom balance {quoted} {options}`; "
        f"test it: `neom experiment {KIND_COMMAND[kind]} {quoted} --mode {mode} {options}`"
    )
    return "Next step: " + " ".join(parts) + "."


def next_steps(report, kind: str, table: pl.DataFrame, run) -> list[str]:
    """The next-step lines of the flagged rows of an effect table, also added to their
    findings.json objects (``next_step``, ``vp_equivalent``)."""
    flagged = table.filter(pl.col("flag") != "")
    if flagged.height == 0:
        return []
    per_vp = win_share_per_vp(run)
    lines = []
    texts = {}
    for row in flagged.iter_rows(named=True):
        text = next_step(kind, row, run, per_vp)
        lines.append(text)
        vp = float(row["effect"]) / per_vp if per_vp and math.isfinite(per_vp) else math.nan
        texts[str(row["tile_name"])] = (text, round(vp, 2) if math.isfinite(vp) else None)
    for item in report.items:
        if item["kind"] == kind and "strategy" not in item and item["name"] in texts:
            item["next_step"], item["vp_equivalent"] = texts[item["name"]]
    return lines
