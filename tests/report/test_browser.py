"""The report in a real headless Chromium: it loads cleanly, offline, and shows every plot.

Skipped when Chromium is missing, except under CI (``CI`` set), where `.ci/run`
installs Debian's chromium and a missing browser is a failure. Set
``DRALAB_SCREENSHOT=/some/file.png`` to keep the screenshot for a look.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from dralab.report import PLOT_IDS, write_report
from dralab.report.metrics import METRICS

from .cdp import PageLoad, load_page, require_chromium
from .fixtures import comparison_result

WIDTH = 1280

_PROBE = """
(() => {
  const box = (el) => { const r = el.getBoundingClientRect();
                        return [r.left + scrollX, r.top + scrollY, r.width, r.height]; };
  const out = {title: document.title, scrollWidth: document.documentElement.scrollWidth,
               innerWidth: innerWidth, scripts: document.scripts.length, figures: {},
               sections: [...document.querySelectorAll('main > section')].map((s) => s.id),
               rows: {}, text: {}};
  for (const id of ['verdict', 'comparison', 'latency', 'failures', 'glossary']) {
    const el = document.getElementById(id);
    out.text[id] = el ? el.innerText : null;
  }
  const verdict = document.getElementById('verdict');
  out.verdictBox = verdict ? box(verdict) : null;
  for (const tr of document.querySelectorAll('#comparison-table tr[data-metric]')) {
    out.rows[tr.dataset.metric] = [...tr.children].map((c) => c.innerText.trim());
  }
  for (const id of IDS) {
    const fig = document.getElementById(id);
    if (!fig) { out.figures[id] = null; continue; }
    const svg = fig.querySelector('svg');
    const drawn = svg ? [...svg.querySelectorAll('path')].filter((p) => {
      const b = p.getBBox(); return p.getAttribute('d') && (b.width > 0 || b.height > 0);
    }).length : 0;
    const title = svg && svg.querySelector('title');
    const caption = fig.querySelector('figcaption');
    out.figures[id] = {box: box(fig), svg: svg ? box(svg) : null, drawn: drawn,
                       title: title ? title.textContent : null,
                       caption: caption ? caption.textContent : null};
  }
  return out;
})()
"""


def _results(source: str) -> list[Any]:
    if source == "fixture":
        return [comparison_result(seed=s) for s in (7, 8, 9)]
    # The real thing: what `dralab simulate --seeds 3` reports for the built-in scenario
    # (three seeds: the fewest that can show a difference; about a second each).
    from dralab.sim.default import default_scenario
    from dralab.sim.simulate import simulate

    scenario = default_scenario()
    return [simulate(scenario.with_seed(scenario.seed + i)) for i in range(3)]


@pytest.fixture(scope="module", params=["fixture", "default-scenario"])
def page(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> PageLoad:
    exe = require_chromium()
    root = tmp_path_factory.mktemp("browser")
    results = _results(request.param)
    index = write_report(results[0], root / "dralab-report", results)
    load = load_page(exe, index.resolve().as_uri(), _PROBE.replace("IDS", json.dumps(PLOT_IDS)),
                     root / "profile", width=WIDTH)
    if keep := os.environ.get("DRALAB_SCREENSHOT"):
        Path(keep).write_bytes(load.screenshot)
    return load


def _figures(page: PageLoad) -> dict[str, Any]:
    figures: dict[str, Any] = page.value["figures"]
    return figures


def test_loads_without_console_errors(page: PageLoad) -> None:
    assert page.errors == []


def test_asks_for_nothing_but_the_page_itself(page: PageLoad) -> None:
    assert page.requests, "the page load itself should be seen"
    assert all(url.startswith(("file:", "data:")) for url in page.requests), page.requests
    assert page.value["scripts"] == 0


def test_every_plot_is_laid_out_and_drawn(page: PageLoad) -> None:
    figures = _figures(page)
    assert set(figures) == set(PLOT_IDS)
    for plot_id, fig in figures.items():
        assert fig is not None, f"{plot_id} missing"
        _, _, w, h = fig["svg"]
        assert w >= 300 and h >= 150, f"{plot_id} svg is {w}x{h} px"
        assert fig["drawn"] >= 5, f"{plot_id} draws only {fig['drawn']} visible paths"
        assert fig["title"] and fig["caption"], plot_id


def test_figures_do_not_overlap_and_page_fits_the_width(page: PageLoad) -> None:
    boxes = [(k, v["box"]) for k, v in _figures(page).items()]
    for i, (a, (ax, ay, aw, ah)) in enumerate(boxes):
        for b, (bx, by, bw, bh) in boxes[i + 1:]:
            apart = ax + aw <= bx or bx + bw <= ax or ay + ah <= by or by + bh <= ay
            assert apart, f"{a} overlaps {b}"
    assert page.value["scrollWidth"] <= page.value["innerWidth"]


def test_screenshot_shows_every_plot(page: PageLoad) -> None:
    import numpy as np
    from matplotlib.image import imread

    rgb = (imread(io.BytesIO(page.screenshot), format="png")[..., :3] * 255).astype(np.uint32)
    assert rgb.shape[1] == WIDTH
    packed = rgb[..., 0] << 16 | rgb[..., 1] << 8 | rgb[..., 2]     # one int per pixel
    assert len(np.unique(packed)) > 50, "screenshot is (nearly) blank"
    for plot_id, fig in _figures(page).items():
        x, y, w, h = (round(v) for v in fig["svg"])
        region = packed[y:y + h, x:x + w]
        colours = len(np.unique(region))
        non_white = float((region != 0xFFFFFF).mean())
        assert colours > 10 and non_white > 0.02, \
            f"{plot_id} looks empty on screen ({colours} colours, {non_white:.1%} ink)"


def test_verdict_comes_first_and_says_what_to_decide(page: PageLoad) -> None:
    value = page.value
    assert value["sections"][:2] == ["verdict", "comparison"]
    text = value["text"]["verdict"]
    assert "against Device plugin (whole GPUs), over 3 seeds" in text
    assert "Decide:" in text and "3 seeds (" in text
    # The verdict is on screen, at the top of the page.
    _, top, width, height = value["verdictBox"]
    assert top < 200 and width > 600 and height > 80


def test_verdict_numbers_are_the_table_numbers(page: PageLoad) -> None:
    labels = {m.label: m.key for m in METRICS}
    rows = page.value["rows"]
    findings = [line for line in page.value["text"]["verdict"].splitlines()
                if "; every seed agrees)" in line]
    assert findings, "both results have differences beyond three seeds' spread"
    for line in findings:
        label, rest = line.split(": ", 1)
        before, after = re.search(r"\((.+?) → (.+?); every seed agrees\)", rest).groups()
        cells = rows[labels[label]]
        # Metric, first mode (mean ± sd), last mode, difference with its mark.
        assert cells[1].startswith(before) and cells[2].startswith(after), (line, cells)
        assert cells[3].endswith("✱"), cells


def test_every_number_is_defined_and_pilot_metrics_are_shown(page: PageLoad) -> None:
    text = page.value["text"]
    glossary = text["glossary"]
    for key in page.value["rows"]:
        label = next(m.label for m in METRICS if m.key == key)
        assert label in glossary or key in SHARED_ENTRIES, key
    assert "Pod p90" in text["latency"] and "Claim p99" in text["latency"]
    assert "Scheduling latency" in glossary and "Claim allocation status" in glossary
    assert text["failures"]
    assert _figures(page)["plot-claims"]["caption"].startswith("Pods by the state")


# Later percentiles share the first one's glossary entry.
SHARED_ENTRIES = {"wait_p90", "wait_p99", "wait_mean", "job_wait_p90", "admission_wait_p90",
                  "node_wait_p90"}
