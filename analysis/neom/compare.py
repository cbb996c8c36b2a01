"""NEOM's part of ``neom compare`` (:mod:`analysis.core.compare`, ``Game.compare_ref``): the
catalogue diff's sections, the variant both sides play, and what moved among the cornerstones
and tiles.

Cornerstone and tile effects: each side's effect is a ratio (the group's summed residual over
its size); the shift's standard error comes from the per-game difference of the two ratios'
influence terms (delta method, :func:`analysis.core.compare.paired_effect_shifts`), so
everything the two sides share cancels. A catalogue against itself gives a shift of exactly 0
with a zero-width interval. Multiplicity: the items the catalogue diff names as changed are the
designer's question (primary: Holm across them); every other item is a knock-on effect,
corrected across all of them by Benjamini-Hochberg. What moved is ranked by the size of the
shift.
"""

import html
import math
from dataclasses import dataclass
from functools import partial

import numpy as np

from analysis.core import compare as core
from analysis.core.compare import (
    Comparing,
    Moved,
    cluster_squares,
    pts,
    shift_coefficients,
    shift_table,
)
from sim.core.errors import UserError
from sim.neom import GAME
from sim.neom.constants import VARIANT_NAMES

SECTIONS = ("tiles", "goods", "boards")

# The generic readings and diff, bound to NEOM.
parse_rules = partial(core.parse_rules, game=GAME)


def catalog_diff(base_raw: bytes, cand_raw: bytes) -> list[dict]:
    """What the candidate catalogue changes, by name: one row per added, removed or changed
    tile, good or board, with each changed field (``before -> after``)."""
    return core.data_diff(base_raw, cand_raw, SECTIONS, "catalogue")


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


def _totals_of(values: dict, reduction: str) -> dict | None:
    """A run's reduced statistics of ``reduction``; for the tiles, the whole reduction's or
    (a run reduced only for a comparison) :data:`analysis.neom.tiles.TILE_SUMS`', the same
    figures."""
    found = values.get(reduction)
    if not found and reduction == "neom.tiles":
        found = values.get("neom.tile_sums")
    return found


def _coefficients(values_b: dict, values_c: dict, info_b, info_c) -> dict:
    """Per (kind, value): :func:`shift_coefficients` from each run's own reductions."""
    import polars as pl

    n_games = values_b["neom.cornerstones"]["games"].value("games")
    out = {}
    for kind, (reduction, names) in _TOTALS.items():
        sides = _totals_of(values_b, reduction), _totals_of(values_c, reduction)
        if not sides[0] or not sides[1]:
            continue
        for value, name in names.items():
            totals = [
                info.name_tiles(totals[name].frame).select(
                    "tile_name", pl.col("sum").alias("s"), pl.col("n").alias("k")
                )
                for totals, info in zip(sides, (info_b, info_c), strict=True)
            ]
            out[(kind, value)] = shift_coefficients(*totals, n_games, "tile_name")
    return out


def _compare_reduce(chunks) -> dict:
    """Twin chunks of the baseline and the candidate: the items' paired statistics."""
    import polars as pl

    from analysis.core.reduce import Sums
    from analysis.core.tabulate import chunk_deals

    base, cand = chunks
    deals = base.memo(chunk_deals)
    out = {"deals": Sums.of(deals, (), pl.col("deal").n_unique().alias("deals"))}
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


@dataclass
class BaselineSide:
    """What every comparison against one baseline run reads of it, computed once
    (:func:`baseline_side`): its reduced values, and per chunk (by its first game) its
    games, deals and each compared value's per-(game, item) sums."""

    path: str
    info: object
    values: dict
    plan: list  # (first game, games) of every chunk
    chunks: dict


def _tile_need(run):
    """The tile statistics a comparison reduces for ``run``: the whole tile reduction when
    the run already has it (its tile table was asked for), else only the sums it reads."""
    from analysis.neom import tiles

    return tiles.TILES if tiles.TILES.name in run.cache else tiles.TILE_SUMS


def _needs(run) -> tuple:
    from analysis.core.tabulate import EXPECTED
    from analysis.neom import cornerstones

    return EXPECTED, cornerstones.CORNERSTONES, _tile_need(run)


