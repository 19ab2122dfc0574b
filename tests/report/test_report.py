"""dralab.report: the files it writes, their determinism, the page's structure, the tables."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from rich.console import Console

from dralab.report import PLOT_IDS, render_html, render_plots, render_summary_table, write_report
from dralab.report.metrics import METRICS, MetricSpec, best_indices, format_duration, format_value
from dralab.report.tables import PODS_COLUMNS, SAMPLES_COLUMNS, SUMMARY_COLUMNS
from dralab.sim.results import SUMMARY_KEYS, ModeResult, NodeOccupancy, SimulationResult

from .fixtures import comparison_result, tiny_mode

FILES = ("index.html", "metrics.json", "summary.csv", "samples.csv", "pods.csv", "seeds.csv",
         "timings.json")
# Rows the fixture defines: it runs without queueing and autoscaling.
SHOWN = [m for m in METRICS if m.group not in ("Autoscaling",)
         and not m.key.startswith(("admission_", "kueue_", "job_wait_"))]
ROOT = Path(__file__).parent.parent.parent


@pytest.fixture(scope="module")
def result() -> SimulationResult:
    return comparison_result()


@pytest.fixture(scope="module")
def report(result: SimulationResult, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "dralab-report"
    index = write_report(result, out)
    assert index == out / "index.html"
    return out


def test_writes_every_file_readable_by_others(report: Path) -> None:
    assert sorted(p.name for p in report.iterdir()) == sorted(FILES)
    for name in FILES:
        assert (report / name).stat().st_mode & 0o777 == 0o644, name


def test_same_result_gives_byte_identical_files(result: SimulationResult, report: Path,
                                                tmp_path: Path) -> None:
    again = tmp_path / "again"
    write_report(result, again)
    for name in FILES:
        assert (again / name).read_bytes() == (report / name).read_bytes(), name


def test_deterministic_across_processes(report: Path, tmp_path: Path) -> None:
    # Another interpreter with another hash seed: nothing may depend on set/dict hashing.
    script = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from dralab.report import write_report
        from tests.report.fixtures import comparison_result
        write_report(comparison_result(), Path({str(tmp_path / "other")!r}))
    """)
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=tmp_path)
    for name in FILES:
        assert (tmp_path / "other" / name).read_bytes() == (report / name).read_bytes(), name


def test_metrics_json_is_the_result(result: SimulationResult, report: Path) -> None:
    text = (report / "metrics.json").read_text()
    assert text == json.dumps(result.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert SimulationResult.from_json(json.loads(text)) == result


def _rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text())))


def test_csv_headers_and_row_counts(result: SimulationResult, report: Path) -> None:
    samples = _rows(report / "samples.csv")
    assert tuple(samples[0]) == SAMPLES_COLUMNS
    assert SAMPLES_COLUMNS[:3] == ("mode", "t", "gpus_total")
    assert len(samples) - 1 == sum(len(m.samples) for m in result.modes)
    pods = _rows(report / "pods.csv")
    assert tuple(pods[0]) == PODS_COLUMNS
    assert len(pods) - 1 == sum(len(m.pods) for m in result.modes)
    summary = _rows(report / "summary.csv")
    assert tuple(summary[0]) == SUMMARY_COLUMNS == ("mode", "label", *SUMMARY_KEYS)
    assert [r[0] for r in summary[1:]] == ["device-plugin", "dra"]


def test_csv_cells(tmp_path: Path) -> None:
    tiny = SimulationResult(scenario="tiny", seed=1, duration=30.0, modes=(tiny_mode(),))
    write_report(tiny, tmp_path)
    pods = list(csv.DictReader(io.StringIO((tmp_path / "pods.csv").read_text())))
    never = pods[4]
    assert never["start"] == "" and never["node"] == "" and never["wait"] == ""
    assert pods[3]["preempted"] == "true" and pods[0]["preempted"] == "false"
    assert pods[1]["wait"] == "10.0"
    summary = next(csv.DictReader(io.StringIO((tmp_path / "summary.csv").read_text())))
    assert float(summary["wait_p90"]) == pytest.approx(18.0)


def test_html_is_self_contained_with_every_plot(report: Path) -> None:
    page = (report / "index.html").read_text()
    for plot_id in PLOT_IDS:
        assert re.search(rf'<figure id="{plot_id}"[^>]*>', page), plot_id
    assert set(PLOT_IDS) >= {"plot-allocation", "plot-pending", "plot-fragmentation",
                             "plot-wait", "plot-occupancy", "plot-reasons"}
    assert page.count("<svg") == len(PLOT_IDS)
    assert page.count("<figcaption>") == len(PLOT_IDS)
    assert page.count("<title") == len(PLOT_IDS) + 1            # each SVG's, plus the page's
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", page))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert "<script" not in page.lower()
    assert "<link" not in page.lower()
    assert "@import" not in page and "url(http" not in page
    assert "<!DOCTYPE svg" not in page and "<?xml" not in page


def test_html_ids_are_unique(report: Path) -> None:
    ids = re.findall(r'\sid="([^"]+)"', (report / "index.html").read_text())
    dupes = {i for i in ids if ids.count(i) > 1}
    assert not dupes


