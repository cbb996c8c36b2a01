"""Does the seat matter? Win share per seat and the seat-balance figure, per player count."""

import numpy as np
import polars as pl

from analysis.core.load import Run
from analysis.core.stats import bootstrap_interval, seat_balance, seat_chi_square
from analysis.core.tabulate import deals, group_table, with_win_share

BOOTSTRAP_SAMPLES = 1000


def seat_shares(run: Run) -> pl.DataFrame:
    """Win share of each seat for each player count, with 95% Wilson intervals."""
    frame = group_table(
        run.players,
        ("n_players", "seat"),
        pl.col("win_share").sum().alias("wins"),
        pl.col("total").mean().alias("mean_score"),
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
    fair seats the estimate sits below 1 by sampling noise alone, so it is not a test.
    """
    rows = []
    by_game = (
        run.players.select("game_id", "n_players", "seat", "win_share")
        .join(deals(run), on="game_id", how="left")
        .collect()
        .partition_by("n_players", as_dict=True)
    )
    for (n_players,), frame in sorted(by_game.items()):
        wide = frame.pivot(on="seat", index=["game_id", "deal"], values="win_share").sort("game_id")
        seat_columns = sorted((c for c in wide.columns if c not in ("game_id", "deal")), key=int)
        matrix = wide.select(seat_columns).fill_null(0.0).to_numpy()
        lo, hi = bootstrap_interval(matrix, seat_balance, n_boot=n_boot, seed=seed)
        shares = matrix.mean(axis=0)
        test = seat_chi_square(matrix, wide["deal"].to_numpy())
        significant = bool(test["p"] < level)
        rows.append(
            {
                "n_players": int(n_players),
                "games": matrix.shape[0],
                "balance": float(seat_balance(shares)),
                "lo": lo,
                "hi": hi,
                "chi2": test["statistic"],
                "df": int(test["df"]),
                "p": test["p"],
                "significant": significant,
                "best_seat": int(seat_columns[int(np.argmax(shares))]) if significant else None,
                "worst_seat": int(seat_columns[int(np.argmin(shares))]) if significant else None,
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
