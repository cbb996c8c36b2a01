"""The compiled game loop: setup, cornerstone draft, three generations, final scoring.

The state of a game travels as one bundle (``sim.neom.state.Game``): every step below takes
the seat it acts for and the game. Every choice is a strategy decision among options that
``sim.neom.engine`` lists, taken by the seat's strategy compiled on its own and called at its
address (``game.strategy_fns``, ``strategies.neom.pointer``): this module imports no strategy,
so the loop compiles once for every lineup. The draft, the scoring and a seat's action are
compiled on their own too and called at their addresses (``game.step_fns``,
``strategies.neom.steps``), so that the loop's cold compile splits over two processes.
Chance comes only from the game's deal stream, drawn entirely at setup, so a strategy never
changes which tiles are dealt. ``play_batch`` is
the entry point of the runner (through ``strategies.neom.entries``, which hands it the
addresses); ``play_one`` is the Python convenience behind ``neom play`` and the tests.

The loop is resumable: ``advance`` plays from wherever the state says the game is (the draft,
or a step of a turn: ``GS_TURN``, ``GS_STEP``) to the end. It stops before the selection or
the action of a seat played by a search strategy (``strategies.neom.registry.SEARCH_IDS``),
whose decision is taken outside the loop (``strategies.neom.search``) and handed back with
``force``; a search's playouts are this same loop run on a copy of the state. ``play_batch``
has no search: a lineup with one is played by ``strategies.neom.search.play_batch``
(``strategies.neom.entries``), so that a run without a search never compiles it. The loop
imports no strategy module but ``strategies.neom.registry`` (ids) and ``pointer``.
"""

import numpy as np
from numba import types

from sim.core import rng
from sim.core.jit import cfunc, njit
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.effects import city_income, insured_against
from sim.neom.grid import M_GOODS
from sim.neom.scoring import score_masks
from sim.neom.state import Game, view
from strategies.neom.pointer import (
    GAME_VIEW,
    RUN,
    STEP_ACTION,
    STEP_DRAFT,
    STEP_GENERATION,
    STEP_RUN,
    STEP_SCORING,
    call_run,
    call_step,
    call_strategy,
)
from strategies.neom.registry import EXPERT_ID, RANDOM_ID, ROLLOUT_ID


# --- decisions -----------------------------------------------------------------------------
@njit(inline="always")
def searches(strategy_id):
    """Whether the strategy takes its selections and actions by a search outside the loop
    (registry.SEARCH_IDS)."""
    return strategy_id == EXPERT_ID or strategy_id == ROLLOUT_ID


REFUSED_NO_STRATEGY = 1  # GS_REFUSED: a seat without its strategy's address
REFUSED_NO_OPTION = 2  # GS_REFUSED: a strategy chose an option that does not exist


@njit(inline="always")
def refuse(game, why):
    """A decision refused (``why``: REFUSED_*): noted for ``raise_refused``, option 0 taken
    meanwhile (every decision has one) so that the step ends without reading past its list."""
    game.gstate[E.GS_REFUSED] = why
    return 0


@njit(inline="always")
def raise_refused(game):
    """Raise the decision refused since the last check, if any (in the loop, never in a
    step: a step is a C function, where an exception is printed and lost). Checked after the
    draft and once a turn: a refused decision took option 0, so the turn ends safely first."""
    why = game.gstate[E.GS_REFUSED]
    if why == REFUSED_NO_STRATEGY:
        raise ValueError("no compiled strategy for this seat (game.strategy_fns unset)")
    if why != 0:
        raise ValueError("a strategy chose an option that does not exist")


@njit(inline="always")
def decide(seat, decision, n, game):
    """Index of the option of ``game.options[:n]`` the seat's strategy picks (no question
    asked with one option); a refused decision (``refuse``) is raised by the loop."""
    if n == 1:
        return 0
    which = game.seats[seat]
    if game.strategy_ids[which] == RANDOM_ID:
        # Random's uniform choice (strategies.neom.basic.choose_random), drawn here: no call.
        return rng.randint(game.strat_rng[seat], n)
    # The seat's strategy, compiled on its own, called at its address (strategies.neom.pieces).
    address = game.strategy_fns[which]
    if address == 0:
        # A game built without its strategies' addresses (pieces.addresses): an error, not a
        # call to address 0.
        return refuse(game, REFUSED_NO_STRATEGY)
    k = call_strategy(address, game, which, seat, decision, n)
    if k < 0 or k >= n:
        return refuse(game, REFUSED_NO_OPTION)
    return k


