"""Inputs that go together, or a clear refusal: what a report checks about its runs before it
analyses them.

- :func:`check_manifest`: a run's manifest against its own tables and the game (players and
  games against the stored rows, the rules version against the game's): a hand-edited or
  stale manifest is one line, never a report that misreads the tables.
- :func:`check_together`: the runs of one report are of one game (runs of other catalogues
  or rules readings are shown side by side, each with its own label: :func:`run_labels`).
- :func:`check_comparable`: ``--check`` sets two fields side by side, so its run must be of
  the same game, player count, data file and rules; the refusal names what differs.
"""

import json
from collections import Counter
from pathlib import Path

import polars as pl

from sim.core.errors import UserError
from sim.core.store import MANIFEST


def check_manifest(run) -> None:
    """UserError when the manifest of ``run`` (an ``analysis.core.load.Run``) does not describe
    its tables: another rules version than the game's, another number of games than the games
    table's rows, other player counts than the games' ``n_players``."""
    where = Path(run.path) / MANIFEST
    manifest = run.manifest
    version = manifest.get("rules_version")
    if version != run.game.rules_version:
        raise UserError(
            f"{where}: played under rules version {json.dumps(version)}, but this neom-sim "
            f"plays {run.game.title} under {run.game.rules_version!r}: the tables may not mean "
            "what the report would say; simulate the run again"
        )
    counts = run.games.select(pl.len().alias("games")).collect()
    games = counts.item()
    if games != manifest.get("games"):
        raise UserError(
            f"{where}: says {json.dumps(manifest.get('games'))} games, but the tables hold "
            f"{games}: the manifest does not describe these tables (edited by hand?)"
        )
    players = manifest.get("players")
    declared = set(players) if isinstance(players, list) else {players}
    held = set(run.games.select(pl.col("n_players").unique()).collect()["n_players"].to_list())
    if games and held != declared:
        shown = " and ".join(str(n) for n in sorted(held))
        raise UserError(
            f"{where}: says {json.dumps(players)} players, but the tables hold {shown}-player "
            "games: the manifest does not describe these tables (edited by hand?)"
        )


def _data_words(run) -> str:
    data = run.manifest["data"]
    return f"{run.data_name} (sha256 {str(data.get('digest', ''))[:12]})"


def differences(run, other) -> list[tuple[str, str, str]]:
    """What differs between two runs, as (what, this run's, the other's), in the order a
    reader would ask: game, players, data file, rules."""
    found = []
    if run.game.name != other.game.name:
        found.append(("game", run.game.name, other.game.name))
        return found
    if run.manifest["players"] != other.manifest["players"]:
        found.append(("players", str(run.manifest["players"]), str(other.manifest["players"])))
    if run.manifest["data"].get("digest") != other.manifest["data"].get("digest"):
        found.append((run.game.data_noun, _data_words(run), _data_words(other)))
    rules, others = run.manifest.get("rules") or {}, other.manifest.get("rules") or {}
    for key in sorted(set(rules) | set(others)):
        if rules.get(key) != others.get(key):
            shown = (json.dumps(rules.get(key)), json.dumps(others.get(key)))
            found.append((f"rules ({key})", *shown))
    return found


def _field(run) -> list:
    return [(s.get("spec"), s.get("params")) for s in run.manifest.get("strategies", [])]


def check_comparable(run, check) -> None:
    """``--check``: the same game, player count, data file and rules, or one line naming the
    first difference; and not the same games (the same field on the same seed's deals):
    every finding would be called robust over the same data."""
    found = differences(run, check)
    same_games = all(run.manifest.get(key) == check.manifest.get(key) for key in ("seed", "seats"))
    if not found and same_games and _field(run) == _field(check):
        raise UserError(
            f"--check {check.path}: the same games as {run.path} (the same field, seed, "
            f"{run.game.data_noun} and rules); the skill check needs a run of another field"
        )
    if found:
        what, mine, theirs = found[0]
        raise UserError(
            f"--check {check.path}: its {what} differs from {run.path}'s ({theirs} vs {mine}); "
            "the skill check sets two fields side by side on the same game, player count, "
            f"{run.game.data_noun} and rules"
        )


def check_together(runs: list) -> None:
    """The runs of one report are of one game."""
    games = {}
    for run in runs:
        games.setdefault(run.game.title, []).append(run.path.name)
    if len(games) > 1:
        shown = "; ".join(f"{title}: {', '.join(names)}" for title, names in games.items())
        raise UserError(
            f"runs of different games ({shown}): a report is of one game; report them separately"
        )


def _rules_words(run, key: str) -> str:
    value = (run.manifest.get("rules") or {}).get(key)
    for option in run.game.rule_options:
        if option.name == key:
            labels = {stored: label for label, stored in option.choices.items()}
            label = labels.get(value, value) if not isinstance(value, str) else value
            return f"{option.flag} {label}"
    return f"{key.replace('_', ' ')} {json.dumps(value)}"


def run_labels(runs: list) -> dict[Path, str]:
    """How each run is named beside the others: its folder and player count, then its data
    (name and digest) when the runs' data differ, and its rules where they differ from the
    first run's; runs whose labels would still be the same (folders of one name elsewhere)
    are named by their whole path."""
    first = runs[0]
    data_differ = len({run.manifest["data"].get("digest") for run in runs}) > 1
    parts_of = {}
    for run in runs:
        parts = [f"{run.manifest['players']}p"]
        if data_differ:
            parts.append(_data_words(run))
        rules, base = run.manifest.get("rules") or {}, first.manifest.get("rules") or {}
        changed = sorted(key for key in set(rules) | set(base) if rules.get(key) != base.get(key))
        parts += [_rules_words(run, key) for key in changed]
        parts_of[run.path] = ", ".join(parts)
    labels = {run.path: f"{run.path.name} ({parts_of[run.path]})" for run in runs}
    counts = Counter(labels.values())
    for run in runs:
        if counts[labels[run.path]] > 1:
            labels[run.path] = f"{run.path} ({parts_of[run.path]})"
    return labels


def combined_data_label(runs: list) -> str:
    """The data of every run, for tables holding all of them ("" when they share one)."""
    if len({run.manifest["data"].get("digest") for run in runs}) <= 1:
        return ""
    labels = run_labels(runs)
    return "; ".join(
        f"{labels[run.path]}: {run.manifest['data'].get('label', run.data_name)}" for run in runs
    )
