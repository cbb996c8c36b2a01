"""Reports read runs chunk by chunk (issue 29): the merged statistics give the numbers of a
whole-table computation, whatever the chunks and the workers.

- the statistics' merges against whole-sample formulas (planted data, random splits);
- chunks end on deal boundaries (a cluster never spans two chunks);
- a synthetic run and two real runs (with and without events), cut into small batches and
  reduced by two worker processes: every CSV and findings.json as the whole-table reference
  (tests/reference_report.py, main's analysis before the change) computes them.
"""

import json
import math

import numpy as np
import polars as pl
import pytest
from reference_report import report_tables
from run_helpers import small_run

from analysis.core.batches import Execution, plan_chunks
from analysis.core.load import open_run, tile_names
from analysis.core.reduce import ClusterMoments, Moments, Sums, VectorClusterMoments, merge_stats
from analysis.core.report import build_report
from analysis.core.stats import (
    bootstrap_interval,
    cluster_mean,
    quantile_from_counts,
    seat_balance,
    seat_chi_square,
    wald_chi_square,
)
from analysis.neom.synthetic import write_run
from sim.neom.catalog import DEFAULT_CATALOG

RTOL = 1e-9  # floating-point sums in another order differ in the last bits, no more


@pytest.fixture(scope="module", autouse=True)
def no_png():
    """The reports here are checked by their tables: the figures are not rendered (most of a
    small report's time). For the whole module, so that the reports its module fixtures build
    are not rendered either (a function's fixture starts after those)."""
    from analysis.core.report import Report

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Report, "figure", lambda self, name, fig, alt: "")
        yield


ROW_KEYS = ("n_players", "strategy_name", "seat", "tile", "a", "b", "generation")


def _splits(n: int, rng, parts: int) -> list[slice]:
    cuts = np.sort(rng.choice(np.arange(1, n), size=parts - 1, replace=False))
    bounds = [0, *cuts.tolist(), n]
    return [slice(a, b) for a, b in zip(bounds, bounds[1:], strict=False)]


def test_tile_names_are_a_lookup_with_none_blank_and_unknown_ids_numbered():
    """Runs and chunks name tile ids by one gather (a compare names millions of seat rows):
    an id is its name, none (null or negative) is blank, an id past the table is 'tile N'."""
    ids = pl.Series("tile", [2, 0, None, -1, 5, 1, 2], dtype=pl.Int32)
    named = tile_names(ids, ("Apartments", "Bank", "Casino"), "name")
    assert named.name == "name" and named.dtype == pl.Utf8
    assert named.to_list() == ["Casino", "Apartments", "", "", "tile 5", "Bank", "Casino"]
    assert tile_names(pl.Series("tile", [], dtype=pl.Int64), ("A",)).to_list() == []


def test_moments_merge_to_the_whole_sample_mean_and_sd():
    rng = np.random.default_rng(1)
    x = 1e6 + rng.normal(size=5000)  # a large mean: a naive sum of squares would cancel
    group = rng.integers(0, 3, size=x.size)
    frame = pl.DataFrame({"g": group, "x": x})
    parts = [Moments.of(frame[s], "g", "x") for s in _splits(x.size, rng, 7)]
    table = Moments.merge_all(parts).table()
    for row in table.iter_rows(named=True):
        values = x[group == row["g"]]
        assert row["n"] == values.size
        assert row["x"] == pytest.approx(values.mean(), rel=1e-15)
        assert row["x_sd"] == pytest.approx(values.std(ddof=1), rel=1e-9)


