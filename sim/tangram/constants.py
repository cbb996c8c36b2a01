"""Fixed numbers of Tangram City: the board's geometry, the card schedule and the rules array.

Geometry. The 7x7 City Board has 49 squares, ``square = row * 7 + col`` (row 0 at the top,
col 0 at the left). Each square is cut along both diagonals into 4 quarter triangles meeting at
its centre: N, E, S, W (quarter q of square s is bit ``4 * s + q``), so a board is 196 bits held
in 4 uint64 words of 16 squares each (word ``s // 16``, nibble ``s % 16``). A half-square right
triangle is two adjacent quarters, named by the corner holding its right angle: NE = N + E,
SE = E + S, SW = S + W, NW = W + N; a full square is all four.
"""

import numpy as np

SIZE = 7
N_SQUARES = SIZE * SIZE
N_QUARTERS = 4 * N_SQUARES
N_WORDS = 4  # 4 x 64 bits >= 196; squares 0-15 in word 0, ..., square 48 alone in word 3
SQUARES_PER_WORD = 16

Q_N, Q_E, Q_S, Q_W = 0, 1, 2, 3
QUARTER_NAMES = ("N", "E", "S", "W")
# Nibble (4 quarter bits of one square) of each half and of the full square.
HALVES = {"NE": 0b0011, "SE": 0b0110, "SW": 0b1100, "NW": 0b1001}
HALF_NAMES = ("NE", "SE", "SW", "NW")  # fountain orientation index -> half
FULL = 0b1111

# Colours of a placed piece. A tile's drawn side is red; flipping it shows the mirror image in
# green (facts file: "the two sides of a tile are mirror images in different colours").
RED = 0
GREEN = 1
FOUNTAIN = 2
COLOUR_NAMES = ("red", "green", "fountain")

# The card schedule (text 004): 5 regular rounds of 4 cards, then a final round of the last 3.
N_CARDS = 23
N_ROUNDS = 6
REGULAR_ROUNDS = 5
CARDS_PER_ROUND = 4
FINAL_CARDS = 3
N_FOUNTAINS = 6  # one per round
MIN_PLAYERS = 1
MAX_PLAYERS = 5
N_BOARDS = 5  # one City Board per player
START_AREA_QUARTERS = 6  # the printed start piece: one square + one adjacent half (1.5 squares)
FOUNTAIN_QUARTERS = 2


def round_of_card(position: int) -> int:
    """Round (1..6) in which the card at deck position 0..22 is played."""
    return min(position // CARDS_PER_ROUND, REGULAR_ROUNDS) + 1


# Last deck position of each round: round scoring follows it.
ROUND_LAST_CARD = np.array([3, 7, 11, 15, 19, 22], dtype=np.int64)
ROUND_FIRST_CARD = np.array([0, 4, 8, 12, 16, 20], dtype=np.int64)

# --- the rules array (sim.tangram.rules.make_rules) --------------------------------------------
RO_FIRST_START = 0  # who holds the start marker in round 1: FIRST_START_*
RO_FOUNTAIN_KEPT = 1  # 0: a fountain not placed in its round is lost (text 004); 1: kept
RO_BALANCE_CAP = 2  # the balance scale's last space: markers = min(count, cap)
RO_START_COLOUR = 3  # START_COLOUR_*: who decides the side (colour) of the start piece
RO_BOARDS = 4  # BOARDS_*: which board each seat plays
RO_PLANNING_BONUS = 5  # points for a fully built board
RO_BALANCE_BONUS0 = 6  # bonus for marker distance 0, 1, 2, 3, 4 and 5-or-more (6 entries)
N_BALANCE_DISTANCES = 6
# Experiment interventions (``neom experiment --game tangram``; -1: none), TANGRAM_RULES.md X3.
RO_FORCE_TILE = RO_BALANCE_BONUS0 + N_BALANCE_DISTANCES  # RO_FORCE_SEAT may not decline it
RO_FORCE_SEAT = RO_FORCE_TILE + 1
RO_BAN_TILE = RO_FORCE_TILE + 2  # its card is taken out of the deck: 22 cards are played
N_RULES = RO_BAN_TILE + 1
NO_TILE = -1

FIRST_START_SEAT0 = 0
FIRST_START_RANDOM = 1
START_COLOUR_CHOOSE = 0
START_COLOUR_RED = 1
START_COLOUR_GREEN = 2
BOARDS_SHUFFLED = 0
BOARDS_BY_SEAT = 1

PRINTED_PLANNING_BONUS = 15
# Text 004: "Distance = Bonus Points 0 = 20 points 1-2 = 10 points 3-4 = 5 points 5+ = 0 points".
PRINTED_BALANCE_BONUS = (20, 10, 10, 5, 5, 0)
UNCAPPED = N_SQUARES  # a marker can never pass 49: no cap in effect
