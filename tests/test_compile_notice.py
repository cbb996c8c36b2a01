"""While the game core compiles the command line says so (issue 16: a new user must not wait
in silence), and a quick load says nothing."""

import io
import time

from sim.core import compile_notice as notice


def test_a_long_first_call_is_announced_with_its_estimate_and_timed(tmp_path, monkeypatch):
    monkeypatch.setenv("NEOM_NUMBA_CACHE_BASE", str(tmp_path))
    monkeypatch.setattr(notice, "SILENT_SECONDS", 0.05)
    out = io.StringIO()
    with notice.compile_notice("NEOM", 45.0, stream=out):
        time.sleep(0.3)
    lines = out.getvalue().splitlines()
    assert lines[0] == (
        "neom: compiling the NEOM game core (once per machine and code version, about 45 s)..."
    )
    assert lines[1].startswith("neom: compiled in ")
    # The time taken becomes next time's estimate.
    out = io.StringIO()
    with notice.compile_notice("NEOM", 45.0, stream=out):
        time.sleep(0.3)
    assert "about 0 s" in out.getvalue()


def test_a_quick_call_says_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("NEOM_NUMBA_CACHE_BASE", str(tmp_path))
    out = io.StringIO()
    with notice.compile_notice("NEOM", 45.0, stream=out):
        pass
    assert out.getvalue() == ""
    assert not (tmp_path / notice.TIMES_FILE).exists()


def test_a_slow_load_from_the_cache_says_nothing_and_records_nothing(tmp_path, monkeypatch):
    """On a busy machine loading cached code can take over a second: that is not a compile,
    and its time must not become the next compile's estimate."""
    monkeypatch.setenv("NEOM_NUMBA_CACHE_BASE", str(tmp_path))
    monkeypatch.setattr(notice, "SILENT_SECONDS", 0.05)
    out = io.StringIO()
    from sim.core.jit import njit

    @njit(cache=False)
    def loaded(x):
        return x

    loaded(1)  # compiled in this process: a later call loads it
    with notice.compile_notice("NEOM", 45.0, stream=out, code=loaded):
        time.sleep(0.3)
    assert out.getvalue() == ""
    assert not (tmp_path / notice.TIMES_FILE).exists()


def test_the_game_core_is_known_cached_once_compiled():
    """``has_cached_code``: true for the NEOM core once it played a game, false for a
    function never compiled nor cached."""
    from sim.core.jit import has_cached_code, njit
    from sim.core.registry import get_game
    from sim.neom.catalog import load_catalog
    from strategies.neom.registry import parse_strategy
    from strategies.tools.arena import play_match

    play_match(load_catalog(), [parse_strategy("random")], [0, 0], 1, 1)
    assert has_cached_code(get_game("neom").play_batch_for([parse_strategy("random").id]))

    @njit(cache=False)
    def never_called(x):
        return x + 1

    assert not has_cached_code(never_called)
