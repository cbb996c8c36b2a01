"""Command-line flags for the rules options where the texts allow more than one reading
(RULES.md), shared by ``neom play``, ``simulate`` and ``score`` so each flag means one thing."""

NEIGHBORHOOD_CHAINS = ("any", "residential")
SOLO_TILESETS = (1, 4, 5)


def add_neighborhoods_argument(parser) -> None:
    parser.add_argument(
        "--neighborhoods",
        choices=NEIGHBORHOOD_CHAINS,
        default="any",
        help="a Neighborhood's road chain may pass through any tile (default) or only through "
        "Residential tiles (RULES.md S3)",
    )


def add_solo_tileset_argument(parser) -> None:
    parser.add_argument(
        "--solo-tileset",
        type=int,
        choices=SOLO_TILESETS,
        default=1,
        metavar="ICON",
        help="solo games: 1 (1+ tiles), 4 (1+ and 4+) or 5 (all)",
    )


def through_any(args) -> bool:
    """The ``neighborhood_through_any`` rules option of ``--neighborhoods``."""
    return args.neighborhoods == "any"
