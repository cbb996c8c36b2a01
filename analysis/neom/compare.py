"""``neom compare``: an A/B design report of two catalogues, or two rules readings, played on
the same deals.

Both sides are played through the runner with the same master seed, game ids, seats and
strategies, so game g of the baseline and game g of the candidate are twins: the same deal
index and the same strategy streams (with identical catalogues and rules they are the same
game). Every comparison is paired on those twins:

- strategies and seats: the mean over games of (candidate - baseline) for the same seat;
- cornerstone and tile effects: each side's effect is a ratio (the group's summed residual
  over its size); the shift's standard error comes from the per-game difference of the two
  ratios' influence terms (delta method), so everything the two sides share cancels. A
  catalogue against itself gives a shift of exactly 0 with a zero-width interval.

All standard errors are cluster-robust over deals (rotated seats replay each deal).
Multiplicity: the items the catalogue diff names as changed are the designer's question
(primary: Holm across them); every other item is a knock-on effect, corrected across all of
them by Benjamini-Hochberg. The report opens with the catalogue diff, then what moved,
ranked by the size of the shift.
"""

import html
import json
import math
import tomllib
from pathlib import Path

import numpy as np

from sim.core.errors import UserError
from sim.neom.constants import VARIANT_NAMES

BASELINE = "baseline"
CANDIDATE = "candidate"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="A/B report: two catalogues (or two rules readings) played on the same deals",
        description="Play a baseline and a candidate (catalogue and/or rules reading) on the "
        "same deals and write a report of what moved (HTML, Markdown, CSV, JSON).",
    )
    parser.add_argument("--baseline", default=None, help="baseline catalogue (default: built-in)")
    parser.add_argument(
        "--candidate", default=None, help="candidate catalogue (default: the baseline's)"
    )
    parser.add_argument(
        "--baseline-rules",
        default="",
        metavar="NAME=VALUE,...",
        help="rules options of the baseline, e.g. neighborhoods=any or "
        "neighborhood_through_any=1 (names or flags; labels or stored values)",
    )
    parser.add_argument(
        "--candidate-rules",
        default="",
        metavar="NAME=VALUE,...",
        help="rules options of the candidate, e.g. neighborhoods=residential",
    )
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=2000, help="games per side (2000)")
    parser.add_argument(
        "--strategies", required=True, help="one strategy per seat, comma-separated"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--variant", default="standard", choices=tuple(VARIANT_NAMES))
    parser.add_argument("--workers", type=int, default=None, help="worker processes (all)")
    parser.add_argument("--out", default=None, help="report folder (default: reports/compare)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier comparison (what its listing names) and the --json file",
    )
    group.add_argument("--resume", action="store_true", help="continue an interrupted comparison")
    parser.add_argument(
        "--level", type=float, default=0.05, help="adjusted p-value below which to flag (0.05)"
    )
    parser.add_argument(
        "--band", type=float, default=2.0, help="practical band of the effects, pct-pts (2)"
    )
    parser.add_argument("--min-n", type=int, default=100, help="minimum seats to test (100)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the items here")
    parser.set_defaults(func=run_compare)


# --- rules readings ---------------------------------------------------------------------------


def parse_rules(text: str, option_name: str) -> dict:
    """``NAME=VALUE,...`` -> {option name: stored value}. NAME is an option's name
    (``neighborhood_through_any``) or flag (``neighborhoods``); VALUE a label (``any``) or a
    stored value (``1``)."""
    from sim.neom import RULE_OPTIONS

    rules = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        options = {o.name: o for o in RULE_OPTIONS} | {o.flag.lstrip("-"): o for o in RULE_OPTIONS}
        option = options.get(name.replace("_", "-")) or options.get(name)
        if not sep or option is None:
            known = ", ".join(
                sorted({o.name for o in RULE_OPTIONS} | {o.flag[2:] for o in RULE_OPTIONS})
            )
            raise UserError(f"{option_name} {part!r}: expected NAME=VALUE with NAME one of {known}")
        if option.name in rules:
            raise UserError(
                f"{option_name} {text!r}: {option.flag.lstrip('-')} ({option.name}) given twice"
            )
        if value in option.choices:
            rules[option.name] = option.choices[value]
        elif value.lstrip("-").isdigit() and int(value) in option.choices.values():
            rules[option.name] = int(value)
        else:
            raise UserError(
                f"{option_name} {part!r}: {name} takes {', '.join(option.choices)} "
                f"(or {', '.join(str(v) for v in option.choices.values())})"
            )
    return rules


# --- the catalogue diff -------------------------------------------------------------------------


def _catalog_entries(raw: bytes) -> dict:
    from sim.core.errors import decode_text

    data = tomllib.loads(decode_text(raw, "catalogue"))
    entries = {}
    for section in ("tiles", "goods", "boards"):
        for entry in data.get(section, []):
            entries[(section[:-1], str(entry.get("name", "?")))] = entry
    return entries


def catalog_diff(base_raw: bytes, cand_raw: bytes) -> list[dict]:
    """What the candidate catalogue changes, by name: one row per added, removed or changed
    tile, good or board, with each changed field (``before -> after``)."""
    if base_raw == cand_raw:
        return []
    before, after = _catalog_entries(base_raw), _catalog_entries(cand_raw)
    rows = []
    for key in sorted(set(before) | set(after)):
        kind, name = key
        if key not in after:
            rows.append({"kind": kind, "name": name, "change": "removed", "fields": ""})
        elif key not in before:
            rows.append({"kind": kind, "name": name, "change": "added", "fields": ""})
        elif before[key] != after[key]:
            fields = sorted(set(before[key]) | set(after[key]))
            changed = [
                f"{f}: {before[key].get(f, '–')} → {after[key].get(f, '–')}"
                for f in fields
                if before[key].get(f) != after[key].get(f)
            ]
            rows.append(
                {"kind": kind, "name": name, "change": "changed", "fields": "; ".join(changed)}
            )
    return rows


# --- paired shifts ----------------------------------------------------------------------------


def _per_game(long, key: str, value: str, side: str):
    """Per (game, item): the sum of ``value`` over the item's rows and their number."""
    import polars as pl

    # Sorted and order-kept, so the same rows always sum in the same order (a catalogue
    # against itself must give exactly 0, not a rounding error).
    long = long.filter(pl.col(value).is_not_null()).sort("game_id", key, value)
    return long.group_by("game_id", key, maintain_order=True).agg(
        pl.col(value).cast(pl.Float64).sum().alias(f"s_{side}"),
        pl.len().cast(pl.Float64).alias(f"k_{side}"),
    )


def shift_coefficients(totals_b, totals_c, n_games: int, key: str):
    """Per item, from each side's totals (``key``, ``s`` = summed value, ``k`` = rows): the
    sides' effects (s / k) and the coefficients of their influence per game, (s_g - effect
    k_g) / mean k = alpha s_g + beta k_g (alpha = 1 / mean k, beta = -effect / mean k; both 0
    for a side without the item, whose influence is then 0)."""
    import polars as pl

    both = totals_b.rename({"s": "s_b", "k": "k_b"}).join(
        totals_c.rename({"s": "s_c", "k": "k_c"}), on=key, how="full", coalesce=True
    )
    both = both.with_columns(pl.col("s_b", "k_b", "s_c", "k_c").cast(pl.Float64).fill_null(0.0))
    columns = []
    for side in ("b", "c"):
        s, k = pl.col(f"s_{side}"), pl.col(f"k_{side}")
        effect = pl.when(k > 0).then(s / k).otherwise(float("nan"))
        columns += [
            effect.alias(f"effect_{side}"),
            pl.when(k > 0).then(n_games / k).otherwise(0.0).alias(f"alpha_{side}"),
            pl.when(k > 0).then(-(s / k) * n_games / k).otherwise(0.0).alias(f"beta_{side}"),
        ]
    return both.with_columns(columns)


def cluster_squares(base_long, cand_long, deals, key: str, value: str, coefficients):
    """Per item (a Sums, merged over chunks of whole deals): the deals where it appears on
    either side (``clusters``) and the sums over those deals of each side's influence squared
    (``q_b``, ``q_c``) and of the candidate's minus the baseline's (``q_shift``)."""
    import polars as pl

    from analysis.core.reduce import Sums

    both = (
        _per_game(base_long, key, value, "b")
        .join(_per_game(cand_long, key, value, "c"), on=["game_id", key], how="full",
              coalesce=True)
        .fill_null(0)
        .join(deals, on="game_id", how="left")
        .sort(key, "game_id")
    )  # fmt: skip
    per_deal = both.group_by(key, "deal", maintain_order=True).agg(
        pl.col("s_b", "k_b", "s_c", "k_c").sum()
    )
    influence = per_deal.join(
        coefficients.select(key, "alpha_b", "beta_b", "alpha_c", "beta_c"), on=key, how="left"
    ).select(
        key,
        (pl.col("alpha_b") * pl.col("s_b") + pl.col("beta_b") * pl.col("k_b")).alias("i_b"),
        (pl.col("alpha_c") * pl.col("s_c") + pl.col("beta_c") * pl.col("k_c")).alias("i_c"),
    )
    return Sums.of(
        influence,
        key,
        pl.len().alias("clusters"),
        (pl.col("i_b") ** 2).sum().alias("q_b"),
        (pl.col("i_c") ** 2).sum().alias("q_c"),
        ((pl.col("i_c") - pl.col("i_b")) ** 2).sum().alias("q_shift"),
    )


def shift_table(coefficients, squares, n_games: int, n_clusters: int, key: str):
    """Per item: ``effect_b``, ``n_b``, ``se_b``, the same for c, ``shift`` (c - b, where
    both sides have the item) and ``shift_se`` (paired, CR1 over deals), ``shift_lo``/``_hi``
    (Student t on ``n_clusters`` - 1 degrees of freedom) and ``shift_p``, sorted by item."""
    import polars as pl

    from analysis.core.stats import t_quantile, t_two_sided_p

    frame = coefficients.join(squares.table(), on=key, how="left").sort(key)
    g = frame["clusters"].fill_null(0).to_numpy().astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(g >= 2, g / (g - 1), np.nan)

        def se(column):
            return np.sqrt(scale * frame[column].fill_null(0.0).to_numpy()) / n_games

        k_b, k_c = frame["k_b"].to_numpy(), frame["k_c"].to_numpy()
        both = (k_b > 0) & (k_c > 0)
        shift = np.where(both, frame["effect_c"].to_numpy() - frame["effect_b"].to_numpy(),
                         np.nan)  # fmt: skip
        shift_se = np.where(both, se("q_shift"), np.nan)
        statistic = np.where(
            shift_se > 0,
            shift / np.where(shift_se > 0, shift_se, 1.0),
            np.where(shift == 0, 0.0, np.inf),
        )
    half = float(t_quantile(n_clusters - 1)) * shift_se
    return frame.select(
        key,
        "effect_b",
        pl.col("k_b").cast(pl.Int64).alias("n_b"),
        pl.Series("se_b", se("q_b")),
        "effect_c",
        pl.col("k_c").cast(pl.Int64).alias("n_c"),
        pl.Series("se_c", se("q_c")),
        pl.Series("shift", shift),
        pl.Series("shift_se", shift_se),
        pl.Series("shift_lo", shift - half),
        pl.Series("shift_hi", shift + half),
        pl.Series("shift_p", t_two_sided_p(statistic, n_clusters - 1)),
    )


def paired_effect_shifts(base_long, cand_long, games, key: str = "tile_name", value="residual"):
    """Per item: each side's effect (mean ``residual`` over its group's seats) and the shift
    candidate - baseline with a paired, cluster-robust interval (delta method on the two
    ratio estimators, differenced game by game).

    ``*_long``: one row per (game, seat in the group) with ``game_id``, ``key``, ``residual``;
    ``games``: ``game_id`` -> ``deal`` for every game of the run (the twins share ids).
    Returns ``key``, ``effect_b``, ``n_b``, ``se_b``, ``effect_c``, ``n_c``, ``se_c``,
    ``shift``, ``shift_se``, ``shift_lo``, ``shift_hi``, ``shift_p``, sorted by ``key``: the
    chunk-wise comparison's steps (:func:`shift_coefficients`, :func:`cluster_squares`,
    :func:`shift_table`) on the whole frames.
    """
    import polars as pl

    games = games.select("game_id", "deal")
    totals = [
        _per_game(long, key, value, "x")
        .group_by(key)
        .agg(pl.col("s_x").sum().alias("s"), pl.col("k_x").sum().alias("k"))
        for long in (base_long, cand_long)
    ]
    coefficients = shift_coefficients(*totals, games.height, key)
    squares = cluster_squares(base_long, cand_long, games, key, value, coefficients)
    return shift_table(coefficients, squares, games.height, games["deal"].n_unique(), key)


def _group_stats(base, cand, group: str, deals) -> dict:
    """The statistics of :func:`paired_by_group` (mergeable over chunks of whole deals)."""
    import polars as pl

    from analysis.core.reduce import ClusterMoments, Sums

    joined = base.join(cand, on=["game_id", "seat"], suffix="_b").join(deals, on="game_id")
    frame = joined.with_columns(
        (pl.col("win_share_b") - pl.col("win_share")).alias("win_d"),
        (pl.col("total_b") - pl.col("total")).cast(pl.Float64).alias("score_d"),
    )
    return {
        f"{group}.means": Sums.of(
            frame,
            group,
            pl.len().alias("n"),
            pl.col("win_share").sum().alias("win_base"),
            pl.col("win_share_b").sum().alias("win_cand"),
            pl.col("total").sum().alias("score_base"),
            pl.col("total_b").sum().alias("score_cand"),
        ),
        f"{group}.win": ClusterMoments.of(frame, [group], "win_d", None),
        f"{group}.score": ClusterMoments.of(frame, [group], "score_d", None),
    }


def _group_table(stats: dict, group: str):
    import polars as pl

    means = ("win_base", "win_cand", "score_base", "score_cand")
    out = (
        stats[f"{group}.means"]
        .table()
        .with_columns(pl.col(means) / pl.col("n"))
        .select(group, "n", *means)
    )
    for name in ("win", "score"):
        table = stats[f"{group}.{name}"].effect_table(name=f"{name}_shift")
        out = out.join(
            table.select(
                group,
                f"{name}_shift",
                f"{name}_shift_lo",
                f"{name}_shift_hi",
                pl.col(f"{name}_shift_p0").alias(f"{name}_shift_p"),
            ),  # fmt: skip
            on=group,
        )
    return out.sort(group)


def paired_by_group(base, cand, group: str, games):
    """Per ``group`` value (strategy or seat): the mean over games of candidate - baseline win
    share and total score of the same seat, cluster-robust by deal."""
    return _group_table(_group_stats(base, cand, group, games.select("game_id", "deal")), group)


def _item_rows(chunk) -> dict:
    """A chunk's cornerstone (drafted) and tile (selected) seat rows with residuals, by
    kind: ``game_id``, ``tile_name``, ``residual``, ``score_diff``."""
    from analysis.neom import cornerstones, tiles

    columns = ["game_id", "tile_name", "residual", "score_diff"]
    out = {"cornerstone": chunk.memo(cornerstones.chunk_drafted)}
    if chunk.events is not None:
        out["tile"] = tiles.selected_rows(chunk)
    return {k: chunk.info.name_tiles(v).select(columns) for k, v in out.items()}


# Each kind's reduction, and its statistics of the residual and the score lead.
_TOTALS = {"cornerstone": ("neom.cornerstones", {"residual": "effects", "score_diff": "leads"}),
           "tile": ("neom.tiles", {"residual": "effects", "score_diff": "leads"})}  # fmt: skip


def _coefficients(values_b: dict, values_c: dict, info_b, info_c) -> dict:
    """Per (kind, value): :func:`shift_coefficients` from each run's own reductions."""
    import polars as pl

    n_games = values_b["neom.cornerstones"]["games"].value("games")
    out = {}
    for kind, (reduction, names) in _TOTALS.items():
        if not values_b.get(reduction) or not values_c.get(reduction):
            continue
        for value, name in names.items():
            totals = [
                info.name_tiles(values[reduction][name].frame).select(
                    "tile_name", pl.col("sum").alias("s"), pl.col("n").alias("k")
                )
                for values, info in ((values_b, info_b), (values_c, info_c))
            ]
            out[(kind, value)] = shift_coefficients(*totals, n_games, "tile_name")
    return out


def _compare_reduce(chunks) -> dict:
    """Twin chunks of the baseline and the candidate: everything the comparison reads."""
    import polars as pl

    from analysis.core.reduce import Sums
    from analysis.core.tabulate import chunk_deals

    base, cand = chunks
    deals = base.memo(chunk_deals)
    columns = ["game_id", "seat", "strategy_name", "win_share", "total"]
    players = base.players.select(columns), cand.players.select(columns)
    out = {
        "deals": Sums.of(deals, (), pl.col("deal").n_unique().alias("deals")),
        **_group_stats(*players, "strategy_name", deals),
        **_group_stats(*players, "seat", deals),
    }
    rows = _item_rows(base), _item_rows(cand)
    coefficients = _coefficients(base.values, cand.values, base.info, cand.info)
    for (kind, value), table in coefficients.items():
        out[f"{kind}.{value}"] = cluster_squares(
            rows[0][kind], rows[1][kind], deals, "tile_name", value, table
        )
    return out


def _paired_stats(base, cand, execution=None) -> dict:
    """The merged statistics of the two twin runs, read chunk by chunk side by side (kept on
    the baseline run for the candidate it was computed with), and the shift coefficients."""
    from analysis.core.batches import Reduction, analyse, run_info
    from analysis.neom import cornerstones, tiles

    key = f"neom.compare|{cand.path}"
    if key not in base.cache:
        needs = (cornerstones.CORNERSTONES, tiles.TILES)
        reduction = Reduction("neom.compare", _compare_reduce, needs=needs)
        stats = analyse((base, cand), [reduction], execution)[reduction.name]
        values = [{n.name: run.cache[n.name] for n in needs} for run in (base, cand)]
        stats["coefficients"] = _coefficients(*values, run_info(base), run_info(cand))
        stats["games"] = values[0][cornerstones.CORNERSTONES.name]["games"].value("games")
        base.cache[key] = stats
    return base.cache[key]


def _long_tables(run):
    """Cornerstone (drafted) and tile (selected) seat-level rows with residuals."""

    from analysis.neom import cornerstones, tiles

    out = {"cornerstone": run.name_tiles(cornerstones.drafted_long(run).collect())}
    if run.events is not None:
        selected, _, _ = tiles._seat_groups(run, None)
        out["tile"] = run.name_tiles(selected)
    return {k: v.select("game_id", "tile_name", "residual", "score_diff") for k, v in out.items()}


def _pts(x, lo=None, hi=None) -> str:
    from analysis.core.report import pts

    return pts(x, lo, hi)


def comparison_items(base, cand, report, changed_names: set[str]):
    """Every compared item as a findings row (kind, name, metric, effect, lo, hi, n, flag,
    baseline, candidate, shift, shift_lo, shift_hi, shift_q, primary)."""
    import polars as pl

    from analysis.core.stats import adjust
    from analysis.neom import cornerstones, tiles

    stats = _paired_stats(base, cand)
    n_games, n_deals = stats["games"], stats["deals"].value("deals")
    args = (report.correction, report.level, report.band, report.min_n)
    tables = {"cornerstone": (cornerstones.cornerstone_table(base, *args),
                              cornerstones.cornerstone_table(cand, *args))}  # fmt: skip
    base_tiles, cand_tiles = tiles.tile_table(base, *args), tiles.tile_table(cand, *args)
    if base_tiles is not None and cand_tiles is not None:
        tables["tile"] = (base_tiles, cand_tiles)
    metric = {"cornerstone": "win_share_above_expected_drafted",
              "tile": "win_share_above_expected_selected"}  # fmt: skip
    frames = []
    for kind, (tb, tc) in tables.items():
        shifts, leads = (
            shift_table(stats["coefficients"][(kind, value)], stats[f"{kind}.{value}"],
                        n_games, n_deals, "tile_name")
            # The same groups' score lead (VP over the mean of the other seats): a second,
            # far more sensitive measure of "did the change matter" for the items the diff
            # changed.
            for value in ("residual", "score_diff")
        )  # fmt: skip
        leads = leads.select(
            "tile_name",
            *(pl.col(c).alias(f"lead_{c}") for c in ("shift", "shift_lo", "shift_hi", "shift_p")),
            pl.col("effect_b").alias("lead_b"),
            pl.col("effect_c").alias("lead_c"),
        )
        keep = ["tile_name", "n", "effect", "effect_lo", "effect_hi", "flag"]
        frame = (
            shifts.join(leads, on="tile_name", how="left")
            .join(tb.select(keep), on="tile_name", how="left")
            .join(tc.select(keep), on="tile_name", how="left", suffix="_cand")
            .with_columns(pl.lit(kind).alias("kind"), pl.lit(metric[kind]).alias("metric"))
        )
        frames.append(frame)
    items = pl.concat(frames, how="diagonal_relaxed")
    primary = items["tile_name"].is_in(list(changed_names)).to_numpy()
    p = items["shift_p"].to_numpy().astype(np.float64)
    lead_p = items["lead_shift_p"].to_numpy().astype(np.float64)
    q = np.full(p.shape, math.nan)
    lead_q = np.full(p.shape, math.nan)
    if primary.any():
        # The designer's question: both measures of every changed item, Holm together.
        both = adjust(np.concatenate([p[primary], lead_p[primary]]), "holm")
        q[primary], lead_q[primary] = both[: primary.sum()], both[primary.sum() :]
    if (~primary).any():
        q[~primary] = adjust(p[~primary], "bh")
    return items.with_columns(
        pl.Series("shift_q", q), pl.Series("lead_shift_q", lead_q), pl.Series("primary", primary)
    )


def _json_items(items, strategies, seats, data_label: str) -> list[dict]:
    from analysis.core.report import clean

    out = []
    for r in items.iter_rows(named=True):
        item = {
            "kind": r["kind"], "name": r["tile_name"], "metric": r["metric"],
            "effect": clean(r["effect_cand"]), "lo": clean(r["effect_lo_cand"]),
            "hi": clean(r["effect_hi_cand"]), "n": clean(r["n_cand"]),
            "flag": r["flag_cand"] or None,
            "baseline": clean(r["effect_b"]), "candidate": clean(r["effect_c"]),
            "shift": clean(r["shift"]), "shift_lo": clean(r["shift_lo"]),
            "shift_hi": clean(r["shift_hi"]), "shift_q": clean(r["shift_q"]),
        }  # fmt: skip
        out.append(item)
    for kind, frame, column in (("strategy", strategies, "strategy_name"), ("seat", seats, "seat")):
        for r in frame.iter_rows(named=True):
            out.append({
                "kind": kind, "name": str(r[column]), "metric": "win_share",
                "effect": clean(r["win_cand"]), "lo": None, "hi": None, "n": clean(r["n"]),
                "flag": None, "baseline": clean(r["win_base"]), "candidate": clean(r["win_cand"]),
                "shift": clean(r["win_shift"]), "shift_lo": clean(r["win_shift_lo"]),
                "shift_hi": clean(r["win_shift_hi"]), "shift_q": clean(r.get("win_shift_q")),
            })  # fmt: skip
    if data_label:
        for item in out:
            item["data"] = data_label
    return out


def build_comparison(
    base_path,
    cand_path,
    out,
    level: float = 0.05,
    band: float | None = None,
    min_n: int | None = None,
    json_path=None,
    execution=None,
) -> Path:
    """Write the A/B report of two run folders played on the same deals; returns index.html.
    ``execution``: where the twin runs are read, chunk by chunk side by side
    (``analysis.core.batches``)."""
    import polars as pl

    from analysis.core.batches import analyse
    from analysis.core.load import open_run
    from analysis.core.report import CSS, Report, html_table, p_cell, pct, readings
    from analysis.core.stats import DEFAULT_BAND, DEFAULT_MIN_N, adjust

    base, cand = open_run(base_path), open_run(cand_path)
    same = ("seed", "games", "players", "seats", "strategies")
    for key in same:
        if base.manifest.get(key) != cand.manifest.get(key):
            raise UserError(
                f"{base_path} and {cand_path}: not played on the same deals ({key} differs)"
            )
    out = Path(out)
    for folder in ("figures", "tables"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    reconstructed = base.reconstructed or cand.reconstructed
    label = ""
    if reconstructed:
        label = str((base if base.reconstructed else cand).manifest["data"].get("label", "")) or (
            "RECONSTRUCTED catalogue"
        )
    report = Report(
        out, "bh", level, f"Benjamini-Hochberg adjusted p < {level:g}",
        DEFAULT_BAND if band is None else band, DEFAULT_MIN_N if min_n is None else min_n, label,
    )  # fmt: skip

    # 1. What changed.
    diff = catalog_diff(
        (base.path / "catalog.toml").read_bytes(), (cand.path / "catalog.toml").read_bytes()
    )
    base_rules, cand_rules = readings(base), readings(cand)
    rule_changes = [(b, c) for b, c in zip(base_rules, cand_rules, strict=False) if b != c]
    changed_names = {row["name"] for row in diff if row["kind"] == "tile"}

    # 2. Paired comparisons, both runs read chunk by chunk side by side (each run's own
    # tables first).
    from analysis.neom.report import reductions

    for run in (base, cand):
        analyse(run, reductions(run), execution)
    stats = _paired_stats(base, cand, execution)
    strategies = _group_table(stats, "strategy_name")
    seats = _group_table(stats, "seat")
    for frame_name in ("strategies", "seats"):
        frame = strategies if frame_name == "strategies" else seats
        q = adjust(frame["win_shift_p"].to_numpy().astype(np.float64), "holm")
        frame = frame.with_columns(pl.Series("win_shift_q", q))
        if frame_name == "strategies":
            strategies = frame
        else:
            seats = frame
    items = comparison_items(base, cand, report, changed_names)

    moved = items.filter(pl.col("shift_q") < level).sort(pl.col("shift").abs(), descending=True)
    findings = []
    if diff:
        findings.append(
            f"The candidate catalogue changes {len(diff)} entr{'y' if len(diff) == 1 else 'ies'}: "
            + "; ".join(
                f"{r['name']} ({r['change']}{': ' + r['fields'] if r['fields'] else ''})"
                for r in diff[:6]
            )  # fmt: skip
            + (" ..." if len(diff) > 6 else "")
        )
    for before, after in rule_changes:
        findings.append(f"Rules reading: {before} → {after}.")
    if not diff and not rule_changes:
        findings.append("Baseline and candidate are the same catalogue and rules: every shift "
                        "must be exactly 0.")  # fmt: skip
    n_primary = int(items["primary"].sum())
    tested = int(items["shift_q"].is_not_nan().sum())
    for r in items.filter(pl.col("primary")).iter_rows(named=True):
        moved_win, moved_lead = r["shift_q"] < level, r["lead_shift_q"] < level
        verdict = (
            "moved" if moved_win else "its score lead moved" if moved_lead
            else "no significant change"
        )  # fmt: skip
        findings.append(
            f"Changed {r['kind']} {r['tile_name']}: {verdict}; win share above expected "
            f"{_pts(r['effect_b'])} → {_pts(r['effect_c'])}, shift "
            f"{_pts(r['shift'], r['shift_lo'], r['shift_hi'])} (Holm q = {r['shift_q']:.3g}); "
            f"score lead {r['lead_b']:+.2f} → {r['lead_c']:+.2f} VP, shift "
            f"{r['lead_shift']:+.2f} [{r['lead_shift_lo']:+.2f}, {r['lead_shift_hi']:+.2f}] VP "
            f"(Holm q = {r['lead_shift_q']:.3g}); n = {r['n_b']} → {r['n_c']}."
        )
    knock_on = moved.filter(~pl.col("primary"))
    findings.append(
        f"{knock_on.height} other item{'s' if knock_on.height != 1 else ''} moved significantly "
        f"(Benjamini-Hochberg across {tested - n_primary} items, q < {level:g})"
        + (": " + "; ".join(
            f"{r['kind']} {r['tile_name']} {_pts(r['shift'], r['shift_lo'], r['shift_hi'])}"
            for r in knock_on.head(8).iter_rows(named=True)) if knock_on.height else "")
        + "."
    )  # fmt: skip
    moved_strategies = strategies.filter(pl.col("win_shift_q") < level)
    findings += [
        f"Strategy {r['strategy_name']}: win share {pct(r['win_base'])} → {pct(r['win_cand'])}, "
        f"{_pts(r['win_shift'], r['win_shift_lo'], r['win_shift_hi'])} (paired)."
        for r in moved_strategies.iter_rows(named=True)
    ] or ["No strategy's win share moved significantly (paired, Holm across strategies)."]
    report.findings.extend(findings)

    # 3. Sections.
    report.table("catalog_diff", pl.DataFrame(diff, schema=["kind", "name", "change", "fields"]))
    report.table("items", items)
    report.table("strategies", strategies)
    report.table("seats", seats)
    diff_html = (
        html_table(
            pl.DataFrame(diff),
            [
                ("kind", lambda r: r["kind"]),
                ("name", lambda r: r["name"]),
                ("change", lambda r: r["change"]),
                ("fields", lambda r: r["fields"]),
            ],
        )  # fmt: skip
        if diff
        else "<p>The two catalogues are identical.</p>"
    )
    rules_html = "".join(
        f"<li>{html.escape(b)} → <b>{html.escape(c)}</b></li>" for b, c in rule_changes
    )
    report.section(
        "diff",
        "What changed",
        [
            diff_html,
            f"<p>Rules readings that differ:</p><ul>{rules_html}</ul>"
            if rules_html
            else "<p>Both sides use the same rules readings.</p>",
        ],  # fmt: skip
    )
    ranked = items.filter(pl.col("shift").is_not_nan()).sort(
        pl.col("primary"), pl.col("shift").abs(), descending=True
    )
    shown = ranked.filter((pl.col("shift_q") < level) | pl.col("primary")).head(40)
    if shown.height == 0:
        shown = ranked.head(10)
    report.section(
        "moved",
        "What moved, largest first",
        [
            "<p>Shift = candidate effect − baseline effect (win share above expected, pct-pts), "
            "paired game by game on the twin deals, 95% interval cluster-robust over deals. "
            "Changed items (from the diff) are tested first, Holm-corrected among themselves; "
            "every other item is Benjamini-Hochberg-corrected across all of them. Effects on "
            f"either side follow the balance report ({html.escape(report.band_words())}).</p>",
            report.figure(
                "shifts",
                _forest(shown),
                "shift forest plot",
            ),
            html_table(
                shown,
                [
                    ("kind", lambda r: r["kind"] + (" (changed)" if r["primary"] else "")),
                    ("name", lambda r: r["tile_name"]),
                    ("baseline effect (n)", lambda r: f"{_pts(r['effect_b'])} ({r['n_b']})"),
                    ("candidate effect (n)", lambda r: f"{_pts(r['effect_c'])} ({r['n_c']})"),
                    ("shift [95% CI]", lambda r: _pts(r["shift"], r["shift_lo"], r["shift_hi"])),
                    ("q", p_cell("shift_q")),
                    (
                        "flag before → after",
                        lambda r: f"{r['flag'] or '–'} → {r['flag_cand'] or '–'}",
                    ),
                ],
            ),
        ],
    )
    for name, frame, column in (
        ("strategies", strategies, "strategy_name"),
        ("seats", seats, "seat"),
    ):
        report.section(
            name,
            name.capitalize(),
            [
                "<p>Paired: the same game and seat on both sides (candidate − baseline), "
                "cluster-robust over deals; q: Holm across the rows.</p>",
                html_table(
                    frame,
                    [
                        (column.split("_")[0], lambda r, c=column: str(r[c])),
                        ("pairs", lambda r: r["n"]),
                        (
                            "win share before → after",
                            lambda r: f"{pct(r['win_base'])} → {pct(r['win_cand'])}",
                        ),
                        (
                            "Δ win share [95% CI]",
                            lambda r: _pts(r["win_shift"], r["win_shift_lo"], r["win_shift_hi"]),
                        ),
                        ("q", lambda r: f"{r['win_shift_q']:.3g}"),
                        (
                            "score before → after",
                            lambda r: f"{r['score_base']:.1f} → {r['score_cand']:.1f}",
                        ),
                        (
                            "Δ score (VP) [95% CI]",
                            lambda r: (
                                f"{r['score_shift']:+.2f} "
                                f"[{r['score_shift_lo']:+.2f}, {r['score_shift_hi']:+.2f}]"
                            ),
                        ),
                    ],
                ),  # fmt: skip
            ],
        )

    json_items = _json_items(items, strategies, seats, label)
    (out / "findings.json").write_text(json.dumps(json_items, indent=1) + "\n", encoding="utf-8")
    if json_path is not None:
        Path(json_path).write_text(json.dumps(json_items, indent=1) + "\n", encoding="utf-8")

    identity = [
        ("baseline", f"{base.data_name} ({base.path})"),
        ("candidate", f"{cand.data_name} ({cand.path})"),
        ("players / games / seed", f"{base.manifest['players']} / {base.manifest['games']} / "
         f"{base.manifest['seed']}"),
        ("strategies", ", ".join(base.strategy_names)),
        ("baseline rules", "; ".join(base_rules)),
        ("candidate rules", "; ".join(cand_rules)),
    ]  # fmt: skip
    title = f"NEOM A/B comparison: {base.data_name} vs {cand.data_name}"
    notice = (
        '<p class="notice">RECONSTRUCTED catalogue involved: findings describe the '
        "reconstruction.</p>"
        if reconstructed
        else ""
    )
    rows = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in identity
    )
    nav = "".join(f'<a href="#{key}">{html.escape(t)}</a>' for key, t, _ in report.sections)
    body = "".join(
        f'<h2 id="{key}">{html.escape(t)}</h2>' + "".join(parts)
        for key, t, parts in report.sections
    )
    listed = "".join(f"<li>{html.escape(f)}</li>" for f in report.findings)
    page = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}'
        f"</title><style>{CSS}</style></head><body><h1>{html.escape(title)}</h1>{notice}"
        f'<table>{rows}</table><h2 id="findings">What changed and what moved</h2>'
        f'<ul class="findings">{listed}</ul><nav>{nav}</nav>{body}</body></html>'
    )
    summary = [f"# {title}", ""] + (["**RECONSTRUCTED catalogue involved.**", ""] if label else [])
    summary += [f"- {k}: {v}" for k, v in identity]
    summary += ["", "## What changed and what moved", ""] + [f"- {f}" for f in findings]
    (out / "summary.md").write_text("\n".join(summary) + "\n", encoding="utf-8")
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def _forest(shown):
    import polars as pl

    from analysis.core import figures

    frame = shown.select(
        (pl.col("kind") + ": " + pl.col("tile_name")).alias("label"),
        (pl.col("shift") * 100).alias("shift"),
        (pl.col("shift_lo") * 100).alias("shift_lo"),
        (pl.col("shift_hi") * 100).alias("shift_hi"),
    ).with_columns(pl.col("shift_lo").fill_nan(None).fill_null(pl.col("shift")),
                   pl.col("shift_hi").fill_nan(None).fill_null(pl.col("shift")))  # fmt: skip
    return figures.forest(
        frame, "label", "shift", "Shift of the effect, candidate − baseline (95% CI)", "pct-pts"
    )