def baseline_side(base, execution=None) -> BaselineSide:
    """:class:`BaselineSide` of ``base``: the baseline's half of the paired chunk pass of
    :func:`comparison_items`, for a caller that compares several candidates with it (``neom
    balance``'s fresh checks). The figures are those of the pass over both runs, to the bit."""
    from analysis.core.batches import SERIAL, analyse, load_chunk, plan_chunks, run_info
    from analysis.core.compare import side_sums
    from analysis.core.tabulate import chunk_deals

    execution = execution or SERIAL
    needs = _needs(base)
    analyse(base, list(needs), execution)
    values = {n.name: base.cache[n.name] for n in needs}
    info = run_info(base)
    plan = plan_chunks(base, execution.chunk_games)
    chunks = {}
    for spec in plan:
        chunk = load_chunk(info, spec, values)
        rows = _item_rows(chunk)
        sums = {(kind, value): side_sums(rows[kind], "tile_name", value, "b")
                for kind, (_, names) in _TOTALS.items() if kind in rows
                for value in names}  # fmt: skip
        chunks[spec.start] = {"games": spec.games, "deals": chunk.memo(chunk_deals),
                              "sums": sums}  # fmt: skip
    return BaselineSide(info.path, info, values, [(s.start, s.games) for s in plan], chunks)


def _against_baseline(side: BaselineSide, chunk) -> dict:
    """:func:`_compare_reduce` of a candidate's chunk, its twin's half from ``side``."""
    import polars as pl

    from analysis.core.compare import paired_squares, side_sums
    from analysis.core.reduce import Sums

    twin = side.chunks[chunk.spec.start]
    deals = twin["deals"]
    out = {"deals": Sums.of(deals, (), pl.col("deal").n_unique().alias("deals"))}
    rows = _item_rows(chunk)
    coefficients = _coefficients(side.values, chunk.values, side.info, chunk.info)
    for (kind, value), table in coefficients.items():
        cand = side_sums(rows[kind], "tile_name", value, "c")
        out[f"{kind}.{value}"] = paired_squares(twin["sums"][(kind, value)], cand, deals,
                                                "tile_name", table)  # fmt: skip
    return out


def _paired_with(side: BaselineSide, cand, execution=None) -> dict:
    """:func:`_paired_stats` of ``cand`` against a :class:`BaselineSide` (kept on the
    candidate run): only the candidate's chunks are read."""
    from analysis.core.batches import SERIAL, Reduction, analyse, plan_chunks, run_info
    from analysis.neom import cornerstones

    execution = execution or SERIAL
    name = f"neom.compare|{side.path}"
    if name + "|stats" not in cand.cache:
        plan = [(s.start, s.games) for s in plan_chunks(cand, execution.chunk_games)]
        if plan != side.plan:
            raise UserError(f"{side.path} and {cand.path}: not the same games in the same batches")
        needs = _needs(cand)
        analyse(cand, list(needs), execution)
        reduction = Reduction(name, partial(_against_baseline, side), needs=needs)
        stats = dict(analyse(cand, [reduction], execution)[name])
        values = {n.name: cand.cache[n.name] for n in needs}
        stats["coefficients"] = _coefficients(side.values, values, side.info, run_info(cand))
        stats["games"] = side.values[cornerstones.CORNERSTONES.name]["games"].value("games")
        cand.cache[name + "|stats"] = stats
    return cand.cache[name + "|stats"]


def _long_tables(run):
    """Cornerstone (drafted) and tile (selected) seat-level rows with residuals."""

    from analysis.neom import cornerstones, tiles

    out = {"cornerstone": run.name_tiles(cornerstones.drafted_long(run).collect())}
    if run.events is not None:
        selected, _, _ = tiles._seat_groups(run, None)
        out["tile"] = run.name_tiles(selected)
    return {k: v.select("game_id", "tile_name", "residual", "score_diff") for k, v in out.items()}


