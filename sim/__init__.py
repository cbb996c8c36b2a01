"""neom-sim: the NEOM catalogue, compiled game core and runner."""

__version__ = "0.1.0"