def test_cluster_moments_merge_to_the_whole_sample_cluster_robust_interval():
    """Chunks of whole clusters, merged in any grouping, give cluster_mean's CR1 interval
    (with its variance floor), from polars rows and from arrays alike."""
    rng = np.random.default_rng(2)
    deal = np.sort(rng.integers(0, 800, size=6000))
    item = rng.integers(0, 4, size=deal.size)
    shared = rng.normal(size=800)[deal]  # what a deal's games share: the clusters matter
    value = 50.0 + shared + rng.normal(size=deal.size)
    expected = rng.uniform(0.2, 0.3, size=deal.size)
    frame = pl.DataFrame({"item": item, "deal": deal, "v": value, "e": expected})
    bounds = [0, *np.searchsorted(deal, [100, 350, 351, 700]).tolist(), deal.size]
    keys = pl.DataFrame({"item": np.arange(4)})
    polars_parts = [
        ClusterMoments.of(frame[a:b], ["item"], "v", "e")
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]
    array_parts = [
        ClusterMoments.from_codes(keys, item[a:b], value[a:b], deal[a:b], expected[a:b])
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]
    merged = [
        ClusterMoments.merge_all(polars_parts),
        ClusterMoments.merge_all(array_parts),
        ClusterMoments.merge_all(
            [ClusterMoments.merge_all(polars_parts[:2]), ClusterMoments.merge_all(array_parts[2:])]
        ),
    ]
    for moments in merged:
        table = moments.effect_table()
        for row in table.iter_rows(named=True):
            rows = item == row["item"]
            whole = cluster_mean(value[rows], deal[rows], expected[rows] * (1 - expected[rows]))
            assert (row["n"], row["clusters"]) == (whole["n"], whole["clusters"])
            assert row["effect"] == pytest.approx(whole["mean"], rel=1e-14)
            assert row["effect_se"] == pytest.approx(whole["se"], rel=1e-9)
            # The interval is clipped to what a win share can reach (values here are not).
            e = expected[rows].mean()
            assert row["effect_lo"] == pytest.approx(max(whole["lo"], -e), rel=1e-9)
            assert row["effect_hi"] == pytest.approx(min(whole["hi"], 1 - e), rel=1e-9)


