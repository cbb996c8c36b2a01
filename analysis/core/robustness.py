"""Do the findings survive skill? Each finding of a run marked against the same finding in a
run of another (stronger) field on the same data. One meaning per mark:

- **robust**: flagged the same way in both fields;
- **weaker** / **stronger** (in the other field): the same sign and significant in both
  fields, flagged in this field only (weaker there) or in the other only (stronger there);
- **vanishes** / **appears**: flagged in this field and not significant in the other
  (vanishes), or flagged in the other and not significant here (appears);
- **reversed**: opposite signs, both significant (each flagged, or its zero test significant
  after the run's correction across the items of its kind);
- ``unflagged``: flagged in neither field and not reversed (not a finding);
- null: the item was not tested in both (too few seats, or absent from one field).

The counted findings are those flagged in either field or reversed: every count the report
gives (the glance, each section, findings.json's marks) is :func:`count_marks` of that set. A
robust finding is about the game's data; a weaker or stronger one is about its size; one that
vanishes, appears or reverses is about the players.
"""

import numpy as np
import polars as pl

from analysis.core.stats import adjust, t_two_sided_p
from sim.core.errors import UserError

ROBUST, WEAKER, STRONGER = "robust", "weaker", "stronger"
VANISHES, APPEARS, REVERSED = "vanishes", "appears", "reversed"
UNFLAGGED = "unflagged"
MARKS = (ROBUST, WEAKER, STRONGER, VANISHES, APPEARS, REVERSED)  # the counted marks, in order
RANK = {ROBUST: 0, REVERSED: 1, WEAKER: 2, STRONGER: 2, VANISHES: 3, APPEARS: 3, UNFLAGGED: 4,
        None: 5}  # fmt: skip
SIDE = ("n", "small", "flag", "effect", "lo", "hi", "significant")


def mark_words(mark: str | None, there: str = "the other field") -> str:
    """A mark as a designer reads it (``there``: the other field's name)."""
    return {
        ROBUST: "robust",
        WEAKER: f"weaker in {there}",
        STRONGER: f"stronger in {there}",
        VANISHES: f"vanishes in {there}",
        APPEARS: f"appears in {there}",
        REVERSED: "reversed",
        UNFLAGGED: "flagged in neither field",
    }.get(mark, "not compared")


def mark_meaning(mark: str) -> str:
    """What a mark means, once (legends)."""
    return {
        ROBUST: "flagged the same way in both fields",
        WEAKER: "same sign and significant in both fields, flagged in this field only",
        STRONGER: "same sign and significant in both fields, flagged in the other field only",
        VANISHES: "flagged here, not significant in the other field",
        APPEARS: "flagged in the other field, not significant here",
        REVERSED: "opposite signs, significant in both fields",
    }[mark]


def marks_legend(there: str) -> str:
    """Each mark, coloured, with its one meaning (HTML: every game's skill-check section)."""
    from html import escape

    return "; ".join(
        f'<span class="{m}">{escape(mark_words(m, there))}</span> ({escape(mark_meaning(m))})'
        for m in MARKS
    )


def is_counted(mark: str | None, flag: str | None, flag_check: str | None) -> bool:
    """A finding the counts include: flagged in either field, or reversed."""
    return bool(flag) or bool(flag_check) or mark == REVERSED


def counted_rows(marked: pl.DataFrame) -> pl.DataFrame:
    """The rows of a :func:`marks` table the counts include (:func:`is_counted`), ranked as
    the headline ranks findings: by mark (``RANK``), then the largest effect first."""
    keep = [is_counted(r["robustness"], r["flag"], r["flag_check"])
            for r in marked.iter_rows(named=True)]  # fmt: skip
    return marked.filter(pl.Series(keep, dtype=pl.Boolean)).sort(
        pl.col("robustness").replace_strict(RANK, default=RANK[None], return_dtype=pl.Int32),
        pl.col("effect").abs(), descending=[False, True], nulls_last=True,
    )  # fmt: skip


def count_marks(marks) -> dict:
    """Counts of the counted findings by mark (``MARKS`` order, then None: flagged but not
    compared), from dicts with ``robustness``, ``flag`` and ``flag_check`` (a marks table's
    rows) or ``check.flag`` (findings.json items)."""
    out = {m: 0 for m in MARKS} | {None: 0}
    for row in marks:
        flag_check = row.get("flag_check", (row.get("check") or {}).get("flag"))
        mark = row.get("robustness")
        if is_counted(mark, row.get("flag"), flag_check):
            out[mark if mark in out else None] += 1
    return out


def counts_words(count: dict, there: str = "the other field") -> str:
    """``count_marks`` in words: "2 robust, 1 weaker in the strong field, ..." (zeros too, so
    every place that gives the counts reads alike)."""
    words = [f"{count[m]} {mark_words(m, there)}" for m in MARKS]
    if count.get(None):
        words.append(f"{count[None]} not compared (absent or too small in one field)")
    return ", ".join(words)


def significant(frame: pl.DataFrame, effect: str, correction: str, level: float) -> np.ndarray:
    """Per row: flagged, or its effect significantly different from 0 (two-sided t on
    clusters - 1 degrees of freedom, adjusted by ``correction`` across the tested rows); the
    standard error is ``{effect}_se``, else ``effect_se``."""
    small = frame["small"].to_numpy().astype(bool)
    mean = frame[effect].to_numpy().astype(np.float64)
    # A shifted effect (a cornerstone against the median) keeps the effect's standard error.
    se_column = f"{effect}_se" if f"{effect}_se" in frame.columns else "effect_se"
    se = frame[se_column].to_numpy().astype(np.float64)
    df = frame["clusters"].to_numpy().astype(np.float64) - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = np.where(se > 0, np.abs(mean) / np.where(se > 0, se, 1.0), np.inf)
    p = np.where(small | np.isnan(mean), np.nan, t_two_sided_p(statistic, df))
    q = adjust(p, correction)
    flagged = frame["flag"].fill_null("").to_numpy() != ""
    return flagged | (q < level)


