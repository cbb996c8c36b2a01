"""The report points to the fix: for each flagged cornerstone or tile, its VP equivalent and the
command that tests or fixes it (``neom balance NAME ...``, ``neom experiment ...``); then every
next step (single items, groups of flags that share a tag and a direction, and the systemic
problems: sale-dominated tiles, cornerstones nobody builds, goods nobody makes) ranked by
expected VP x robustness.

**VP equivalents.** With ``neom report --probe N`` the top N flagged items whose printed VP
scores are played again with their VP -1 and +1 on the run's deals (``vp_probe``): the effect
over that paired slope is "VP on the item (probe)", the item's own exchange rate (a planted +6
VP cornerstone reads 6 +- 1 on real games). Without a probe, a VP printed on a tile or
cornerstone reaches only the seats that *place* it. The owners' (selectors', drafters') score
lead (VP above the mean of the other seats of the game) against the median item's owners' (the
median tile of the generation, the median cornerstone: the same reference the flag reads) is
what the item is worth to them in VP; divided by its placed share (placed / selected, placed /
drafted) it is the VP to take off, or add to, the item itself ("VP on the item"). A planted +6
VP reads 6 on planted tables, but on real games it reads low (4.4 for the +6 cornerstone of
the three-plant catalogue): it assumes the change does not alter who places the item, nor how
the other seats play. Where that figure cannot be had (a Disaster, whose VP goes to no one; no
placements; an owners' lead of the other sign than the flagged effect) the effect is divided by
the run's exchange rate, the slope of the seats' win share above expected on their score lead
fitted over every seat (about 4.5-5 pct-pts per VP), and labelled "score-lead VP": what a whole
seat's lead is worth, not a VP on the item (it reads a tile's plant 17-60% low).

**Commands that reproduce.** Every command names the run's players, field, games and seed, the
lever it moves, and the catalogue by a file copied into the report folder with its digest in
its name (``catalogue-<digest>.toml``): run from the report folder, a pasted command measures
the same catalogue at the same precision, and no path of the author's machine is written.
"""

import math
import shlex

import polars as pl

from analysis.core.batches import value
from analysis.core.next_steps import (  # noqa: F401 (VP_RATE, rank_steps, ...: NEOM's names)
    ROBUSTNESS_WEIGHT,
    VP_RATE,
    copy_data_file,
    data_file,
    rank_steps,
    win_share_per_vp,
)
from analysis.core.next_steps import field_options as core_field_options
from analysis.core.robustness import mark_words
from sim.neom import constants as K

KIND_COMMAND = {"cornerstone": "cornerstone", "tile": "tile", "disaster": "tile"}
HEADLINE_STEPS = 10  # next steps in the headline; tables/next_steps.csv has them all
SCORED_TYPES = K.T_RESIDENTIAL | K.T_PUBLIC  # printed VP scores on these (RULES.md)
BASIS_ITEM = "VP on the item"
BASIS_PROBE = "VP on the item (probe)"
BASIS_LEAD = "score-lead VP"
PROBES = "neom.vp_probes"  # report.cache key: id(run) -> {(kind, name): slope dict}
CATALOGUE_PREFIX = "catalogue"  # catalogue-<digest>.toml in a report folder


def placed_share(kind: str, row: dict) -> float:
    """The share of an item's owners (selectors, drafters) that placed it (NaN if unknown)."""
    if kind == "cornerstone":
        share = row.get("placed_rate")
        return math.nan if share is None else float(share)
    if kind == "tile" and row.get("selected"):
        return float(row.get("placed") or 0) / float(row["selected"])
    return math.nan


def probed_slope(row: dict) -> float:
    """The item's own slope (pct-pts of win share per VP) from a paired +-1 VP probe
    (``vp_probe``: ``row['vp_slope']``), or NaN when none was run or its interval holds 0."""
    probe = row.get("vp_slope")
    if not probe or not all(math.isfinite(probe.get(k, math.nan)) for k in ("slope", "lo")):
        return math.nan
    return float(probe["slope"]) if probe["lo"] > 0 else math.nan


