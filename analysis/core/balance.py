"""``neom balance``: the lever value that brings an item's effect into the practical band,
for every game that names its levers.

A *lever* is one number of the game's data file or rules tables (NEOM: a tile's VP, cost,
income, ...; Tangram City: a bonus table's value, a tile's area) that moves an item's effect.
Every candidate plays the same deals as the baseline (``neom compare``'s twins), so the
candidates differ from each other by the lever and not by luck. The effect moves almost
monotonically with a lever, so the search is an ordered integer search for the value where it
crosses zero: a secant step from the points measured so far (the first step is one unit),
growing at most fourfold while the sign has not changed, then regula falsi inside the bracket
until the bracket is two adjacent values; the suggested value is the measured one nearest zero
(a value already inside the band is kept). The suggestion is then measured again on fresh deals
(another master seed).

What is generic lives here: the command, the lever, the search, the fresh deals' seed and the
progress lines. A game supplies a :class:`Balancing` (``Game.balance_ref``): its own options and
the run of the command with its levers, effects and result (NEOM: ``analysis.neom.balance``,
``balance_all``; Tangram City: ``analysis.tangram.balance``).
"""

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

MAX_VALUE = 1000  # the largest number a lever takes (NEOM's catalogue, Tangram City's bonuses)
DEFAULT_MAX_EVALS = 8  # candidates per lever before the search gives up
FIRST_STEP = 1  # units of the first step away from the current value
CLOSE_ENOUGH = 0.25  # a measured effect within this share of the band of zero ends a search
GROWTH = 4  # a step grows at most this many times the distance already travelled
FRESH_SALT = 0xBA1A  # the fresh deals' master seed: SeedSequence([seed, FRESH_SALT])
MAX_SEED = 2**63 - 1


# --- levers --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lever:
    """One number of the game's data: ``path`` of entry ``tile`` (NEOM: a tile's ``vp``,
    ``cost``, ``effects[0].vp``, ``alternatives[1].cost``; Tangram City: ``rules``'
    ``planning_bonus``, ``balance_bonus[0]``)."""

    tile: str
    path: str
    current: int
    sign: int  # the expected sign of d(effect) / d(value): +1 VP-like, -1 cost-like
    unit: str  # what one unit is, e.g. "VP", "coin of cost"
    own: bool = True  # a field of the item itself (False: of another tile, for a Disaster)
    inert: str = ""  # why this lever cannot move the effect ("": it can)
    low: int = 0
    high: int = MAX_VALUE

    @property
    def name(self) -> str:
        return self.path if self.own else f"{self.tile}: {self.path}"

    @property
    def key(self) -> tuple[str, str]:
        return (self.tile, self.path)


def fresh_seed(seed: int) -> int:
    """A master seed for fresh deals, independent of ``seed``'s (and reproducible)."""
    state = np.random.SeedSequence([int(seed), FRESH_SALT]).generate_state(2, dtype=np.uint32)
    return int((int(state[0]) << 31 | int(state[1]) >> 1) % MAX_SEED)


