"""``neom balance --all``: a whole-catalogue pass proposing a small set of edits after which, in
the chosen field and on the search deals:

- every tested cornerstone's effect relative to the median cornerstone (``vs_median``) is
  inside the band;
- no generation tile in play is dead (placed in fewer than ``PLACED_TARGET`` of the games;
  the report calls a tile dead when it is never placed), unless ``--intended`` names it;
- nothing is flagged by the report (cornerstones and tiles, Benjamini-Hochberg).

Every evaluation plays the whole candidate catalogue on the same deals (the same seed and
games: ``neom compare``'s twins), so two rounds differ by their edits and not by luck. Each
violating item gets one lever (fewest fields): for an item that is too strong its VP, else its
largest effect amount, else its cost; for one too weak, or dead, its VP where VP scores, else
its cost, else its income. Two searches share that set-up and the budget of evaluations:

- ``coordinate``: every round moves violating items along their own levers by the secant
  step of ``analysis.neom.balance`` from each item's measured points (one evaluation a round),
  the furthest from their goal first: all of them at first (``--per-round K``: K); a round
  that makes the loss worse is undone and the next moves half as many (the effects are
  zero-sum, so moves made together overshoot together), until nothing is violated, nothing new
  is left to try or the budget is spent;
- ``optuna``: Optuna's TPE sampler over the same levers (each within a range on the side the
  item needs), the catalogue as it is enqueued first, minimising the same loss plus a small
  price per changed field and per unit of change.

The best evaluation (least loss, then fewest fields) is the candidate. It is validated, written
with a diff and a log, and played against the catalogue as it is on fresh deals through
``neom compare``'s report. ``--resume`` replays the pass: every evaluation already on disk is
read back (the searches are deterministic), an interrupted one is resumed by the runner.
"""

import difflib
import json
import math
import shutil
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from analysis.neom import balance as B
from sim.core.errors import UserError

DEFAULT_BUDGET = 12  # evaluations per search, the catalogue as it is included
CHANGE_PRICE = 0.05  # optuna's loss: per changed field (in units of band excess)
STEP_PRICE = 0.01  # and per unit of change
SPAN = {"VP": 6}  # optuna's range of a lever on its side: 6 VP, else SPAN_OTHER units
SPAN_OTHER = 8
OWN = ("runs", "catalogs", "pass.json", "log.md", "log.jsonl", "candidate.toml",
       "candidate.diff", "summary.json", "compare")  # fmt: skip


# --- assessing a candidate ----------------------------------------------------------------


@dataclass
class Assessment:
    """The goals measured on one evaluation."""

    values: dict
    errors: dict  # item -> signed distance of its estimate from the goal (0: met)
    decided: set  # items whose violation is decided (the whole interval past the goal)
    fixable: dict  # item -> True, or why no lever of its own can fix it
    problems: dict  # item -> what is wrong, in words
    kinds: dict  # item -> cornerstone, tile, disaster, dead
    loss: float
    n_violations: int  # decided violations
    dead: list
    flagged: list
    out_of_band: list
    seconds: float = 0.0


# Dead for a reason no number of the tile itself can change (its goods or prerequisites).
STRUCTURAL = ("prerequisite tile missing", "a required good no city")


GOALS = ("cornerstones", "tiles", "dead")


