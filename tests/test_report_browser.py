"""The HTML report's landing page, laid out by a real browser (headless Chromium).

``snakemake --report`` builds a single-page app: the landing page shows the workflow
description (``workflow/report/workflow.rst``, with the planted-bias controls table) beside
the rule graph that vega draws. Whether the two overlap is only known once a browser has
laid the page out, so :func:`check_report_layout` opens the report in headless Chromium at
1280 and 1920 px, measures both boxes from the DOM with a small script injected into a copy
of the report (its result is read back through ``--dump-dom``) and writes a screenshot at
each width. It also wants the page to open with the controls table (its top within the
first screen, nothing cut off), the description free of docutils errors and every result
category that has figures to open with them. The end-to-end small-profile test in
``test_workflow.py`` calls it on the report it builds; the tests here check the check itself
on hand-made pages.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome"))), None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium on PATH")

CONTROLS_CAPTION = "Planted-bias controls of this run"
WIDTHS = (1280, 1920)
HEIGHT = 900
#: virtual time Chromium gives the page to load, render React and let vega draw the graph
BUDGET_MS = 10000

# Runs in the page: after load (and a pause for vega's asynchronous drawing) it measures the
# controls table, the rule graph vega drew (its ``.marks`` canvas or svg) and the description
# column, notes what each result category opens with (the menu sorts subcategories by name),
# and appends it all as JSON in a hidden <pre id="layout-probe"> for --dump-dom to carry out.
PROBE = r"""<script>
(function () {
  function box(el) {
    if (!el) return null;
    var r = el.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom,
            width: r.width, height: r.height};
  }
  function measure() {
    var table = Array.prototype.find.call(document.querySelectorAll("table"), function (t) {
      var c = t.querySelector("caption");
      return c && c.textContent.indexOf(%(caption)s) >= 0;
    });
    var graph = document.querySelector("#rulegraph");
    var drawn = graph && graph.querySelector(".marks");
    var desc = table && table.closest(".prose");
    var out = {viewport: {width: window.innerWidth, height: window.innerHeight},
               table: box(table), graph: box(drawn || graph), graph_drawn: !!drawn,
               description: box(desc),
               table_overflows: !!(desc && desc.scrollWidth > desc.clientWidth + 1),
               rst_errors: document.querySelectorAll(".system-message, .problematic").length};
    // what each category of the menu opens with: its subcategories in the menu's order
    var cats = typeof categories === "object" ? categories : {};
    var figure = function (path) { return /\.(png|svg|jpe?g|gif)$/i.test(path); };
    out.categories = {};
    Object.keys(cats).forEach(function (c) {
      var subs = Object.keys(cats[c]).sort(function (a, b) { return a.localeCompare(b); });
      out.categories[c] = {
        first: subs[0], first_figures: cats[c][subs[0]].every(figure),
        figures: subs.some(function (s) { return cats[c][s].some(figure); })};
    });
    var pre = document.createElement("pre");
    pre.id = "layout-probe";
    pre.hidden = true;
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  window.addEventListener("load", function () { setTimeout(measure, %(delay)d); });
})();
</script>
"""


def overlap(a: dict[str, float], b: dict[str, float]) -> float:
    """Area (px²) two boxes share; 0 when they only touch or are apart."""
    dx = min(a["right"], b["right"]) - max(a["left"], b["left"])
    dy = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
    return max(dx, 0.0) * max(dy, 0.0)


def _chromium(args: list[str], width: int, profile: Path, timeout: int = 60) -> str:
    assert CHROMIUM is not None
    cmd = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
           "--disable-dev-shm-usage", "--hide-scrollbars", "--no-first-run",
           f"--user-data-dir={profile}", f"--window-size={width},{HEIGHT}",
           f"--virtual-time-budget={BUDGET_MS}", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return proc.stdout


def measure_layout(html_path: Path, width: int, screenshot: Path | None = None,
                   delay_ms: int = 3000) -> dict:
    """The probe's measurements of ``html_path`` laid out ``width`` px wide; with
    ``screenshot``, the same Chromium also writes the window there as a PNG."""
    text = Path(html_path).read_text()
    probe = PROBE % {"caption": json.dumps(CONTROLS_CAPTION), "delay": delay_ms}
    at = text.rfind("</body>")
    text = text[:at] + probe + text[at:] if at >= 0 else text + probe
    with tempfile.TemporaryDirectory(prefix="report-probe-") as tmp:
        copy = Path(tmp) / "report.html"
        copy.write_text(text)
        shot = [f"--screenshot={Path(screenshot).resolve()}"] if screenshot else []
        dom = _chromium([*shot, "--dump-dom", copy.as_uri()], width, Path(tmp) / "profile")
    found = re.search(r'<pre id="layout-probe"[^>]*>(.*?)</pre>', dom, re.S)
    assert found, f"the layout probe did not run at {width} px (page failed to load?)"
    return json.loads(html.unescape(found.group(1)))


def layout_problems(m: dict) -> list[str]:
    """What is wrong with one width's measurements (empty when the layout is fine)."""
    if m["table"] is None:
        return [f"no table captioned {CONTROLS_CAPTION!r} on the landing page"]
    problems = []
    if m["graph"] is None or not m["graph_drawn"] or m["graph"]["width"] <= 0:
        problems.append("the rule graph was not drawn")
    elif (shared := overlap(m["table"], m["graph"])) > 0:
        problems.append(f"the controls table {m['table']} and the rule graph {m['graph']} "
                        f"overlap ({shared:.0f} px²)")
    if m["table"]["left"] < 0 or m["table"]["right"] > m["viewport"]["width"]:
        problems.append(f"the controls table {m['table']} leaves the "
                        f"{m['viewport']['width']} px viewport")
    if not 0 <= m["table"]["top"] < m["viewport"]["height"]:
        problems.append(f"the landing page does not open with the controls table "
                        f"{m['table']} (viewport {m['viewport']})")
    if m["table_overflows"]:
        problems.append("the controls table is wider than the description column")
    if m.get("rst_errors"):
        problems.append(f"{m['rst_errors']} docutils error(s) in the description")
    for category, opening in m.get("categories", {}).items():
        if opening["figures"] and not opening["first_figures"]:
            problems.append(f"category {category!r} opens with {opening['first']!r}, "
                            "not with its figures")
    return problems


