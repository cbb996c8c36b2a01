"""The rules array: the readings of what the texts leave open, and the bonus tables.

``make_rules(**options)`` returns the int64 array the compiled game reads (indices ``RO_*`` in
:mod:`sim.tangram.constants`). The readings are documented in TANGRAM_RULES.md; each is a
:class:`RuleOption` the command line offers. The bonus tables are keyword arguments only (for
A/B experiments on the same deals), not command-line options.
"""

import numpy as np

from sim.core.errors import UserError
from sim.core.game import RuleOption
from sim.tangram import constants as K

MAX_BONUS = 1000  # keeps every total inside the players table's int16

RULE_OPTIONS = (
    RuleOption(
        name="first_start",
        choices={"seat0": K.FIRST_START_SEAT0, "random": K.FIRST_START_RANDOM},
        default="seat0",
        help="who holds the start marker in round 1 (not in the texts): seat 0, or a seat drawn "
        "with the deal",
        commands=("play", "simulate"),
        describe={
            "seat0": "seat 0 holds the start marker in round 1",
            "random": "the round-1 start player is drawn with the deal",
        },
    ),
    RuleOption(
        name="fountain_kept",
        choices={"no": 0, "yes": 1},
        default="no",
        help="yes: a fountain not placed in its round may be placed later, a house rule that "
        'contradicts text 004 (a tile set aside "may not" be played later; its placing rules '
        'apply to "City and Fountain Tiles")',
        commands=("play", "simulate"),
        describe={
            "no": "a fountain not placed in its round is set aside for good (text 004)",
            "yes": "HOUSE RULE against text 004: a fountain not placed in its round is kept, and "
            "later rounds may place several",
        },
    ),
    RuleOption(
        name="balance_cap",
        choices={"none": K.UNCAPPED, "30": 30, "20": 20, "15": 15, "10": 10},
        default="none",
        help="the balance scale's last space (its length is not in the texts): markers stop there",
        commands=("play", "simulate", "score"),
        describe={
            "none": "the balance scale reaches 49: markers are the plain counts",
            **{
                str(n): f"the balance scale ends at {n}: a count above {n} sets the marker to {n}"
                for n in (30, 20, 15, 10)
            },
        },
    ),
    RuleOption(
        name="start_colour",
        choices={
            "choose": K.START_COLOUR_CHOOSE,
            "red": K.START_COLOUR_RED,
            "green": K.START_COLOUR_GREEN,
        },
        default="choose",
        help="the side of the double-sided board, i.e. the start piece's colour: each player "
        "chooses (facts file), or every board red / green",
        commands=("play", "simulate"),
        describe={
            "choose": "each player chooses the side of their board (start piece red or green)",
            "red": "every start piece is red",
            "green": "every start piece is green",
        },
    ),
    RuleOption(
        name="boards",
        choices={"shuffled": K.BOARDS_SHUFFLED, "by_seat": K.BOARDS_BY_SEAT},
        default="shuffled",
        help="which City Board each seat plays: dealt at random with the deal, or board s to "
        "seat s",
        commands=("play", "simulate"),
        describe={
            "shuffled": "the City Boards are dealt at random with the deal",
            "by_seat": "seat s plays board s",
        },
    ),
)
OPTIONS = {option.name: option for option in RULE_OPTIONS}