def _config(args, catalog, rules: dict, out: Path):
    from sim.core.runner import RunConfig
    from sim.core.strategies import split_strategies

    # Each side's run resumes (a new folder starts, a complete one is not played again): the
    # comparison's own listing decides what is continued or replaced (run_compare).
    return RunConfig(
        out=out,
        strategies=split_strategies(args.strategies),
        players=args.players,
        games=args.games,
        seed=args.seed,
        data=Path(catalog) if catalog else None,
        rules={"variant": VARIANT_NAMES[args.variant], **rules},
        workers=args.workers,
        events=True,  # tile statistics come from the event log
        resume=True,
        progress=False,
        command="neom compare",
    )


def _catalogue_digest(path) -> str:
    """What a comparison's catalogue option stands for in its listing: the file's content."""
    import hashlib

    if path is None:
        return "built-in"
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise UserError(f"{path}: cannot read the catalogue ({exc.strerror})") from None


def compare_parameters(args, base_rules: dict, cand_rules: dict, candidate) -> dict:
    """Everything a comparison's result depends on, by option: recorded in its listing, so
    that ``--resume`` continues only the same comparison."""
    from sim.core.strategies import split_strategies

    return {
        "--baseline": _catalogue_digest(args.baseline),
        "--candidate": _catalogue_digest(candidate),
        "--baseline-rules": base_rules,
        "--candidate-rules": cand_rules,
        "--players": args.players,
        "--games": args.games,
        "--strategies": list(split_strategies(args.strategies)),
        "--seed": args.seed,
        "--variant": args.variant,
        "--level": args.level,
        "--band": args.band,
        "--min-n": args.min_n,
    }


