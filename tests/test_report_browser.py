"""The report in a real browser (issue 27, part 7): headless Chromium loads it with no error,
every image and internal link resolves and no table is wider than the page; a page with a
broken image, a dangling link and an over-wide table is caught."""

import shutil
from pathlib import Path

import pytest

from analysis.core.report import build_report
from analysis.neom.synthetic import write_run
from analysis.tools.browser_check import check_report

CATALOG = Path(__file__).resolve().parent.parent / "sim" / "neom" / "data" / "default_catalog.toml"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not any(shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")),
        reason="no Chromium on this machine",
    ),
]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    main = write_run(root / "main", n_games=800, catalog_path=CATALOG, boosts={3: 1.5}, seed=1)
    check = write_run(root / "check", n_games=600, catalog_path=CATALOG, boosts={3: 1.5}, seed=2)
    out = root / "report"
    build_report(main, out, check=check)
    return out


def test_the_report_loads_cleanly_in_chromium(report, tmp_path):
    verdict = check_report(report, screenshots=tmp_path / "shots")
    assert verdict["problems"] == []
    text = (report / "index.html").read_text(encoding="utf-8")
    assert verdict["images"] == text.count("<img ") > 0
    assert set(verdict["screenshots"]) == {"first", "top", "economy", "robustness"}
    for path in verdict["screenshots"].values():
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from PIL import Image

    with Image.open(verdict["screenshots"]["first"]) as first:
        assert first.size == (1280, 800)  # a laptop's first screen
    # The ranked next steps are measured: the first lies wholly on the first screen.
    assert len(verdict["steps"]) == text.count(
        "<li>", text.index('class="steps"'), text.index("</ol>", text.index('class="steps"'))
    )
    assert 1 <= verdict["first_screen_steps"] <= len(verdict["steps"])


def test_a_broken_page_is_caught(report, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    text = (report / "index.html").read_text(encoding="utf-8")
    wide = "<table><tr><td>" + "x" * 3000 + "</td></tr></table>"  # one unbreakable word
    text = text.replace(
        "</body>",
        '<img src="data:image/png;base64,AAAA" alt="planted"><a href="#nowhere">x</a>'
        f'<section id="planted">{wide}</section></body>',
    )
    (broken / "index.html").write_text(text, encoding="utf-8")
    problems = check_report(broken)["problems"]
    assert any("did not load: planted" in p for p in problems), problems
    assert any("#nowhere leads nowhere" in p for p in problems), problems
    assert any("in #planted is" in p for p in problems), problems


def test_the_command_takes_a_relative_folder(report, tmp_path, monkeypatch, capsys):
    from analysis.tools.browser_check import main

    monkeypatch.chdir(report.parent)
    assert main([report.name, "--screenshots", str(tmp_path / "shots")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("screenshot first: ") and "ok: " in out
    assert "next steps shown whole" in out
    assert main(["nothing-here"]) == 1
    assert "no report there" in capsys.readouterr().err
