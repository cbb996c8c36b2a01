"""The report's figures: each function takes a result table and returns a matplotlib Figure
with a title, axis labels and units. Figures are built on the Agg canvas directly (no pyplot
state), so reports can be made in any thread or worker without a display."""

import io

import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

WIDTH = 8.0  # inches; at DPI this fits a laptop screen's text column
DPI = 100
ROW_HEIGHT = 0.24  # inches per row of a forest plot
MAX_FOREST_ROWS = 40
COLORS = ("#3465a4", "#cc0000", "#4e9a06", "#c4a000", "#75507b", "#ce5c00", "#555753")
FLAG_COLORS = {"strong": "#cc0000", "weak": "#3465a4", "": "#555753"}


def _figure(height: float) -> Figure:
    fig = Figure(figsize=(WIDTH, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def png_bytes(fig: Figure, label: str = "") -> bytes:
    """The figure as PNG; ``label`` (a reconstruction's data label) is printed on the figure
    and stored in the PNG's Description, so the file says what it describes on its own."""
    import matplotlib
    from PIL import Image, PngImagePlugin

    if label:
        fig.suptitle(label, fontsize=8, color="#a40000")
    # Drawn once on its own canvas and encoded by Pillow, as savefig does, but without
    # savefig's extra pass (a layout draw that renders nothing, then the draw): the same
    # pixels and the same text chunks for about a fifth less CPU a figure, and a report
    # renders dozens.
    fig.canvas.draw()
    info = PngImagePlugin.PngInfo()
    info.add_text(
        "Software", f"Matplotlib version{matplotlib.__version__}, https://matplotlib.org/"
    )
    if label:
        info.add_text("Description", label)
    buffer = io.BytesIO()
    image = Image.fromarray(np.asarray(fig.canvas.buffer_rgba()))
    image.save(buffer, format="png", pnginfo=info, dpi=(fig.dpi, fig.dpi))
    return buffer.getvalue()


def forest(
    frame: pl.DataFrame, label: str, value: str, title: str, xlabel: str, reference: float = 0.0
) -> Figure:
    """Point estimates with 95% intervals, one row per item, coloured by ``flag`` if present.

    With more than MAX_FOREST_ROWS rows only the most extreme (farthest from ``reference``)
    are drawn, and the title says so.
    """
    frame = frame.filter(pl.col(value).is_not_nan() & pl.col(f"{value}_lo").is_not_nan())
    if frame.height > MAX_FOREST_ROWS:
        frame = frame.sort((pl.col(value) - reference).abs(), descending=True).head(MAX_FOREST_ROWS)
        title = f"{title} (the {MAX_FOREST_ROWS} farthest from {reference:g})"
    frame = frame.sort(value)
    fig = _figure(1.2 + ROW_HEIGHT * max(frame.height, 3))
    ax = fig.add_subplot()
    y = np.arange(frame.height)
    values = frame[value].to_numpy()
    lo = frame[f"{value}_lo"].to_numpy()
    hi = frame[f"{value}_hi"].to_numpy()
    flags = frame["flag"].to_list() if "flag" in frame.columns else [""] * frame.height
    colors = [FLAG_COLORS.get(f, FLAG_COLORS[""]) for f in flags]
    ax.hlines(y, lo, hi, colors=colors, linewidth=1.5)
    ax.scatter(values, y, c=colors, s=18, zorder=3)
    ax.axvline(reference, color="#888a85", linestyle="--", linewidth=1)
    ax.set_yticks(y, frame[label].to_list(), fontsize=8)
    ax.set_ylim(-0.7, frame.height - 0.3)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=11)
    ax.grid(axis="x", alpha=0.3)
    return fig


def grouped_bars(
    frame: pl.DataFrame,
    group: str,
    member: str,
    value: str,
    title: str,
    ylabel: str,
    reference: str | None = None,
) -> Figure:
    """Bars of ``value`` (with ``value_lo``/``value_hi`` error bars) for each ``member`` within
    each ``group``; ``reference`` names a per-row column drawn as a dashed tick (fair share)."""
    groups = frame[group].unique().sort().to_list()
    members = frame[member].unique().sort().to_list()
    fig = _figure(3.6)
    ax = fig.add_subplot()
    width = 0.8 / max(len(members), 1)
    for m_index, name in enumerate(members):
        part = frame.filter(pl.col(member) == name)
        x = (
            np.array([groups.index(g) for g in part[group]])
            + (m_index - (len(members) - 1) / 2) * width
        )
        values = part[value].to_numpy()
        # Clipped at 0: an interval may end a rounding error inside its estimate (a share of
        # exactly 1, as every solo game gives), which matplotlib refuses as a negative error.
        errors = np.clip(
            np.nan_to_num(
                np.vstack(
                    [
                        values - part[f"{value}_lo"].to_numpy(),
                        part[f"{value}_hi"].to_numpy() - values,
                    ]
                )
            ),
            0.0,
            None,
        )
        ax.bar(
            x,
            values,
            width * 0.9,
            yerr=errors,
            capsize=2,
            label=str(name),
            color=COLORS[m_index % len(COLORS)],
        )
        if reference is not None:
            ax.hlines(
                part[reference].to_numpy(),
                x - width / 2,
                x + width / 2,
                colors="black",
                linestyles="--",
                linewidth=1,
            )
    ax.set_xticks(range(len(groups)), [f"{g}" for g in groups])
    ax.set_xlabel(group.replace("_", " "))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    fig.legend(title=member.replace("_", " "), fontsize=8, loc="outside right upper")
    ax.grid(axis="y", alpha=0.3)
    return fig


def heat_map(head_to_head: pl.DataFrame, names: list[str], title: str) -> Figure:
    """Strategy matrix: cell (row A, column B) = share of meetings where A ranked above B."""
    index = {name: i for i, name in enumerate(names)}
    matrix = np.full((len(names), len(names)), np.nan)
    for a, b, share in head_to_head.select("a", "b", "share").iter_rows():
        matrix[index[a], index[b]] = share
    size = 2.5 + 0.5 * len(names)
    fig = _figure(min(size, 7.0))
    ax = fig.add_subplot()
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=0.0, vmax=1.0)
    for i in range(len(names)):
        for j in range(len(names)):
            if not np.isnan(matrix[i, j]):
                ax.text(j, i, f"{100 * matrix[i, j]:.1f}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.set_xlabel("opponent strategy (B)")
    ax.set_ylabel("strategy (A)")
    ax.set_title(title, fontsize=11)
    fig.colorbar(image, ax=ax, label="A ranks above B (share, ties = 1/2)")
    return fig


def score_distributions(
    players: pl.DataFrame, title: str, unit: str, count: str | None = None
) -> Figure:
    """Box plots of the final total (in ``unit``, the game's ``score_unit``) per strategy and
    player count: from one row per seat, or (``count``) from a histogram (``n_players``,
    ``strategy_name``, ``total`` and how many seats scored it), with the same quartiles and
    5th-95th percentile whiskers."""
    from analysis.core.stats import quantile_from_counts

    if count is None:
        players = players.group_by("n_players", "strategy_name", "total").agg(
            pl.len().alias("_count")
        )
        count = "_count"
    groups = (
        players.group_by("n_players", "strategy_name")
        .agg(pl.col("total"), pl.col(count))
        .sort("n_players", "strategy_name")
    )
    fig = _figure(1.2 + 0.3 * max(groups.height, 3))
    ax = fig.add_subplot()
    labels = [f"{s} ({n}p)" for n, s in groups.select("n_players", "strategy_name").iter_rows()]
    stats = []
    for label, totals, counts in zip(labels, groups["total"], groups[count], strict=True):
        values, weights = np.asarray(totals), np.asarray(counts)

        def q(p, values=values, weights=weights):
            return quantile_from_counts(values, weights, p, "linear")

        stats.append({"label": label, "med": q(0.5), "q1": q(0.25), "q3": q(0.75),
                      "whislo": q(0.05), "whishi": q(0.95), "fliers": []})  # fmt: skip
    ax.bxp(stats, orientation="horizontal", showfliers=False)
    ax.set_xlabel(f"final score ({unit}); box: quartiles, whiskers: 5th-95th percentile")
    ax.set_title(title, fontsize=11)
    ax.grid(axis="x", alpha=0.3)
    return fig


def breakdown_bars(
    summary: pl.DataFrame, categories: tuple[str, ...], title: str, unit: str
) -> Figure:
    """Mean score (in ``unit``) per score category, one bar group per strategy and player count."""
    labels = [f"{s} ({n}p)" for n, s in summary.select("n_players", "strategy_name").iter_rows()]
    fig = _figure(3.8)
    ax = fig.add_subplot()
    width = 0.8 / max(len(labels), 1)
    x = np.arange(len(categories))
    for row, label in enumerate(labels):
        values = [summary[c][row] for c in categories]
        ax.bar(
            x + (row - (len(labels) - 1) / 2) * width,
            values,
            width * 0.9,
            label=label,
            color=COLORS[row % len(COLORS)],
        )
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, [c.replace("_", " ") for c in categories], fontsize=8)
    ax.set_ylabel(f"mean {unit} per player")
    ax.set_xlabel("score category")
    ax.set_title(title, fontsize=11)
    fig.legend(fontsize=8, loc="outside right upper")
    ax.grid(axis="y", alpha=0.3)
    return fig


