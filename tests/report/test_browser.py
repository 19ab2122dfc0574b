"""The report in a real headless Chromium: it loads cleanly, offline, and shows every plot.

Skipped when Chromium is missing, except under CI (``CI`` set), where `.ci/run`
installs Debian's chromium and a missing browser is a failure. Set
``DRALAB_SCREENSHOT=/some/file.png`` to keep the screenshot for a look.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from dralab.report import PLOT_IDS, write_report

from .cdp import PageLoad, find_chromium, load_page
from .fixtures import comparison_result

WIDTH = 1280

_PROBE = """
(() => {
  const box = (el) => { const r = el.getBoundingClientRect();
                        return [r.left + scrollX, r.top + scrollY, r.width, r.height]; };
  const out = {title: document.title, scrollWidth: document.documentElement.scrollWidth,
               innerWidth: innerWidth, scripts: document.scripts.length, figures: {}};
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


def _result(source: str) -> Any:
    if source == "fixture":
        return comparison_result()
    # The real thing: what `dralab simulate` reports for the built-in scenario.
    from dralab.sim.default import default_scenario
    from dralab.sim.simulate import simulate

    return simulate(default_scenario())


@pytest.fixture(scope="module", params=["fixture", "default-scenario"])
def page(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> PageLoad:
    exe = find_chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed, but CI must run the browser test "
                        "(.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    root = tmp_path_factory.mktemp("browser")
    index = write_report(_result(request.param), root / "dralab-report")
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
