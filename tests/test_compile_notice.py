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