def _side(frame: pl.DataFrame, key: str, effect: str, correction: str, level: float):
    return frame.select(
        pl.col(key),
        pl.col("n").cast(pl.Int64),
        pl.col("small").cast(pl.Boolean),
        pl.col("flag").fill_null(""),
        pl.col(effect).alias("effect"),
        pl.col(f"{effect}_lo").alias("lo"),
        pl.col(f"{effect}_hi").alias("hi"),
        pl.Series("significant", significant(frame, effect, correction, level)),
    )


def marks(
    main: pl.DataFrame,
    other: pl.DataFrame,
    key: str,
    correction: str = "bh",
    level: float = 0.05,
    effect: str = "effect",
    min_n: int = 0,
) -> pl.DataFrame:
    """One row per item of ``main`` or ``other`` (effect tables with ``key``, ``n``,
    ``small``, ``flag``, ``clusters`` and ``{effect}``, ``_lo``, ``_hi``, ``_se``): each
    side's ``n``, ``small``, ``flag``, ``effect``, ``lo``, ``hi``, ``significant`` (suffix
    ``_check`` for ``other``), the ``robustness`` mark and ``why`` in words."""
    left = _side(main, key, effect, correction, level)
    right = _side(other, key, effect, correction, level).rename({c: f"{c}_check" for c in SIDE})
    joined = left.join(right, on=key, how="full", coalesce=True)
    out_marks, out_why = [], []
    for row in joined.iter_rows(named=True):
        mark, why = _mark(row, min_n)
        out_marks.append(mark)
        out_why.append(why)
    return joined.with_columns(
        pl.Series("robustness", out_marks, dtype=pl.Utf8), pl.Series("why", out_why)
    )


def _mark(row: dict, min_n: int) -> tuple[str | None, str]:
    here, there = row.get("n"), row.get("n_check")
    if here is None or there is None:
        return None, ("not in the other field" if there is None else "not in this field")
    if row["small"] or row["small_check"]:
        n = here if row["small"] else there
        where = "this field" if row["small"] else "the other field"
        return None, f"not tested in {where} (n = {n} < {min_n})" if min_n else "not tested"
    flag, other = row["flag"], row["flag_check"]
    sig, sig_check = bool(row["significant"]), bool(row["significant_check"])
    if sig and sig_check and _sign(row["effect"]) * _sign(row["effect_check"]) < 0:
        return REVERSED, (
            f"{_words(flag, row['effect'])} here, {_words(other, row['effect_check'])} in "
            "the other field"
        )
    if flag and flag == other:
        return ROBUST, f"{flag} in both fields"
    if flag:
        if sig_check:
            return WEAKER, f"{flag} here; same sign, significant, not flagged in the other field"
        return VANISHES, f"{flag} here, not significant in the other field"
    if other:
        if sig:
            return STRONGER, f"same sign, significant, not flagged here; {other} in the other field"
        return APPEARS, f"not significant here, {other} in the other field"
    return UNFLAGGED, "flagged in neither field"


def _sign(x) -> int:
    return 0 if x is None or x != x else (1 if x > 0 else -1 if x < 0 else 0)


def _words(flag: str, effect: float) -> str:
    if flag:
        return flag
    return "significantly above" if effect > 0 else "significantly below"


def named_field(run) -> str | None:
    """The name of the shipped field the run played (its strategies, in the field's order, for
    its player count), or None."""
    from sim.core.strategies import shipped_file

    try:
        shipped = shipped_file(run.game.strategies)
    except UserError:  # an unreadable shipped file names no field
        return None
    if shipped is None:
        return None
    names = tuple(run.strategy_names)
    for name, field in shipped.fields.items():
        if field.tables.get(run.manifest.get("players")) == names:
            return name
    return None


def field_name(run, known: dict[frozenset[str], str] | None = None) -> str:
    """How a run's field is named: the shipped field it played, else the name ``known`` gives
    its set of strategies (NEOM's archetype field), else its strategies."""
    named = named_field(run)
    if named:
        return f"the {named} field"
    strategies = frozenset(run.strategy_names)
    if known and strategies in known:
        return known[strategies]
    return f"the field {', '.join(dict.fromkeys(run.strategy_names))}"


def verified_leads(run) -> list[dict]:
    """For each strategy of the run that is a shipped set with a verification: the set, the
    strategy it replaces and its lead over it in the mixed field (win share, with interval)."""
    from sim.core.strategies import shipped_file

    try:
        shipped = shipped_file(run.game.strategies)
    except UserError:
        return []
    if shipped is None:
        return []
    out = []
    for name in dict.fromkeys(run.strategy_names):
        check = shipped.tables.get(name, {}).get("verification", {})
        mixed = check.get("mixed", {})
        if "lead" in mixed:
            out.append(
                {
                    "set": name,
                    "replaces": check.get("replaces", ""),
                    "games": mixed.get("games"),
                    "lead": mixed["lead"],
                    "lo": mixed.get("lead_lo"),
                    "hi": mixed.get("lead_hi"),
                }
            )
    return out