def comparison_items(base, cand, report, changed_names: set[str], execution=None,
                     side: BaselineSide | None = None, report_tables: bool = True):  # fmt: skip
    """Every compared item as a findings row (kind, name, metric, effect, lo, hi, n, flag,
    baseline, candidate, shift, shift_lo, shift_hi, shift_q, primary).

    ``side``: the baseline's :class:`BaselineSide` (``base``'s, computed once for several
    candidates). ``report_tables`` False: without the columns of each side's report table
    (effect, its interval, n, flag and their ``_cand``), which need each run's whole tile
    reduction; every shift and q is the same."""
    import polars as pl

    from analysis.core.stats import adjust
    from analysis.neom import cornerstones, tiles

    if side is None:
        stats = _paired_stats(base, cand, execution)
    else:
        stats = _paired_with(side, cand, execution)
    n_games, n_deals = stats["games"], stats["deals"].value("deals")
    flagging = report.flagging
    if report_tables:
        tables = {"cornerstone": (cornerstones.cornerstone_table(base, flagging),
                                  cornerstones.cornerstone_table(cand, flagging))}  # fmt: skip
        base_tiles = tiles.tile_table(base, flagging)
        cand_tiles = tiles.tile_table(cand, flagging)
        if base_tiles is not None and cand_tiles is not None:
            tables["tile"] = (base_tiles, cand_tiles)
    else:
        kinds = {kind for kind, _ in stats["coefficients"]}
        tables = {kind: None for kind in _TOTALS if kind in kinds}
    metric = {"cornerstone": "win_share_above_expected_drafted",
              "tile": "win_share_above_expected_selected"}  # fmt: skip
    frames = []
    for kind, sides in tables.items():
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
        frame = shifts.join(leads, on="tile_name", how="left")
        if sides is not None:
            tb, tc = sides
            frame = frame.join(tb.select(keep), on="tile_name", how="left").join(
                tc.select(keep), on="tile_name", how="left", suffix="_cand"
            )
        frame = frame.with_columns(pl.lit(kind).alias("kind"), pl.lit(metric[kind]).alias("metric"))
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


def _json_items(items) -> list[dict]:
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
    return out


def moved(base, cand, report, changed_names: set[str], level: float, execution=None) -> Moved:
    """The cornerstones and tiles that moved: findings, the ranked section, tables and items
    (:class:`analysis.core.compare.Moved`)."""
    import polars as pl

    from analysis.core.batches import analyse
    from analysis.core.report import html_table, p_cell
    from analysis.neom.report import reductions

    # Each run's own tables first, then the twins side by side.
    for run in (base, cand):
        analyse(run, reductions(run), execution)
    items = comparison_items(base, cand, report, changed_names, execution)

    ranked_moved = items.filter(pl.col("shift_q") < level).sort(
        pl.col("shift").abs(), descending=True
    )
    findings = []
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
            f"{pts(r['effect_b'])} → {pts(r['effect_c'])}, shift "
            f"{pts(r['shift'], r['shift_lo'], r['shift_hi'])} (Holm q = {r['shift_q']:.3g}); "
            f"score lead {r['lead_b']:+.2f} → {r['lead_c']:+.2f} VP, shift "
            f"{r['lead_shift']:+.2f} [{r['lead_shift_lo']:+.2f}, {r['lead_shift_hi']:+.2f}] VP "
            f"(Holm q = {r['lead_shift_q']:.3g}); n = {r['n_b']} → {r['n_c']}."
        )
    knock_on = ranked_moved.filter(~pl.col("primary"))
    findings.append(
        f"{knock_on.height} other item{'s' if knock_on.height != 1 else ''} moved significantly "
        f"(Benjamini-Hochberg across {tested - n_primary} items, q < {level:g})"
        + (": " + "; ".join(
            f"{r['kind']} {r['tile_name']} {pts(r['shift'], r['shift_lo'], r['shift_hi'])}"
            for r in knock_on.head(8).iter_rows(named=True)) if knock_on.height else "")
        + "."
    )  # fmt: skip
    ranked = items.filter(pl.col("shift").is_not_nan()).sort(
        pl.col("primary"), pl.col("shift").abs(), descending=True
    )
    shown = ranked.filter((pl.col("shift_q") < level) | pl.col("primary")).head(40)
    if shown.height == 0:
        shown = ranked.head(10)
    section = (
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
                    ("baseline effect (n)", lambda r: f"{pts(r['effect_b'])} ({r['n_b']})"),
                    ("candidate effect (n)", lambda r: f"{pts(r['effect_c'])} ({r['n_c']})"),
                    ("shift [95% CI]", lambda r: pts(r["shift"], r["shift_lo"], r["shift_hi"])),
                    ("q", p_cell("shift_q")),
                    (
                        "flag before → after",
                        lambda r: f"{r['flag'] or '–'} → {r['flag_cand'] or '–'}",
                    ),
                ],
            ),
        ],
    )
    return Moved(findings, [section], {"items": items}, _json_items(items))


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


COMPARING = Comparing(
    diff_sections=SECTIONS,
    diff_table="catalog_diff",
    moved=moved,
    events=True,  # tile statistics come from the event log
    options=(
        (
            "--variant",
            {
                "default": None,
                "choices": tuple(VARIANT_NAMES),
                "help": "NEOM's variant, both sides (standard)",
            },
        ),
    ),  # fmt: skip
    shared_rules=lambda args: {"variant": VARIANT_NAMES[args.variant or "standard"]},
    parameters=lambda args: {"--variant": args.variant or "standard"},
)