@njit(inline="always")
def run_step(game, slot, number):
    """The loop's step at ``slot`` of ``game.step_fns`` (the draft, the scoring, a seat's
    action: ``strategies.neom.steps``, compiled on their own), called at its address with
    ``number`` (what the step needs: the generation, the seat); returns what it returns."""
    address = game.step_fns[slot]
    if address == 0:
        # A game built without the steps' addresses (steps.addresses): an error, not a call
        # to address 0.
        raise ValueError("no compiled loop step for this game (game.step_fns unset)")
    return call_step(address, game, number)


@njit(inline="always")
def forced_option(game):
    """The option a decision taken outside the loop (``force``) gives the step the loop is at,
    once; -1 when none."""
    gstate = game.gstate
    if gstate[E.GS_FORCED_KEY] == 0:
        return -1
    if gstate[E.GS_FORCED_KEY] != E.step_key(gstate[E.GS_TURN], gstate[E.GS_STEP]):
        return -1
    gstate[E.GS_FORCED_KEY] = 0
    return gstate[E.GS_FORCED_OPTION]


@njit(_nrt=False)
def force(game, option):
    """The first decision of the step the loop stopped before (``advance`` returned PAUSED)
    takes ``option`` of the list that step makes (``list_selections``, ``list_actions``)."""
    gstate = view(game).gstate
    gstate[E.GS_FORCED_KEY] = E.step_key(gstate[E.GS_TURN], gstate[E.GS_STEP])
    gstate[E.GS_FORCED_OPTION] = option


# One signature (integers widened at the call): the loop logs literal constants, int16 tiles
# and int64 values in every mix, and each mix compiled a body of its own (11 of them).
@njit(types.void(GAME_VIEW, *[types.int64] * 7), _nrt=False)
def log(game, seat, kind, tile, cell, coins, other, good):
    """Append one event to the game's block (``sim.neom.engine.log_event``)."""
    E.log_event(game.events, game.gstate, seat, kind, tile, cell, coins, other, good)


@njit(inline="always")
def refresh_goods(game):
    """Every seat's goods as its city produces them now, read from its summary (kept up to
    date square by square: ``E.update_summary``)."""
    for s in range(game.gstate[E.GS_N_PLAYERS]):
        summary = game.summaries[s]
        E.refresh_summary(game.cells[s], game.tiles, summary)
        game.goods_of[s] = summary[M_GOODS]


@njit(inline="always")
def discard_hand(seat, game, kind):
    for k in range(game.pstate[seat, E.PS_HAND_SIZE]):
        log(game, seat, kind, game.hands[seat, k], -1, 0, -1, -1)
        game.hands[seat, k] = -1
    game.pstate[seat, E.PS_HAND_SIZE] = 0


# --- a turn --------------------------------------------------------------------------------
@njit(inline="always")
def disaster_selectable(gstate):
    """Whether a Disaster may be selected now (solo: only from packs 1-3, RULES.md P12)."""
    return gstate[E.GS_N_PLAYERS] > 1 or gstate[E.GS_TURN] % E.TURNS_PER_GENERATION < 3


@njit(inline="always")
def list_selections(seat, game):
    """The seat's selection options (the tiles of its hand it may select) into
    ``game.options``; returns their number."""
    hands = game.hands
    selectable = disaster_selectable(game.gstate)
    n = np.int64(0)  # a literal 0 here reached forced_choice and randint as Literal[int](0)
    for k in range(game.pstate[seat, E.PS_HAND_SIZE]):
        tile = hands[seat, k]
        if not selectable and game.tiles[tile, K.C_DISASTER] != K.DIS_NONE:
            continue
        E.set_option(game.options, n, 0, tile, -1, -1, k, -1, -1, 0)
        n += 1
    return n


@njit(inline="always")
def select_tile(seat, game):
    """The seat selects a tile of its hand into PS_SELECTED: secret during the selection step,
    revealed before the actions (with 2 players, before the seat acts: RULES.md P3)."""
    hands = game.hands
    pstate = game.pstate
    size = pstate[seat, E.PS_HAND_SIZE]
    n = list_selections(seat, game)
    k = forced_option(game)
    if k < 0 and game.rules[K.RO_FORCE_TILE] >= 0:  # an experiment's forced tile (rare)
        k = E.forced_choice(seat, E.D_SELECT, game.gstate, game.rules, game.tiles, game.options, n)
    if k < 0:
        k = decide(seat, E.D_SELECT, n, game)
    slot = game.options[k, E.OPT_SLOT]
    tile = hands[seat, slot]
    E.remove_slot(hands[seat], size, slot)
    pstate[seat, E.PS_HAND_SIZE] = size - 1
    pstate[seat, E.PS_SELECTED] = tile
    log(game, seat, R.EV_SELECT, tile, -1, 0, size, -1)


