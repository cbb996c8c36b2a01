"""A report checked in a real browser: headless Chromium loads ``index.html`` and says whether
it loaded with no error, every image and internal link resolves, and no table is wider than
the page; optionally screenshots of its first screen (1280 x 800), top, economy and robustness
sections. It says how many of the ranked next steps a designer sees whole before scrolling.

``python -m analysis.tools.browser_check REPORT_DIR [--screenshots DIR] [--width PX]``

The report itself has no script (it is self-contained, nothing runs in it). The check loads
a copy with one probe script appended, which measures the page after layout and writes its
verdict into the DOM; Chromium prints the DOM (``--dump-dom``), and its console messages go
to stderr (``--enable-logging``), where any error the page raised shows. Screenshots are cut
from one tall screenshot of the page at the sections' measured offsets.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WIDTH = 1280  # a laptop's page width, CSS pixels
SHOTS = {"top": "glance", "economy": "economy", "robustness": "check"}
SHOT_HEIGHT = 1400
# What a designer sees before scrolling: a laptop's 1280 x 800 screen (CSS px). The check says
# which of the ranked next steps lie wholly inside it, and writes it as first.png.
FIRST_SCREEN = 800
TIMEOUT_S = 120

# Measures the laid-out page and writes the verdict as JSON into a <pre id="probe">.
PROBE = """
<script>
window.addEventListener("load", () => {
  const width = document.documentElement.clientWidth;
  const problems = [];
  document.querySelectorAll("img").forEach((img, i) => {
    if (!img.complete || img.naturalWidth === 0)
      problems.push("image " + i + " did not load: " + (img.alt || ""));
  });
  document.querySelectorAll('a[href^="#"]').forEach((a) => {
    const id = decodeURIComponent(a.getAttribute("href").slice(1));
    if (id && !document.getElementById(id)) problems.push("link to #" + id + " leads nowhere");
  });
  document.querySelectorAll("a[href]").forEach((a) => {
    const href = a.getAttribute("href");
    if (!href.startsWith("#")) problems.push("link leaves the page: " + href);
  });
  document.querySelectorAll("table").forEach((t, i) => {
    const box = t.getBoundingClientRect();
    if (box.right > width + 1) {
      const section = t.closest("section");
      problems.push("table " + i + (section ? " in #" + section.id : "") + " is " +
        Math.round(box.right) + " px wide, the page " + width);
    }
  });
  if (document.documentElement.scrollWidth > width + 1)
    problems.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " px");
  const steps = Array.from(document.querySelectorAll("ol.steps > li")).map((li) => {
    const box = li.getBoundingClientRect();
    return [Math.round(box.top + window.scrollY), Math.round(box.bottom + window.scrollY)];
  });
  const offsets = {};
  document.querySelectorAll("[id]").forEach((e) => {
    offsets[e.id] = Math.round(e.getBoundingClientRect().top + window.scrollY);
  });
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({
    problems: problems, images: document.images.length, width: width, steps: steps,
    height: document.documentElement.scrollHeight, offsets: offsets,
  });
  document.body.appendChild(out);
});
</script>
"""


def chromium() -> str:
    """The Chromium binary, or a clear error."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise FileNotFoundError("no Chromium on PATH (Debian: apt-get install chromium)")


def _run(args: list[str]) -> subprocess.CompletedProcess:
    base = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
        "--disable-dev-shm-usage", "--no-first-run", "--enable-logging=stderr", "--v=0",
        "--virtual-time-budget=10000",
    ]  # fmt: skip
    return subprocess.run(
        base + args, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


def _console_errors(stderr: str) -> list[str]:
    """Console messages the page raised (Chromium logs them as CONSOLE lines), and failed
    loads."""
    errors = []
    for line in stderr.splitlines():
        if "CONSOLE" in line and re.search(r"error|uncaught", line, re.IGNORECASE):
            errors.append(line.strip())
        elif "Failed to load resource" in line or "net::ERR_" in line:
            errors.append(line.strip())
    return errors


def check_report(report: Path, screenshots: Path | None = None, width: int = WIDTH) -> dict:
    """Load ``report/index.html`` in headless Chromium: ``problems`` (empty when it passes),
    ``images`` counted, the page's ``height``, and ``screenshots`` written (name -> path)."""
    index = (Path(report) / "index.html").resolve()
    if not index.is_file():
        raise FileNotFoundError(f"{index}: no report there")
    text = index.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="browser-check-") as tmp:
        probed = Path(tmp) / "index.html"
        probed.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
        done = _run([f"--window-size={width},900", "--dump-dom", probed.as_uri()])
        found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.DOTALL)
        if found is None:
            raise RuntimeError(
                f"{index}: Chromium did not lay out the page (exit {done.returncode}): "
                + (done.stderr.strip().splitlines() or ["no message"])[-1]
            )
        import html

        verdict = json.loads(html.unescape(found.group(1)))
        verdict["problems"] += _console_errors(done.stderr)
        verdict["first_screen_steps"] = sum(1 for _, bottom in verdict["steps"]
                                            if bottom <= FIRST_SCREEN)  # fmt: skip
        verdict["screenshots"] = {}
        if screenshots is not None:
            verdict["screenshots"] = _screenshots(index, Path(screenshots), verdict, width, tmp)
    return verdict


def _screenshots(index: Path, folder: Path, verdict: dict, width: int, tmp: str) -> dict:
    from PIL import Image

    height = min(int(verdict["height"]), 60000)
    whole = Path(tmp) / "whole.png"
    _run([f"--window-size={width},{height}", f"--screenshot={whole}", index.as_uri()])
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    with Image.open(whole) as image:
        path = folder / "first.png"
        image.crop((0, 0, width, min(FIRST_SCREEN, image.height))).save(path)
        out["first"] = str(path)
        for name, anchor in SHOTS.items():
            top = verdict["offsets"].get(anchor)
            if top is None:
                continue
            top = 0 if name == "top" else max(top - 10, 0)
            path = folder / f"{name}.png"
            image.crop((0, top, width, min(top + SHOT_HEIGHT, image.height))).save(path)
            out[name] = str(path)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analysis.tools.browser_check",
                                     description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("report", type=Path, help="a report folder (with index.html)")
    parser.add_argument(
        "--screenshots", type=Path, help="write first/top/economy/robustness PNGs here"
    )
    parser.add_argument("--width", type=int, default=WIDTH, help="page width, CSS px")
    args = parser.parse_args(argv)
    try:
        verdict = check_report(args.report, args.screenshots, args.width)
    except (FileNotFoundError, RuntimeError, subprocess.TimeoutExpired) as error:
        print(f"browser_check: error: {error}", file=sys.stderr)
        return 1
    for problem in verdict["problems"]:
        print(f"problem: {problem}")
    for name, path in verdict["screenshots"].items():
        print(f"screenshot {name}: {path}")
    if verdict["steps"]:
        shown, every = verdict["first_screen_steps"], len(verdict["steps"])
        print(f"first screen ({args.width} x {FIRST_SCREEN} px): {shown} of {every} next steps "
              "shown whole")  # fmt: skip
    ok = not verdict["problems"]
    print(
        f"{'ok' if ok else 'FAILED'}: {verdict['images']} images, page {verdict['width']} x "
        f"{verdict['height']} px, {len(verdict['problems'])} problems"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("LC_ALL", "C")
    from sim.core.cli import guarded

    sys.exit(guarded(main, "python -m analysis.tools.browser_check"))