def test_the_seat_test_merges_to_the_whole_sample_statistic():
    rng = np.random.default_rng(3)
    games = 3000
    winner = rng.choice(4, size=games, p=[0.31, 0.23, 0.23, 0.23])
    shares = np.eye(4)[winner]
    deal = np.arange(games) // 4
    whole = seat_chi_square(shares, deal)
    contrasts = shares[:, :-1] - shares[:, -1:]
    parts = [
        VectorClusterMoments.of(np.full(b - a, 4), contrasts[a:b], deal[a:b])
        for a, b in ((0, 1000), (1000, 1004), (1004, 3000))
    ]
    mean, covariance, n, clusters = VectorClusterMoments.merge_all(parts).covariance(4)
    assert (n, clusters) == (games, games // 4)
    merged = wald_chi_square(mean, covariance)
    assert merged["statistic"] == pytest.approx(whole["statistic"], rel=1e-9)
    assert merged["p"] == pytest.approx(whole["p"], rel=1e-6, abs=1e-300)
    assert whole["p"] < 1e-6  # the planted seat advantage is found


def test_sums_merge_counts_maxima_and_minima():
    a = Sums.of(pl.DataFrame({"k": [1, 1, 2], "x": [3, 4, 5]}), "k", pl.col("x").sum(),
                pl.col("x").max().alias("top"), how={"top": "max"})  # fmt: skip
    b = Sums.of(pl.DataFrame({"k": [2, 3], "x": [9, 1]}), "k", pl.col("x").sum(),
                pl.col("x").max().alias("top"), how={"top": "max"})  # fmt: skip
    merged = merge_stats([{"s": a}, {"s": b}, {}])["s"].table()
    assert merged.rows() == [(1, 7, 4), (2, 14, 9), (3, 1, 1)]


def test_quantiles_from_a_histogram_are_polars_quantiles():
    rng = np.random.default_rng(4)
    for _ in range(200):
        sample = rng.integers(-3, 40, size=int(rng.integers(1, 80)))
        values, counts = np.unique(sample, return_counts=True)
        series = pl.Series(sample)
        for q in (0.05, 0.1, 0.25, 0.5, 0.9, 0.99):
            assert quantile_from_counts(values, counts, q) == series.quantile(q)
            assert quantile_from_counts(values, counts, q, "linear") == pytest.approx(
                np.quantile(sample, q), abs=1e-12
            )
        assert quantile_from_counts(values, counts, 0.5, "linear") == series.median()


def test_the_pattern_bootstrap_is_the_bootstrap_over_games():
    """Drawing games with replacement is drawing counts of the distinct seat patterns: with
    one row per game the draws are identical, and grouped they give the same interval up to
    Monte Carlo noise."""
    rng = np.random.default_rng(5)
    shares = np.eye(3)[rng.choice(3, size=2000, p=[0.4, 0.3, 0.3])]
    per_game = bootstrap_interval(shares, seat_balance, seed=9)
    assert bootstrap_interval(shares, seat_balance, seed=9, counts=np.ones(2000)) == per_game
    patterns, counts = np.unique(shares, axis=0, return_counts=True)
    grouped = bootstrap_interval(patterns, seat_balance, seed=9, counts=counts)
    width = per_game[1] - per_game[0]
    assert abs(grouped[0] - per_game[0]) < 0.15 * width
    assert abs(grouped[1] - per_game[1]) < 0.15 * width


def test_chunks_end_on_deal_boundaries(tmp_path):
    """Rotated deals of 4 games straddle batches of 70 games: a chunk ends only where a deal
    does. With player counts mixed (no deal size in the manifest) the deal seeds decide."""
    path = write_run(tmp_path / "r4", n_games=600, shared_deals=True, batch_size=70)
    specs = plan_chunks(open_run(path), chunk_games=100)
    assert [s.start for s in specs] == [0, 140, 280, 420, 560]
    assert sum(s.games for s in specs) == 600
    mixed = write_run(tmp_path / "mixed", n_games=600, n_players=[3, 4], shared_deals=True,
                      batch_size=70, events=False)  # fmt: skip
    run = open_run(mixed)
    seeds = run.games.select("deal_seed").collect()["deal_seed"].to_numpy()
    for spec in plan_chunks(run, chunk_games=50)[1:]:
        assert seeds[spec.start] != seeds[spec.start - 1]


# --- the same numbers as a whole-table computation ----------------------------------------------


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    keys = [k for k in ROW_KEYS if k in frame.columns]
    return frame.sort(keys, nulls_last=True) if keys else frame


def _assert_same_table(name: str, got: pl.DataFrame, want: pl.DataFrame) -> None:
    assert got.columns == want.columns, name
    assert got.height == want.height, name
    got, want = _sorted(got), _sorted(want)
    for column in got.columns:
        a, b = got[column], want[column]
        if a.dtype.is_float() or b.dtype.is_float():
            x = a.cast(pl.Float64).to_numpy()
            y = b.cast(pl.Float64).to_numpy()
            if name == "seat_balance" and column in ("lo", "hi"):
                # A bootstrap: the same resampling drawn over seat patterns, so Monte Carlo
                # noise apart, bounded as in the pattern bootstrap test above (a share of the
                # interval's width; a fixed 0.01 failed on a run whose interval is 0.1+ wide).
                width = (want["hi"] - want["lo"]).cast(pl.Float64).to_numpy()
                assert (np.abs(x - y) < 0.15 * width).all(), (name, column, x, y, width)
                continue
            np.testing.assert_allclose(x, y, rtol=RTOL, atol=1e-12, err_msg=f"{name}.{column}")
        else:
            assert a.cast(pl.Utf8).to_list() == b.cast(pl.Utf8).to_list(), (name, column)


def _assert_same_report(out, run_path) -> None:
    want_tables, want_items = report_tables(open_run(run_path))
    written = {p.stem: p for p in (out / "tables").glob("*.csv")}
    # The ranked next steps only order findings and tables compared here (and their words).
    written.pop("next_steps", None)
    assert set(written) == set(want_tables)
    for name, path in written.items():
        want = want_tables[name]
        # Read back as written (CSV), the reference through the same CSV round trip.
        got = pl.read_csv(path, infer_schema_length=None)
        want.write_csv(out / f"{name}.want")
        _assert_same_table(name, got, pl.read_csv(out / f"{name}.want", infer_schema_length=None))
    key = lambda item: (item["kind"], item["name"], item.get("strategy", ""))  # noqa: E731
    got_items = sorted(json.loads((out / "findings.json").read_text()), key=key)
    want_items = sorted(json.loads(json.dumps(want_items)), key=key)
    assert len(got_items) == len(want_items)
    for got, want in zip(got_items, want_items, strict=True):
        assert got.keys() == want.keys()
        for field, value in got.items():
            if isinstance(value, float) and isinstance(want[field], float):
                assert math.isclose(value, want[field], rel_tol=RTOL, abs_tol=1e-12), field
            else:
                assert value == want[field], (key(got), field)


CHUNKED = Execution(workers=2, chunk_games=60, task_games=120, progress=False)


def test_a_synthetic_run_reports_the_whole_table_numbers(tmp_path):
    path = write_run(
        tmp_path / "run", n_games=600, strategies={"strong": 0.3, "plain": 0.0},
        boosts={7: 0.8}, catalog_path=DEFAULT_CATALOG, shared_deals=True, batch_size=50,
    )  # fmt: skip
    out = tmp_path / "report"
    build_report(path, out, execution=CHUNKED)
    _assert_same_report(out, path)


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory):
    """Two small runs of the engine in batches that cut deals: with events (4 players,
    batches of 30) and without (3 players, batches of 20)."""
    root = tmp_path_factory.mktemp("real")
    small_run(root / "events", "neom", ("greedy", "builder", "merchant", "random"), 4, 240, 3,
              events=True, batch_size=30)  # fmt: skip
    small_run(root / "plain", "neom", ("industrialist", "random", "greedy"), 3, 300, 4,
              batch_size=20)  # fmt: skip
    return root