def assess(measurement, setting: B.Setting, intended: set[str],
           goals: tuple[str, ...] = GOALS) -> Assessment:  # fmt: skip
    """The goals of the pass for one played candidate, with the report's own tables: a
    cornerstone is off its goal when its whole interval relative to the median cornerstone
    lies outside the band, or the report flags it; a tile when the report flags it; a tile in
    play is dead when it is never placed (it stays on the list until it is placed in
    ``RARE_SHARE`` of the games)."""
    import polars as pl

    from analysis.neom import cornerstones, tiles

    run = measurement.run
    args = ("bh", 0.05, setting.band, setting.min_n)
    cs = cornerstones.cornerstone_table(run, *args)
    tt = tiles.tile_table(run, *args)
    band = setting.band
    errors, problems, kinds, fixable = {}, {}, {}, {}
    decided: set[str] = set()
    loss = 0.0
    out_of_band, flagged, dead = [], [], []
    for r in cs.iter_rows(named=True):
        name = r["tile_name"]
        if r["small"] or "cornerstones" not in goals:
            continue
        kinds[name] = "cornerstone"
        outside = r["vs_median_lo"] > band or r["vs_median_hi"] < -band
        errors[name] = r["vs_median"] if abs(r["vs_median"]) > band else 0.0
        if outside:
            out_of_band.append(name)
            problems[name] = f"{100 * r['vs_median']:+.1f} pct-pts vs the median cornerstone"
            loss += (abs(r["vs_median"]) - band) / band
        if r["flag"]:
            flagged.append(name)
            problems[name] = (problems.get(name, "") + f"; flagged {r['flag']}").lstrip("; ")
            loss += (abs(r["effect"]) - band) / band
            if not errors[name]:
                errors[name] = r["effect"]  # in band against the median, flagged on its own
        if outside or r["flag"]:
            decided.add(name)
    for r in tt.filter((pl.col("flag") != "") & ("tiles" in goals)).iter_rows(named=True):
        name = r["tile_name"]
        kinds[name] = "disaster" if _is_disaster(run, r["tile"]) else "tile"
        errors[name] = r["effect"]
        decided.add(name)
        flagged.append(name)
        problems[name] = f"flagged {r['flag']} ({100 * r['effect']:+.1f} pct-pts)"
        loss += (abs(r["effect"]) - band) / band
    table = tiles.dead_tiles(run, tt)
    rare = table.filter(~pl.col("why").str.starts_with("never dealt"))
    for r in rare.iter_rows(named=True):
        name = r["tile_name"]
        share = r["placed"] / measurement.games
        if name.casefold() in intended or name in kinds or "dead" not in goals:
            continue
        kinds[name] = "dead"
        errors[name] = share - tiles.RARE_SHARE
        if r["placed"] == 0:
            dead.append(name)
            decided.add(name)
            loss += 1.0
        problems[name] = f"placed in {100 * share:.2f}% of games ({r['why']})"
        if r["why"].startswith(STRUCTURAL):
            fixable[name] = f"not by its own numbers: {r['why'].split(':')[0]}"
    return Assessment(measurement.values, errors, decided, fixable, problems, kinds, loss,
                      len(decided), dead, flagged, out_of_band, measurement.seconds)  # fmt: skip


def _is_disaster(run, tile: int) -> bool:
    from sim.neom import constants as K

    return bool(run.tables.tiles[int(tile), K.C_TYPES] & K.T_DISASTER)


# --- levers for the pass --------------------------------------------------------------------


def choose_lever(data: dict, name: str, kind: str, need_up: bool, variant: str):
    """One lever for the item: the first that can move it the way it needs (see the module
    docstring), or None."""
    _, item_kind, levers = B.item_levers(data, name, variant)
    live = [lever for lever in levers if not lever.inert]

    def can(lever):  # the value can move the way the effect needs
        up = (lever.sign > 0) == need_up
        return lever.current < lever.high if up else lever.current > lever.low

    def first(paths, key=None):
        found = [lever for lever in live if lever.path in paths and can(lever)]
        if key is not None:
            found.sort(key=key)
        return found[0] if found else None

    effects = [lever.path for lever in live if lever.path.startswith("effects[")]
    alternatives = [lever.path for lever in live if lever.path.startswith("alternatives[")]
    if item_kind == "disaster":
        return next((lever for lever in live if can(lever)), None)
    if not need_up:
        order = (["vp"], effects, ["income"], ["coins_on_place"], ["cost"], alternatives)
        for paths in order:
            lever = first(paths, key=lambda x: -x.current)
            if lever is not None:
                return lever
        return None
    order = (["vp"], ["cost"], alternatives, ["income"], effects, ["coins_on_place"])
    for paths in order:
        lever = first(paths, key=lambda x: x.current)
        if lever is not None:
            return lever
    return None


