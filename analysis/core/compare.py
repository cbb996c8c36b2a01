"""``neom compare``: an A/B design report of two data files (NEOM: catalogues; Tangram City:
tile sets), or two rules readings, played on the same deals, for every game.

Both sides are played through the runner with the same master seed, game ids, seats and
strategies, so game g of the baseline and game g of the candidate are twins: the same deal
index and the same strategy streams (with identical data and rules they are the same game).
Every comparison is paired on those twins: per strategy and per seat, the mean over games of
(candidate - baseline) for the same seat, cluster-robust over deals (rotated seats replay each
deal), Holm across the rows.

What is generic lives here: the command, the rules readings, the paired statistics (also of
effects that are ratios: :func:`paired_effect_shifts`), the diff of two data files' named
entries, the report's frame (identity, findings, the rules readings, strategies and seats,
``findings.json``). What a game compares beyond that, it supplies as a :class:`Comparing`
named by ``Game.compare_ref``: its own options, its data diff's sections, and the part "what
moved" (NEOM: cornerstone and tile effects; Tangram City: the scoring parts).
"""

import html
import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sim.core.errors import UserError

BASELINE = "baseline"
CANDIDATE = "candidate"


@dataclass(frozen=True)
class Moved:
    """What a game's comparison adds: findings (after the data diff's and the rules'),
    report sections (key, title, HTML parts) after "What changed", CSV tables, and
    ``findings.json`` items (before the strategies' and seats')."""

    findings: list[str] = field(default_factory=list)
    sections: list[tuple[str, str, list[str]]] = field(default_factory=list)
    tables: dict = field(default_factory=dict)
    items: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class Comparing:
    """What a game supplies to ``neom compare`` (``Game.compare_ref`` names it).

    ``diff_sections``: the data file's tables of named entries the diff reads (``[[tiles]]``
    -> kind ``tile``). ``options``: the game's own options (flag, argparse keywords), offered
    for every game and refused for another; ``shared_rules(args)``: the rules both sides play
    with from those options; ``parameters(args)``: their entries in the comparison's listing.
    ``diff_table``: the CSV table of the data diff. ``rules_tables``: rules entries that are
    the rules' own tables (Tangram City's bonus tables), NAME -> parser (where, VALUE) of
    VALUE, given with the rules readings. ``events``: whether the
    runs record events. ``moved(base, cand, report, changed, level, execution)``: the game's
    part of the report (``changed``: the names the data diff changed)."""

    diff_sections: tuple[str, ...]
    moved: Callable[..., Moved]
    events: bool = False
    diff_table: str = "data_diff"
    options: tuple[tuple[str, dict], ...] = ()
    shared_rules: Callable[[object], dict] = lambda args: {}
    parameters: Callable[[object], dict] = lambda args: {}
    rules_tables: dict[str, Callable[[str], object]] = field(default_factory=dict)


def comparing(game) -> Comparing:
    """The game's :class:`Comparing`; one line when it has none."""
    from sim.core.commands.options import game_part

    return game_part(game, "compare_ref", f"neom compare: --game {game.name} has no comparison")


def register(parser) -> None:
    from analysis.core.commands import add_flagging_options
    from sim.core.commands import options

    parser.description = (
        "Play a baseline and a candidate (data file and/or rules reading) on the "
        "same deals and write a report of what moved (HTML, Markdown, CSV, JSON)."
    )
    options.add_game_option(parser)
    parser.add_argument(
        "--baseline", default=None, help="baseline data file: catalogue, tile set (default: "
        "built-in)"
    )  # fmt: skip
    parser.add_argument(
        "--candidate", default=None, help="candidate data file (default: the baseline's)"
    )
    parser.add_argument(
        "--baseline-rules",
        default="",
        metavar="NAME=VALUE,...",
        help="rules options of the baseline, e.g. neighborhoods=any or "
        "neighborhood_through_any=1 (names or flags; labels or stored values); Tangram City: "
        "also planning_bonus=N and balance_bonus=A/B/C/D/E/F",
    )
    parser.add_argument(
        "--candidate-rules",
        default="",
        metavar="NAME=VALUE,...",
        help="rules options of the candidate, e.g. neighborhoods=residential",
    )
    options.add_run_options(parser)
    options.add_part_options(parser, options.game_parts("compare_ref"))
    parser.add_argument("--out", default=None, help="report folder (default: reports/compare)")
    options.add_again_options(parser, "comparison")
    add_flagging_options(parser)
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the items here")
    parser.set_defaults(func=run_compare)


