"""Output of trace replays and sweeps: the text table, JSON, CSV and the HTML report.

Everything but ``write_replay_report`` is pure. The page follows the simulation
report (self-contained, inline SVG via matplotlib, no script): per workload, the
unallocated GPU share and the fragmentation against the arrived workload, one
line per policy (median over seeds, 25-75 % band, as the paper plots them), and
the summary table, next to the paper's numbers for the default workload.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from dralab._version import __version__
from dralab.api.io import write_atomic
from dralab.replay.curves import LEVELS
from dralab.replay.paper import PAPER_MEAN, PAPER_SD, PAPER_WORKLOAD
from dralab.replay.runs import ReplayResults

from .csvtext import csv_text
from .page import page_head
from .svg import figure_to_svg, plot_style

__all__ = [
    "CSV_COLUMNS",
    "render_csv",
    "render_html",
    "render_table",
    "replay_document",
    "sweep_document",
    "write_replay_report",
]

CSV_COLUMNS = ("workload", "policy", "arrived_pct", "unalloc_gpu_pct_mean",
               "unalloc_gpu_pct_sd", "seeds")
_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
_PLOTS = (
    ("unalloc", "Unallocated GPU", "unallocated GPU (% of capacity)"),
    ("frag_amount", "Fragmentation amount", "fragmentation (% of capacity)"),
    ("frag_rate", "Fragmentation rate", "fragmentation (% of idle GPU)"),
)


def _pm(mean: float, sd: float) -> str:
    if math.isnan(mean):
        return "—"
    return f"{mean:.2f}" if math.isnan(sd) else f"{mean:.2f} ± {sd:.2f}"


def _cells(results: ReplayResults, workload: str) -> dict[str, dict[int, str]]:
    out: dict[str, dict[int, str]] = {}
    for r in results.rows():
        if r.workload == workload:
            out.setdefault(r.policy, {})[r.arrived_pct] = _pm(r.unalloc_gpu_pct_mean,
                                                              r.unalloc_gpu_pct_sd)
    return out


def render_table(results: ReplayResults) -> str:
    """Plain aligned text: per workload, policy rows and "mean ± sd" per arrival level."""
    blocks: list[str] = []
    for w in results.workloads:
        cells = _cells(results, w)
        seeds = len(next(iter(results.groups[(w, p)] for p in results.policies(w))))
        head = ["policy", *(f"{x} %" for x in results.levels)]
        body = [[p, *(cells[p].get(x, "—") for x in results.levels)] for p in cells]
        widths = [max(len(row[i]) for row in (head, *body)) for i in range(len(head))]

        def line(row: Sequence[str], widths: Sequence[int] = widths) -> str:
            return "  ".join(c.ljust(n) if i == 0 else c.rjust(n)
                             for i, (c, n) in enumerate(zip(row, widths, strict=True)))

        blocks.append("\n".join([
            f"{w}: unallocated GPU % (mean ± sd over {seeds} seed(s)) by arrived %",
            line(head), *(line(r) for r in body)]))
    return "\n\n".join(blocks) + "\n"


def replay_document(results: ReplayResults, workload: str) -> dict[str, Any]:
    """The issue's exact JSON: ``{"workload": ..., "results": [{policy, arrived_pct,
    unalloc_gpu_pct_mean, unalloc_gpu_pct_sd, seeds}, ...]}``."""
    return {"workload": workload, "results": results.results_json()}


def sweep_document(results: ReplayResults) -> dict[str, Any]:
    """A sweep's JSON: the same rows, each naming its workload."""
    return {"workloads": results.workloads, "results": results.rows_json()}


def render_csv(results: ReplayResults) -> str:
    return csv_text(CSV_COLUMNS, (["" if row[c] is None else row[c] for c in CSV_COLUMNS]
                                  for row in results.rows_json()))


def render_curves_csv(results: ReplayResults) -> str:
    """Per workload, policy and arrival level 0..130: median and quartiles of each metric."""
    metrics = [m for m, _, _ in _PLOTS]
    header = ["workload", "policy", "arrived_pct",
              *(f"{m}_{q}" for m in metrics for q in ("median", "q25", "q75"))]
    rows: list[list[str | int | float]] = []
    for w, p in results.groups:
        bands = [results.band(w, p, m) for m in metrics]
        for i, x in enumerate(LEVELS):
            values = [v for b in bands for v in (b.median[i], b.q25[i], b.q75[i])]
            rows.append([w, p, int(x), *("" if math.isnan(v) else f"{v:.4f}"
                                         for v in values)])
    return csv_text(header, rows)