def histograms(
    frame: pl.DataFrame, group: str, value: str, title: str, xlabel: str, count: str | None = None
) -> Figure:
    """Share of rows per integer value of ``value``, one step line per ``group`` value; with
    ``count``, ``frame`` is a histogram (each value's count in that column)."""
    from analysis.core.stats import quantile_from_counts

    fig = _figure(3.4)
    ax = fig.add_subplot()
    for index, ((key,), part) in enumerate(sorted(frame.partition_by(group, as_dict=True).items())):
        part = part.filter(pl.col(value).is_not_null())
        values = part[value].to_numpy().astype(np.int64)
        weights = part[count].to_numpy() if count else np.ones(values.size, dtype=np.int64)
        total = int(weights.sum())
        if total == 0:
            continue
        top = int(quantile_from_counts(values, weights, 0.99, "linear")) + 1
        counts = np.bincount(np.clip(values, 0, top), weights=weights, minlength=top + 1)
        ax.step(
            np.arange(top + 1), counts / total, where="mid",
            label=f"{key}", color=COLORS[index % len(COLORS)],
        )  # fmt: skip
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of games")
    ax.set_title(title, fontsize=11)
    ax.grid(alpha=0.3)
    fig.legend(title=group.replace("_", " "), fontsize=8, loc="outside right upper")
    return fig


