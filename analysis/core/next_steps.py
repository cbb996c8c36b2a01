"""What every game's "What to change first" is made of: the robustness weight of a finding,
the ranking of next steps by expected VP per edit x that weight, the run's exchange rate
between win share and score lead (a finding's VP equivalent when nothing better is known),
the options that name a run's field in a pasted command, the run's data file copied into the
report folder under its digest, and ``tables/next_steps.csv``.

A game's report module builds its steps (dicts with ``kind``, ``name``, ``text``,
``expected_vp``, ``weight``, optionally ``items``, ``first``, ``mark``, ``members``) in its
``add_next_steps`` hook and hands them to :func:`rank_steps` and :func:`write_steps`
(``analysis.neom.next_step``, ``analysis.tangram.findings``).
"""

import math
import shutil

import polars as pl

from analysis.core.batches import Reduction, value
from analysis.core.reduce import CoMoments
from analysis.core.robustness import (
    APPEARS,
    REVERSED,
    ROBUST,
    STRONGER,
    VANISHES,
    WEAKER,
    named_field,
)
from analysis.core.tabulate import EXPECTED, chunk_outcomes

# How much of a measured VP a next step is expected to deliver, by the finding's mark: a
# robust finding holds for both fields, one that vanishes or appears for one field only.
ROBUSTNESS_WEIGHT = {
    ROBUST: 1.0,
    WEAKER: 0.75,
    STRONGER: 0.75,
    VANISHES: 0.5,
    APPEARS: 0.5,
    REVERSED: 0.25,
    None: 0.5,  # not compared (no second field, or too small in one)
}


def rate_moments(outcomes: pl.DataFrame) -> CoMoments:
    """What the exchange rate needs from a chunk's seats (``chunk_outcomes`` rows): a game
    leaves out seats that are no player (Tangram City's random seats) before calling it."""
    return CoMoments.of(outcomes, (), "score_diff", "residual")


def rate_from(seats: CoMoments | None) -> float:
    """The OLS slope of win share above expected on score lead from merged
    :func:`rate_moments` (NaN with fewer than 3 seats or no spread in the lead)."""
    row = seats.frame.row(0, named=True) if seats is not None and seats.frame.height else None
    if row is None or row["n"] < 3:
        return math.nan
    return row["cxy"] / row["cxx"] if row["cxx"] > 0 else math.nan


def _rate_reduce(chunk) -> dict:
    return {"seats": rate_moments(chunk.memo(chunk_outcomes))}


def _rate_finish(stats: dict, run) -> float:
    return rate_from(stats.get("seats"))


# The run's exchange rate between win share and score lead, chunk by chunk.
VP_RATE = Reduction(
    "core.vp_rate", _rate_reduce, _rate_finish, needs=(EXPECTED,), tables=("games", "players")
)


def win_share_per_vp(run) -> float:
    """The run's exchange rate: OLS slope of the seats' win share above expected on their
    score lead, in win share per VP (NaN when the run cannot give one)."""
    return value(run, VP_RATE)


def rank_steps(steps: list[dict]) -> list[dict]:
    """Steps by expected VP per edit x robustness weight (``score``), largest first: a step
    over ``items`` items (a group, the sale-dominated tiles, the failing goods) is one edit per
    item, so it ranks by its VP per item (``expected_vp`` / ``items``), its total breaking
    ties. A step marked ``first`` (a chain no city completes, a rule no seat reaches) ranks
    above every other."""
    for step in steps:
        vp = step.get("expected_vp")
        total = abs(vp) if vp is not None and math.isfinite(vp) else 0.0
        step["score"] = total / max(1, step.get("items", 1)) * step["weight"]
        step["total_score"] = total * step["weight"]
    return sorted(steps, key=lambda s: (not s.get("first"), -s["score"], -s["total_score"]))


def write_steps(report, steps: list[dict]) -> None:
    """``report.steps`` = ``steps`` (ranked), and tables/next_steps.csv when there are any."""
    report.steps = steps
    if not steps:
        return
    report.table(
        "next_steps",
        pl.DataFrame(
            [
                {
                    "rank": i + 1,
                    "kind": s["kind"],
                    "name": s["name"],
                    "members": s.get("members") or "",
                    "expected_vp": s.get("expected_vp"),
                    "vp_basis": s.get("vp_basis"),
                    "robustness": s.get("mark"),
                    "weight": s["weight"],
                    "score": s["score"],
                    "step": s["text"],
                }
                for i, s in enumerate(steps)
            ],
            infer_schema_length=None,
        ),
    )


def data_file(run, prefix: str) -> str | None:
    """The name the run's data snapshot gets in a report folder, ``PREFIX-<digest>.toml``
    (None when the run kept no snapshot): a pasted command names it, not the author's path."""
    data = run.manifest.get("data") or {}
    snapshot = data.get("snapshot")
    if not snapshot or not (run.path / snapshot).is_file():
        return None
    digest = str(data.get("digest", ""))[:12] or "snapshot"
    return f"{prefix}-{digest}.toml"


def copy_data_file(run, out, prefix: str) -> str | None:
    """Copy the run's data snapshot into the report folder ``out`` (once); its name there."""
    name = data_file(run, prefix)
    if name is not None and not (out / name).exists():
        shutil.copyfile(run.path / run.manifest["data"]["snapshot"], out / name)
    return name


def field_options(run, data: list[str] = (), games: bool = True) -> list[str]:
    """The options that name the run's players and field (its shipped name when it is one,
    else one strategy per seat as the run listed them: a strategy on two seats stays on two),
    then ``data`` (the game's data option), then its games and seed."""
    manifest = run.manifest
    players = manifest.get("players", 4)
    players = players[0] if isinstance(players, list) else players
    options = [
        "--players", str(players),
        "--strategies", named_field(run) or ",".join(run.strategy_names),
    ]  # fmt: skip
    options += list(data)
    if games:
        n = int(manifest.get("games", 0))
        n -= n % max(int(players), 1)
        options += ["--games", str(max(n, int(players))), "--seed", str(manifest.get("seed", 1))]
    return options
