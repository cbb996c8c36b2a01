"""The evaluation's parameters and the archetypes: named weight vectors of one shared evaluation.

Every archetype plays with ``strategies.evaluate.choose_evaluated``; only its weights differ.
This module is plain Python (no compiled code) so that the registry can import it freely.
A weight multiplies one feature of a move (see docs/strategies.md for their exact meaning):
"""

from dataclasses import dataclass

# Parameter slots of the shared evaluation, in registry order.
W_VP = 0  # VP now: change of the city's score as if the game ended now (money included)
W_MONEY = 1  # per coin gained, beyond its VP, times the share of the game still to play
W_RAW = 2  # per raw Good token gained, times the share of the game still to play
W_PROCESSED = 3  # per processed Good token gained, likewise
W_LUXURY = 4  # per luxury Good token gained, likewise
W_NEIGHBORHOOD = 5  # per VP of Neighborhood growth, likewise (on top of W_VP)
W_POLLUTION = 6  # per point of pollution a new Polluting tile aims at empty squares (a cost)
W_POWER = 7  # for gaining the city's first Power tile (on top of the -5 VP it removes)
W_PROTECTION = 8  # per coin of upcoming disaster cost a new protecting tile takes away
W_FRONTIER = 9  # per empty square still attachable by road, times the share still to play
W_CORNERSTONE = 10  # for placing a cornerstone, times the game's progress (0 first turn, 1 last)
W_DISASTER = 11  # per coin of upcoming disaster cost a move adds (a cost)
W_INCOME = 12  # per coin of income, times the income collections still to come
W_DENY = 13  # times the left neighbour's value of a tile we could pass them (draft, select)
W_RESERVE = 14  # per coin the money falls short of the upcoming disasters' cost (a cost)
W_HURT = 15  # times the VP the Disaster would cost the worst-hit opponent plus what we avoid
N_WEIGHTS = 16

PARAM_NAMES = (
    "vp",
    "money",
    "raw",
    "processed",
    "luxury",
    "neighborhood",
    "pollution",
    "power",
    "protection",
    "frontier",
    "cornerstone",
    "disaster",
    "income",
    "deny",
    "reserve",
    "hurt",
)
assert len(PARAM_NAMES) == N_WEIGHTS

# The archetypes' parameters after the 16 weights (issue 38: cornerstones drafted and built,
# tiles placed). Each is added to an option's value outside the memoized move terms, so the
# memo's key (the first N_WEIGHTS) and the expert's policy (its 16 weights, these at 0) do not
# change; at 0, their default, every decision is the one made without them.
W_BUILD = N_WEIGHTS  # added to placing a cornerstone (the action, and the selection's fallback)
W_PLACE = N_WEIGHTS + 1  # added to placing the selected tile (the action and the selection)
W_FORESIGHT = N_WEIGHTS + 2  # per VP a cornerstone's effect gives per matching tile, in the draft
W_SYNERGY = N_WEIGHTS + 3  # times a cornerstone's worth beside the seat's kept ones, in the draft
W_DEMAND = N_WEIGHTS + 4  # times the coins a placement's new goods save the tiles still to come
W_REQUIREMENTS = N_WEIGHTS + 5  # times the coins a cornerstone's requirements cost, in the draft
ACTION_PARAM_NAMES = ("build", "place", "foresight", "synergy", "demand", "requirements")


@dataclass(frozen=True)
class Archetype:
    name: str
    description: str
    weights: dict[str, float]

    def defaults(self) -> tuple[float, ...]:
        """The 16 evaluation weights (the expert's policy reads these only)."""
        return tuple(float(self.weights.get(name, 0.0)) for name in PARAM_NAMES)

    def all_defaults(self) -> tuple[float, ...]:
        """Every parameter of the archetype: the weights, then ``ACTION_PARAM_NAMES`` (0)."""
        return (*self.defaults(), *(float(self.weights.get(n, 0.0)) for n in ACTION_PARAM_NAMES))


# Common ground of the archetypes: rounded from `neom tune --base builder --opponents greedy`
# runs (2 and 4 players), where the original hand-set weights only matched greedy.
_BASE = {
    "vp": 1.0,
    "money": 0.05,
    "raw": 0.4,
    "processed": 1.1,
    "luxury": 1.8,
    "neighborhood": 0.7,
    "pollution": 0.8,
    "power": 0.6,
    "protection": 0.05,
    "frontier": 0.55,
    "cornerstone": -0.08,
    "disaster": 0.0,
    "income": 0.2,
    "deny": 0.0,
    "reserve": 0.3,
    "hurt": 0.5,
}

ARCHETYPES = (
    Archetype(
        "builder",
        "one large Neighborhood: weighs Neighborhood growth and open road squares, keeps "
        "Polluting tiles away and money for disasters",
        {**_BASE, "neighborhood": 1.0, "pollution": 0.9, "frontier": 0.6, "reserve": 0.6},
    ),
    Archetype(
        "industrialist",
        "goods toward luxury goods: weighs Good tokens by tier, few well-separated "
        "Residential tiles",
        {**_BASE, "raw": 1.0, "processed": 2.5, "luxury": 5.0, "neighborhood": 0.3},
    ),
    Archetype(
        "merchant",
        "Commercial income and money, processed goods (Steel) for the Treasury",
        {**_BASE, "money": 0.1, "income": 0.7, "processed": 1.5},
    ),
    Archetype(
        "denier",
        "balanced play that also weighs how much the left neighbour (who gets the hand next) "
        "would value each tile, and takes the Disaster when it hurts others most",
        {**_BASE, "deny": 0.4, "hurt": 1.0},
    ),
)
