"""Game positions for strategy tests and benchmarks: the arrays ``strategies.dispatch.choose``
sees, built by hand or grown by legal random placements (engine rules, no game loop)."""

from dataclasses import dataclass, field

import numpy as np

from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.grid import city_goods
from sim.neom.state import FIELDS, Game
from sim.neom.tables import make_rules
from strategies.neom.dispatch import choose_in
from strategies.neom.evaluate import memo_size
from strategies.neom.pointer import N_STEPS
from strategies.neom.registry import N_PARAMS, SEARCH_IDS, parse_strategy


def game_of(tables, state, **fields) -> Game:
    """The game loop's bundle (``sim.neom.state.Game``) of ``tables``' arrays and, for each
    other field, ``fields``' entry of its name, else ``state``'s attribute of that name (its
    arrays, not copies)."""
    data = tables.arrays
    rest = FIELDS[len(data) :]
    return Game(*data, *(fields[f] if f in fields else getattr(state, f) for f in rest))


@dataclass
class Position:
    tables: object
    n_players: int
    gstate: np.ndarray
    pstate: np.ndarray
    cells: np.ndarray
    hands: np.ndarray
    cs_hands: np.ndarray
    rules: np.ndarray = field(default_factory=make_rules)

    @property
    def goods_of(self) -> np.ndarray:
        return np.array(
            [city_goods(self.cells[s], self.tables.tiles) for s in range(self.n_players)],
            dtype=np.int64,
        )

    def place(self, seat: int, name: str, cell: int) -> None:
        self.cells[seat, cell] = self.tables.tile_index(name)

    def give(self, seat: int, names: list[str]) -> None:
        """Set the seat's hand."""
        self.hands[seat] = -1
        for k, name in enumerate(names):
            self.hands[seat, k] = self.tables.tile_index(name)
        self.pstate[seat, E.PS_HAND_SIZE] = len(names)

    def give_cornerstones(self, seat: int, names: list[str]) -> None:
        self.cs_hands[seat] = -1
        for k, name in enumerate(names):
            self.cs_hands[seat, k] = self.tables.tile_index(name)
        self.pstate[seat, E.PS_N_CS] = len(names)

    def select_options(self, seat: int) -> tuple[np.ndarray, int]:
        options = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
        n = self.pstate[seat, E.PS_HAND_SIZE]
        for k in range(n):
            options[k, E.OPT_TILE] = self.hands[seat, k]
            options[k, E.OPT_SLOT] = k
        return options, int(n)

    def action_options(self, seat: int, selected: int) -> tuple[np.ndarray, int]:
        options = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
        n = E.action_options(
            seat,
            selected,
            self.gstate[E.GS_GEN],
            self.cells,
            self.pstate,
            self.cs_hands,
            self.goods_of,
            self.n_players,
            self.tables.tiles,
            self.tables.req,
            self.tables.goods_tier,
            options,
        )
        return options, int(n)

    def game(self, options=None):
        """The position as the game loop's bundle (``sim.neom.state.Game``), with ``options``
        as its decision's options; seats, streams and scratch of the game loop's types. The
        generation decks are the decks of this player count in catalogue order (a search
        redraws what the seat has not seen from them)."""
        n_tiles = len(self.tables.tiles)
        if options is None:
            options = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
        decks = np.full((E.N_GENERATIONS, n_tiles), -1, dtype=np.int64)
        sizes = np.array(
            [
                E.build_deck(g + 1, self.n_players, self.tables.tiles, self.rules, decks[g])
                for g in range(E.N_GENERATIONS)
            ],
            dtype=np.int64,
        )
        summaries = np.zeros((self.n_players, E.N_SUMMARY), dtype=np.int64)
        summaries[:, E.SM_OCCUPIED] = -1  # stale: summarized when first read
        n = self.n_players
        return game_of(
            self.tables,
            self,
            cs_pile=np.full(E.MAX_CS_PILE, -1, dtype=np.int64),
            cs_box=np.full(n_tiles, -1, dtype=np.int64),
            decks=decks,
            deck_sizes=sizes,
            packs=np.full((E.SOLO_PACKS, E.HAND_SIZE), -1, dtype=np.int64),
            pack_sizes=np.zeros(E.SOLO_PACKS, dtype=np.int64),
            seats=np.arange(n, dtype=np.int32),
            strategy_ids=np.zeros(n, dtype=np.int32),
            strategy_params=np.zeros((n, N_PARAMS), dtype=np.float64),
            strategy_fns=np.zeros(n + 1, dtype=np.int64),  # choose_in decides
            step_fns=np.zeros(N_STEPS, dtype=np.int64),  # no loop but a search's (decide)
            strat_rng=np.zeros((n, 2), dtype=np.uint64),
            memos=np.zeros((n, memo_size(n_tiles)), dtype=np.int64),
            options=options,
            summaries=summaries,
            req_costs=np.zeros(K.MAX_REQ_OPTIONS, dtype=np.int64),
            stats=np.zeros((R.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64),
            events=np.zeros((0, R.N_EVENT_COLS), dtype=np.int64),
        )

    def decide(self, name: str, decision: int, options, n: int, seat: int = 0, seed: int = 0):
        """The option the strategy spec ``name`` picks for ``seat`` (its stream from ``seed``).
        A search (a selection or an action) takes it as the game loop stopped before that
        step of the turn would: its own listing of the options must be ``options``."""
        spec = parse_strategy(name)
        state = np.array([seed + 1, 7], dtype=np.uint64)
        memo = np.zeros(memo_size(len(self.tables.tiles)), dtype=np.int64)
        if spec.id not in SEARCH_IDS or decision not in (E.D_SELECT, E.D_ACTION):
            return choose_in(
                spec.id, spec.params, state, decision, n, seat, self.game(options), memo
            )
        from strategies.neom.pieces import addresses
        from strategies.neom.search import choose_paused, new_scratch
        from strategies.neom.steps import addresses as step_addresses

        game = self.game(np.zeros_like(options))
        game.strategy_ids[seat] = spec.id
        game.strategy_params[seat] = spec.params
        # The playout policy's address, as a run's entry hands it to the loop (the last slot).
        game.strategy_fns[:] = addresses(game.strategy_ids)
        game.step_fns[:] = step_addresses()  # its playouts run the loop
        game.strat_rng[seat] = state
        acting = decision == E.D_ACTION
        if acting:  # the last action sells the selected tile
            game.pstate[seat, E.PS_SELECTED] = options[n - 1, E.OPT_TILE]
        turn = int(self.gstate[E.GS_TURN])
        if self.n_players <= 2:
            order = (seat - turn) % self.n_players  # 2 players: the start seat changes
            step = 2 * order + int(acting)
        else:
            step = seat + self.n_players * int(acting)
        self.gstate[E.GS_STEP] = step
        k = choose_paused(game, new_scratch(game))
        columns = slice(None) if acting else [E.OPT_TILE, E.OPT_SLOT]
        listed = game.options[:n, columns] == options[:n, columns]
        assert listed.all(), "the search listed other options"
        return k


def empty_position(tables, n_players: int, turn: int = 0, money: int = 6, boards=None) -> Position:
    """Every city holds only its City Center (boards 0, 1, ... unless given)."""
    gstate = np.zeros(E.N_GSTATE, dtype=np.int64)
    gstate[E.GS_N_PLAYERS] = n_players
    gstate[E.GS_TURN] = turn
    gstate[E.GS_GEN] = turn // E.TURNS_PER_GENERATION + 1 if turn >= 0 else 0
    pstate = np.zeros((n_players, E.N_PSTATE), dtype=np.int64)
    pstate[:, E.PS_MONEY] = money
    pstate[:, E.PS_SELECTED] = -1
    cells = np.full((n_players, K.N_CELLS), K.EMPTY, dtype=np.int16)
    boards = list(range(n_players)) if boards is None else boards
    for s in range(n_players):
        pstate[s, E.PS_BOARD] = boards[s]
        cells[s, K.CENTER_CELL] = tables.board_center[boards[s]]
    hands = np.full((n_players, E.HAND_SIZE), -1, dtype=np.int64)
    cs_hands = np.full((n_players, E.MAX_CS_HAND), -1, dtype=np.int64)
    return Position(tables, n_players, gstate, pstate, cells, hands, cs_hands)


# The squares of the broke opponent's Villas in ``disaster_position``.
VICTIM_CELLS = (7, 11, 13, 17)


def disaster_position(tables):
    """Rules 001 "Resolving a Disaster": turn 9 of a 2-player game; seat 0 (two Row Houses)
    selects from the Fire and the Pawn Shop against a broke seat 1 whose Villas stand on
    ``VICTIM_CELLS``. (the position, seat 0's selection options, their count)"""
    pos = empty_position(tables, 2, turn=9, money=6, boards=[2, 5])
    pos.place(0, "Row Houses", 11)
    pos.place(0, "Row Houses", 13)
    pos.give(0, ["Fire", "Pawn Shop"])
    options, n = pos.select_options(0)
    for cell in VICTIM_CELLS:
        pos.place(1, "Villas", cell)
    pos.pstate[1, E.PS_MONEY] = 0
    return pos, options, n


def grow_city(tables, city: np.ndarray, n_tiles: int, rng: np.random.Generator) -> None:
    """Place up to ``n_tiles`` random generation tiles on legal squares (requirements
    ignored): a plausible city shape for tests and benchmarks."""
    summary = np.empty(E.N_SUMMARY, dtype=np.int64)
    pool = np.flatnonzero(
        (tables.tiles[:, K.C_DECK] >= K.DECK_GEN1)
        & (tables.tiles[:, K.C_DECK] <= K.DECK_GEN3)
        & (tables.tiles[:, K.C_DISASTER] == K.DIS_NONE)
    )
    placed = 0
    for _ in range(20 * n_tiles):
        if placed == n_tiles:
            break
        tile = int(rng.choice(pool))
        E.summarize_city(city, tables.tiles, summary)
        mask = E.placement_mask(city, tables.tiles, tile, summary)
        cells = [c for c in range(K.N_CELLS) if (mask >> c) & 1]
        if cells:
            city[int(rng.choice(cells))] = tile
            placed += 1
