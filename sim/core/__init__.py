"""The game-independent core: the Game interface and registry, seeds, the runner, the Parquet
store, run folders and the command line. It knows a game only through :class:`sim.core.game.Game`
and never imports a game package (the registry names them)."""