@pytest.fixture(scope="module")
def chunked_reports(real_runs, tmp_path_factory):
    """Each real run's report in small chunks on two workers, built once: the tests below
    only read it (each build costs seconds of the suite)."""
    root = tmp_path_factory.mktemp("chunked")
    for name in ("events", "plain"):
        build_report(real_runs / name, root / name, execution=CHUNKED)
    return root


@pytest.mark.parametrize("name", ["events", "plain"])
def test_real_runs_report_the_whole_table_numbers(real_runs, chunked_reports, name):
    _assert_same_report(chunked_reports / name, real_runs / name)


def test_the_numbers_do_not_depend_on_chunks_or_workers(real_runs, chunked_reports, tmp_path):
    """One chunk in this process, or small chunks on two workers: the same tables (integers
    and strings exactly, floats to the last bits)."""
    whole = tmp_path / "whole"
    build_report(real_runs / "events", whole,
                 execution=Execution(workers=1, chunk_games=10**9, progress=False))  # fmt: skip
    chunked = chunked_reports / "events"
    for path in sorted((whole / "tables").glob("*.csv")):
        got = pl.read_csv(chunked / "tables" / path.name, infer_schema_length=None)
        want = pl.read_csv(path, infer_schema_length=None)
        _assert_same_table(path.stem, got, want)
        if path.stem == "seat_balance":
            assert got["lo"].to_list() == want["lo"].to_list()  # the same draws too


def _report_bytes(out) -> dict[str, bytes]:
    files = [out / "findings.json", *sorted((out / "tables").glob("*.csv"))]
    return {path.name: path.read_bytes() for path in files}


def test_reports_are_byte_identical_for_any_workers_and_for_a_copy(real_runs, tmp_path):
    """Issue 35 m13: --workers 2 and --workers 1 differed in the 16th digit (the chunks'
    float sums were merged in the order the tasks finished, grouped by task); so did a copy
    of the run. The chunks of a run now merge along one fixed tree."""
    import shutil

    copy = tmp_path / "copy" / "events"
    shutil.copytree(real_runs / "events", copy)
    executions = [
        Execution(workers=1, chunk_games=30, task_games=10**9, progress=False),  # 4 tasks
        Execution(workers=1, chunk_games=30, task_games=1, progress=False),  # a task a chunk
        Execution(workers=2, chunk_games=30, task_games=90, progress=False),
    ]
    reports = []
    for number, execution in enumerate(executions):
        out = tmp_path / f"report{number}"
        build_report(real_runs / "events", out, execution=execution)
        reports.append(_report_bytes(out))
    build_report(copy, tmp_path / "of-copy", execution=executions[2])
    reports.append(_report_bytes(tmp_path / "of-copy"))
    for other in reports[1:]:
        assert other.keys() == reports[0].keys()
        different = [name for name in reports[0] if other[name] != reports[0][name]]
        assert not different, different