@dataclass
class Track:
    """An item the pass moves: its lever (bounded to a small span around its value), the way
    the value goes, and its measured points (value -> Point)."""

    name: str
    lever: B.Lever | None
    direction: int  # +1: the value rises, -1: it falls
    points: dict = field(default_factory=dict)
    stuck: str = ""  # why one lever within its span cannot bring it to its goal
    settled: int | None = None  # the value it stays at: its zero is next to it


def span_of(lever: B.Lever) -> int:
    return SPAN.get(lever.unit, SPAN_OTHER)


def bounded(lever: B.Lever, direction: int) -> B.Lever:
    """The lever limited to its span on the side the item needs ("smallest steps": a pass
    proposes edits a designer would make, and says when one is not enough)."""
    from dataclasses import replace

    span = span_of(lever)
    if direction > 0:
        return replace(lever, low=lever.current, high=min(lever.high, lever.current + span))
    return replace(lever, low=max(lever.low, lever.current - span), high=lever.current)


# --- the pass -------------------------------------------------------------------------------


class Pass:
    def __init__(self, evaluator: B.Evaluator, data: dict, intended: set[str], variant: str,
                 log, goals: tuple[str, ...] = GOALS, per_round: int = 0):  # fmt: skip
        self.goals = goals
        self.per_round = per_round
        self.evaluator = evaluator
        self.data = data
        self.intended = intended
        self.variant = variant
        self.log = log

    def evaluate(self, values: dict, search: str, round_: int) -> Assessment:
        what = f"{search} round {round_}: " + (B.describe_values(values) if values else
                                                "the catalogue as it is")  # fmt: skip
        start = time.perf_counter()
        m = self.evaluator.measure(values, events=True, what=what[:160])
        a = assess(m, self.evaluator.setting, self.intended, self.goals)
        a.seconds = time.perf_counter() - start
        self.log(search, round_, a)
        return a

    def add_tracks(self, a: Assessment, tracks: dict) -> None:
        """A track for every decided violation that has none yet."""
        for name in sorted(a.decided):
            if name in tracks:
                continue
            if a.fixable.get(name, True) is not True:
                tracks[name] = Track(name, None, 0, stuck=a.fixable[name])
                continue
            need_up = a.errors[name] < 0
            lever = choose_lever(self.data, name, a.kinds[name], need_up, self.variant)
            if lever is None:
                tracks[name] = Track(name, None, 0, stuck="no lever can move it that way")
                continue
            direction = 1 if (lever.sign > 0) == need_up else -1
            tracks[name] = Track(name, bounded(lever, direction), direction)

    def coordinate(self, budget: int) -> tuple[list[Assessment], dict]:
        """Off-goal items move along their own levers by secant steps from their own points,
        the furthest first, ``per_round`` at a time (0: all), halved after a round that made
        the loss worse (which is undone); an item whose lever reaches the end of its span still
        off its goal goes back to its value (no edit that does not do its job)."""
        values: dict = {}
        a = self.evaluate(values, "coordinate", 0)
        rounds = [a]
        tracks: dict[str, Track] = {}
        band = self.evaluator.setting.band
        best = a
        per_round = self.per_round or len(a.decided) or 1
        tried = {_frozen(values)}
        for round_ in range(1, budget):
            self.add_tracks(a, tracks)
            for name, track in tracks.items():  # what the last round measured, for each item
                if track.lever is not None:
                    value = values.get(track.lever.key, track.lever.current)
                    error = a.errors.get(name, 0.0)
                    track.points[value] = B.Point(value, error, error, error)
            if a.loss > best.loss:
                # The round made things worse (the moves overshot together): go back to the
                # best values and move half as many items next time.
                values, a = dict(best.values), best
                per_round = max(1, per_round // 2)
            # The items furthest from their goal move first, at most per_round of them.
            movable = [
                n for n, t in tracks.items()
                if t.lever is not None and not t.stuck and t.settled is None
            ]  # fmt: skip
            moving = set(sorted(movable, key=lambda n: (-_severity(a, n, band), n))[:per_round])
            moves: dict = {}
            for name in sorted(moving):
                track = tracks[name]
                key = track.lever.key
                value = values.get(key, track.lever.current)
                if not a.errors.get(name, 0.0):
                    continue  # on its goal: it stays where it is
                points = track.points
                if a.kinds.get(name) == "dead":
                    # One-sided: any value that gets it placed will do.
                    points = {v: p for v, p in points.items() if p.effect < 0}
                nxt = B._propose(points, track.lever, track.direction)
                if nxt is None or nxt == value:
                    bracket = B._bracket(points)
                    if bracket is not None and bracket[1] - bracket[0] <= 1:
                        # Its zero lies between two adjacent values: keep the nearer one.
                        track.settled = min(bracket, key=lambda v: abs(points[v].effect))
                        moves[key] = track.settled
                        continue
                    track.stuck = (f"{track.lever.name} {track.lever.current} → {value}, the "
                                   f"end of its span, does not reach the goal")  # fmt: skip
                    moves[key] = track.lever.current
                    continue
                moves[key] = nxt
            changed = {k: v for k, v in (values | moves).items() if v != _lever_current(tracks, k)}
            if _frozen(changed) in tried:
                break  # nothing new to try
            tried.add(_frozen(changed))
            values = changed
            a = self.evaluate(values, "coordinate", round_)
            rounds.append(a)
            if a.loss <= best.loss:
                best = a
        return rounds, tracks

    def optuna(self, budget: int, seed: int) -> tuple[list[Assessment], dict]:
        """Optuna's TPE over the levers of the catalogue-as-it-is's off-goal items, each
        within its span on the side the item needs."""
        try:
            import optuna
        except ImportError:
            raise UserError(
                "--optimizer optuna needs Optuna: pip install 'neom-sim[balance]'"
            ) from None
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        a0 = self.evaluate({}, "optuna", 0)
        rounds = [a0]
        tracks: dict[str, Track] = {}
        self.add_tracks(a0, tracks)
        levers = {t.lever.key: t.lever for t in tracks.values() if t.lever is not None}
        if not levers:
            return rounds, tracks
        sampler = optuna.samplers.TPESampler(seed=seed % 2**32, multivariate=True)
        study = optuna.create_study(direction="minimize", sampler=sampler)
        names = {key: f"{key[0]}: {key[1]}" for key in levers}
        study.enqueue_trial({names[k]: lever.current for k, lever in levers.items()})
        for round_ in range(1, budget):
            trial = study.ask()
            values = {k: trial.suggest_int(names[k], lv.low, lv.high) for k, lv in levers.items()}
            values = {k: v for k, v in values.items() if v != levers[k].current}
            a = self.evaluate(values, "optuna", round_)
            rounds.append(a)
            steps = sum(abs(v - levers[k].current) for k, v in values.items())
            study.tell(trial, a.loss + CHANGE_PRICE * len(values) + STEP_PRICE * steps)
        return rounds, tracks


def _frozen(values: dict) -> frozenset:
    return frozenset(values.items())


def _severity(a: Assessment, name: str, band: float) -> float:
    """How far an item is from its goal, in the loss's units."""
    error = a.errors.get(name, 0.0)
    if not error:
        return 0.0
    return 1.0 if a.kinds.get(name) == "dead" else max(0.0, abs(error) - band) / band


def _lever_current(tracks: dict, key) -> int:
    return next(t.lever.current for t in tracks.values() if t.lever and t.lever.key == key)


def best_of(rounds: list[Assessment]) -> Assessment:
    return min(rounds, key=lambda a: (a.loss, len(a.values), sum(a.values.values())))


# --- the command ----------------------------------------------------------------------------


def _prepare_out(out: Path, resume: bool, overwrite: bool, settings: dict) -> None:
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    entries = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    foreign = [e for e in entries if e not in OWN]
    if foreign:
        raise UserError(f"--out {out}: holds {foreign[0]!r}, which neom balance --all did not "
                        "write; choose an empty or new folder")  # fmt: skip
    if resume:
        saved = out / "pass.json"
        if entries and not saved.is_file():
            raise UserError(f"--out {out}: no pass.json to resume")
        if saved.is_file():
            before = json.loads(saved.read_text(encoding="utf-8"))
            changed = [k for k in settings if before.get(k) != settings[k]]
            if changed:
                raise UserError(
                    f"--out {out}: cannot resume with a different {changed[0]} (the pass used "
                    f"{before.get(changed[0])!r}, not {settings[changed[0]]!r})"
                )
        for name in ("log.jsonl", "log.md", "candidate.toml", "candidate.diff", "summary.json"):
            (out / name).unlink(missing_ok=True)
        shutil.rmtree(out / "compare", ignore_errors=True)
    elif entries:
        if not overwrite:
            raise UserError(f"--out {out}: holds an earlier pass; pass --resume to continue it "
                            "or --overwrite to replace it")  # fmt: skip
        for name in entries:
            path = out / name
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    out.mkdir(parents=True, exist_ok=True)
    (out / "pass.json").write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")


def _candidate_text(base_text: str, values: dict, label: str) -> str:
    import tomlkit

    text = B.apply_values(base_text, values)
    doc = tomlkit.parse(text)
    doc["catalog"]["name"] = f"{doc['catalog']['name']} (balanced)"
    doc["catalog"]["description"] = (
        f"{label}. Edited by neom balance --all: "
        + ("; ".join(f"{t} {p} = {v}" for (t, p), v in sorted(values.items())) or "no edits")
        + "."
    )
    return tomlkit.dumps(doc)


def run_all(args) -> int:
    from analysis.neom.balance_cli import base_catalog, setting_from
    from analysis.neom.compare import build_comparison

    if args.lever or args.relative_to != "median":
        raise UserError("--lever and --relative-to belong to neom balance NAME (the pass's "
                        "cornerstone goal is against the median cornerstone)")  # fmt: skip
    setting = setting_from(args)
    budget = DEFAULT_BUDGET if args.max_evals is None else args.max_evals
    if budget < 1:
        raise UserError(f"--max-evals {budget}: at least 1")
    text, source, data = base_catalog(args.catalog)
    catalogue = tomllib.loads(text)
    names = {str(t["name"]).casefold() for t in catalogue["tiles"]}
    given = [n.strip() for n in args.intended.split(",") if n.strip()]
    unknown = [n for n in given if n.casefold() not in names]
    if unknown:
        raise UserError(f"--intended {unknown[0]!r}: no such tile in the catalogue")
    intended = {n.casefold() for n in given}
    goals = tuple(g.strip() for g in args.goals.split(",") if g.strip())
    wrong = [g for g in goals if g not in GOALS]
    if wrong or not goals:
        raise UserError(f"--goals {args.goals!r}: a comma-separated list of {', '.join(GOALS)}")
    out = Path(args.out) if args.out else Path("balance") / "all"
    settings = {
        "catalog_digest": data.digest, "field": ",".join(setting.strategies),
        "players": setting.players, "games": setting.games, "seed": setting.seed,
        "band": setting.band, "min_n": setting.min_n, "variant": setting.variant,
        "intended": sorted(intended), "optimizer": args.optimizer, "budget": budget,
        "goals": list(goals), "per_round": args.per_round,
    }  # fmt: skip
    _prepare_out(out, args.resume, args.overwrite, settings)
    searches = ["coordinate", "optuna"] if args.optimizer == "both" else [args.optimizer]
    verify_games = args.verify_games or setting.games
    planned = setting.games * budget * len(searches) + 2 * verify_games
    progress = B.Progress(planned, quiet=args.quiet)
    evaluator = B.Evaluator(text, source, setting, out, progress, "neom balance --all")
    log_lines: list[dict] = []

    def log(search, round_, a: Assessment):
        entry = {
            "search": search, "round": round_, "edits": _edits(a.values),
            "loss": round(a.loss, 3), "violations": a.n_violations,
            "out_of_band": a.out_of_band, "flagged": a.flagged, "dead": a.dead,
            "seconds": round(a.seconds, 1),
        }  # fmt: skip
        log_lines.append(entry)
        with open(out / "log.jsonl", "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")
        if not args.quiet:
            print(f"balance --all: {search} round {round_}: loss {a.loss:.2f}, "
                  f"{a.n_violations} items off their goal, {len(a.values)} fields edited",
                  file=sys.stderr, flush=True)  # fmt: skip

    started = time.perf_counter()
    if args.per_round < 0:
        raise UserError(f"--per-round {args.per_round}: 0 (every item) or more")
    run = Pass(evaluator, catalogue, intended, setting.variant, log, goals, args.per_round)
    results, stuck = {}, {}
    for search in searches:
        rounds, tracks = run.coordinate(budget) if search == "coordinate" else run.optuna(
            budget, setting.seed)  # fmt: skip
        results[search] = (rounds, best_of(rounds))
        stuck[search] = {n: t.stuck for n, t in tracks.items() if t.stuck}
    chosen = min(searches, key=lambda s: (results[s][1].loss, len(results[s][1].values)))
    best = results[chosen][1]
    candidate = _candidate_text(text, best.values, data.label)
    B._validate_text(candidate, str(out / "candidate.toml"))
    (out / "candidate.toml").write_text(candidate, encoding="utf-8")
    diff = "".join(difflib.unified_diff(text.splitlines(True), candidate.splitlines(True),
                                        str(source), "candidate.toml"))  # fmt: skip
    (out / "candidate.diff").write_text(diff, encoding="utf-8")

    # Fresh deals: the catalogue as it is against the candidate, through neom compare.
    fresh = B.fresh_seed(setting.seed)
    base_m = evaluator.measure({}, seed=fresh, games=verify_games, events=True,
                               what="fresh deals: the catalogue as it is")  # fmt: skip
    cand_m = evaluator.measure(best.values, seed=fresh, games=verify_games, events=True,
                               what="fresh deals: the candidate")  # fmt: skip
    before = assess(base_m, setting, intended, goals)
    after = assess(cand_m, setting, intended, goals)
    build_comparison(base_m.path, cand_m.path, out / "compare", band=setting.band,
                     min_n=setting.min_n)  # fmt: skip
    # Each search's best on the fresh deals too, for the comparison of the searches (the
    # choice above was made on the search deals, so these figures are not selected on).
    fresh_best = {chosen: after}
    for search in searches:
        if search not in fresh_best:
            m = evaluator.measure(results[search][1].values, seed=fresh, games=verify_games,
                                  events=True, what=f"fresh deals: {search}'s best")  # fmt: skip
            fresh_best[search] = assess(m, setting, intended, goals)
    summary = {
        "catalog": data.label, "chosen": chosen, "edits": _edits(best.values),
        "fields_changed": len(best.values),
        "steps": sum(abs(v - _current(catalogue, k)) for k, v in best.values.items()),
        "search_deals": {s: _goals(results[s][1]) | {
            "evaluations": len(results[s][0]),
            "seconds": round(sum(a.seconds for a in results[s][0]), 1),
            "fields_changed": len(results[s][1].values),
            "steps": sum(abs(v - _current(catalogue, k)) for k, v in results[s][1].values.items()),
            "fresh_loss": round(fresh_best[s].loss, 3),
            "fresh_violations": fresh_best[s].n_violations,
        } for s in searches},
        "fresh_deals": {"seed": fresh, "games": verify_games, "before": _goals(before),
                        "after": _goals(after)},
        "not_fixed_by_one_lever": stuck[chosen],
        "games_played": progress.played, "seconds": round(time.perf_counter() - started, 1),
    }  # fmt: skip
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    lines = _log_md(summary, log_lines, before, after)
    (out / "log.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"written: {out / 'candidate.toml'}, candidate.diff, log.md, summary.json, compare/")
    return 0


def _current(catalogue: dict, key) -> int:
    tiles = catalogue["tiles"]
    return B.get_value(tiles[B._find_entry(tiles, key[0])], key[1])


def _edits(values: dict) -> list[str]:
    return [f"{t}: {p} = {v}" for (t, p), v in sorted(values.items())]


def _goals(a: Assessment) -> dict:
    return {
        "loss": round(a.loss, 3), "violations": a.n_violations,
        "cornerstones_out_of_band": a.out_of_band, "flagged": a.flagged, "dead": a.dead,
        "problems": {n: a.problems[n] for n in sorted(a.decided)},
    }  # fmt: skip


def _log_md(summary: dict, log_lines: list[dict], before: Assessment, after: Assessment):
    lines = [
        "# neom balance --all",
        "",
        f"Catalogue: {summary['catalog']}. Chosen search: {summary['chosen']}; "
        f"{summary['fields_changed']} fields changed, {summary['steps']} units in all.",
        "",
        "## Edits",
        "",
        *(f"- {e}" for e in summary["edits"]),
        "",
        "## Goals on fresh deals (seed {seed}, {games} games a side)".format(
            **summary["fresh_deals"]),
        "",
        "| | loss | items off goal | cornerstones out of band | flagged | dead |",
        "|---|---:|---:|---:|---:|---:|",
    ]  # fmt: skip
    for label, a in (("as it is", before), ("candidate", after)):
        lines.append(f"| {label} | {a.loss:.2f} | {a.n_violations} | {len(a.out_of_band)} | "
                     f"{len(a.flagged)} | {len(a.dead)} |")  # fmt: skip
    lines += ["", "## Searches on the search deals", "",
              "| search | evaluations | seconds | best loss | items off goal | fields | units "
              "| on fresh deals: loss, items off goal |",
              "|---|---:|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    for name, s in summary["search_deals"].items():
        lines.append(f"| {name} | {s['evaluations']} | {s['seconds']} | {s['loss']} | "
                     f"{s['violations']} | {s['fields_changed']} | {s['steps']} | "
                     f"{s['fresh_loss']}, {s['fresh_violations']} |")  # fmt: skip
    lines += ["", "## Steps", "", "| search | round | loss | off goal | edits |",
              "|---|---:|---:|---:|---|"]  # fmt: skip
    for e in log_lines:
        lines.append(f"| {e['search']} | {e['round']} | {e['loss']} | {e['violations']} | "
                     f"{'; '.join(e['edits']) or '–'} |")  # fmt: skip
    left = sorted((n, after.problems[n]) for n in after.decided)
    if left:
        lines += ["", "## Still off their goal on the fresh deals", ""]
        lines += [f"- {name}: {why}" for name, why in left]
    if summary["not_fixed_by_one_lever"]:
        lines += ["", "## Not fixed by one lever within its span", ""]
        lines += [f"- {n}: {why}" for n, why in sorted(summary["not_fixed_by_one_lever"].items())]
    if not math.isfinite(after.loss):
        lines.append("(loss not finite)")
    return lines
