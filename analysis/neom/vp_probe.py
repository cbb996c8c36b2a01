"""The report's VP probe (``neom report RUN --probe N``): the VP equivalent of a flagged
cornerstone or tile from the item's own slope, not the run's exchange rate.

For each of the top ``N`` flagged items (largest effect first) whose printed VP scores (a
cornerstone, a Residential or Public tile: ``levers.item_levers``' live ``vp`` lever), the run's
field plays the run's catalogue on the same deals (the run's seed, players and strategies:
``neom balance``'s ``Evaluator``) as it is and with the item's VP moved toward the band
(``probe_item``: the first step is the report's reading without a probe, then secant steps
until the item's effect is near zero). The item's paired shift (``balance.item_point``: a
cornerstone against the median cornerstone, a tile against expected; the median tile of a
generation hardly moves when one tile's VP does) over the VP moved is its slope, with its
paired interval (``core.balance.paired_slope``); the report reads the item's effect / slope as
"VP on the item (probe)" (``next_step.vp_equivalent``).

Why not a local +-1 VP: the effect is S-shaped in VP. On the three-plant catalogue City Archive
(planted 3 -> 9 VP) reads +0.5, +1.0, +4.2, +8.7 and +24.7 pct-pts at VP 3, 4, 5, 6 and 9; its
+-1 VP slope at 9 is 1.9 pct-pts per VP and reads it as 12.7 VP, the secant to 3 reads 5.8.

Each slope is kept in the report folder's ``vp_probes.json``, keyed by the catalogue's digest,
the item, the field, players, games and seed, so a second report of the same run into the same
folder replays nothing. Probes are opt-in: each item plays 1-3 x ``--probe-games`` games (plus
the catalogue as it is, once), about 30-40 s an item at the default on 2 cores.
"""

import json
import math
import shutil
import sys
import tempfile
import time
import tomllib
from pathlib import Path

PROBE_FILE = "vp_probes.json"
# Games per played value of a probe. At 8,000 games of the strong 4-player field the slope's
# 95% interval is about +-10% (City Archive 4.15 [3.72, 4.58] pct-pts per VP, +-0.6 VP on its
# 5.8); at 2,000 it is about +-20%, enough for the known answer but not to rank items.
DEFAULT_PROBE_GAMES = 8000
PROBED_KINDS = ("cornerstone", "tile")


def probe_key(digest: str, item: str, field: str, players: int, games: int, seed: int) -> str:
    return json.dumps([digest, item, field, int(players), int(games), int(seed)])


def run_field(run) -> str:
    from analysis.core.robustness import named_field

    specs = (s.get("spec", s["name"]) for s in run.manifest["strategies"])
    return named_field(run) or ",".join(specs)


def _players(run) -> int:
    players = run.manifest.get("players", 4)
    return int(players[0] if isinstance(players, list) else players)


def probe_games(run, games: int | None) -> int:
    """The games per side: ``games`` (default ``DEFAULT_PROBE_GAMES``, at most the run's), a
    whole number of seat rotations."""
    from sim.core.errors import UserError

    players = _players(run)
    n = DEFAULT_PROBE_GAMES if games is None else int(games)
    if games is None:
        n = min(n, int(run.manifest.get("games", n)))
    if n < players:
        raise UserError(f"--probe-games {n}: at least the run's players ({players})")
    return max(players, n - n % players)


def setting_of(run, games: int, min_n: int):
    """``neom balance``'s Setting for the run's field, deals and variant."""
    from analysis.neom.balance import Setting
    from sim.neom.constants import VARIANT_NAMES

    code = int(run.manifest.get("rules", {}).get("variant", 0))
    variant = next((name for name, v in VARIANT_NAMES.items() if v == code), "standard")
    specs = tuple(s.get("spec", s["name"]) for s in run.manifest["strategies"])
    return Setting(strategies=specs, players=_players(run), games=games,
                   seed=int(run.manifest.get("seed", 1)), variant=variant, min_n=min_n)  # fmt: skip


