"""``neom play``: one game, told turn by turn, optionally written as JSON events.

The first line names the catalogue (and says RECONSTRUCTED when it is not the published tile
set). The JSON file holds every event; each one that changes a player's money carries
``player`` and ``coins_delta``; purchases carry ``buyer``, ``seller``, ``good`` and ``price``;
the file ends with each player's final money, score breakdown (SCORE_KEYS) and city.
"""

import json

from sim.core.outputs import write_file
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.catalog import RECONSTRUCTED_BANNER
from sim.neom.tables import rules_as_dict
from strategies.neom.play import final_cities, play_one

VARIANTS = ", ".join(K.VARIANT_NAMES)
CELL_WIDTH = 16


def show_game(args, data, rules: dict, specs) -> int:
    """Play the game of ``neom play`` and print it (and write --json): ``Game.play_ref``."""
    tables = data.content
    result = play_one(
        tables,
        args.players,
        specs,
        args.seed,
        rules["variant"],
        solo_tileset=rules["solo_tileset"],
        neighborhood_through_any=bool(rules["neighborhood_through_any"]),
    )
    variant_name = {v: k for k, v in K.VARIANT_NAMES.items()}[rules["variant"]]
    story = Story(tables, result, args.seed, variant_name)
    for line in story.lines():
        print(line)
    if args.json:
        write_file(args.json, json.dumps(story.as_json(), indent=1), "--json")
    return 0


def square(cell) -> str:
    return f"({cell // K.GRID},{cell % K.GRID})"


# One fixed sentence per event kind; the fields are filled from the event (see Story.describe).
_EVENT_TEXT = {
    R.EV_DRAFT_PICK: "{who} keeps cornerstone {name}",
    R.EV_SELECT: "{who} selects {name} (from {other} tiles)",
    R.EV_SELL: "{who} sells {name} for {coins}",
    R.EV_BUY: "{who} buys {good} from seat {other} for {paid}",
    R.EV_GOOD_SOLD: "{who} is paid {coins} (spendable next turn)",
    R.EV_DISASTER_PAY: "{who} pays {paid} to the {disaster}",
    R.EV_DISASTER_SACRIFICE: "{who} sacrifices {name} on {square} to the {disaster}",
    R.EV_INCOME: "{who} collects {coins} income",
    R.EV_EFFECT_COINS: "{who} gets {coins} from tile effects (placing {name})",
    R.EV_DISCARD: "{who} returns {name} to the box",
    R.EV_REPLACED: "{who}: {name} on {square} is replaced and goes to the box",
    R.EV_CS_TAKEN: "{who} takes cornerstone {name} from the draft's discard pile",
    R.EV_CS_SWAPPED: "{who} swaps cornerstone {other_tile} for {name}",
}


