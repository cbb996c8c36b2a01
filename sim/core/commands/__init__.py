"""One module per `neom` command; each exposes register(parser) (sim.core.cli names them)."""