# --- measuring --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """The item's effect at one lever value (fractions of win share): the effect and its 95%
    interval on the search deals, and its paired shift from the baseline with its interval."""

    value: int
    effect: float
    lo: float
    hi: float
    shift: float = 0.0
    shift_lo: float = 0.0
    shift_hi: float = 0.0
    n: int = 0


class Progress:
    """One line per candidate on stderr: what is tried, games/s, elapsed and an ETA bound."""

    def __init__(self, planned_games: int, quiet: bool = False):
        self.planned = max(1, planned_games)
        self.played = 0
        self.seconds = 0.0
        self.start = time.perf_counter()
        self.quiet = quiet

    def plan_more(self, games: int) -> None:
        self.planned += games

    def plan_less(self, games: int) -> None:
        self.planned = max(self.played, self.planned - games)

    def done(self, what: str, games: int, seconds: float, result: str = "") -> None:
        self.played += games
        self.seconds += seconds
        rate = self.played / self.seconds if self.seconds > 0 else math.nan
        elapsed = time.perf_counter() - self.start
        left = max(0, self.planned - self.played)
        eta = left / rate if rate and math.isfinite(rate) else math.nan
        if not self.quiet:
            print(
                f"balance: {what}: {games:,} games in {seconds:.1f} s ({games / seconds:,.0f} "
                f"games/s){'; ' + result if result else ''} | {self.played:,} of <= "
                f"{self.planned:,} games at {rate:,.0f} games/s, {elapsed:.0f} s, ETA <= "
                f"{eta:.0f} s",
                file=sys.stderr,
                flush=True,
            )


# --- the search -------------------------------------------------------------------------------


@dataclass
class Search:
    lever: Lever
    points: dict = field(default_factory=dict)  # value -> Point
    suggested: int | None = None
    stop: str = ""
    reached: bool = False  # some value within the bounds brings the effect into the band


def _sign(x: float) -> int:
    return 1 if x > 0 else -1 if x < 0 else 0


def _bracket(points: dict) -> tuple[int, int] | None:
    """The two nearest measured values whose effects have opposite signs (or one is 0)."""
    values = sorted(points)
    best = None
    for a, b in zip(values, values[1:], strict=False):
        fa, fb = points[a].effect, points[b].effect
        if _sign(fa) * _sign(fb) <= 0 and (best is None or b - a < best[1] - best[0]):
            best = (a, b)
    return best


def _propose(points: dict, lever: Lever, direction: int) -> int | None:
    """The next value to measure (None: nothing left to try)."""
    bracket = _bracket(points)
    if bracket is not None:
        a, b = bracket
        if b - a <= 1:
            return None
        fa, fb = points[a].effect, points[b].effect
        x = a - fa * (b - a) / (fb - fa) if fb != fa else (a + b) / 2
        x = int(round(x))
        if x <= a or x >= b or x in points:
            x = (a + b) // 2
        return x if x not in points else None
    current = lever.current
    ahead = sorted((v for v in points if (v - current) * direction > 0),
                   key=lambda v: abs(v - current))  # fmt: skip
    last = ahead[-1] if ahead else current
    bound = lever.high if direction > 0 else lever.low
    if last == bound:
        return None
    travelled = abs(last - current)
    if not ahead:
        step = FIRST_STEP
    else:
        before = ahead[-2] if len(ahead) > 1 else current
        f_last = points[last].effect
        slope = 0.0
        if before in points:  # (a one-sided search may have dropped the current value)
            slope = (f_last - points[before].effect) / (last - before)
        # Progress: a step in ``direction`` moves the effect towards zero (by slope * direction).
        if _sign(slope * direction) != _sign(-f_last):
            step = 2 * max(1, abs(last - before))  # no progress measured: stride further
        else:
            step = int(math.ceil(abs(f_last / slope)))
        step = max(1, min(step, GROWTH * max(travelled, FIRST_STEP)))
    x = last + direction * step
    return int(min(max(x, lever.low), lever.high))


def _played(points: dict, min_n: int) -> dict:
    """The measured values at which enough seats held the item to measure it."""
    return {v: p for v, p in points.items() if p.n >= min_n}


def search_lever(measure, lever: Lever, start: Point, band: float,
                 max_evals: int = DEFAULT_MAX_EVALS, probe: bool = True,
                 min_n: int = 0) -> Search:  # fmt: skip
    """Search ``lever`` for the value nearest the effect's zero; ``measure(value) -> Point``
    plays a candidate on the search deals, ``start`` is the measured current value. Values at
    which fewer than ``min_n`` seats hold the item end the search on that side (the item is
    then not balanced but out of the game) and are never suggested."""
    result = Search(lever, {lever.current: start})
    f0 = start.effect
    if not math.isfinite(f0) or start.n < min_n:
        result.stop = (f"the item's effect cannot be measured: {start.n} seats held it, fewer "
                       f"than {min_n}")  # fmt: skip
        result.suggested = lever.current
        return result
    in_band = abs(f0) <= band
    needed = -_sign(f0) if f0 != 0 else 1  # the way the effect must move
    direction = needed * lever.sign
    if (direction > 0 and lever.current >= lever.high) or (
        direction < 0 and lever.current <= lever.low
    ):
        direction = -direction if in_band else direction
        if not in_band:
            result.suggested = lever.current
            result.stop = (
                f"{lever.name} is at its {'upper' if direction > 0 else 'lower'} bound "
                f"{lever.current}, and the effect needs it {'higher' if direction > 0 else 'lower'}"
            )
            return result
    if in_band:
        result.suggested = lever.current
        result.reached = True
        result.stop = "in the band at the current value"
        if probe:  # one step, for the slope
            value = lever.current + direction
            result.points[value] = measure(value)
        return result
    searched = lever  # narrowed where the item stops being played
    unplayed: int | None = None
    plateau = False
    for _ in range(max_evals):
        played = _played(result.points, min_n)
        if any(abs(p.effect) <= band * CLOSE_ENOUGH for p in played.values()):
            break  # a value this near zero: its neighbours can gain less than that
        value = _propose(played, searched, direction)
        if value is None:
            break
        # The direction stays the lever's: near a tile's useless values a small raise can
        # first cost its selectors (they now place it and pay for it) before it pays off.
        before = min(abs(p.effect) for p in _played(result.points, min_n).values())
        point = measure(value)
        result.points[value] = point
        if point.n < min_n:
            # Too few seats hold the item at this value (nobody drafts or selects it): it
            # is no longer balanced but gone. Search only the values before it.
            unplayed = value
            edge = value - 1 if direction > 0 else value + 1
            searched = replace(searched, **({"high": edge} if direction > 0 else {"low": edge}))
            continue
        if before <= band and abs(point.effect) >= before and _bracket(result.points) is None:
            plateau = True  # in the band already and the step gained nothing: stop
            break
    played = _played(result.points, min_n)
    bracket = _bracket(played)
    best = min(played.values(), key=lambda p: (abs(p.effect), abs(p.value - lever.current)))
    result.suggested = best.value
    result.reached = abs(best.effect) <= band
    bound = lever.high if direction > 0 else lever.low
    if abs(best.effect) <= band * CLOSE_ENOUGH:
        result.stop = f"within {100 * band * CLOSE_ENOUGH:g} pct-pts of zero at {best.value}"
    elif plateau:
        result.stop = f"in the band at {best.value}; further steps gained nothing"
    elif unplayed is not None and bracket is None:
        result.stop = (
            f"at {lever.name} = {unplayed} fewer than {min_n} seats hold it (it is no longer "
            f"played); the nearest zero before that is {best.value}"
        )
    elif bracket is not None and bracket[1] - bracket[0] <= 1:
        result.stop = f"the effect changes sign between {bracket[0]} and {bracket[1]}"
    elif bracket is not None:
        result.stop = f"stopped after {max_evals} candidates, the zero between {bracket}"
    elif bound in result.points:
        result.stop = (
            f"no value of {lever.name} within the catalogue's bounds [{lever.low}, "
            f"{lever.high}] brings the effect to zero: at {bound} it is "
            f"{100 * result.points[bound].effect:+.1f} pct-pts"
        )
    else:
        result.stop = f"stopped after {max_evals} candidates without reaching zero"
    if not result.reached and "bounds" not in result.stop:
        result.stop += "; no measured value is inside the band"
    return result


def slope_of(points: dict, lever: Lever) -> tuple[float, float, float]:
    """Effect per unit of the lever (pct-pts per unit) from the measured value farthest from
    the current one, with the paired interval: (slope, lo, hi)."""
    others = [v for v in points if v != lever.current and points[v].shift == points[v].shift]
    if not others:
        return math.nan, math.nan, math.nan
    far = max(others, key=lambda v: abs(v - lever.current))
    return paired_slope(points[far].shift, points[far].shift_lo, points[far].shift_hi,
                        far - lever.current)  # fmt: skip


def paired_slope(shift, lo, hi, delta: int) -> tuple[float, float, float]:
    if not delta:
        return math.nan, math.nan, math.nan
    a, b = 100 * lo / delta, 100 * hi / delta
    return 100 * shift / delta, min(a, b), max(a, b)


def print_result(lines: list[str], document: dict, json_path, shown: str) -> int:
    """Print a result's lines and, given ``--json`` (``json_path``, claimed before any game
    was played; ``shown`` as the user wrote it), write its document there; exit code 0."""
    import json

    from sim.core.outputs import write_file

    print("\n".join(lines))
    if json_path is not None:
        write_file(json_path, json.dumps(document, indent=1) + "\n", "--json")
        print(f"written: {shown}")
    return 0


# --- the command ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Balancing:
    """What a game supplies to ``neom balance`` (``Game.balance_ref`` names it): its own
    options (flag, argparse keywords; offered for every game, refused for another when given
    other than their default) and ``run(args) -> exit code``, which finds the item's levers,
    searches them (:func:`search_lever`) and writes the result. ``item_help``: what NAME is."""

    run: Callable[[object], int]
    item_help: str
    options: tuple[tuple[str, dict], ...] = ()


def balancing(game) -> Balancing:
    """The game's :class:`Balancing`; one line when it has none."""
    from sim.core.commands.options import game_part

    return game_part(
        game, "balance_ref", f"neom balance: --game {game.name} has no levers to balance"
    )


