"""The report's ``index.html``: one self-contained page (inline CSS and SVG, no script).

Pure: builds the text from a result and its rendered plots. Nothing in the page
refers to the network; the only links are relative ones to the data files
written beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from dralab._version import __version__
from dralab.sim.results import SimulationResult, percentile

from .metrics import METRICS, best_indices, format_duration, format_value
from .plots import Plot

__all__ = ["DATA_FILES", "render_html"]

DATA_FILES: tuple[tuple[str, str], ...] = (
    ("metrics.json", "everything: timelines, pods, occupancy, reasons and summaries"),
    ("summary.csv", "one row per mode with the numbers of the comparison table"),
    ("samples.csv", "the timelines, one row per scheduler cycle and mode"),
    ("pods.csv", "one row per pod and mode: arrival, start, end, node, devices, reason"),
    ("timings.json", "how long each mode took to simulate (wall clock: differs run to run)"),
)

POOLS_FILE = ("pools.csv", "autoscaled pools: Ready nodes at every change, per pool and mode")

_CSS = """
:root { color-scheme: light; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de;
        --best: #dafbe1; --best-fg: #116329; --head: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans",
       "Helvetica Neue", Arial, sans-serif; color: var(--fg); background: #fff; }
header, main, footer { max-width: 1240px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 24px; }
h1 { font-size: 1.6rem; margin: 0 0 4px; }
h2 { font-size: 1.2rem; margin: 28px 0 10px; border-bottom: 1px solid var(--line);
     padding-bottom: 4px; }
.meta, .note, figcaption, footer { color: var(--muted); }
.meta { margin: 0; }
.note { font-size: 0.85rem; margin: 6px 0 0; }
table.comparison { border-collapse: collapse; font-variant-numeric: tabular-nums;
                   min-width: 560px; }
.comparison th, .comparison td { border: 1px solid var(--line); padding: 4px 12px; }
.comparison thead th { background: var(--head); text-align: right; }
.comparison thead th:first-child, .comparison tbody th { text-align: left; font-weight: normal; }
.comparison td { text-align: right; }
.comparison tr.group th { background: var(--head); font-weight: 600; text-align: left; }
.comparison td.best { background: var(--best); color: var(--best-fg); font-weight: 600; }
.plots { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 20px; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 12px;
         min-width: 0; }
figure.wide { grid-column: 1 / -1; }
figure h3 { font-size: 1rem; margin: 0 0 6px; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { font-size: 0.85rem; margin-top: 6px; }
@media (max-width: 900px) { .plots { grid-template-columns: minmax(0, 1fr); } }
footer { font-size: 0.8rem; padding: 24px; }
"""


def _comparison(result: SimulationResult) -> str:
    summaries = [m.summary() for m in result.modes]
    cols = len(result.modes) + 1
    head = "".join(f'<th scope="col">{escape(m.label)}</th>' for m in result.modes)
    rows: list[str] = []
    group = None
    for spec in METRICS:
        if spec.group != group:
            group = spec.group
            rows.append(f'<tr class="group"><th colspan="{cols}" scope="rowgroup">'
                        f"{escape(group)}</th></tr>")
        values = [s[spec.key] for s in summaries]
        best = best_indices(spec, values)
        cells = "".join(
            f'<td class="best" title="better ({spec.better} is better)">'
            f"{escape(format_value(spec.kind, v))}</td>" if i in best
            else f"<td>{escape(format_value(spec.kind, v))}</td>"
            for i, v in enumerate(values))
        rows.append(f'<tr data-metric="{spec.key}"><th scope="row">{escape(spec.label)}</th>'
                    f"{cells}</tr>")
    body = "\n".join(rows)
    return (f'<table class="comparison" id="comparison-table">\n<thead><tr>'
            f'<th scope="col">Metric</th>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>')


def _queues(result: SimulationResult) -> str:
    """Per ClusterQueue and mode: admissions, preemptions and admission waits ("" when
    no mode ran with queueing)."""
    rows: list[str] = []
    for mode in result.modes:
        for queue, m in sorted(mode.queues.items()):
            waits = sorted(m.waits)
            p50 = percentile(waits, 50) if waits else float("nan")
            p90 = percentile(waits, 90) if waits else float("nan")
            rows.append(f"<tr><td>{escape(mode.label)}</td><th scope=\"row\">{escape(queue)}</th>"
                        f"<td>{m.admitted}</td><td>{m.preempted}</td>"
                        f"<td>{escape(format_value('duration', p50))}</td>"
                        f"<td>{escape(format_value('duration', p90))}</td></tr>")
    if not rows:
        return ""
    body = "\n".join(rows)
    return (f'<section id="queues">\n<h2>Queues</h2>\n<table class="comparison" '
            f'id="queue-table">\n<thead><tr><th scope="col">Mode</th>'
            f'<th scope="col">ClusterQueue</th><th scope="col">Admitted</th>'
            f'<th scope="col">Preempted</th><th scope="col">Admission wait p50</th>'
            f'<th scope="col">Admission wait p90</th></tr></thead>\n<tbody>\n{body}\n'
            f"</tbody></table>\n</section>")


def _pools(result: SimulationResult) -> str:
    """Per autoscaled pool and mode: nodes (min, max, peak), node-hours, scale-ups and
    -downs, cost ("" when no pool was autoscaled)."""
    rows: list[str] = []
    for mode in result.modes:
        if mode.autoscaling is None:
            continue
        for pool, m in sorted(mode.autoscaling.pools.items()):
            rows.append(f"<tr><td>{escape(mode.label)}</td><th scope=\"row\">{escape(pool)}</th>"
                        f"<td>{m.min}</td><td>{m.max}</td><td>{m.peak}</td>"
                        f"<td>{m.node_hours:,.1f}</td><td>{m.scale_ups}</td>"
                        f"<td>{m.scale_downs}</td><td>{m.price_per_hour:,.2f}</td>"
                        f"<td>{m.cost:,.2f}</td></tr>")
    if not rows:
        return ""
    body = "\n".join(rows)
    return (f'<section id="autoscaling">\n<h2>Autoscaled pools</h2>\n<table class="comparison" '
            f'id="pool-table">\n<thead><tr><th scope="col">Mode</th>'
            f'<th scope="col">Pool</th><th scope="col">Min</th><th scope="col">Max</th>'
            f'<th scope="col">Peak nodes</th><th scope="col">Node-hours</th>'
            f'<th scope="col">Nodes added</th><th scope="col">Nodes removed</th>'
            f'<th scope="col">Price per hour</th><th scope="col">Cost</th></tr></thead>\n'
            f"<tbody>\n{body}\n</tbody></table>\n</section>")


def _figure(plot: Plot) -> str:
    cls = ' class="wide"' if plot.wide else ""
    return (f'<figure id="{plot.id}"{cls} aria-label="{escape(plot.title)}">\n'
            f"<h3>{escape(plot.title)}</h3>\n{plot.svg}\n"
            f"<figcaption>{escape(plot.caption)}</figcaption>\n</figure>")


def render_html(result: SimulationResult, plots: Sequence[Plot]) -> str:
    """The whole page for ``result`` with ``plots`` in order. Deterministic; no script,
    no external reference; every plot is a ``<figure id=...>`` holding an inline ``<svg>``.
    """
    labels = ", ".join(m.label for m in result.modes) or "none"
    title = f"dralab simulation — {result.scenario}"
    figures = "\n".join(_figure(p) for p in plots)
    listed = DATA_FILES + ((POOLS_FILE,) if any(m.autoscaling is not None
                                                for m in result.modes) else ())
    files = "\n".join(f'<li><a href="{name}">{name}</a> — {escape(what)}</li>'
                      for name, what in listed)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="dralab {escape(__version__)}">
<title>{escape(title)}</title>
<style>{_CSS}</style>
</head>
<body>
<header>
<h1>{escape(title)}</h1>
<p class="meta">Scenario <strong>{escape(result.scenario)}</strong> · seed {result.seed} ·
{escape(format_duration(result.duration))} simulated · modes compared: {escape(labels)}</p>
</header>
<main>
<section id="comparison">
<h2>Side-by-side comparison</h2>
{_comparison(result)}
<p class="note">Highlighted: the better value in rows where one direction is better.
Wait times are over the pods that started; compare them together with “Pods never started”.</p>
</section>
{_queues(result)}
{_pools(result)}
<section id="plots-section">
<h2>Plots</h2>
<div class="plots">
{figures}
</div>
</section>
<section id="data">
<h2>Data</h2>
<p>Written beside this page:</p>
<ul>
{files}
</ul>
</section>
</main>
<footer>Generated by dralab {escape(__version__)}. This page is self-contained and opens offline.
</footer>
</body>
</html>
"""