def vp_equivalent(kind: str, row: dict, per_vp: float, effect: str = "effect"):
    """(VP, basis): the effect over the item's own probed slope (``BASIS_PROBE``) when a probe
    measured one; else VP on the item itself (``BASIS_ITEM``: the owners' score lead against
    the median item's, ``lead_vs_median`` from :func:`with_leads`, over its placed share) where
    it can be had and agrees in sign with the effect; else the effect in score-lead VP."""
    x = float(row[effect]) if row.get(effect) is not None else math.nan
    slope = probed_slope(row)
    if math.isfinite(slope) and math.isfinite(x):
        return 100 * x / slope, BASIS_PROBE
    lead = row.get("lead_vs_median")
    share = placed_share(kind, row) if kind in ("tile", "cornerstone") else math.nan
    if (
        lead is not None and math.isfinite(lead) and math.isfinite(share) and share > 0
        and math.isfinite(x) and lead * x > 0
    ):  # fmt: skip
        return lead / share, BASIS_ITEM
    if not (per_vp and math.isfinite(per_vp) and per_vp > 0) or not math.isfinite(x):
        return math.nan, BASIS_LEAD
    return x / per_vp, BASIS_LEAD


def with_leads(kind: str, table: pl.DataFrame, run) -> pl.DataFrame:
    """``lead_vs_median``: the owners' mean score lead minus the median of the tested items'
    (per generation for tiles, as the flag reads them). A cornerstone table has its owners'
    ``score_diff``; a tile's comes from the tile statistics (``tiles.TILES``)."""
    if kind == "disaster" or table.height == 0:
        return table
    frame = table
    if kind == "tile":
        from analysis.neom.tiles import TILES

        stats = value(run, TILES)
        if stats.get("leads") is None or "generation" not in frame.columns:
            return table
        leads = (
            stats["leads"]
            .effect_table(name="owner_lead")
            .select(pl.col("tile").cast(frame["tile"].dtype), "owner_lead")
        )
        frame = frame.join(leads, on="tile", how="left")
        by = ["generation"]
    else:
        if "score_diff" not in frame.columns:
            return table
        frame = frame.with_columns(pl.col("score_diff").alias("owner_lead"))
        by = []
    tested = frame.filter(~pl.col("small")) if "small" in frame.columns else frame
    if by:
        medians = tested.group_by(by).agg(pl.col("owner_lead").median().alias("lead_median"))
        frame = frame.join(medians, on=by, how="left")
    else:
        frame = frame.with_columns(pl.lit(tested["owner_lead"].median()).alias("lead_median"))
    return frame.with_columns(
        (pl.col("owner_lead") - pl.col("lead_median")).alias("lead_vs_median")
    ).drop("owner_lead", "lead_median")


def catalogue_file(run) -> str | None:
    """The name the run's catalogue gets in a report folder (None without a snapshot)."""
    return data_file(run, CATALOGUE_PREFIX)


def copy_catalogue(run, out) -> str | None:
    """Copy the run's catalogue snapshot into the report folder ``out`` (once); its name."""
    return copy_data_file(run, out, CATALOGUE_PREFIX)


def field_options(run, games: bool = True) -> list[str]:
    """The options that name the run's field, catalogue, games and seed."""
    catalogue = catalogue_file(run)
    return core_field_options(run, ["--catalog", catalogue] if catalogue else [], games)


def lever_for(kind: str, row: dict, tables) -> str | None:
    """The lever a next step moves: printed VP where it scores (Residential and Public tiles,
    cornerstones), else the cost when it has one, else the income; a Disaster's levers are its
    protections' costs (``neom balance`` searches them: no ``--lever``)."""
    if kind == "disaster" or tables is None:
        return None
    tile = int(row["tile"])
    if tables.tiles[tile, K.C_TYPES] & SCORED_TYPES:
        return "vp"
    cost = int(tables.req[tile, 0, K.R_COST])
    return "cost" if cost > 0 else "income"


