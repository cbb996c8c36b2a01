"""neom-sim: the NEOM catalogue, compiled game core and runner."""

import os
import sys

# The compile cache's keys live in the core (sim.core.cache_keys); re-exported here for the
# tools and tests that name them ``sim.X``.
from sim.core.cache_keys import (  # noqa: F401
    CACHE_LAYOUT,
    KEPT_CACHES,
    PACKAGES,
    ROOT,
    _compiled_sources,
    _module_closures,
    _module_digests,
    _numba_cache_base,
    _prune_stale_caches,
    _sources_digest,
    cache_key,
    default_cache_base,
)

__version__ = "0.1.0"

_base = _numba_cache_base()
if "numba" not in sys.modules:
    # Numba's own folders (functions outside the packages) go under the same base.
    os.environ["NUMBA_CACHE_DIR"] = _base