def register(parser) -> None:
    from sim.core.commands.options import add_part_options, game_parts
    from sim.core.registry import DEFAULT_GAME, game_names

    parser.description = (
        "Search an item's numeric levers for the value that brings its effect (the "
        "report's definition) into the practical band. Every candidate plays the same deals as "
        "the game as it is; each suggestion is measured again on fresh deals."
    )
    sides = game_parts("balance_ref")
    items = "; ".join(f"{g.title}: {s.item_help}" for g, s in sides if s)
    parser.add_argument("name", nargs="?", help=f"the item ({items})")
    parser.add_argument("--game", choices=game_names(), default=DEFAULT_GAME,
                        help=f"the game (default: {DEFAULT_GAME})")  # fmt: skip
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument(
        "--strategies", default=None,
        help="one strategy per seat, comma-separated, or a named field (default: the game's "
        "field, NEOM: make run's, which NEOM also calls archetype)",
    )  # fmt: skip
    parser.add_argument(
        "--games", type=int, default=None,
        help="games per candidate on the search deals (NEOM: 2000, --all: 4000; a multiple of "
        "--players)",
    )  # fmt: skip
    parser.add_argument(
        "--verify-games", type=int, default=None,
        help="games per side on the fresh deals every suggestion is measured on again "
        "(default: twice --games; NEOM --all: --games, its whole patch checked at once)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=1, help="master seed of the search deals")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (all)")
    parser.add_argument("--lever", default=None, help="search only this lever (NEOM: vp, cost, "
                        "effects[0].vp, ...; Tangram City: area, planning_bonus, ...)")  # fmt: skip
    parser.add_argument("--band", type=float, default=2.0, help="practical band, pct-pts (2)")
    parser.add_argument("--min-n", type=int, default=100, help="minimum seats to test (100)")
    parser.add_argument(
        "--max-evals",
        type=int,
        default=None,
        help="candidates per lever (8); NEOM --all: evaluations in all (16)",
    )
    parser.add_argument("--json", default=None, metavar="FILE", help="write the result here")
    parser.add_argument("--work", default=None, metavar="DIR",
                        help="keep the candidates' runs here (default: a temporary folder, "
                        "deleted at the end)")  # fmt: skip
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an earlier --json file (NEOM: or --all folder)")  # fmt: skip
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    add_part_options(parser, sides)
    parser.set_defaults(func=run)


def run(args) -> int:
    from sim.core.commands.options import refuse_other_parts
    from sim.core.registry import get_game

    game = get_game(args.game)
    side = balancing(game)
    refuse_other_parts(args, game, "balance_ref", "neom balance")
    return side.run(args)