def run_compare(args) -> int:
    import sys

    from analysis.core.batches import Execution
    from sim.core.commands.options import check_min_n, check_players
    from sim.core.outputs import (
        check_outside,
        claim_file,
        claim_folder,
        publish,
        staging_folder,
        write_file,
        writer_lock,
    )
    from sim.core.runner import make_plan, run_simulation

    for option, path in (("--baseline", args.baseline), ("--candidate", args.candidate)):
        if path is not None and not Path(path).is_file():
            raise UserError(f"{option} {path}: no such catalogue file")
    check_players(args.players)
    check_min_n(args.min_n)
    if not 0.0 < args.level < 1.0:
        raise UserError(f"--level {args.level}: must be between 0 and 1")
    if not 0.0 <= args.band < 100.0:
        raise UserError(f"--band {args.band}: must be between 0 and 100 pct-pts")
    base_rules = parse_rules(args.baseline_rules, "--baseline-rules")
    cand_rules = parse_rules(args.candidate_rules, "--candidate-rules")
    candidate = args.candidate if args.candidate is not None else args.baseline
    # Checked before any game; a resumed result's is checked once it is known to be played.
    out = Path(args.out) if args.out else Path("reports") / "compare"
    json_path = None
    if args.json:
        check_outside(args.json, "--json", out)
    if args.json and not args.resume:
        json_path = claim_file(args.json, "--json", args.overwrite)
    command = "neom compare"
    runs = (f"runs/{BASELINE}", f"runs/{CANDIDATE}")
    configs = [
        _config(args, args.baseline, base_rules, out / runs[0]),
        _config(args, candidate, cand_rules, out / runs[1]),
    ]
    for config in configs:
        make_plan(config)  # every option checked before the folder is claimed
    parameters = compare_parameters(args, base_rules, cand_rules, candidate)

    def claim():
        return claim_folder(
            out,
            command,
            overwrite=args.overwrite,
            resume=args.resume,
            parameters=parameters,
            runs=runs,
        )

    with writer_lock(out, command, "comparison folder", check=claim) as claimed:
        if claimed.state == "complete":
            print(
                f"neom: note: {out}: the comparison is already complete; nothing to do",
                file=sys.stderr,
            )
            print(out / "index.html")
            return 0
        if args.json and args.resume:
            json_path = claim_file(args.json, "--json")
        for config in configs:
            run_simulation(config)
        with staging_folder(out) as staging:
            build_comparison(
                out / runs[0],
                out / runs[1],
                staging,
                level=args.level,
                band=args.band / 100.0,
                min_n=args.min_n,
                execution=Execution(workers=args.workers),
            )  # fmt: skip
            publish(staging, claimed)
        if json_path is not None:
            write_file(json_path, (out / "findings.json").read_bytes(), "--json")
    print(out / "index.html")
    return 0