@njit(inline="always")
def list_actions(seat, game):
    """The seat's action options with its selected (non-Disaster) tile into ``game.options``;
    returns their number (``E.list_actions``, on the game's view)."""
    return E.list_actions(view(game), np.int64(seat))


@njit(inline="always")
def resolve_disaster(spared, disaster, game):
    """Every player but ``spared`` (and the insured) pays the disaster off or sacrifices."""
    gstate = game.gstate
    pstate = game.pstate
    stats = game.stats
    options = game.options
    gstate[E.GS_DISASTERS] |= 1 << (gstate[E.GS_GEN] - 1)
    gstate[E.GS_RESOLVING] = disaster
    for s in range(gstate[E.GS_N_PLAYERS]):
        city = game.cells[s]
        if s == spared or insured_against(city, game.effects, disaster):
            continue
        summary = game.summaries[s]
        E.refresh_summary(city, game.tiles, summary)
        n = E.summary_disaster_options(
            summary, city, pstate[s, E.PS_MONEY], game.tiles, disaster, options
        )
        k = decide(s, E.D_DISASTER, n, game)
        if options[k, E.OPT_KIND] == E.DR_PAY:
            cost = options[k, E.OPT_COST]
            pstate[s, E.PS_MONEY] -= cost
            stats[s, R.P_DISASTERS_PAID] += 1
            stats[s, R.P_DISASTER_COINS] += cost
            log(game, s, R.EV_DISASTER_PAY, -1, -1, -cost, disaster, -1)
            continue
        stats[s, R.P_DISASTERS_SACRIFICED] += 1
        for step in range(E.sacrifice_steps(disaster)):
            n = E.sacrifice_options(city, game.tiles, disaster, step, options)
            if n == 0:
                continue
            k = decide(s, E.D_SACRIFICE, n, game)
            cell = options[k, E.OPT_CELL]
            lost = city[cell]
            city[cell] = K.EMPTY
            E.update_summary(game.summaries[s], cell, np.int64(lost), K.EMPTY, city, game.tiles)
            stats[s, R.P_DISASTER_TILES_LOST] += 1
            log(game, s, R.EV_DISASTER_SACRIFICE, lost, cell, 0, disaster, -1)
    gstate[E.GS_RESOLVING] = K.DIS_NONE


@njit(inline="always")
def release_pending(game):
    """Coins from goods sold become spendable at the end of the turn."""
    pstate = game.pstate
    for s in range(game.gstate[E.GS_N_PLAYERS]):
        pstate[s, E.PS_MONEY] += pstate[s, E.PS_PENDING]
        pstate[s, E.PS_PENDING] = 0


@njit(_nrt=False)
def collect_income(game):
    for s in range(game.gstate[E.GS_N_PLAYERS]):
        summary = game.summaries[s]
        E.refresh_summary(game.cells[s], game.tiles, summary)
        income = city_income(game.cells[s], game.tiles, summary, game.effects)
        if income != 0:
            game.pstate[s, E.PS_MONEY] += income
            game.stats[s, R.P_INCOME_TOTAL] += income
            log(game, s, R.EV_INCOME, -1, -1, income, -1, -1)


# --- generations ---------------------------------------------------------------------------
@njit(_nrt=False)
def deal_solo_packs(deck, n_deck, packs, pack_sizes):
    """Solo: 8 equal packs; 2 tiles of pack 8 go to pack 1, 1 of pack 7 to pack 2, 1 of pack 6
    to pack 3; the rest of pack 8 is boxed unseen (tiles past 8 equal packs too)."""
    size = n_deck // E.SOLO_PACKS
    for p in range(E.SOLO_PACKS):
        for k in range(size):
            packs[p, k] = deck[p * size + k]
        pack_sizes[p] = size
    moves = ((7, 0), (7, 0), (6, 1), (5, 2))
    for src, dst in moves:
        if pack_sizes[src] > 0:
            pack_sizes[src] -= 1
            packs[dst, pack_sizes[dst]] = packs[src, pack_sizes[src]]
            pack_sizes[dst] += 1


