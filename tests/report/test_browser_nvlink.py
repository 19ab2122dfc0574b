"""The NVLinkScenario page (``dralab simulate`` on an NVLinkScenario) in a real headless
Chromium: it loads cleanly and offline, fits the width, and every plot is drawn; the
table's numbers are the terminal's. Skipped without Chromium, except under CI (as the main
report's browser test)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dralab.cli.main import cli

from .cdp import PageLoad, load_page, require_chromium

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "nvl72.yaml"
WIDTH = 1280
PLOTS = ("plot-stranded", "plot-held", "plot-free")

_PROBE = """
(() => {
  const out = {scrollWidth: document.documentElement.scrollWidth, innerWidth: innerWidth,
               scripts: document.scripts.length, rows: {}, figures: {},
               sections: [...document.querySelectorAll('main > section')].map((s) => s.id)};
  for (const tr of document.querySelectorAll('#nvlink-table tr[data-policy]')) {
    out.rows[tr.dataset.policy] = [...tr.children].map((c) => c.innerText.trim());
  }
  for (const id of IDS) {
    const fig = document.getElementById(id);
    const svg = fig && fig.querySelector('svg');
    const r = svg ? svg.getBoundingClientRect() : null;
    out.figures[id] = svg ? {w: r.width, h: r.height, drawn: [...svg.querySelectorAll('path')]
      .filter((p) => { const b = p.getBBox(); return b.width > 0 || b.height > 0; }).length}
      : null;
  }
  return out;
})()
"""


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> tuple[PageLoad, str]:
    exe = require_chromium()
    root = tmp_path_factory.mktemp("nvlink")
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(EXAMPLE), "--seeds", "2",
                                      "--out", str(root / "report")])
    assert result.exit_code == 0, result.output
    index = root / "report" / "index.html"
    load = load_page(exe, index.resolve().as_uri(), _PROBE.replace("IDS", str(list(PLOTS))),
                     root / "profile", width=WIDTH)
    return load, result.output


def test_loads_offline_without_errors(loaded: tuple[PageLoad, str]) -> None:
    page, _ = loaded
    assert page.errors == []
    assert all(url.startswith(("file:", "data:")) for url in page.requests), page.requests
    assert page.value["scripts"] == 0
    assert page.value["scrollWidth"] <= page.value["innerWidth"]
    assert page.value["sections"] == ["policies", "seeds", "spanning", "plots-section",
                                      "glossary", "data"]


def test_every_plot_is_drawn(loaded: tuple[PageLoad, str]) -> None:
    figures: dict[str, Any] = loaded[0].value["figures"]
    for plot_id in PLOTS:
        fig = figures[plot_id]
        assert fig is not None, plot_id
        assert fig["w"] >= 300 and fig["h"] >= 100, (plot_id, fig)
        assert fig["drawn"] >= 5, (plot_id, fig)


def test_the_table_holds_the_terminals_numbers(loaded: tuple[PageLoad, str]) -> None:
    page, output = loaded
    rows: dict[str, list[str]] = page.value["rows"]
    assert list(rows) == ["first-fit", "pod-affinity", "domain-packing"]
    for policy, cells in rows.items():
        # the terminal's row: policy jobs start never span p50 p90 stranded share held
        line = next(x for x in output.splitlines() if x.startswith(policy + " "))
        jobs, start, never, span, p50, p90, stranded, share, held = line.split()[1:]
        assert cells == [policy, jobs, start, never, span, p50, p90, cells[7], stranded,
                         share, held]
