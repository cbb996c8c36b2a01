"""One module per `neom` command; each exposes register(subparsers)."""