@njit(_nrt=False)
def turn_disaster(source, game):
    """The disaster of the turn from ``source`` (``sim.neom.engine.turn_disaster_of``: the one
    a player selected, its selector spared; solo, the one left in packs 4-7, taken out of the
    pack; the random-disasters variant's on its shown turn), as (spared seat, DIS_*), logged;
    DIS_NONE when that source has none this turn."""
    pstate = game.pstate
    spared, disaster, slot = E.turn_disaster_of(source, game.gstate, pstate, game.hands, game.tiles)
    if disaster == K.DIS_NONE or source == E.SRC_SELECTED:
        return spared, disaster
    if source == E.SRC_SOLO_PACK:
        hand = game.hands[0]
        log(game, -1, R.EV_DISASTER_SELECT, hand[slot], -1, 0, -1, -1)
        E.remove_slot(hand, pstate[0, E.PS_HAND_SIZE], slot)
        pstate[0, E.PS_HAND_SIZE] -= 1
    else:
        log(game, -1, R.EV_DISASTER_SELECT, -1, -1, 0, disaster, -1)
    return spared, disaster


@njit(_nrt=False)
def start_generation(gen, game):
    """Generation ``gen`` begins: its hands dealt from the top of its deck (8 each; with 2
    players the 1+ deck's remaining tiles stay in the box), solo its packs and the first one
    in hand; the loop is then at the first step of its first turn."""
    gstate = game.gstate
    pstate = game.pstate
    hands = game.hands
    n_players = gstate[E.GS_N_PLAYERS]
    deck = game.decks[gen - 1]
    n_deck = game.deck_sizes[gen - 1]
    gstate[E.GS_GEN] = gen
    gstate[E.GS_TURN] = (gen - 1) * E.TURNS_PER_GENERATION
    gstate[E.GS_STEP] = 0
    if n_players == 1:
        game.packs[:, :] = -1
        game.pack_sizes[:] = 0
        deal_solo_packs(deck, n_deck, game.packs, game.pack_sizes)
        load_pack(0, game)
    else:
        dealt = 0
        for s in range(n_players):
            size = min(E.HAND_SIZE, n_deck - dealt)
            for k in range(size):
                hands[s, k] = deck[dealt + k]
            dealt += size
            pstate[s, E.PS_HAND_SIZE] = size


@njit(inline="always")
def load_pack(t, game):
    """Solo: the pack of turn ``t`` of the generation is the hand."""
    size = game.pack_sizes[t]
    for k in range(size):  # element by element: a slice copy may allocate (no NRT here)
        game.hands[0, k] = game.packs[t, k]
    game.pstate[0, E.PS_HAND_SIZE] = size


@njit(inline="always")
def step_seat(step, turn, n_players):
    """The seat of ``step`` of ``turn`` and whether the step is its action (else its
    selection): 1-2 players select and act in turn, the 2-player start seat changing every
    turn; 3-5 all select, then act in seat order."""
    if n_players <= 2:
        j = step // 2
        acting = step % 2 == 1
    else:
        j = step % n_players
        acting = step >= n_players
    seat = (turn + j) % n_players if n_players == 2 else j
    return seat, acting


@njit(inline="always")
def pauses(seat, game):
    """Whether the loop stops before this step: the seat's strategy is a search and no
    decision was handed to the step (``force``)."""
    gstate = game.gstate
    if not searches(game.strategy_ids[game.seats[seat]]):
        return False
    return gstate[E.GS_FORCED_KEY] != E.step_key(gstate[E.GS_TURN], gstate[E.GS_STEP])


@njit(inline="always")
def end_turn(game):
    """The end of the turn: its disasters, in order (the one a player selected, its selector
    spared; solo, the one revealed in packs 4-7; random-disasters variant, the generation's),
    the selections cleared, hands passed (or discarded after the 7th turn, solo every turn),
    the coins of goods sold released; after the 7th turn income, and the next generation.
    The loop is then at the first step of the next turn (GS_TURN = N_TURNS: the game is over)."""
    gstate = game.gstate
    pstate = game.pstate
    n_players = gstate[E.GS_N_PLAYERS]
    turn = gstate[E.GS_TURN]
    gen = gstate[E.GS_GEN]
    t = turn % E.TURNS_PER_GENERATION
    for source in range(E.N_DISASTER_SOURCES):
        spared, disaster = turn_disaster(source, game)
        if disaster != K.DIS_NONE:
            resolve_disaster(spared, disaster, game)
    for seat in range(n_players):
        pstate[seat, E.PS_SELECTED] = -1
    if n_players == 1 or t == E.TURNS_PER_GENERATION - 1:
        for seat in range(n_players):
            discard_hand(seat, game, R.EV_DISCARD)
    else:
        E.pass_left(game.hands, pstate, n_players)
    release_pending(game)
    gstate[E.GS_STEP] = 0
    if t < E.TURNS_PER_GENERATION - 1:
        gstate[E.GS_TURN] = turn + 1
        if n_players == 1:
            load_pack(t + 1, game)
        return
    run_step(game, STEP_GENERATION, gen)  # steps.once.generation_step: income, the next one