def make_rules(
    first_start=None,
    fountain_kept=None,
    balance_cap=None,
    start_colour=None,
    boards=None,
    planning_bonus: int = K.PRINTED_PLANNING_BONUS,
    balance_bonus=K.PRINTED_BALANCE_BONUS,
    force_tile: int = K.NO_TILE,
    force_seat: int = K.NO_TILE,
    ban_tile: int = K.NO_TILE,
) -> np.ndarray:
    """The rules array. Each reading is given by its label or stored value (None: default);
    ``balance_bonus`` lists the bonus for marker distances 0, 1, 2, 3, 4 and 5 or more.
    ``force_tile``/``force_seat`` and ``ban_tile`` are experiment interventions (-1: none;
    TANGRAM_RULES.md X3)."""
    rules = np.zeros(K.N_RULES, dtype=np.int64)
    given = {
        "first_start": first_start,
        "fountain_kept": fountain_kept,
        "balance_cap": balance_cap,
        "start_colour": start_colour,
        "boards": boards,
    }
    slots = {
        "first_start": K.RO_FIRST_START,
        "fountain_kept": K.RO_FOUNTAIN_KEPT,
        "balance_cap": K.RO_BALANCE_CAP,
        "start_colour": K.RO_START_COLOUR,
        "boards": K.RO_BOARDS,
    }
    for name, value in given.items():
        rules[slots[name]] = _value(OPTIONS[name], value)
    if isinstance(planning_bonus, bool) or not isinstance(planning_bonus, int | np.integer):
        raise UserError(f"planning bonus {planning_bonus!r}: expected a whole number")
    if not 0 <= planning_bonus <= MAX_BONUS:
        raise UserError(f"planning bonus {planning_bonus}: must be 0 to {MAX_BONUS}")
    rules[K.RO_PLANNING_BONUS] = planning_bonus
    table = list(balance_bonus)
    if len(table) != K.N_BALANCE_DISTANCES or not all(
        isinstance(v, int | np.integer) and not isinstance(v, bool) and 0 <= v <= MAX_BONUS
        for v in table
    ):
        raise UserError(
            f"balance bonus {table!r}: expected {K.N_BALANCE_DISTANCES} whole numbers 0 to "
            f"{MAX_BONUS} (distances 0, 1, 2, 3, 4, 5 or more)"
        )
    rules[K.RO_BALANCE_BONUS0 : K.RO_BALANCE_BONUS0 + K.N_BALANCE_DISTANCES] = table
    for name, value, top in (
        ("force_tile", force_tile, K.N_CARDS),
        ("force_seat", force_seat, K.MAX_PLAYERS),
        ("ban_tile", ban_tile, K.N_CARDS),
    ):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise UserError(f"{name.replace('_', ' ')} {value!r}: expected a whole number")
        if not K.NO_TILE <= value < top:
            raise UserError(f"{name.replace('_', ' ')} {value}: must be -1 (none) to {top - 1}")
    if (force_tile == K.NO_TILE) != (force_seat == K.NO_TILE):
        raise UserError("force tile and force seat: give both or neither")
    rules[K.RO_FORCE_TILE] = force_tile
    rules[K.RO_FORCE_SEAT] = force_seat
    rules[K.RO_BAN_TILE] = ban_tile
    return rules


def _value(option: RuleOption, value) -> int:
    if value is None:
        return option.choices[option.default]
    if isinstance(value, str):
        if value not in option.choices:
            raise UserError(f"{option.flag} {value!r}: expected one of {', '.join(option.choices)}")
        return option.choices[value]
    if isinstance(value, int | np.integer) and int(value) in option.choices.values():
        return int(value)
    raise UserError(f"{option.flag} {value!r}: expected one of {', '.join(option.choices)}")


def _label(option: RuleOption, value: int) -> str:
    for label, stored in option.choices.items():
        if stored == value:
            return label
    return str(value)


def rules_as_dict(rules: np.ndarray) -> dict:
    """The manifest's "rules" entry: every reading by label, the bonus tables, and the
    experiment interventions that are set (so a run without one records what it always did)."""
    interventions = {
        name: int(rules[index])
        for name, index in (
            ("force_tile", K.RO_FORCE_TILE),
            ("force_seat", K.RO_FORCE_SEAT),
            ("ban_tile", K.RO_BAN_TILE),
        )
        if rules[index] != K.NO_TILE
    }
    return {
        "first_start": _label(OPTIONS["first_start"], int(rules[K.RO_FIRST_START])),
        "fountain_kept": _label(OPTIONS["fountain_kept"], int(rules[K.RO_FOUNTAIN_KEPT])),
        "balance_cap": _label(OPTIONS["balance_cap"], int(rules[K.RO_BALANCE_CAP])),
        "start_colour": _label(OPTIONS["start_colour"], int(rules[K.RO_START_COLOUR])),
        "boards": _label(OPTIONS["boards"], int(rules[K.RO_BOARDS])),
        "planning_bonus": int(rules[K.RO_PLANNING_BONUS]),
        "balance_bonus": [
            int(v) for v in rules[K.RO_BALANCE_BONUS0 : K.RO_BALANCE_BONUS0 + K.N_BALANCE_DISTANCES]
        ],
        **interventions,
    }


def rules_from_dict(entry: dict) -> np.ndarray:
    """The rules array back from a manifest's "rules" entry."""
    return make_rules(**entry)


def describe_rules(rules: np.ndarray) -> list[str]:
    """The readings in words, for report headers and ``play`` output."""
    shown = rules_as_dict(rules)
    lines = [
        OPTIONS[name].describe[shown[name]]
        for name in ("first_start", "fountain_kept", "balance_cap", "start_colour", "boards")
    ]
    table = shown["balance_bonus"]
    printed = tuple(table) == K.PRINTED_BALANCE_BONUS
    lines.append(
        f"planning bonus {shown['planning_bonus']}; balance bonus by marker distance "
        f"0/1/2/3/4/5+: {'/'.join(str(v) for v in table)}"
        + (
            " (printed)"
            if printed and shown["planning_bonus"] == 15
            else " (NOT the printed table)"
        )
    )
    return lines
