"""Does the seat matter? Win share per seat and the seat-balance figure, per player count."""

import math

import numpy as np
import polars as pl

from analysis.core.batches import Reduction, value
from analysis.core.load import Run
from analysis.core.reduce import Sums, VectorClusterMoments
from analysis.core.stats import bootstrap_interval, seat_balance, wald_chi_square
from analysis.core.strategies import fair_share_moments, share_sums
from analysis.core.tabulate import chunk_deals, with_win_share

BOOTSTRAP_SAMPLES = 1000


MAX_SEATS = 5  # seats of the widest game (sim.core.seeding.MAX_SEATS)
PATTERN = tuple(f"s{seat}" for seat in range(MAX_SEATS))


def _reduce(chunk) -> dict:
    players = chunk.players
    out = {"shares": share_sums(players, "seat")}
    out["fair"] = fair_share_moments(
        players.filter(pl.col("n_players") >= 2), "seat", chunk.memo(chunk_deals)
    )
    # Each game's seat win shares as one row (seats beyond the game's count: null).
    wide = (
        players.select("game_id", "n_players", "seat", "win_share")
        .pivot(on="seat", index=["game_id", "n_players"], values="win_share")
        .join(chunk.memo(chunk_deals), on="game_id", how="left")
    )
    columns = {str(seat): f"s{seat}" for seat in range(MAX_SEATS) if str(seat) in wide.columns}
    wide = wide.rename(columns).with_columns(
        pl.lit(None, pl.Float64).alias(c) for c in PATTERN if c not in columns.values()
    )
    out["patterns"] = Sums.of(wide, ("n_players", *PATTERN), pl.len().alias("games"))
    by_count = {}
    for n_players in sorted(wide["n_players"].unique().to_list()):
        if n_players < 2:
            continue
        part = wide.filter(pl.col("n_players") == n_players)
        matrix = part.select(PATTERN[:n_players]).fill_null(0.0).to_numpy()
        by_count[n_players] = VectorClusterMoments.of(
            np.full(part.height, n_players),
            matrix[:, :-1] - matrix[:, -1:],
            part["deal"].to_numpy(),
        )
    out["contrasts"] = _Contrasts(by_count)
    return out


class _Contrasts:
    """Per player count: the VectorClusterMoments of the seat contrasts (seat s minus the
    last seat); one dict so that each player count keeps its own width."""

    def __init__(self, by_count: dict):
        self.by_count = by_count

    @classmethod
    def merge_all(cls, parts: list["_Contrasts"]) -> "_Contrasts":
        counts = {n for p in parts for n in p.by_count}
        return cls({
            n: VectorClusterMoments.merge_all([p.by_count[n] for p in parts if n in p.by_count])
            for n in counts
        })  # fmt: skip


# Seat win shares, each game's seat pattern and the seat contrasts, chunk by chunk.
SEATS = Reduction("core.seats", _reduce, tables=("games", "players"))


def seat_shares(run: Run) -> pl.DataFrame:
    """Win share of each seat for each player count, with 95% Wilson intervals."""
    shares = value(run, SEATS)["shares"].table()
    frame = shares.select(
        "n_players", "seat", "n", "wins", (pl.col("total") / pl.col("n")).alias("mean_score")
    )
    return with_win_share(frame)


def balance(
    run: Run, n_boot: int = BOOTSTRAP_SAMPLES, seed: int = 0, level: float = 0.05
) -> pl.DataFrame:
    """Seat balance per player count: a test that all seats have the same win share, and the
    balance figure (1 - largest gap between seats' win shares).

    The test is a Wald chi-square on the per-game seat win shares with a covariance that is
    cluster-robust over deals (rotated seats replay each deal; shared wins split), P - 1
    degrees of freedom (``chi2``, ``df``, ``p``). A best and a worst seat are named only when
    ``p < level``. The balance figure's interval is a bootstrap over games; even with perfectly
    fair seats the estimate sits below 1 by sampling noise alone, so it is not a test. The
    bootstrap draws from each game's seat pattern (which seats won, and how the win was
    shared: at most 2^P - 1 patterns) with its count, the same resampling of games at a cost
    that does not grow with the run.
    """
    stats = value(run, SEATS)
    return balance_table(stats["patterns"], stats["contrasts"], n_boot, seed, level)


def balance_table(patterns: Sums, contrasts, n_boot: int, seed: int, level: float):
    """:func:`balance` from its merged statistics."""
    rows = []
    table = patterns.table()
    for (n_players,), part in sorted(table.partition_by("n_players", as_dict=True).items()):
        n_players = int(n_players)
        matrix = part.select(PATTERN[:n_players]).fill_null(0.0).to_numpy()
        counts = part["games"].to_numpy()
        games = int(counts.sum())
        lo, hi = bootstrap_interval(matrix, seat_balance, n_boot=n_boot, seed=seed, counts=counts)
        shares = (counts @ matrix) / games
        moments = contrasts.by_count.get(n_players) if contrasts is not None else None
        test = _chi_square(moments, n_players, games)
        significant = bool(test["p"] < level)
        rows.append(
            {
                "n_players": n_players,
                "games": games,
                "balance": float(seat_balance(shares)),
                "lo": lo,
                "hi": hi,
                "chi2": test["statistic"],
                "df": int(test["df"]),
                "p": test["p"],
                "significant": significant,
                "best_seat": int(np.argmax(shares)) if significant else None,
                "worst_seat": int(np.argmin(shares)) if significant else None,
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "n_players": pl.Int32,
            "games": pl.Int64,
            "balance": pl.Float64,
            "lo": pl.Float64,
            "hi": pl.Float64,
            "chi2": pl.Float64,
            "df": pl.Int32,
            "p": pl.Float64,
            "significant": pl.Boolean,
            "best_seat": pl.Int32,
            "worst_seat": pl.Int32,
        },
    )


def _chi_square(moments, seats: int, games: int) -> dict:
    """:func:`analysis.core.stats.seat_chi_square` from the merged contrast moments."""
    if seats < 2 or games < 2 or moments is None:
        return {"statistic": math.nan, "df": max(seats - 1, 0), "p": math.nan}
    (key,) = moments.parts
    mean, covariance, _, clusters = moments.covariance(key)
    if clusters < 2:
        return {"statistic": math.nan, "df": seats - 1, "p": math.nan}
    return wald_chi_square(mean, covariance)