@njit(inline="always")
def act_seat(seat, game):
    """The seat's action with its selected tile; selecting the Disaster gives none."""
    selected = game.pstate[seat, E.PS_SELECTED]
    if selected < 0:
        return
    if game.tiles[selected, K.C_DISASTER] != K.DIS_NONE:
        game.stats[seat, R.P_DISASTERS_SELECTED] += 1
        log(game, seat, R.EV_DISASTER_SELECT, selected, -1, 0, -1, -1)
        return
    run_step(game, STEP_ACTION, seat)  # steps.action.take_action


DONE = 0  # advance: the game is over and scored
PAUSED = 1  # advance: stopped before a search seat's selection or action
STOPPED = 2  # advance: stopped at the start of turn GS_STOP_TURN
REFUSED = 3  # play_turns: stopped after a refused decision (its caller raises it)


@njit
def advance(game, game_row):
    """Play from where the state says the game is to its end (then score it into the seats'
    rows and ``game_row``: DONE), or until the selection or action of a seat played by a
    search (PAUSED: the step is ``GS_TURN``, ``GS_STEP``; ``force`` its decision and call
    again), or until the start of turn ``GS_STOP_TURN`` when it is set (STOPPED). The draft is
    played whole (a search seat drafts with its policy)."""
    return run(view(game), game_row)


@njit(_nrt=False)
def run(game, game_row):
    """``advance`` on a view of the game: the loop compiled without reference counts (the
    ``Game`` the view was taken from keeps every array alive)."""
    result = play_turns(game, game_row)
    raise_refused(game)
    return result


@cfunc(RUN, _nrt=False)
def run_fn(game, game_row):
    """``run`` as a C function, which ``play_batch`` calls at its address
    (``game.step_fns[STEP_RUN]``): the entry's library then holds no copy of the loop, which
    Numba would otherwise link, optimise and emit again in it (about 1.2 s of the loop piece's
    cold compile; ``run`` stays the search's, through ``advance``)."""
    return play_turns(game, game_row)


@njit(inline="always")
def play_turns(game, game_row):
    """The body of ``run`` and ``run_fn`` (one source, compiled in each). Stops at a refused
    decision (REFUSED) for its caller to raise (``raise_refused``): ``run_fn`` is a C function,
    where an exception would be printed and lost."""
    gstate = game.gstate
    pstate = game.pstate
    n_players = gstate[E.GS_N_PLAYERS]
    if gstate[E.GS_TURN] == E.DRAFT_TURN:
        run_step(game, STEP_DRAFT, 0)  # steps.once.draft
        if gstate[E.GS_REFUSED] != 0:
            return REFUSED
        game_row[:] = -1
        for k in range(min(gstate[E.GS_N_CS_PILE], R.G_DISCARDED_CS4 - R.G_DISCARDED_CS0 + 1)):
            game_row[R.G_DISCARDED_CS0 + k] = game.cs_pile[k]
        run_step(game, STEP_GENERATION, 0)  # steps.once.generation_step: generation 1 dealt
    while gstate[E.GS_TURN] < E.N_TURNS:
        if gstate[E.GS_STOP_TURN] > 0 and gstate[E.GS_TURN] >= gstate[E.GS_STOP_TURN]:
            return STOPPED
        # One call site each for selecting and acting (every inlined copy costs compile time).
        for step in range(gstate[E.GS_STEP], 2 * n_players):
            gstate[E.GS_STEP] = step
            seat, acting = step_seat(step, gstate[E.GS_TURN], n_players)
            if not acting:
                if pstate[seat, E.PS_HAND_SIZE] > 0:
                    if pauses(seat, game):
                        return PAUSED
                    select_tile(seat, game)
                continue
            selected = pstate[seat, E.PS_SELECTED]
            if n_players <= 2 and selected < 0:
                continue  # no tile left to select this turn
            if n_players <= 2 or seat == 0:
                # 3-5 players buy from the cities as they were when the actions began.
                refresh_goods(game)
            if selected >= 0 and game.tiles[selected, K.C_DISASTER] == K.DIS_NONE:
                if pauses(seat, game):
                    return PAUSED
            act_seat(seat, game)
        end_turn(game)
        # The turn's refused decisions (each took option 0 meanwhile), once a turn.
        if gstate[E.GS_REFUSED] != 0:
            return REFUSED
    winners = run_step(game, STEP_SCORING, 0)  # steps.once.final_scoring
    record_result(game, game_row, winners)
    return DONE


