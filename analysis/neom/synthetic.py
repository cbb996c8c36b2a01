"""Synthetic run folders: the agreed layout filled with NumPy-generated outcomes.

For testing the analysis layer (with known truths: identical strategies, a cornerstone made
deliberately strong) and timing reports, without running the engine. Outcomes follow no game
rules beyond the shapes of the data: scores are noise plus the requested advantages.
"""

from pathlib import Path

import numpy as np

from sim.core.batch import BatchOutput
from sim.core.store import (
    EVENTS,
    GAMES,
    PLAYERS,
    STATUS_COMPLETE,
    RunFolder,
    batch_entries,
    encode_batch,
    file_entry,
    listed_counts,
)
from sim.neom import CATALOG_SNAPSHOT, GAME
from sim.neom import constants as K
from sim.neom import records as R
from sim.neom.constants import HAND_SIZE, TURNS_PER_GENERATION

CS_HAND = 4  # cornerstones dealt per player in the draft
CS_KEPT = 3
SCORE_SD = 12.0  # spread of the noise in a synthetic total score
PLACE_CHANCE = 0.6  # chance that a drafted cornerstone gets placed


def _tile_decks(tables) -> tuple[np.ndarray, list[np.ndarray]]:
    if tables is None:
        decks = [np.arange(30 + 40 * g, 70 + 40 * g, dtype=np.int32) for g in range(3)]
        return np.arange(30, dtype=np.int32), decks
    decks = [tables.deck(d) for d in (K.DECK_GEN1, K.DECK_GEN2, K.DECK_GEN3)]
    return tables.deck(K.DECK_CORNERSTONE), decks


def _ranks(totals: np.ndarray) -> np.ndarray:
    """1 = best; tied seats share the better rank."""
    return 1 + (totals[:, None, :] > totals[:, :, None]).sum(axis=2)