def vp_lever(base_text: str, name: str, variant: str):
    """The item's live printed-VP lever, or None (a tile whose VP does not score)."""
    from analysis.neom.levers import item_levers

    _, kind, levers = item_levers(tomllib.loads(base_text), name, variant)
    if kind not in PROBED_KINDS:
        return None
    lever = next((lv for lv in levers if lv.path == "vp"), None)
    return lever if lever is not None and not lever.inert else None


MAX_STEPS = 3  # played values per probe (after the catalogue as it is)


def probe_item(evaluator, lever, kind: str, name: str, min_n: int, effect: float,
               guess: float, band: float) -> dict:  # fmt: skip
    """The item's slope toward zero, a secant: its VP moved by ``guess`` VP (rounded, at least
    1, within its bounds) against the effect's sign, played on the same deals as the catalogue
    as it is; while the item's effect there is further from zero than a quarter of ``band``
    (``neom balance``'s ``CLOSE_ENOUGH``), one more step (at least 1 VP) to where the last
    secant puts the zero, at most ``MAX_STEPS`` values. The slope is the paired shift from the
    catalogue as it is to the value whose effect is nearest zero, over the VP moved, in pct-pts
    of win share per VP with its 95% interval. (A local +-1 VP slope does not do: the effect is
    S-shaped in VP, so a planted +6 VP cornerstone's local slope is under half its secant's.)"""
    from analysis.core.balance import CLOSE_ENOUGH, paired_slope
    from analysis.neom.balance import item_point

    events = kind != "cornerstone"
    direction = -1 if effect > 0 else 1  # VP moves the effect up
    base = evaluator.measure({}, events=events, what=f"{name}: the catalogue as it is")
    step = max(1, round(abs(guess))) if math.isfinite(guess) else 1
    points = []  # (|effect there|, result)
    tried = {lever.current}
    value = lever.current + direction * step
    for _ in range(MAX_STEPS):
        value = min(max(value, lever.low), lever.high)
        if value in tried:
            break
        tried.add(value)
        cand = evaluator.measure({lever.key: value}, events=events, what=f"{name}: vp = {value}")
        point = item_point(base, cand, name, kind, value, min_n, median=True)
        delta = value - lever.current
        slope, lo, hi = paired_slope(point.shift, point.shift_lo, point.shift_hi, delta)
        there = abs(point.effect) if math.isfinite(point.effect) else math.inf
        points.append((there, {"slope": slope, "lo": lo, "hi": hi, "vp": [lever.current, value],
                               "n": point.n}))  # fmt: skip
        if there <= band * CLOSE_ENOUGH or not slope > 0:
            break
        # The last secant's zero, at least one VP further.
        value -= int(math.copysign(max(1, round(abs(100 * point.effect / slope))), point.effect))
    if not points:
        return {"slope": math.nan, "lo": math.nan, "hi": math.nan, "vp": [lever.current] * 2}
    return min(points, key=lambda p: p[0])[1]


def flagged_candidates(run, tables: dict) -> list[tuple[str, str, float, float]]:
    """(kind, name, effect, first guess in VP) of the flagged cornerstones and tiles, largest
    effect first; the guess is the report's VP equivalent without a probe."""
    from analysis.neom.next_step import vp_equivalent, win_share_per_vp, with_leads

    per_vp = win_share_per_vp(run)
    out = []
    for kind in PROBED_KINDS:
        table = tables.get(kind)
        if table is None:
            continue
        for row in with_leads(kind, table, run).iter_rows(named=True):
            x = row.get("vs_median")
            if row.get("flag") and x is not None and math.isfinite(x):
                guess = vp_equivalent(kind, row, per_vp, "vs_median")[0]
                out.append((kind, str(row["tile_name"]), float(x), guess))
    return sorted(out, key=lambda t: -abs(t[2]))


def read_cache(path) -> dict:
    if path is None or not Path(path).is_file():
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # an unreadable cache is replayed, not trusted
    return data.get("probes", {}) if isinstance(data, dict) else {}