# --- a whole game --------------------------------------------------------------------------
@njit(inline="always")
def record_result(game, game_row, winners):
    """The game row's winners (``winners``: the seats' bit mask) and winning score, from the
    seats' totals the final scoring wrote (``stats``)."""
    stats = game.stats
    total = R.P_SCORE_TILES + K.S_TOTAL
    best = stats[0, total]
    n_winners = 0
    for s in range(game.gstate[E.GS_N_PLAYERS]):
        n_winners += (winners >> s) & 1
        best = max(best, stats[s, total])
    game_row[R.G_N_WINNERS] = n_winners
    game_row[R.G_WINNERS_MASK] = winners
    game_row[R.G_WINNING_SCORE] = best


@njit(inline="always")
def score_seat(s, game, score):
    """Seat ``s``'s city scored as if the game ended now (``score``: int32[N_SCORE])."""
    summary = game.summaries[s]
    E.refresh_summary(game.cells[s], game.tiles, summary)
    score_masks(
        game.cells[s], summary, game.pstate[s, E.PS_MONEY], game.tiles, game.effects,
        game.goods_tier, game.rules, score,
    )  # fmt: skip


@njit
def int64_bits(value):
    """A uint64 stored bit for bit as int64 (the same in compiled and plain Python)."""
    box = np.empty(1, dtype=np.uint64)
    box[0] = value
    return box.view(np.int64)[0]


@njit
def new_game(row, key, game_id, deal_index, seats, batch, data, rules, players_out, events_out):
    """Game ``game_id`` set up (``batch``: the scratch every game of the batch shares:
    strategy_ids, strategy_params, options, summaries, req_costs, memos), ready for
    ``advance``: returns it and its deal seed. Its arrays are its own (``play_batch`` plays the
    rest of a batch in them: ``restart_game``)."""
    tiles, req, effects, goods_tier, board_center = data
    strategy_ids, strategy_params, strategy_fns, step_fns, options, summaries, req_costs, memos = (
        batch
    )
    n_players = seats.shape[0]
    n_tiles = tiles.shape[0]
    # Every array is filled by start_game: the same state as in a game played in them before.
    game = Game(
        tiles,
        req,
        effects,
        goods_tier,
        board_center,
        rules,
        np.empty(E.N_GSTATE, dtype=np.int64),
        np.empty((n_players, E.N_PSTATE), dtype=np.int64),
        np.empty((n_players, K.N_CELLS), dtype=np.int16),
        np.empty((n_players, E.HAND_SIZE), dtype=np.int64),
        np.empty((n_players, E.MAX_CS_HAND), dtype=np.int64),
        np.empty(n_players, dtype=np.int64),
        np.empty(E.MAX_CS_PILE, dtype=np.int64),
        np.empty(n_tiles, dtype=np.int64),
        np.empty((E.N_GENERATIONS, n_tiles), dtype=np.int64),
        np.empty(E.N_GENERATIONS, dtype=np.int64),
        np.empty((E.SOLO_PACKS, E.HAND_SIZE), dtype=np.int64),
        np.empty(E.SOLO_PACKS, dtype=np.int64),
        seats,
        strategy_ids,
        strategy_params,
        strategy_fns,
        step_fns,
        np.empty((n_players, 2), dtype=np.uint64),
        memos,
        options,
        summaries,
        req_costs,
        players_out[row],
        events_out,
    )
    return game, start_game(row, key, game_id, deal_index, game)


@njit
def restart_game(game, row, key, game_id, deal_index, seats, players_out):
    """Game ``game_id`` set up in the arrays of ``game`` (a game of the same batch, over):
    ``new_game`` without allocating; returns the deal seed."""
    game.seats = seats
    game.stats = players_out[row]
    return start_game(row, key, game_id, deal_index, game)