def test_the_merge_tree_does_not_depend_on_the_order_nodes_arrive_in():
    from analysis.core.batches import MERGE_EVERY, MergeTree

    rng = np.random.default_rng(7)
    n_chunks = 2 * MERGE_EVERY + 3
    leaves = []
    for index in range(n_chunks):
        x = rng.normal(size=50) * 10.0 ** rng.integers(-3, 6)
        frame = pl.DataFrame({"g": rng.integers(0, 3, size=50), "x": x})
        leaves.append((0, index, {"r": {"m": Moments.of(frame, "g", "x")}}))

    def merged(order, cut):
        tree = MergeTree(n_chunks, ["r"])
        # Tasks of ``cut`` chunks, arriving in ``order``, as the command's process sees them.
        tasks = [leaves[i : i + cut] for i in range(0, n_chunks, cut)]
        for task_number in order(len(tasks)):
            first = task_number * cut
            part = MergeTree(n_chunks, ["r"])
            for level, index, node in tasks[task_number]:
                part.add(level, index, node)
            assert all(first <= i * MERGE_EVERY**lv < first + cut for lv, i, _ in part.nodes())
            for node in part.nodes():
                tree.add(*node)
        return tree.result()["r"]["m"].table()

    want = merged(lambda n: range(n), 1)
    for cut in (1, 2, 5, 17, n_chunks):
        for _ in range(3):
            got = merged(lambda n: rng.permutation(n).tolist(), cut)
            assert got.to_dicts() == want.to_dicts()


# --- compare, experiment, Tangram: the same reductions ------------------------------------------