def probe_report(report, run) -> None:
    """NEOM's ``Game.probe_ref``: probe the run's flagged items (``report.probe``) before the
    report's sections, whose next steps read the slopes from ``report.cache``."""
    from analysis.neom.next_step import PROBES
    from analysis.neom.report import derived

    probes = probe_flagged(report, run, derived(report, run))
    report.cache.setdefault(PROBES, {})[id(run)] = probes


def probe_flagged(report, run, tables: dict) -> dict:
    """Probe the top ``report.probe['items']`` flagged items with a live VP lever; (kind, name)
    -> slope dict, also written to the report folder's ``vp_probes.json`` (with the earlier
    report's entries this one used or kept)."""
    options = report.probe or {}
    wanted = int(options.get("items") or 0)
    if wanted <= 0:
        return {}
    from analysis.core.balance import Progress
    from analysis.neom.balance import Evaluator
    from sim.neom import CATALOG_SNAPSHOT

    snapshot = run.path / CATALOG_SNAPSHOT
    if not snapshot.is_file():
        print("report: --probe: the run keeps no catalogue; VP equivalents from the score lead",
              file=sys.stderr)  # fmt: skip
        return {}
    base_text = snapshot.read_text(encoding="utf-8")
    games = probe_games(run, options.get("games"))
    setting = setting_of(run, games, report.min_n)
    digest = str(run.manifest.get("data", {}).get("digest", ""))
    field, players = run_field(run), setting.players
    chosen = []
    for kind, name, x, guess in flagged_candidates(run, tables):
        lever = vp_lever(base_text, name, setting.variant)
        if lever is not None:
            chosen.append((kind, name, lever, x, guess))
        if len(chosen) == wanted:
            break
    cache = read_cache(options.get("previous"))
    kept = {k: v for k, v in cache.items() if k.startswith(json.dumps([digest])[:-1])}
    out = {}
    todo = [c for c in chosen if probe_key(digest, c[1], field, players, games, setting.seed)
            not in cache]  # fmt: skip
    # The catalogue as it is (played once, shared by every probe) and one or two steps each.
    work = Path(tempfile.mkdtemp(prefix="neom-report-probe-"))
    start = time.perf_counter()
    done = 0
    try:
        evaluator = Evaluator(base_text, "the run's catalogue", setting, work,
                              Progress(games * (1 + len(todo)), quiet=True),
                              command="neom report --probe")  # fmt: skip
        for i, (kind, name, lever, x, guess) in enumerate(chosen, 1):
            key = probe_key(digest, name, field, players, games, setting.seed)
            if key in cache:
                result = cache[key]
                print(f"report: VP probe {i}/{len(chosen)} {name}: from {PROBE_FILE}",
                      file=sys.stderr, flush=True)  # fmt: skip
            else:
                began = time.perf_counter()
                result = probe_item(
                    evaluator, lever, kind, name, report.min_n, x, guess, report.band
                )
                done += 1
                seconds = time.perf_counter() - began
                elapsed = time.perf_counter() - start
                rate = evaluator.progress.played / elapsed if elapsed > 0 else math.nan
                eta = (len(todo) - done) * elapsed / done
                print(
                    f"report: VP probe {i}/{len(chosen)} {name} (vp {result['vp'][0]} -> "
                    f"{result['vp'][1]}, {games:,} games a side): {result['slope']:.2f} "
                    "pct-pts per VP "
                    f"[{result['lo']:.2f}, {result['hi']:.2f}] in {seconds:.0f} s | "
                    f"{rate:,.0f} games/s, {elapsed:.0f} s, ETA {eta:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
            kept[key] = {k: result.get(k) for k in ("slope", "lo", "hi", "vp", "n")}
            out[(kind, name)] = {**kept[key], "games": games}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    (report.out / PROBE_FILE).write_text(
        json.dumps({"about": "paired +-1 VP probes of `neom report --probe`: key = [catalogue "
                    "digest, item, field, players, games per side, seed]; slope and its 95% "
                    "interval in pct-pts of win share per VP", "probes": kept}, indent=1),
        encoding="utf-8",
    )  # fmt: skip
    return out