def balance_command(name: str, run, lever: str | None, extra: list[str] = ()) -> str:
    options = field_options(run) + (["--lever", lever] if lever else []) + list(extra)
    return f"neom balance {shlex.quote(name)} {shlex.join(options)}"


def experiment_command(kind: str, name: str, mode: str, run) -> str:
    return (
        f"neom experiment {KIND_COMMAND[kind]} {shlex.quote(name)} --mode {mode} "
        f"{shlex.join(field_options(run))}"
    )


def next_step(kind: str, row: dict, run, per_vp: float, effect: str = "effect") -> str:
    """The "next step" text of a flagged ``kind`` (cornerstone, tile or disaster) finding, its
    table row ``row`` (name, ``effect``, flag; a cornerstone's ``score_diff``)."""
    name = str(row["tile_name"])
    x = float(row[effect])
    words = "too strong" if x > 0 else "too weak"
    vp, basis = vp_equivalent(kind, row, per_vp, effect)
    parts = [f"{name}"]
    if math.isfinite(vp):
        if basis == BASIS_PROBE:
            probe = row["vp_slope"]
            how = (
                f"{100 * x:+.1f} pct-pts at its own {probe['slope']:.1f} pct-pts per VP "
                f"[{probe['lo']:.1f}, {probe['hi']:.1f}], a paired probe of its VP "
                f"{probe['vp'][0]} and {probe['vp'][1]} on {probe['games']:,} of the run's deals"
            )
        elif basis == BASIS_ITEM:
            how = (
                f"{100 * x:+.1f} pct-pts; its owners lead the median's by "
                f"{float(row['lead_vs_median']):+.1f} VP, {100 * placed_share(kind, row):.0f}% "
                "of them placing it"
            )
        else:
            how = (
                f"{100 * x:+.1f} pct-pts at this run's {100 * per_vp:.1f} pct-pts per VP of "
                "score lead"
            )
        parts.append(f"is about {abs(vp):.1f} {basis} {words} ({how}")
        lead = row.get("score_diff")
        if kind == "cornerstone" and lead is not None and math.isfinite(float(lead)):
            parts[-1] += f"; its drafters lead by {float(lead):+.1f} VP"
        parts[-1] += ")"
    mode = "ban" if x > 0 else "force"
    value_words = "the protection cost" if kind == "disaster" else "the value"
    lever = lever_for(kind, row, run.tables)
    parts.append(
        f"- find {value_words} that brings it into the band: "
        f"`{balance_command(name, run, lever)}`; "
        f"test it: `{experiment_command(kind, name, mode, run)}`"
    )
    return "Next step: " + " ".join(parts) + "."


def next_steps(
    report, kind: str, table: pl.DataFrame, run, effect: str = "effect", names=None
) -> list[str]:
    """The next-step lines of the flagged rows of an effect table (or of the rows named in
    ``names``), also added to their findings.json objects (``next_step``, ``vp_equivalent``,
    ``vp_basis``)."""
    # The owners' lead against the median item's: the median over the whole table.
    table = with_leads(kind, table, run)
    if names is None:
        flagged = table.filter(pl.col("flag") != "")
    else:
        flagged = table.filter(pl.col("tile_name").is_in(list(names)))
    if flagged.height == 0:
        return []
    per_vp = win_share_per_vp(run)
    probes = report.cache.get(PROBES, {}).get(id(run), {})
    lines = []
    texts = {}
    for row in flagged.iter_rows(named=True):
        row["vp_slope"] = probes.get((kind, str(row["tile_name"])))
        text = next_step(kind, row, run, per_vp, effect)
        lines.append(text)
        vp, basis = vp_equivalent(kind, row, per_vp, effect)
        texts[str(row["tile_name"])] = (text, round(vp, 2) if math.isfinite(vp) else None, basis)
    for item in report.items:
        if item["kind"] == kind and "strategy" not in item and item["name"] in texts:
            item["next_step"], item["vp_equivalent"], item["vp_basis"] = texts[item["name"]]
    return lines