class Story:
    """A finished game (``play_one`` result) as text lines and as JSON."""

    def __init__(self, tables, result, seed, variant_name):
        self.t = tables
        self.r = result
        self.seed = seed
        self.variant = variant_name
        self.n = result["players"].shape[0]
        self.cities = final_cities(tables, result)

    def tile(self, index) -> str:
        return self.t.tile_names[index] if index >= 0 else "-"

    def banner(self) -> str:
        note = f" — {RECONSTRUCTED_BANNER}" if self.t.reconstructed else ""
        return f'Catalogue "{self.t.name}"{note}'

    def describe(self, event) -> str:
        kind, p, tile, cell = (int(event[c]) for c in (R.E_KIND, R.E_PLAYER, R.E_TILE, R.E_CELL))
        coins, other, good = int(event[R.E_COINS]), int(event[R.E_OTHER]), int(event[R.E_GOOD])
        who = f"seat {p}"
        name = self.tile(tile)
        special = self._special(kind, p, tile, cell, coins, other, who, name)
        if special is not None:
            return special
        template = _EVENT_TEXT.get(kind)
        if template is None:
            return f"{who}: event {kind}"
        # Each field is worked out only when the sentence names it: an event's spare columns
        # need not be a valid tile, good or Disaster.
        fields = {
            "who": lambda: who,
            "name": lambda: name,
            "coins": lambda: coins,
            "paid": lambda: -coins,
            "other": lambda: other,
            "other_tile": lambda: self.tile(other),
            "square": lambda: square(cell),
            "disaster": lambda: _disaster(other),
            "good": lambda: self.t.good_names[good],
        }
        return template.format(**{k: v() for k, v in fields.items() if f"{{{k}}}" in template})

    def _special(self, kind, p, tile, cell, coins, other, who, name):
        """The events whose words depend on more than the event's fields in a fixed sentence."""
        paid = f", paying {-coins} to the supply" if coins else ""
        if kind == R.EV_PLACE:
            return f"{who} places {name} on {square(cell)}{paid}"
        if kind == R.EV_CORNERSTONE:
            return (
                f"{who} discards {self.tile(other)} to place cornerstone {name} on "
                f"{square(cell)}{paid}"
            )
        if kind == R.EV_DISASTER_SELECT:
            if p < 0:
                label = name if tile >= 0 else f"the {_disaster(other)}"
                return f"{label} strikes every player"
            return f"{who} selects the Disaster {name}: no action, spared"
        return None

    def lines(self):
        players = self.r["players"]
        yield self.banner()
        yield (
            f"{self.n} player(s), variant {self.variant}, seed {self.seed}, "
            f"deal seed {int(self.r['game'][R.G_DEAL_SEED])}"
        )
        if not self.r["rules"][K.RO_NEIGHBORHOOD_THROUGH_ANY]:
            yield "Neighborhoods: road chains through Residential tiles only (RULES.md S3)"
        for s in range(self.n):
            board = self.t.board_names[players[s, R.P_BOARD]]
            spec = self.r["strategies"][s]
            shown = spec.spec if spec.label == spec.spec else f"{spec.label} ({spec.spec})"
            yield f"seat {s}: {shown}, {board}"
        if self.r["game"][R.G_N_EVENTS] >= R.MAX_EVENTS_PER_GAME:
            yield f"(the event log stopped at {R.MAX_EVENTS_PER_GAME} events)"
        turn = None
        for event in self.r["events"]:
            if event[R.E_TURN] != turn:
                turn = int(event[R.E_TURN])
                yield ""
                yield _turn_title(turn)
            yield "  " + self.describe(event)
        yield ""
        yield "Final cities"
        for s in range(self.n):
            yield f"seat {s}:"
            yield from self.grid(s)
        yield ""
        yield "Scores " + " ".join(f"{key:>13}" for key in K.SCORE_KEYS) + "   money rank"
        for s in range(self.n):
            row = players[s, R.P_SCORE_TILES : R.P_SCORE_TOTAL + 1]
            win = "  winner" if players[s, R.P_WIN] else ""
            yield (
                f"seat {s} "
                + " ".join(f"{v:>13}" for v in row.tolist())
                + f" {players[s, R.P_MONEY]:>7} {players[s, R.P_RANK]:>4}{win}"
            )

    def grid(self, seat):
        city = self.cities[seat]
        for row in range(K.GRID):
            names = []
            for col in range(K.GRID):
                tile = city[row * K.GRID + col]
                text = self.tile(tile) if tile >= 0 else "."
                names.append(text[: CELL_WIDTH - 1].ljust(CELL_WIDTH))
            yield "  " + "".join(names).rstrip()

    def as_json(self) -> dict:
        players = self.r["players"]
        events = []
        for event in self.r["events"]:
            events.append(self.event_json(event))
        final = []
        for s in range(self.n):
            score = players[s, R.P_SCORE_TILES : R.P_SCORE_TOTAL + 1].tolist()
            city = [
                [self.tile(int(t)) if t >= 0 else None for t in row]
                for row in self.cities[s].reshape(K.GRID, K.GRID)
            ]
            final.append(
                {
                    "player": s,
                    "strategy": self.r["strategies"][s].label,
                    "spec": self.r["strategies"][s].spec,
                    "board": self.t.board_names[players[s, R.P_BOARD]],
                    "money": int(players[s, R.P_MONEY]),
                    "score": dict(zip(K.SCORE_KEYS, score, strict=True)),
                    "rank": int(players[s, R.P_RANK]),
                    "win": bool(players[s, R.P_WIN]),
                    "city": city,
                }
            )
        return {
            "catalog": self.t.name,
            "reconstructed": self.t.reconstructed,
            "players": self.n,
            "variant": self.variant,
            "rules": rules_as_dict(self.r["rules"]),
            "seed": self.seed,
            "events": events,
            "final": final,
        }

    def event_json(self, event) -> dict:
        kind, p, tile, cell = (int(event[c]) for c in (R.E_KIND, R.E_PLAYER, R.E_TILE, R.E_CELL))
        coins, other, good = int(event[R.E_COINS]), int(event[R.E_OTHER]), int(event[R.E_GOOD])
        turn = int(event[R.E_TURN])
        out = {"turn": turn, "kind": R.EVENT_KIND_NAMES[kind], "text": self.describe(event)}
        if turn >= 0:
            out["generation"] = turn // E.TURNS_PER_GENERATION + 1
        if p >= 0:
            out["player"] = p
        if tile >= 0:
            out["tile"] = self.tile(tile)
        if cell >= 0:
            out["row"], out["col"] = cell // K.GRID, cell % K.GRID
        if coins != 0 or kind in (R.EV_BUY, R.EV_GOOD_SOLD, R.EV_DISASTER_PAY, R.EV_PLACE):
            out["coins_delta"] = coins
        if kind in (R.EV_BUY, R.EV_GOOD_SOLD):
            buyer, seller = (p, other) if kind == R.EV_BUY else (other, p)
            out.update(buyer=buyer, seller=seller, good=self.t.good_names[good], price=abs(coins))
        return out


def _disaster(code) -> str:
    names = {v: k for k, v in K.DISASTER_NAMES.items()}
    return {"crime": "Crime Spree"}.get(names.get(code, ""), names.get(code, "disaster").title())


def _turn_title(turn) -> str:
    if turn < 0:
        return "Preliminary round: cornerstone draft"
    gen, t = divmod(turn, E.TURNS_PER_GENERATION)
    return f"Generation {gen + 1}, turn {t + 1}"