@njit
def start_game(row, key, game_id, deal_index, game):
    """Every array of the game's state filled for game ``game_id`` (``game.seats`` and
    ``game.stats`` already its own): the deal drawn, ready for ``advance``. Returns the deal
    seed."""
    tiles = game.tiles
    rules = game.rules
    seats = game.seats
    n_players = seats.shape[0]
    gstate = game.gstate
    pstate = game.pstate
    stats = game.stats
    decks = game.decks
    deck_sizes = game.deck_sizes
    summaries = game.summaries
    gstate[:] = 0
    pstate[:, :] = 0
    game.cells[:, :] = K.EMPTY
    game.hands[:, :] = -1
    game.cs_hands[:, :] = -1
    game.goods_of[:] = 0
    game.cs_pile[:] = -1
    game.cs_box[:] = -1
    decks[:, :] = -1
    deck_sizes[:] = 0
    game.packs[:, :] = -1
    game.pack_sizes[:] = 0
    deal = np.zeros(2, dtype=np.uint64)

    gstate[E.GS_N_PLAYERS] = n_players
    gstate[E.GS_GAME_ROW] = row
    gstate[E.GS_TURN] = E.DRAFT_TURN
    for s in range(n_players):
        E.mark_stale(summaries[s])
    pstate[:, E.PS_SELECTED] = -1
    deal_seed = rng.stream_seed(key, deal_index, rng.DEAL_STREAM)
    rng.seed_state(deal, deal_seed)
    for s in range(n_players):
        rng.seed_state(game.strat_rng[s], rng.stream_seed(key, game_id, 1 + s))

    # All chance is drawn here, in a fixed order, before any decision.
    E.deal_boards(
        deal, game.board_center.shape[0], n_players, pstate, game.cells, game.board_center
    )
    E.shuffled_cornerstones(deal, n_players, tiles, rules, game.cs_box, gstate)
    for g in range(E.N_GENERATIONS):
        deck_sizes[g] = E.build_deck(g + 1, n_players, tiles, rules, decks[g])
        rng.shuffle(deal, decks[g], deck_sizes[g])
        E.draw_random_turn(deal, g + 1, rules, gstate)
    E.apply_interventions(deal, n_players, tiles, rules, game.cs_box, gstate, decks, deck_sizes)

    stats[:, :] = -1
    stats[:n_players, :] = 0
    for s in range(n_players):
        stats[s, R.P_SEAT] = s
        stats[s, R.P_STRATEGY] = seats[s]
        stats[s, R.P_BOARD] = pstate[s, E.PS_BOARD]
        for d in range(E.DRAFT_PICKS):
            stats[s, R.P_CS_DRAFTED0 + d] = -1
        stats[s, R.P_SCORE_GEN1] = R.SCORE_NOT_RECORDED
        stats[s, R.P_SCORE_GEN1 + 1] = R.SCORE_NOT_RECORDED
    return deal_seed


@njit
def finish_game(game, game_row, game_id, deal_seed):
    """The game's row, once ``advance`` returned DONE."""
    gstate = game.gstate
    game_row[R.G_GAME_ID] = game_id
    game_row[R.G_DEAL_SEED] = int64_bits(deal_seed)
    game_row[R.G_N_PLAYERS] = gstate[E.GS_N_PLAYERS]
    game_row[R.G_VARIANT] = game.rules[K.RO_VARIANT]
    game_row[R.G_DISASTERS_MASK] = gstate[E.GS_DISASTERS]
    game_row[R.G_N_EVENTS] = gstate[E.GS_N_EVENTS]


@njit
def batch_scratch(strategy_ids, strategy_params, strategy_fns, step_fns, memos):
    """The scratch of the decisions every game of a batch shares, allocated once: every row an
    option list uses is written first; a memo is only read back for the state it was written
    for (``memos``: the seats' scratch, ``strategies.neom.pieces.new_memos``, allocated by the
    caller since its width is the strategies' business; ``step_fns``: the loop's steps'
    addresses, ``strategies.neom.steps.addresses``)."""
    return (
        strategy_ids,
        strategy_params,
        strategy_fns,
        step_fns,
        np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64),
        np.zeros((R.MAX_PLAYERS, E.N_SUMMARY), dtype=np.int64),
        np.zeros(K.MAX_REQ_OPTIONS, dtype=np.int64),
        memos,
    )