def lines_by(frame: pl.DataFrame, x: str, y: str, series: str, title: str, xlabel: str,
             ylabel: str) -> Figure:  # fmt: skip
    """One line (with ``y_lo``/``y_hi`` bands when present) per ``series`` value over ``x``."""
    fig = _figure(3.4)
    ax = fig.add_subplot()
    for index, ((key,), part) in enumerate(
        sorted(frame.partition_by(series, as_dict=True).items())
    ):
        part = part.sort(x)
        color = COLORS[index % len(COLORS)]
        ax.plot(part[x].to_numpy(), part[y].to_numpy(), marker="o", label=str(key), color=color)
        if f"{y}_lo" in part.columns:
            ax.fill_between(part[x].to_numpy(), part[f"{y}_lo"].to_numpy(),
                            part[f"{y}_hi"].to_numpy(), alpha=0.15, color=color)  # fmt: skip
    ax.set_xticks(sorted(frame[x].unique().to_list()))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    ax.grid(alpha=0.3)
    fig.legend(title=series.replace("_", " "), fontsize=8, loc="outside right upper")
    return fig


ROBUSTNESS_COLORS = {
    "robust": "#4e9a06",
    "reversed": "#75507b",
    "weaker": "#8f5902",
    "stronger": "#8f5902",
    "vanishes": "#ce5c00",
    "appears": "#ce5c00",
    None: "#555753",
}
ROBUSTNESS_WORDS = {
    "robust": "robust (flagged alike in both fields)",
    "reversed": "reversed (opposite signs, both significant)",
    "weaker": "weaker / stronger in the other field (same sign, both significant)",
    "stronger": "weaker / stronger in the other field (same sign, both significant)",
    "vanishes": "vanishes / appears (significant in one field only)",
    "appears": "vanishes / appears (significant in one field only)",
    None: "no second field to compare",
}


def findings_forest(
    rows: list[dict], title: str, xlabel: str, other: str = "", band: float = 0.0
) -> Figure:
    """The ranked findings at a glance: one row per finding (``label``, ``effect``, ``lo``,
    ``hi`` in the unit of ``xlabel``, ``robustness``), this field's estimate as a dot with its
    95% interval and, when ``other`` names a second field, that field's (``effect_check``,
    ``lo_check``, ``hi_check``) as a hollow square just below; coloured by robustness."""
    rows = rows[:MAX_FOREST_ROWS]
    fig = _figure(1.5 + ROW_HEIGHT * 1.3 * max(len(rows), 3))
    ax = fig.add_subplot()
    y = -np.arange(len(rows), dtype=float)
    for i, row in enumerate(rows):
        color = ROBUSTNESS_COLORS.get(row.get("robustness"), ROBUSTNESS_COLORS[None])
        ax.hlines(y[i], row["lo"], row["hi"], colors=color, linewidth=2)
        ax.scatter([row["effect"]], [y[i]], color=color, s=24, zorder=3)
        if other and row.get("effect_check") is not None:
            yy = y[i] - 0.32
            ax.hlines(yy, row["lo_check"], row["hi_check"], colors=color, linewidth=1,
                      linestyles=":")  # fmt: skip
            ax.scatter([row["effect_check"]], [yy], facecolors="white", edgecolors=color,
                       marker="s", s=18, zorder=3)  # fmt: skip
    ax.axvline(0.0, color="#888a85", linestyle="--", linewidth=1)
    if band:  # the practical band: a flag's whole interval lies outside it
        ax.axvspan(-band, band, color="#d3d7cf", alpha=0.35, linewidth=0)
    ax.set_yticks(y, [row["label"] for row in rows], fontsize=8)
    ax.set_ylim(y[-1] - 0.8 if len(rows) else -1, 0.6)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=11)
    ax.grid(axis="x", alpha=0.3)
    # Marks that share a colour share one legend entry.
    used = {ROBUSTNESS_WORDS.get(m, ROBUSTNESS_WORDS[None]): m
            for m in (row.get("robustness") for row in rows)}  # fmt: skip
    handles = [
        ax.scatter([], [], color=ROBUSTNESS_COLORS.get(m, ROBUSTNESS_COLORS[None]), s=24,
                   label=words)
        for words, m in used.items()
    ]  # fmt: skip
    if other:
        handles.append(ax.scatter([], [], color="#555753", s=24, label="this field (dot)"))
        handles.append(ax.scatter([], [], facecolors="white", edgecolors="#555753", marker="s",
                                  s=18, label=f"{other} (square)"))  # fmt: skip
    if handles:
        fig.legend(handles=handles, fontsize=8, loc="outside lower center", ncols=2)
    return fig