def _plot(results: ReplayResults, workload: str, metric: str, title: str,
          ylabel: str) -> str:
    from matplotlib.figure import Figure

    plot_id = f"{workload}-{metric}"
    with plot_style(plot_id):
        fig = Figure(figsize=(5.4, 3.6), layout="constrained")
        ax = fig.add_subplot()
        xs = [int(x) for x in LEVELS]
        for i, policy in enumerate(results.policies(workload)):
            band = results.band(workload, policy, metric)
            colour = _COLOURS[i % len(_COLOURS)]
            ax.fill_between(xs, band.q25, band.q75, color=colour, alpha=0.2, lw=0)
            ax.plot(xs, band.median, color=colour, lw=1.4, label=policy)
        if metric == "unalloc":
            ax.plot([0, 100, 130], [100, 0, 0], color="#888888", lw=0.8, ls="--",
                    label="ideal")
        ax.set_xlabel("arrived workload (% of GPU capacity)")
        ax.set_ylabel(ylabel)
        ax.set_xlim(0, 130)
        ax.legend(loc="upper right")
        return figure_to_svg(fig, plot_id, f"{title} — {workload}")


def _table_html(results: ReplayResults, workload: str) -> str:
    cells = _cells(results, workload)
    paper = workload == PAPER_WORKLOAD
    head = "".join(f'<th scope="col">{x} %</th>' for x in results.levels)
    if paper:
        head += "".join(f'<th scope="col">paper {x} %</th>' for x in results.levels)
    rows = []
    for policy, by_level in cells.items():
        tds = "".join(f"<td>{escape(by_level.get(x, '—'))}</td>" for x in results.levels)
        if paper:
            ref_mean, ref_sd = PAPER_MEAN.get(policy, {}), PAPER_SD.get(policy, {})
            tds += "".join(
                f"<td>{escape(_pm(ref_mean[x], ref_sd.get(x, math.nan)))}</td>"
                if x in ref_mean else "<td>—</td>" for x in results.levels)
        rows.append(f'<tr><th scope="row">{escape(policy)}</th>{tds}</tr>')
    return (f'<table class="comparison" id="table-{escape(workload)}"><thead><tr>'
            f'<th scope="col">Policy</th>{head}</tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>")


def render_html(results: ReplayResults, title: str, files: Mapping[str, str]) -> str:
    """The page: per workload the table and the three curve plots. Deterministic."""
    sections = []
    for w in results.workloads:
        seeds = len(results.groups[(w, results.policies(w)[0])])
        figures = "\n".join(
            f'<figure id="{escape(w)}-{m}"><h3>{escape(t)}</h3>{_plot(results, w, m, t, y)}'
            f"<figcaption>Median over {seeds} seed(s), band 25–75 %.</figcaption></figure>"
            for m, t, y in _PLOTS)
        note = ("<p class=\"note\">Paper: mean ± sample sd over its 10 seeds (no sd is "
                "published at 90 %).</p>" if w == PAPER_WORKLOAD else "")
        sections.append(
            f'<section id="workload-{escape(w)}"><h2>Workload {escape(w)}</h2>'
            f"<p>Unallocated GPU % (mean ± sd over {seeds} seed(s)) by arrived %.</p>"
            f"{_table_html(results, w)}{note}<div class=\"plots\">{figures}</div></section>")
    links = "\n".join(f'<li><a href="{n}">{n}</a> — {escape(d)}</li>' for n, d in files.items())
    return f"""{page_head(title)}<body>
<header><h1>{escape(title)}</h1>
<p class="meta">Alibaba GPU trace 2023, FGD paper protocol: pods arrive until 130 % of GPU
capacity is requested, nothing departs; {len(results.runs)} run(s).</p></header>
<main>
{"".join(sections)}
<section id="data"><h2>Data</h2><ul>
{links}
</ul></section>
</main>
<footer>Generated by dralab {escape(__version__)}. This page is self-contained and opens offline.
</footer>
</body>
</html>
"""


def write_replay_report(results: ReplayResults, out_dir: Path, title: str,
                        document: Mapping[str, Any]) -> Path:
    """Write results.json (``document``), results.csv, curves.csv and index.html (last, so a
    complete page always sits beside complete data); return the page's path."""
    files = {
        "results.json": "the summary table, as printed with -o json",
        "results.csv": "the summary table, one row per workload, policy and level",
        "curves.csv": "median and 25/75 % quantiles of every curve, per arrived %",
    }
    page = render_html(results, title, files)
    texts = {
        "results.json": json.dumps(document, indent=2, allow_nan=False) + "\n",
        "results.csv": render_csv(results),
        "curves.csv": render_curves_csv(results),
    }
    out = Path(out_dir)
    for name, text in texts.items():
        write_atomic(out / name, text)
        (out / name).chmod(0o644)
    index = out / "index.html"
    write_atomic(index, page)
    index.chmod(0o644)
    return index