# --- groups of flags, systemic problems, and the ranked list ---------------------------------

SCHOOL_WORDS = ("school", "university", "college", "academy")
MIN_GROUP = 3  # flags sharing a tag and a direction that make one systemic finding


def tags(tables, tile: int) -> list[str]:
    """A tile's tags, most specific first: power, school (by name), polluting, protection,
    producer, then its types."""
    row = tables.tiles[tile]
    out = []
    if row[K.C_POWER]:
        out.append("power")
    if any(word in tables.tile_names[tile].lower() for word in SCHOOL_WORDS):
        out.append("school")
    if row[K.C_POLLUTING]:
        out.append("polluting")
    if row[K.C_PROTECTS]:
        out.append("protection")
    if row[K.C_PRODUCES]:
        out.append("producer")
    out += [
        name for name, bit in K.TYPE_NAMES.items() if row[K.C_TYPES] & bit and name != "disaster"
    ]
    return out


# A member whose whole interval lies beyond this many times the median size of its group's
# effects stands out: one edit to it moves more than the group's pass (a planted +4 VP tile
# reads +21 pct-pts among residential tiles at about +5), so it stays a single item.
STANDOUT_RATIO = 2.0


def standouts(members: list[dict], ratio: float = STANDOUT_RATIO) -> list[dict]:
    """The members whose 95% interval lies wholly beyond ``ratio`` times the median absolute
    effect of the members (the interval's end nearest zero counts)."""
    sizes = sorted(abs(m["effect"]) for m in members)
    k = len(sizes)
    median = (sizes[(k - 1) // 2] + sizes[k // 2]) / 2
    return [m for m in members if min(abs(m["lo"]), abs(m["hi"])) > ratio * median
            and (m["lo"] > 0 or m["hi"] < 0)]  # fmt: skip


def group_flags(items: list[dict], tables, min_size: int = MIN_GROUP):
    """Split flagged tile findings (dicts with ``tile``, ``direction``, ``effect``, ``lo``,
    ``hi``, ``vp``, ``weight``) into groups sharing a tag and a direction (``min_size`` or
    more members; the largest group first, each item in one group) and the items left. A
    member that stands out of its group (``standouts``) is left single, and joins no group."""
    left = list(items)
    single: list[dict] = []
    groups = []
    while True:
        counts: dict[tuple[str, str], list[dict]] = {}
        for item in left:
            for tag in tags(tables, item["tile"]):
                counts.setdefault((tag, item["direction"]), []).append(item)
        if not counts:
            break
        (tag, direction), members = max(counts.items(), key=lambda kv: len(kv[1]))
        if len(members) < min_size:
            break
        out = {id(m) for m in standouts(members)}
        if out:  # the rest may still make a group, without the standouts
            single += [m for m in members if id(m) in out]
            left = [item for item in left if id(item) not in out]
            continue
        groups.append({"tag": tag, "direction": direction, "members": members})
        chosen = {id(m) for m in members}
        left = [item for item in left if id(item) not in chosen]
    kept = {id(m) for m in single + left}
    return groups, [item for item in items if id(item) in kept]


def group_summary(members: list[dict]) -> dict:
    """The members' mean effect with an interval (their standard errors from their 95%
    intervals, taken as independent), mean VP and mean weight."""
    k = len(members)
    mean = sum(m["effect"] for m in members) / k
    se = math.sqrt(sum(((m["hi"] - m["lo"]) / (2 * 1.96)) ** 2 for m in members)) / k
    vps = [m["vp"] for m in members if m["vp"] is not None and math.isfinite(m["vp"])]
    return {
        "effect": mean,
        "lo": mean - 1.96 * se,
        "hi": mean + 1.96 * se,
        "vp": sum(vps) / len(vps) if vps else math.nan,
        "weight": sum(m["weight"] for m in members) / k,
    }


def mark_text(mark, there: str) -> str:
    return mark_words(mark, there) if there else "one field"