def share_grid(frame: pl.DataFrame, row: str, column: str, value: str, title: str,
               xlabel: str, groups: str | None = None) -> Figure:  # fmt: skip
    """A heat map of shares (0-1) with each cell written in percent: one row per ``row``
    (in the frame's order; ``groups`` names a column whose changes draw a separating line),
    one column per ``column``."""
    rows = list(dict.fromkeys(frame[row].to_list()))
    columns = sorted(frame[column].unique().to_list())
    matrix = np.full((len(rows), len(columns)), np.nan)
    for r, c, v in frame.select(row, column, value).iter_rows():
        matrix[rows.index(r), columns.index(c)] = v
    fig = _figure(1.3 + 0.26 * max(len(rows), 3))
    ax = fig.add_subplot()
    image = ax.imshow(matrix, cmap="YlGn", vmin=0.0, vmax=max(0.05, float(np.nanmax(matrix))),
                      aspect="auto")  # fmt: skip
    for i in range(len(rows)):
        for j in range(len(columns)):
            if not np.isnan(matrix[i, j]):
                share = 100 * matrix[i, j]
                text = f"{share:.1f}%" if share < 10 else f"{share:.0f}%"
                ax.text(j, i, text, ha="center", va="center", fontsize=8,
                        color="#a40000" if share < 1 else "black")  # fmt: skip
    if groups is not None:
        kinds = [frame.filter(pl.col(row) == r)[groups][0] for r in rows]
        for i in range(1, len(rows)):
            if kinds[i] != kinds[i - 1]:
                ax.axhline(i - 0.5, color="black", linewidth=1)
        rows = [f"{r} ({k})" for r, k in zip(rows, kinds, strict=True)]
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    ax.set_xticks(range(len(columns)), [str(c) for c in columns])
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=11)
    fig.colorbar(image, ax=ax, label="share of cities")
    return fig


def stacked_shares(frame: pl.DataFrame, x: str, parts: dict[str, str], title: str,
                   xlabel: str) -> Figure:  # fmt: skip
    """Bars of ``frame[x]`` stacked from the share columns ``parts`` (column -> label), each
    segment labelled in percent."""
    fig = _figure(3.2)
    ax = fig.add_subplot()
    labels = [str(v) for v in frame[x].to_list()]
    bottom = np.zeros(frame.height)
    for index, (column, label) in enumerate(parts.items()):
        values = frame[column].to_numpy().astype(np.float64)
        ax.bar(labels, values, bottom=bottom, label=label, color=COLORS[index % len(COLORS)])
        for i, v in enumerate(values):
            if v >= 0.04:
                ax.text(i, bottom[i] + v / 2, f"{100 * v:.0f}%", ha="center", va="center",
                        fontsize=8, color="white")  # fmt: skip
        bottom += values
    ax.set_ylim(0, max(1.0, float(bottom.max(initial=0.0))))
    ax.set_ylabel("share of selections")
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=11)
    fig.legend(fontsize=8, loc="outside right upper")
    return fig


def rename_texts(fig: Figure, names: dict[str, str]) -> None:
    """Show every text of ``fig`` that is a key of ``names`` as its value: tick labels (fixed
    or categorical), legend entries, titles. Long strategy labels become their short names."""
    if not names:
        return
    from matplotlib.category import StrCategoryFormatter
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    def renamed(formatter):
        return FuncFormatter(lambda x, pos=None: (lambda t: names.get(t, t))(formatter(x, pos)))

    fig.canvas.draw()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            formatter = axis.get_major_formatter()
            if isinstance(formatter, (FixedFormatter, FuncFormatter, StrCategoryFormatter)):
                # Tick labels are drawn anew from the formatter: rename what it gives.
                axis.set_major_formatter(renamed(formatter))
    for text in fig.findobj(Text):
        label = text.get_text()
        if label in names:
            text.set_text(names[label])