def test_paired_shifts_are_mains_paired_shifts():
    """neom compare's paired shift (effects, standard errors, shift and interval per item)
    against main's whole-frame computation, on items missing from a side, one-game deals and
    a deterministic shift."""
    from reference_report import paired_effect_shifts as reference

    from analysis.core.compare import paired_effect_shifts

    rng = np.random.default_rng(6)
    n = 600
    games = pl.DataFrame({"game_id": np.arange(n), "deal": np.arange(n) // 3})

    def side(shift):
        rows = rng.integers(0, n, size=900)
        return pl.DataFrame({
            "game_id": rows, "tile_name": rng.choice(["A", "B", "C"], size=rows.size),
            "residual": rng.normal(shift, 0.4, size=rows.size),
        })  # fmt: skip

    base, cand = side(0.0), side(0.05)
    cand = pl.concat([cand, pl.DataFrame({"game_id": [5], "tile_name": ["D"], "residual": [0.3]})])
    for b, c in ((base, cand), (base, base.with_columns(pl.col("residual") + 0.1))):
        got, want = paired_effect_shifts(b, c, games), reference(b, c, games)
        _assert_same_table("shifts", got.select(want.columns), want)


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """A baseline and a candidate catalogue (one tile's VP changed) on the same games, in
    batches of 15 games that cut deals."""
    from sim.neom.catalog import DEFAULT_CATALOG

    root = tmp_path_factory.mktemp("twins")
    text = DEFAULT_CATALOG.read_text(encoding="utf-8")
    candidate = root / "candidate.toml"
    candidate.write_text(text.replace("vp = 4\n", "vp = 7\n", 1), encoding="utf-8")
    for name, data in (("base", None), ("cand", candidate)):
        small_run(root / name, "neom", ("greedy", "random", "random", "builder"), 4, 160, 2,
                  events=True, batch_size=15, data=data)  # fmt: skip
    return root


def test_compare_reads_twin_runs_chunk_by_chunk_as_whole_frames(twins):
    """The comparison's items from twin chunks on two workers equal the public whole-frame
    functions on the runs' seat rows."""
    from analysis.core import compare as generic
    from analysis.core.report import Report
    from analysis.core.tabulate import deals
    from analysis.neom import compare

    base, cand = open_run(twins / "base"), open_run(twins / "cand")
    compare._paired_stats(base, cand, CHUNKED)
    items = compare.comparison_items(base, cand, Report(out=None), set())
    strategies, seats = generic.paired_groups(base, cand, CHUNKED)
    games = deals(base).collect()
    longs = compare._long_tables(base), compare._long_tables(cand)
    for kind in ("cornerstone", "tile"):
        for value, prefix in (("residual", ""), ("score_diff", "lead_")):
            want = generic.paired_effect_shifts(longs[0][kind], longs[1][kind], games,
                                                value=value)  # fmt: skip
            got = items.filter(pl.col("kind") == kind).sort("tile_name")
            assert got["tile_name"].to_list() == want["tile_name"].to_list()
            for column in ("shift", "shift_lo", "shift_hi", "shift_p"):
                x, y = got[f"{prefix}{column}"].to_numpy(), want[column].to_numpy()
                np.testing.assert_allclose(x, y, rtol=RTOL, atol=1e-12)
    columns = ["game_id", "seat", "strategy_name", "win_share", "total"]
    players = [run.players.select(columns).collect() for run in (base, cand)]
    for group, got in (("strategy_name", strategies), ("seat", seats)):
        want = generic.paired_by_group(*players, group, games)
        _assert_same_table(group, got.drop("win_shift_q"), want)


def test_a_shared_baseline_side_gives_the_twin_pass_figures_to_the_bit(twins):
    """balance's fresh checks: the baseline's half of the paired pass computed once
    (``baseline_side``), only the candidate's chunks read, and the tiles reduced only to
    the selectors' sums (TILE_SUMS, no tile table) give every shift, interval and q of the
    pass over both runs with the report's whole tile reduction, to the bit."""
    from analysis.core.batches import value
    from analysis.core.report import Report
    from analysis.neom import compare, tiles

    serial = Execution(workers=1, chunk_games=60, progress=False)  # several chunks
    runs = [open_run(twins / name) for name in ("base", "cand")]
    snapshots = [(run.path / run.data.snapshot_name).read_bytes() for run in runs]
    changed = {row["name"] for row in compare.catalog_diff(*snapshots)}
    assert changed
    whole = compare.comparison_items(*runs, Report(out=None), changed, serial)
    light_runs = [open_run(twins / name) for name in ("base", "cand")]
    side = compare.baseline_side(light_runs[0], serial)
    assert len(side.chunks) > 1
    light = compare.comparison_items(*light_runs, Report(out=None), changed, serial, side=side,
                                     report_tables=False)  # fmt: skip
    for run in light_runs:
        assert tiles.TILES.name not in run.cache  # only the sums were reduced
    columns = ["kind", "tile_name", "shift", "shift_lo", "shift_hi", "shift_p", "shift_q",
               "lead_shift", "lead_shift_q", "primary"]  # fmt: skip
    assert light["primary"].any()
    assert light.select(columns).equals(whole.select(columns))
    for run, light_run in zip(runs, light_runs, strict=True):
        sums = value(light_run, tiles.TILE_SUMS)
        for name in ("effects", "leads"):
            got, want = (stats[name].frame.sort("tile") for stats in
                         (sums, run.cache[tiles.TILES.name]))  # fmt: skip
            assert got.equals(want), name


def test_an_experiment_reads_twin_runs_chunk_by_chunk_as_whole_frames(twins):
    from analysis.core import experiment

    base, cand = open_run(twins / "base"), open_run(twins / "cand")
    tile = int(base.events.filter(pl.col("kind") == 1).select("tile").collect()["tile"][0])
    rows, present, changed = experiment.analyse_experiment(
        base, cand, tile, "tile", "force", 0, 4, CHUNKED
    )
    whole = [experiment.holdings(run, tile, "tile") for run in (base, cand)]
    subjects = experiment.subjects_of("force", 0, 4)
    want = experiment.paired_rows(whole[0], whole[1].drop("deal"), subjects)
    for got_row, want_row in zip(rows, want, strict=True):
        assert got_row.keys() == want_row.keys()
        for key, value in want_row.items():
            if isinstance(value, float):
                assert got_row[key] == pytest.approx(value, rel=RTOL, abs=1e-12, nan_ok=True)
            else:
                assert got_row[key] == value
    assert present == experiment.presence(*whole, 4)
    assert changed > 0


def test_a_tangram_report_does_not_depend_on_chunks_or_workers(tmp_path):
    path = tmp_path / "tangram"
    small_run(path, "tangram", ("greedy", "random", "random"), 3, 150, 5, batch_size=20)
    whole, chunked = tmp_path / "whole", tmp_path / "chunked"
    build_report(path, whole, execution=Execution(workers=1, chunk_games=10**9, progress=False))
    build_report(path, chunked, execution=CHUNKED)
    for table in sorted((whole / "tables").glob("*.csv")):
        got = pl.read_csv(chunked / "tables" / table.name, infer_schema_length=None)
        _assert_same_table(table.stem, got, pl.read_csv(table, infer_schema_length=None))
