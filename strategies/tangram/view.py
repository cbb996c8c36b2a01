"""What a strategy is shown at a decision: its options and one int64 ``view`` array.

The view holds only what the seat knows (text 004: "You are allowed to look at the Card in your
hand or the Card you are sharing with someone"): the decision, the round, the current deck
position, its fountains in hand, the final-round cards still to place, and for every deck
position the tile if the seat has seen it (-1 otherwise), plus the sorted list of the tiles
still to come that it has not seen. The deck itself never reaches a strategy.

Options are rows ``(placement, tile)`` of an int64 array: placement -1 means declining the tile
(or, for fountains, placing none). For the start-piece decision the rows are ``(-1, colour)``.
"""

import numpy as np

from sim.core.jit import njit
from sim.tangram import constants as K
from sim.tangram import engine as E

D_START_COLOUR = 0  # choose the board's side: options (-1, RED), (-1, GREEN)
D_PLACE = 1  # the card's tile: every legal placement, then (-1, tile) to decline
D_FINAL = 2  # final round: every legal placement of every card not yet placed, then declines
D_FOUNTAIN = 3  # every legal fountain placement, then (-1, n_tiles) for none

V_DECISION = 0
V_SEAT = 1
V_ROUND = 2
V_TURN = 3  # deck position of the card being placed (final round: 22)
V_SUPPLY = 4  # fountains the seat may still place in this fountain step (this one included)
V_FINAL_LEFT = 5  # bit k: final-round card at position 20 + k not yet placed or declined
V_N_UNSEEN = 6
V_KNOWN = 7  # 23 entries: tile at each deck position if seen, else -1
V_UNSEEN = V_KNOWN + K.N_CARDS  # 23 entries: the unseen tiles still to come, sorted
N_VIEW = V_UNSEEN + K.N_CARDS


def new_view() -> np.ndarray:
    return np.zeros(N_VIEW, dtype=np.int64)


@njit(inline="always")  # inlined: its call sites pass literal decisions (one compile each)
def fill_view(view, decision, seat, rnd, turn, revealed, supply, final_left, deck, holders):
    """Fill ``view`` for ``seat``; ``revealed`` is the last deck position shown to everyone."""
    view[V_DECISION] = decision
    view[V_SEAT] = seat
    view[V_ROUND] = rnd
    view[V_TURN] = turn
    view[V_SUPPLY] = supply
    view[V_FINAL_LEFT] = final_left
    view[V_N_UNSEEN] = E.seat_knowledge(
        seat,
        turn,
        revealed,
        deck,
        holders,
        view[V_KNOWN : V_KNOWN + K.N_CARDS],
        view[V_UNSEEN : V_UNSEEN + K.N_CARDS],
    )