def _block(
    rng,
    n_games,
    n_players,
    first_id,
    strategy_ids,
    strengths,
    cornerstones,
    decks,
    boosts,
    events,
    tile_boosts=None,
    deals_per_rotation=False,
    tile_vp=None,
):
    games = np.full((n_games, R.N_GAME_COLS), -1, dtype=np.int64)
    players = np.full((n_games, n_players, R.N_PLAYER_COLS), 0, dtype=np.int32)
    game_ids = np.arange(first_id, first_id + n_games)
    seats = np.broadcast_to(np.arange(n_players), (n_games, n_players))

    # Cornerstone draft: deal 4 to each seat, keep one and pass to seat + 1, three times.
    dealt = np.argsort(rng.random((n_games, len(cornerstones))), axis=1)[:, : n_players * CS_HAND]
    hands = cornerstones[dealt].reshape(n_games, n_players, CS_HAND)
    drafted = np.empty((n_games, n_players, CS_KEPT), dtype=np.int32)
    rows = np.arange(n_games)[:, None]
    for pick in range(CS_KEPT):
        choice = rng.integers(0, CS_HAND - pick, size=(n_games, n_players))
        holder_hands = np.roll(hands, pick, axis=1)  # seat s holds the hand dealt to s - pick
        drafted[:, :, pick] = holder_hands[rows, seats, choice]
        keep = np.ones(holder_hands.shape, dtype=bool)
        keep[rows, seats, choice] = False
        hands = np.roll(holder_hands[keep].reshape(n_games, n_players, -1), -pick, axis=1)
    leftovers = hands.reshape(n_games, n_players)
    placed_gen = np.where(
        rng.random(drafted.shape) < PLACE_CHANCE, rng.integers(1, 4, size=drafted.shape), 0
    )

    advantage = strengths[strategy_ids].astype(np.float64)
    for tile, boost in boosts.items():
        advantage += boost * ((drafted == tile) & (placed_gen > 0)).any(axis=2)
    event_rows = (
        _events(rng, game_ids, n_players, drafted, decks)
        if events
        else (np.empty((0, R.N_EVENT_COLS), dtype=np.int64), np.empty(0, dtype=np.int64))
    )
    for tile, boost in (tile_boosts or {}).items():
        rows, owners = event_rows
        hit = (rows[:, R.E_KIND] == R.EV_SELECT) & (rows[:, R.E_TILE] == tile)
        selector = np.zeros((n_games, n_players), dtype=bool)
        selector[owners[hit] - first_id, rows[hit, R.E_PLAYER]] = True
        advantage += boost * selector
    for tile, vp in (tile_vp or {}).items():
        # Printed VP reaches the seats that place the tile, not every selector.
        rows, owners = event_rows
        hit = (rows[:, R.E_KIND] == R.EV_PLACE) & (rows[:, R.E_TILE] == tile)
        placer = np.zeros((n_games, n_players), dtype=bool)
        placer[owners[hit] - first_id, rows[hit, R.E_PLAYER]] = True
        advantage += (vp / SCORE_SD) * placer
    parts = rng.integers(0, 12, size=(n_games, n_players, K.N_SCORE - 1))
    parts[:, :, K.S_POLLUTION] = -rng.integers(0, 6, size=(n_games, n_players))
    parts[:, :, K.S_POWER] = -5 * (rng.random((n_games, n_players)) < 0.1)
    noise = np.rint(rng.normal(0.0, SCORE_SD, (n_games, n_players)) + advantage * SCORE_SD)
    parts[:, :, K.S_TILES] += 20 + noise.astype(np.int64)
    totals = parts.sum(axis=2)
    ranks = _ranks(totals)
    win = ranks == 1

    players[:, :, R.P_SEAT] = seats
    players[:, :, R.P_STRATEGY] = strategy_ids
    players[:, :, R.P_SCORE_TILES : R.P_SCORE_TOTAL] = parts
    players[:, :, R.P_SCORE_TOTAL] = totals
    players[:, :, R.P_SCORE_GEN1 : R.P_SCORE_GEN1 + 2] = R.SCORE_NOT_RECORDED  # no event log
    players[:, :, R.P_RANK] = ranks
    players[:, :, R.P_WIN] = win
    players[:, :, R.P_MONEY] = rng.integers(0, 30, size=(n_games, n_players))
    players[:, :, R.P_CS_DRAFTED0 : R.P_CS_DRAFTED2 + 1] = drafted
    players[:, :, R.P_CS_GEN0 : R.P_CS_GEN2 + 1] = placed_gen
    players[:, :, R.P_CS_PLACED] = (placed_gen > 0).sum(axis=2)
    paid = rng.integers(0, 2, size=(n_games, n_players))
    sacrificed = rng.integers(0, 2, size=(n_games, n_players))
    players[:, :, R.P_DISASTERS_SELECTED] = rng.integers(0, 2, size=(n_games, n_players))
    players[:, :, R.P_DISASTERS_PAID] = paid
    players[:, :, R.P_DISASTERS_SACRIFICED] = sacrificed
    players[:, :, R.P_DISASTER_COINS] = paid * rng.integers(1, 12, size=(n_games, n_players))
    players[:, :, R.P_DISASTER_TILES_LOST] = sacrificed * rng.integers(1, 3, (n_games, n_players))

    games[:, R.G_GAME_ID] = game_ids
    games[:, R.G_DEAL_SEED] = rng.integers(0, 2**62, size=n_games)
    games[:, R.G_N_PLAYERS] = n_players
    games[:, R.G_VARIANT] = K.V_STANDARD
    games[:, R.G_N_WINNERS] = win.sum(axis=1)
    games[:, R.G_WINNERS_MASK] = (win * (1 << np.arange(n_players))).sum(axis=1)
    games[:, R.G_WINNING_SCORE] = totals.max(axis=1)
    games[:, R.G_DISASTERS_MASK] = rng.integers(0, 8, size=n_games)
    games[:, R.G_DISCARDED_CS0 : R.G_DISCARDED_CS0 + n_players] = leftovers
    games[:, R.G_N_EVENTS] = 0
    if deals_per_rotation:
        # Rotated seats replay a deal: the games of a rotation share its seed (its cluster).
        games[:, R.G_DEAL_SEED] = games[
            (np.arange(n_games) // n_players) * n_players, R.G_DEAL_SEED
        ]
    padded = np.full((n_games, R.MAX_PLAYERS, R.N_PLAYER_COLS), -1, dtype=np.int64)
    padded[:, :n_players] = players
    return games, padded, event_rows


def _events(rng, game_ids, n_players, drafted, decks) -> np.ndarray:
    """Draft picks, and for each generation the selections (placed, sold or spent on a
    cornerstone) and the 7th-turn leftovers, with hands passed to seat + 1; with each row's
    game id."""
    n_games = len(game_ids)
    chunks = []
    owners = []

    def add(turn, player, kind, tile, other, game_index):
        block = np.full((tile.size, R.N_EVENT_COLS), -1, dtype=np.int64)
        owners.append(game_ids[game_index.ravel()])  # the run is one batch
        block[:, R.E_TURN] = turn.ravel()
        block[:, R.E_PLAYER] = player.ravel()
        block[:, R.E_KIND] = kind.ravel()
        block[:, R.E_TILE] = tile.ravel()
        block[:, R.E_OTHER] = other.ravel()
        chunks.append(block)

    game_index = np.broadcast_to(np.arange(n_games)[:, None, None], drafted.shape)
    seat = np.broadcast_to(np.arange(n_players)[None, :, None], drafted.shape)
    pick = np.broadcast_to(np.arange(CS_KEPT)[None, None, :], drafted.shape)
    add(np.full(drafted.shape, -1), seat, np.full(drafted.shape, R.EV_DRAFT_PICK), drafted, pick,
        game_index)  # fmt: skip
    shape = (n_games, n_players, HAND_SIZE)
    game_index = np.broadcast_to(np.arange(n_games)[:, None, None], shape)
    hand = np.broadcast_to(np.arange(n_players)[None, :, None], shape)
    order = np.broadcast_to(np.arange(HAND_SIZE)[None, None, :], shape)
    for gen, deck in enumerate(decks):
        dealt = np.argsort(rng.random((n_games, len(deck))), axis=1)[:, : n_players * HAND_SIZE]
        hands = deck[dealt].reshape(shape)  # tile at position t is taken on turn t
        turn = gen * TURNS_PER_GENERATION + np.minimum(order, TURNS_PER_GENERATION - 1)
        holder = (hand + np.minimum(order, TURNS_PER_GENERATION - 1)) % n_players
        action = rng.choice(
            [R.EV_PLACE, R.EV_SELL, R.EV_CORNERSTONE], p=[0.75, 0.15, 0.10], size=shape
        )
        action[:, :, TURNS_PER_GENERATION] = R.EV_DISCARD
        hand_size = np.where(order < TURNS_PER_GENERATION, HAND_SIZE - order, -1)
        selected = order < TURNS_PER_GENERATION
        add(turn[selected], holder[selected], np.full(selected.sum(), R.EV_SELECT),
            hands[selected], hand_size[selected], game_index[selected])  # fmt: skip
        cs_slot = rng.integers(0, CS_KEPT, size=shape)
        cornerstone = drafted[game_index, holder, cs_slot]
        tile = np.where(action == R.EV_CORNERSTONE, cornerstone, hands)
        other = np.where(action == R.EV_CORNERSTONE, hands, -1)
        add(turn, holder, action, tile, other, game_index)
    return np.concatenate(chunks), np.concatenate(owners)


def write_run(
    path,
    n_games: int = 2000,
    n_players: int | list[int] = 4,
    strategies: dict[str, float] | None = None,
    boosts: dict[int, float] | None = None,
    seed: int = 0,
    events: bool = True,
    catalog_path=None,
    tile_boosts: dict[int, float] | None = None,
    shared_deals: bool = False,
    batch_size: int | None = None,
    tile_vp: dict[int, float] | None = None,
) -> Path:
    """Write a synthetic run folder at ``path`` and return it.

    ``strategies`` maps names to an advantage (in score standard deviations; all 0 = identical
    strategies); seats cycle through them, rotating every game. ``boosts`` maps cornerstone tile
    ids to the advantage of a seat that drafted and placed it. ``catalog_path``, when given, is
    copied as the run's catalogue snapshot and supplies the tile ids. ``tile_boosts`` maps
    generation tile ids to the advantage of a seat that selected it (needs ``events``).
    ``shared_deals``: the games of each seat rotation share one deal seed, as rotated runs do
    (the outcomes stay independent: this only labels clusters). ``batch_size``: games per
    batch file (None: one batch), as the runner cuts a run. ``tile_vp`` maps generation tile
    ids to VP added to the score of each seat that placed it (a planted printed VP; needs
    ``events``).
    """
    path = Path(path)
    strategies = strategies or {"random": 0.0}
    boosts = boosts or {}
    counts = [n_players] if isinstance(n_players, int) else list(n_players)
    tables = None
    if catalog_path is not None:
        from sim.neom.catalog import load_catalog

        tables = load_catalog(catalog_path)
    cornerstones, decks = _tile_decks(tables)
    rng = np.random.default_rng(seed)
    names = list(strategies)
    strengths = np.array([strategies[name] for name in names])
    blocks = []
    first_id = 0
    for count in counts:
        block_games = n_games // len(counts)
        rotation = (np.arange(block_games)[:, None] + np.arange(count)[None, :]) % len(names)
        blocks.append(
            _block(
                rng,
                block_games,
                count,
                first_id,
                rotation,
                strengths,
                cornerstones,
                [d[: count * HAND_SIZE] for d in decks],
                boosts,
                events,
                tile_boosts,
                shared_deals,
                tile_vp,
            )  # fmt: skip
        )
        first_id += block_games
    games = np.concatenate([b[0] for b in blocks])
    players = np.concatenate([b[1] for b in blocks])
    event_array = None
    if events:
        rows = np.concatenate([b[2][0] for b in blocks])
        event_array = _event_blocks(games, rows, np.concatenate([b[2][1] for b in blocks]))

    folder = RunFolder(path)
    path.mkdir(parents=True, exist_ok=True)
    table_names = (GAMES, PLAYERS, EVENTS) if events else (GAMES, PLAYERS)
    for table in table_names:
        (path / table).mkdir(exist_ok=True)
    # Listed like the runner's folders (sim.core.store): report checks every file against it.
    listing = {}
    size = batch_size or len(games)
    block = R.MAX_EVENTS_PER_GAME
    n_batches = -(-len(games) // size)
    for index in range(n_batches):
        part = slice(index * size, (index + 1) * size)
        part_events = None
        if event_array is not None:
            part_events = event_array[part.start * block : part.stop * block]
        output = BatchOutput(games[part], players[part], part_events)
        files = encode_batch(GAME, output, names, ("synthetic", True))
        folder.write_batch(index, files)
        listing |= batch_entries(index, files)
    data = {"name": "synthetic", "label": "synthetic", "reconstructed": True, "digest": ""}
    data |= {"source": "", "snapshot": CATALOG_SNAPSHOT}
    if catalog_path is not None:
        snapshot = Path(catalog_path).read_bytes()
        (path / CATALOG_SNAPSHOT).write_bytes(snapshot)
        listing[CATALOG_SNAPSHOT] = file_entry(snapshot)
        data.update(name=tables.name, digest=tables.digest, source=str(catalog_path))
    manifest = {
        "command": "synthetic",
        "versions": {"neom-sim": "synthetic"},
        "game": GAME.name,
        "rules_version": GAME.rules_version,
        "data": data,
        "players": counts[0] if len(counts) == 1 else counts,
        "games": int(len(games)),
        "seed": seed,
        "seats": "rotate",
        "strategies": [{"name": name, "id": i, "params": {}} for i, name in enumerate(names)],
        "rules": GAME.rules_as_dict(GAME.make_rules()),
        "batch_size": int(size),
        "counts": listed_counts(listing, table_names, n_batches),
        "files": listing,
        "timings": {},
        "events": events,
        "status": STATUS_COMPLETE,
    }
    folder.write_manifest(manifest)
    return path


def _event_blocks(games: np.ndarray, rows: np.ndarray, game_ids: np.ndarray) -> np.ndarray:
    """Lay event rows out as the engine does: a block of ``MAX_EVENTS_PER_GAME`` rows per game,
    ``n_events`` of them used (``game_ids``: each row's game, here its row in the batch)."""
    order = np.argsort(game_ids, kind="stable")
    rows, game_ids = rows[order], game_ids[order]
    counts = np.bincount(game_ids, minlength=len(games))
    games[:, R.G_N_EVENTS] = counts
    block = R.MAX_EVENTS_PER_GAME
    rank = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    events = np.full((len(games) * block, R.N_EVENT_COLS), -1, dtype=np.int64)
    events[game_ids * block + rank] = rows
    return events