def test_html_header_and_comparison(result: SimulationResult, report: Path) -> None:
    page = (report / "index.html").read_text()
    assert "<title>dralab simulation — default</title>" in page
    assert "seed 7" in page and "4 h simulated" in page
    for mode in result.modes:
        assert f'<th scope="col">{mode.label}</th>' in page
    for spec in METRICS:
        assert (f'data-metric="{spec.key}"' in page) == (spec in SHOWN), spec.key
    # One seed: nothing can be told from noise, so nothing is highlighted, and the
    # verdict says so.
    assert 'class="best"' not in page and 'class="beyond"' not in page
    assert '<section id="verdict"' in page and "Only 1 seed (7)" in page


def test_several_seeds_highlight_the_difference_beyond_the_spread(tmp_path: Path) -> None:
    # The DRA mode of this fixture waits less in every seed: its p50 cell is highlighted.
    results = [comparison_result(seed=s) for s in (7, 8, 9)]
    page = write_report(results[0], tmp_path / "r", results).read_text()
    row = re.search(r'<tr data-metric="wait_p50">.*?</tr>', page)
    assert row is not None
    cells = re.findall(r"<td( class=\"(?:best|beyond)\"[^>]*)?>", row.group(0))
    assert not cells[0] and cells[1].startswith(' class="best"')
    assert cells[2].startswith(' class="beyond"')
    assert "seeds 7, 8, 9" in page and "3 seeds (7, 8, 9)" in page
    seeds = list(csv.DictReader(io.StringIO((tmp_path / "r" / "seeds.csv").read_text())))
    assert [(r["seed"], r["mode"]) for r in seeds] == [
        (str(s), m) for s in (7, 8, 9) for m in ("device-plugin", "dra")]


def test_html_escapes_names(tmp_path: Path) -> None:
    mode = ModeResult(**{**{n: getattr(tiny_mode(), n) for n in ModeResult.__dataclass_fields__},
                         "label": "<b>&co</b>"})
    result = SimulationResult(scenario="x<y>", seed=0, duration=30.0, modes=(mode,))
    page = render_html(result, render_plots(result))
    assert "<b>&co" not in page
    assert "&lt;b&gt;&amp;co&lt;/b&gt;" in page and "x&lt;y&gt;" in page


def test_degenerate_results_still_render(tmp_path: Path) -> None:
    empty = ModeResult(mode="dra", label="DRA", samples=(), pods=(),
                       occupancy=NodeOccupancy(nodes=(), times=(), matrix=()),
                       scheduling_attempts=0, preemptions=0, unschedulable_reasons={},
                       wall_seconds=0.0)
    for modes in ((), (empty,), (empty, tiny_mode())):
        result = SimulationResult(scenario="empty", seed=0, duration=0.0, modes=modes)
        page = write_report(result, tmp_path / f"r{len(modes)}").read_text()
        for plot_id in PLOT_IDS:
            assert f'id="{plot_id}"' in page
        json.loads((tmp_path / f"r{len(modes)}" / "metrics.json").read_text())


def test_many_nodes_keep_labels_readable() -> None:
    nodes = tuple(f"node-{i:03d}" for i in range(200))
    occ = NodeOccupancy(nodes=nodes, times=(0.0, 60.0),
                        matrix=tuple((0.5, (i % 10) / 10) for i in range(200)))
    mode = ModeResult(**{**{n: getattr(tiny_mode(), n) for n in ModeResult.__dataclass_fields__},
                         "occupancy": occ})
    result = SimulationResult(scenario="big", seed=0, duration=120.0, modes=(mode,))
    svg = next(p.svg for p in render_plots(result) if p.id == "plot-occupancy")
    shown = [n for n in nodes if f">{n}<" in svg]
    assert 20 <= len(shown) <= 40


def test_terminal_table(result: SimulationResult) -> None:
    console = Console(width=120, record=True, color_system=None)
    console.print(render_summary_table(result))
    text = console.export_text()
    assert "Device plugin (whole GPUs)" in text and "DRA (MIG + sharing)" in text
    assert "seed 7" in text
    for spec in SHOWN:
        assert spec.label in text
    assert "wall time" not in text               # pure runs have no wall time to show


def test_format_value() -> None:
    assert format_value("count", 1234) == "1,234"
    assert format_value("share", 0.4256) == "42.6 %"
    assert format_value("duration", 45.0) == "45 s"
    assert format_value("duration", 150.0) == "2.5 min"
    assert format_value("duration", 5400.0) == "1.5 h"
    assert format_value("number", 28.25) == "28.25"
    assert format_value("duration", float("nan")) == "—"
    assert format_duration(3 * 86400.0) == "3 d"


def test_best_indices() -> None:
    lower = MetricSpec("k", "K", "G", "count", "lower")
    higher = MetricSpec("k", "K", "G", "count", "higher")
    neutral = MetricSpec("k", "K", "G", "count", None)
    assert best_indices(lower, [3, 1, 2]) == {1}
    assert best_indices(higher, [3, 1, 3]) == {0, 2}
    assert best_indices(higher, [2, 2]) == frozenset()          # no winner among equals
    assert best_indices(neutral, [3, 1]) == frozenset()
    assert best_indices(lower, [float("nan"), 1.0]) == frozenset()
    assert best_indices(lower, [5]) == frozenset()


def test_importing_the_report_does_not_import_matplotlib() -> None:
    code = ("import sys, dralab, dralab.report, dralab.sim.results; "
            # numpy is the scheduler's (vectorised filters); matplotlib must stay lazy.
            "assert 'matplotlib' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