# --- rules readings ---------------------------------------------------------------------------


def parse_rules(text: str, option_name: str, game, tables: dict | None = None) -> dict:
    """``NAME=VALUE,...`` -> {option name: stored value} for ``game``. NAME is a rules
    option's name (``neighborhood_through_any``) or flag (``neighborhoods``); VALUE a label
    (``any``) or a stored value (``1``). ``tables``: the rules' own tables (NAME -> parser of
    VALUE), such as Tangram City's bonus tables."""
    tables = tables or {}
    options = game.rule_options
    rules = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        by_name = {o.name: o for o in options} | {o.flag.lstrip("-"): o for o in options}
        option = by_name.get(name.replace("_", "-")) or by_name.get(name)
        if sep and option is None and name in tables:
            if name in rules:
                raise UserError(f"{option_name} {text!r}: {name} given twice")
            rules[name] = tables[name](f"{option_name} {part!r}", value)
            continue
        if not sep or option is None:
            known = ", ".join(
                sorted({o.name for o in options} | {o.flag[2:] for o in options} | set(tables))
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


# --- the data diff ------------------------------------------------------------------------------

DIFF_COLUMNS = ("kind", "name", "change", "fields")  # of data_diff's rows, its CSV and its table


def _entries(raw: bytes, sections: tuple[str, ...], noun: str) -> dict:
    from sim.core.errors import decode_text

    data = tomllib.loads(decode_text(raw, noun))
    entries = {}
    for section in sections:
        for entry in data.get(section, []):
            entries[(section[:-1], str(entry.get("name", "?")))] = entry
    return entries


def data_diff(base_raw: bytes, cand_raw: bytes, sections: tuple[str, ...], noun: str):
    """What the candidate data file changes, by name: one row per added, removed or changed
    entry of ``sections`` (tables of named entries: ``tiles`` -> kind ``tile``), with each
    changed field (``before -> after``)."""
    if base_raw == cand_raw:
        return []
    before, after = _entries(base_raw, sections, noun), _entries(cand_raw, sections, noun)
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
    """Per (game, item), sorted by them: the sum of ``value`` over the item's rows and their
    number."""
    import polars as pl

    from analysis.core.exact import group_sums

    # Exactly rounded sums: the same in any row order (data against itself gives exactly 0).
    long = long.filter(pl.col(value).is_not_null())
    return group_sums(long, ["game_id", key], [value]).select(
        "game_id", key,
        pl.col(value).cast(pl.Float64).alias(f"s_{side}"),
        pl.col("rows").cast(pl.Float64).alias(f"k_{side}"),
    )  # fmt: skip


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
    base_sums = _per_game(base_long, key, value, "b")
    cand_sums = _per_game(cand_long, key, value, "c")
    return paired_squares(base_sums, cand_sums, deals, key, coefficients)


def side_sums(long, key: str, value: str, side: str):
    """One side's per-(game, item) sums for :func:`paired_squares` (``side`` "b" or "c"):
    a side shared by several comparisons is summed once."""
    return _per_game(long, key, value, side)


def paired_squares(base_sums, cand_sums, deals, key: str, coefficients):
    """:func:`cluster_squares` from each side's :func:`side_sums`."""
    import polars as pl

    from analysis.core.exact import group_sums
    from analysis.core.reduce import Sums

    both = (
        base_sums
        .join(cand_sums, on=["game_id", key], how="full", coalesce=True)
        .fill_null(0)
        .join(deals, on="game_id", how="left")
    )  # fmt: skip
    # Exactly rounded sums here and below: no figure depends on polars' threads or row order.
    per_deal = group_sums(both, [key, "deal"], ["s_b", "k_b", "s_c", "k_c"])
    influence = per_deal.join(
        coefficients.select(key, "alpha_b", "beta_b", "alpha_c", "beta_c"), on=key, how="left"
    ).select(
        key,
        (pl.col("alpha_b") * pl.col("s_b") + pl.col("beta_b") * pl.col("k_b")).alias("i_b"),
        (pl.col("alpha_c") * pl.col("s_c") + pl.col("beta_c") * pl.col("k_c")).alias("i_c"),
    )
    squares = influence.select(
        key,
        (pl.col("i_b") ** 2).alias("q_b"),
        (pl.col("i_c") ** 2).alias("q_c"),
        ((pl.col("i_c") - pl.col("i_b")) ** 2).alias("q_shift"),
    )
    table = group_sums(squares, key, ["q_b", "q_c", "q_shift"]).rename({"rows": "clusters"})
    return Sums(table.select(key, "clusters", "q_b", "q_c", "q_shift"), (key,))


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
    :func:`shift_table`) on the whole frames (each side's per-game sums made once).
    """
    import polars as pl

    from analysis.core.exact import group_sums

    games = games.select("game_id", "deal")
    sides = {side: _per_game(long, key, value, side)
             for side, long in (("b", base_long), ("c", cand_long))}  # fmt: skip
    totals = [
        group_sums(sums, key, [f"s_{side}", f"k_{side}"]).select(
            key, pl.col(f"s_{side}").alias("s"), pl.col(f"k_{side}").alias("k")
        )
        for side, sums in sides.items()
    ]
    coefficients = shift_coefficients(*totals, games.height, key)
    squares = paired_squares(sides["b"], sides["c"], games, key, coefficients)
    return shift_table(coefficients, squares, games.height, games["deal"].n_unique(), key)


def group_stats(base, cand, group: str, deals) -> dict:
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


def group_table(stats: dict, group: str):
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
    return group_table(group_stats(base, cand, group, games.select("game_id", "deal")), group)


def _groups_reduce(chunks) -> dict:
    """Twin chunks of the baseline and the candidate: the strategies' and seats' pairs."""
    from analysis.core.tabulate import chunk_deals

    base, cand = chunks
    deals = base.memo(chunk_deals)
    columns = ["game_id", "seat", "strategy_name", "win_share", "total"]
    players = base.players.select(columns), cand.players.select(columns)
    return group_stats(*players, "strategy_name", deals) | group_stats(*players, "seat", deals)


def paired_groups(base, cand, execution=None):
    """(strategies, seats): :func:`paired_by_group` of the twin runs, read chunk by chunk side
    by side, with ``win_shift_q`` (Holm across the rows)."""
    import polars as pl

    from analysis.core.batches import Reduction, analyse
    from analysis.core.stats import adjust

    reduction = Reduction("compare.groups", _groups_reduce)
    stats = analyse((base, cand), [reduction], execution)[reduction.name]
    out = []
    for group in ("strategy_name", "seat"):
        frame = group_table(stats, group)
        q = adjust(frame["win_shift_p"].to_numpy().astype(np.float64), "holm")
        out.append(frame.with_columns(pl.Series("win_shift_q", q)))
    return tuple(out)


# --- the report -------------------------------------------------------------------------------


def pts(x, lo=None, hi=None) -> str:
    from analysis.core.report import pts as shown

    return shown(x, lo, hi)


def _group_items(strategies, seats) -> list[dict]:
    from analysis.core.report import clean

    out = []
    for kind, frame, column in (("strategy", strategies, "strategy_name"), ("seat", seats, "seat")):
        for r in frame.iter_rows(named=True):
            out.append({
                "kind": kind, "name": str(r[column]), "metric": "win_share",
                "effect": clean(r["win_cand"]), "lo": None, "hi": None, "n": clean(r["n"]),
                "flag": None, "baseline": clean(r["win_base"]), "candidate": clean(r["win_cand"]),
                "shift": clean(r["win_shift"]), "shift_lo": clean(r["win_shift_lo"]),
                "shift_hi": clean(r["win_shift_hi"]), "shift_q": clean(r.get("win_shift_q")),
            })  # fmt: skip
    return out


def _group_section(name, frame, column, unit: str) -> tuple[str, str, list[str]]:
    from analysis.core.report import html_table, pct

    return (
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
                        lambda r: pts(r["win_shift"], r["win_shift_lo"], r["win_shift_hi"]),
                    ),
                    ("q", lambda r: f"{r['win_shift_q']:.3g}"),
                    (
                        "score before → after",
                        lambda r: f"{r['score_base']:.1f} → {r['score_cand']:.1f}",
                    ),
                    (
                        f"Δ score ({unit}) [95% CI]",
                        lambda r: (
                            f"{r['score_shift']:+.2f} "
                            f"[{r['score_shift_lo']:+.2f}, {r['score_shift_hi']:+.2f}]"
                        ),
                    ),
                ],
            ),  # fmt: skip
        ],
    )


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
    """Write the A/B report of two run folders of one game played on the same deals; returns
    index.html. ``execution``: where the twin runs are read, chunk by chunk side by side
    (``analysis.core.batches``)."""
    import polars as pl

    from analysis.core.load import open_run
    from analysis.core.report import CSS, Report, html_table, pct, plain_columns, readings
    from analysis.core.stats import DEFAULT_BAND, DEFAULT_MIN_N

    base, cand = open_run(base_path), open_run(cand_path)
    same = ("game", "seed", "games", "players", "seats", "strategies")
    for key in same:
        if base.manifest.get(key) != cand.manifest.get(key):
            raise UserError(
                f"{base_path} and {cand_path}: not played on the same deals ({key} differs)"
            )
    game = base.game
    side = comparing(game)
    noun = game.data_noun
    out = Path(out)
    for folder in ("figures", "tables"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    reconstructed = base.reconstructed or cand.reconstructed
    label = ""
    if reconstructed:
        label = str((base if base.reconstructed else cand).manifest["data"].get("label", "")) or (
            f"RECONSTRUCTED {noun}"
        )
    report = Report(
        out, "bh", level, f"Benjamini-Hochberg adjusted p < {level:g}",
        DEFAULT_BAND if band is None else band, DEFAULT_MIN_N if min_n is None else min_n, label,
        score_unit=game.score_unit,
    )  # fmt: skip

    # 1. What changed.
    snapshots = [run.path / base.data.snapshot_name for run in (base, cand)]
    diff = data_diff(*(p.read_bytes() for p in snapshots), side.diff_sections, noun)
    base_rules, cand_rules = readings(base), readings(cand)
    rule_changes = [(b, c) for b, c in zip(base_rules, cand_rules, strict=False) if b != c]
    changed_names = {row["name"] for row in diff if row["kind"] == "tile"}

    # 2. Paired comparisons, both runs read chunk by chunk side by side.
    strategies, seats = paired_groups(base, cand, execution)
    moved = side.moved(base, cand, report, changed_names, level, execution)

    findings = []
    if diff:
        findings.append(
            f"The candidate {noun} changes {len(diff)} entr{'y' if len(diff) == 1 else 'ies'}: "
            + "; ".join(
                f"{r['name']} ({r['change']}{': ' + r['fields'] if r['fields'] else ''})"
                for r in diff[:6]
            )  # fmt: skip
            + (" ..." if len(diff) > 6 else "")
        )
    for before, after in rule_changes:
        findings.append(f"Rules reading: {before} → {after}.")
    if not diff and not rule_changes:
        findings.append(f"Baseline and candidate are the same {noun} and rules: every shift "
                        "must be exactly 0.")  # fmt: skip
    findings += moved.findings
    moved_strategies = strategies.filter(pl.col("win_shift_q") < level)
    findings += [
        f"Strategy {r['strategy_name']}: win share {pct(r['win_base'])} → {pct(r['win_cand'])}, "
        f"{pts(r['win_shift'], r['win_shift_lo'], r['win_shift_hi'])} (paired)."
        for r in moved_strategies.iter_rows(named=True)
    ] or ["No strategy's win share moved significantly (paired, Holm across strategies)."]
    report.findings.extend(findings)

    # 3. Sections.
    report.table(side.diff_table, pl.DataFrame(diff, schema=list(DIFF_COLUMNS)))
    for name, frame in moved.tables.items():
        report.table(name, frame)
    report.table("strategies", strategies)
    report.table("seats", seats)
    diff_html = (
        html_table(pl.DataFrame(diff), plain_columns(*DIFF_COLUMNS))
        if diff
        else f"<p>The two {noun}s are identical.</p>"
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
    for key, title, parts in moved.sections:
        report.section(key, title, parts)
    for name, frame, column in (
        ("strategies", strategies, "strategy_name"),
        ("seats", seats, "seat"),
    ):
        report.section(*_group_section(name, frame, column, game.score_unit))

    json_items = moved.items + _group_items(strategies, seats)
    if label:
        for item in json_items:
            item["data"] = label
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
    title = f"{game.title} A/B comparison: {base.data_name} vs {cand.data_name}"
    notice = (
        f'<p class="notice">RECONSTRUCTED {noun} involved: findings describe the '
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
    summary = [f"# {title}", ""] + ([f"**RECONSTRUCTED {noun} involved.**", ""] if label else [])
    summary += [f"- {k}: {v}" for k, v in identity]
    summary += ["", "## What changed and what moved", ""] + [f"- {f}" for f in findings]
    (out / "summary.md").write_text("\n".join(summary) + "\n", encoding="utf-8")
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


# --- the command ------------------------------------------------------------------------------


def _config(args, game, side: Comparing, data, rules: dict, out: Path):
    from sim.core.runner import RunConfig
    from sim.core.strategies import split_strategies

    # Each side's run resumes (a new folder starts, a complete one is not played again): the
    # comparison's own listing decides what is continued or replaced (run_compare).
    return RunConfig(
        game=game.name,
        out=out,
        strategies=split_strategies(args.strategies),
        players=args.players,
        games=args.games,
        seed=args.seed,
        data=Path(data) if data else None,
        rules={**side.shared_rules(args), **rules},
        workers=args.workers,
        events=side.events,
        resume=True,
        progress=False,
        command="neom compare",
    )


def file_digest(path, refusal: str) -> str | None:
    """What a data option stands for in a listing: the SHA-256 of the file at ``path`` (None
    without one); UserError ``refusal (reason)`` when it cannot be read."""
    import hashlib

    if path is None:
        return None
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise UserError(f"{refusal} ({exc.strerror})") from None


def _data_digest(path, noun: str) -> str:
    """A comparison's data file by its content; ``built-in`` without one."""
    return file_digest(path, f"{path}: cannot read the {noun}") or "built-in"


def compare_parameters(args, game, side, base_rules: dict, cand_rules: dict, candidate) -> dict:
    """Everything a comparison's result depends on, by option: recorded in its listing, so
    that ``--resume`` continues only the same comparison."""
    from sim.core.commands.options import run_parameters

    game_entry = {} if game.name == "neom" else {"--game": game.name}
    return {
        **game_entry,
        "--baseline": _data_digest(args.baseline, game.data_noun),
        "--candidate": _data_digest(candidate, game.data_noun),
        "--baseline-rules": base_rules,
        "--candidate-rules": cand_rules,
        **run_parameters(args),
        **side.parameters(args),
        "--level": args.level,
        "--band": args.band,
        "--min-n": args.min_n,
    }


def run_compare(args) -> int:
    from analysis.core.batches import Execution
    from analysis.core.commands import claim_json, play_into_folder
    from sim.core.commands.options import check_min_n, check_players, refuse_other_parts
    from sim.core.registry import get_game
    from sim.core.runner import make_plan

    game = get_game(args.game)
    side = comparing(game)
    refuse_other_parts(args, game, "compare_ref", "neom compare")
    for option, path in (("--baseline", args.baseline), ("--candidate", args.candidate)):
        if path is not None and not Path(path).is_file():
            raise UserError(f"{option} {path}: no such {game.data_noun} file")
    check_players(args.players)
    check_min_n(args.min_n)
    if not 0.0 < args.level < 1.0:
        raise UserError(f"--level {args.level}: must be between 0 and 1")
    if not 0.0 <= args.band < 100.0:
        raise UserError(f"--band {args.band}: must be between 0 and 100 pct-pts")
    base_rules = parse_rules(args.baseline_rules, "--baseline-rules", game, side.rules_tables)
    cand_rules = parse_rules(args.candidate_rules, "--candidate-rules", game, side.rules_tables)
    candidate = args.candidate if args.candidate is not None else args.baseline
    out = Path(args.out) if args.out else Path("reports") / "compare"
    json_path = claim_json(args, out)
    runs = (f"runs/{BASELINE}", f"runs/{CANDIDATE}")
    configs = [
        _config(args, game, side, args.baseline, base_rules, out / runs[0]),
        _config(args, game, side, candidate, cand_rules, out / runs[1]),
    ]
    for config in configs:
        make_plan(config)  # every option checked before the folder is claimed
    parameters = compare_parameters(args, game, side, base_rules, cand_rules, candidate)

    def write(staging: Path) -> bytes:
        build_comparison(
            out / runs[0],
            out / runs[1],
            staging,
            level=args.level,
            band=args.band / 100.0,
            min_n=args.min_n,
            execution=Execution(workers=args.workers),
        )  # fmt: skip
        return (staging / "findings.json").read_bytes()

    what = "comparison"
    play_into_folder(args, out, json_path, "neom compare", what, parameters, runs, configs, write)
    print(out / "index.html")
    return 0