@njit
def play_batch(
    key,
    game_ids,
    deal_indices,
    seat_strategy,
    strategy_ids,
    strategy_params,
    strategy_fns,
    step_fns,
    memos,
    data,
    rules,
    games_out,
    players_out,
    events_out,
):
    """Play ``len(game_ids)`` games: the signature and the guarantees of ``sim.core.game``.

    ``strategy_fns``: the address of each strategy's decision, and last the searches'
    playout policy's (``strategies.neom.pieces.addresses``); ``step_fns``: the address of each
    of the loop's steps (``strategies.neom.steps.addresses``); ``memos``: the seats' scratch
    (``pieces.new_memos``): ``strategies.neom.entries.LineupEntry`` passes them.
    ``data`` is the catalogue's ``(tiles, req, effects, goods_tier, board_center)``
    (``sim.neom.tables.Tables.arrays``); ``strategy_ids`` are STRATEGY_ID_DTYPE. No seat may be
    played by a search (``strategies.neom.search.play_batch`` plays those).
    """
    if game_ids.shape[0] == 0:
        return
    for slot in range(step_fns.shape[0]):
        # As run_step, here: the loop (run_fn) is a C function, where an exception is lost.
        if step_fns[slot] == 0:
            raise ValueError("no compiled loop step for this game (game.step_fns unset)")
    batch = batch_scratch(strategy_ids, strategy_params, strategy_fns, step_fns, memos)
    # One game's arrays for the whole batch: each game after the first starts in them again.
    game, deal_seed = new_game(
        np.int64(0), key, game_ids[0], deal_indices[0], seat_strategy[0], batch, data, rules,
        players_out, events_out,
    )  # fmt: skip
    for i in range(game_ids.shape[0]):
        if i > 0:
            deal_seed = restart_game(
                game, i, key, game_ids[i], deal_indices[i], seat_strategy[i], players_out
            )
        # The loop at its address: the entry does not link its code (advance: the search's).
        result = call_run(step_fns[STEP_RUN], view(game), games_out[i])
        raise_refused(game)
        if result != DONE:
            raise ValueError("a search strategy plays only in strategies.neom.search.play_batch")
        finish_game(game, games_out[i], game_ids[i], deal_seed)


# --- Python convenience --------------------------------------------------------------------
def play_one(
    tables,
    n_players,
    strategies,
    seed,
    variant=K.V_STANDARD,
    events=True,
    solo_tileset=1,
    neighborhood_through_any=True,
):
    """Play one game with ``strategies`` (StrategySpec per seat) from master seed ``seed``.

    Returns a dict: ``game`` (int64[N_GAME_COLS]), ``players`` (int64[n_players,
    N_PLAYER_COLS]), ``events`` (int64[n_events, N_EVENT_COLS]), ``rules``, ``strategies``.
    """
    from sim.core.batch import STRATEGY_ID_DTYPE, play_arrays
    from sim.neom import GAME
    from sim.neom.tables import make_rules

    if len(strategies) != n_players:
        raise ValueError(f"{n_players} players need {n_players} strategies, got {len(strategies)}")
    rules = make_rules(variant, neighborhood_through_any, solo_tileset)
    key = rng.master_key(seed)
    strategy_ids = np.array([spec.id for spec in strategies], dtype=STRATEGY_ID_DTYPE)
    strategy_params = np.stack([spec.params for spec in strategies]).astype(np.float64)
    seat_strategy = np.arange(n_players, dtype=np.int32).reshape(1, n_players)
    ids = np.zeros(1, dtype=np.int64)
    out = play_arrays(
        GAME,
        key,
        ids,
        ids,
        seat_strategy,
        strategy_ids,
        strategy_params,
        tables.arrays,
        rules,
        events,
    )
    return {
        "game": out.games[0],
        "players": out.players[0, :n_players],
        "events": out.events[: out.games[0, R.G_N_EVENTS]],
        "rules": rules,
        "strategies": list(strategies),
    }


def final_cities(tables, result):
    """The players' final cities (int16[P, 25]) rebuilt from a game's events."""
    players = result["players"]
    cells = np.full((players.shape[0], K.N_CELLS), K.EMPTY, dtype=np.int16)
    cells[:, K.CENTER_CELL] = tables.board_center[players[:, R.P_BOARD]]
    for event in result["events"]:
        kind = event[R.E_KIND]
        if kind in (R.EV_PLACE, R.EV_CORNERSTONE):
            cells[event[R.E_PLAYER], event[R.E_CELL]] = event[R.E_TILE]
        elif kind == R.EV_DISASTER_SACRIFICE:
            cells[event[R.E_PLAYER], event[R.E_CELL]] = K.EMPTY
    return cells