def check_report_layout(html_path: Path, out_dir: Path,
                        widths: tuple[int, ...] = WIDTHS) -> dict[int, dict]:
    """Assert the controls table and the rule graph do not overlap at each width (and the
    rest of :func:`layout_problems`).

    Writes ``report-<width>.png`` into ``out_dir`` at each width (the landing page as a
    window ``HEIGHT`` px tall shows it) and returns the measurements by width. Skips where
    Chromium is absent.
    """
    if CHROMIUM is None:
        pytest.skip("no headless Chromium on PATH")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    measured, problems = {}, []
    for width in widths:
        shot = out_dir / f"report-{width}.png"
        measured[width] = measure_layout(html_path, width, screenshot=shot)
        problems += [f"{width} px: {p}" for p in layout_problems(measured[width])]
        _crop(shot, measured[width]["viewport"]["height"])
    assert not problems, "\n".join(problems)
    return measured


def _crop(shot: Path, height: int) -> None:
    """Cut the screenshot to what the window shows (headless Chromium draws the window's
    full height, taller than the page's viewport) and write it compactly."""
    assert shot.stat().st_size > 0, shot
    try:
        from PIL import Image
    except ImportError:  # the screenshot stays as Chromium wrote it
        return
    with Image.open(shot) as image:
        image = image.convert("RGB")
    if 0 < height < image.height:
        image = image.crop((0, 0, image.width, height))
    image.save(shot, optimize=True)


# -- the check itself, on hand-made pages --------------------------------------------------

def test_overlap_of_boxes() -> None:
    a = {"left": 0, "top": 0, "right": 100, "bottom": 50}
    assert overlap(a, {"left": 50, "top": 25, "right": 150, "bottom": 75}) == 50 * 25
    assert overlap(a, {"left": 100, "top": 0, "right": 200, "bottom": 50}) == 0  # touching
    assert overlap(a, {"left": 0, "top": 60, "right": 100, "bottom": 90}) == 0  # stacked


def _page(table_style: str, graph_style: str, categories: dict | None = None) -> str:
    rows = "".join(f"<tr><td>control-{i}</td><td>pass</td></tr>" for i in range(5))
    return f"""<!doctype html><html><body style="margin:0">
<script>var categories = {json.dumps(categories or {})};</script>
<div class="prose" style="position:absolute;{table_style}">
<table style="width:100%"><caption>{CONTROLS_CAPTION}</caption>{rows}</table></div>
<div id="rulegraph" style="position:absolute;{graph_style}">
<canvas class="marks" width="300" height="200" style="display:block"></canvas></div>
</body></html>"""


@needs_chromium
def test_layout_check_fails_on_overlap_and_passes_when_stacked(tmp_path: Path) -> None:
    overlapping = tmp_path / "overlapping.html"
    overlapping.write_text(_page("left:10px;top:10px;width:500px",
                                 "left:200px;top:40px"))
    stacked = tmp_path / "stacked.html"
    stacked.write_text(_page("left:10px;top:10px;width:500px",
                             "left:10px;top:400px"))
    with pytest.raises(AssertionError, match="overlap"):
        check_report_layout(overlapping, tmp_path / "shots", widths=(1280,))
    measured = check_report_layout(stacked, tmp_path / "shots", widths=(1280,))
    m = measured[1280]
    assert m["table"]["bottom"] <= m["graph"]["top"] and m["graph_drawn"]
    assert (tmp_path / "shots/report-1280.png").stat().st_size > 0


def test_layout_check_wants_every_category_to_open_with_its_figures() -> None:
    m = {"viewport": {"width": 1280, "height": 757}, "graph_drawn": True,
         "table": {"left": 10, "top": 10, "right": 500, "bottom": 200, "width": 490},
         "graph": {"left": 10, "top": 300, "right": 400, "bottom": 600, "width": 390},
         "table_overflows": False, "rst_errors": 0}
    assert layout_problems({**m, "categories": {
        "1. Study": {"first": "Figures", "first_figures": True, "figures": True},
        "2. Record": {"first": "Other", "first_figures": False, "figures": False}}}) == []
    problems = layout_problems({**m, "categories": {
        "1. Study": {"first": "Paper tables", "first_figures": False, "figures": True}}})
    assert problems == ["category '1. Study' opens with 'Paper tables', not with its figures"]


@needs_chromium
def test_probe_reads_the_menu_order_of_categories(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(_page("left:10px;top:10px;width:500px", "left:10px;top:400px", {
        "1. Study": {"Paper tables": ["t.csv"], "Figures": ["a.png", "b.svg"]},
        "2. Other study": {"Paper tables": ["t.csv"], "Plots": ["a.png"]},
        "3. Record": {"Other": ["REPRODUCTION.md"]}}))
    cats = measure_layout(page, 1280)["categories"]
    assert cats["1. Study"] == {"first": "Figures", "first_figures": True, "figures": True}
    assert cats["2. Other study"] == {"first": "Paper tables", "first_figures": False,
                                      "figures": True}
    assert cats["3. Record"]["figures"] is False
