"""The report's ``index.html``: one self-contained page (inline CSS and SVG, no script).

Pure: builds the text from a result and its rendered plots. Nothing in the page
refers to the network; the only links are relative ones to the data files
written beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from dralab._version import __version__
from dralab.sim.results import SimulationResult, percentile

from .glossary import GLOSSARY, TERMS
from .metrics import METRICS, MetricSpec, format_duration, format_mean, format_value
from .plots import Plot
from .spread import Difference, SeedRuns, Spread, seed_runs
from .verdict import Verdict, alone_decision, verdict

__all__ = ["DATA_FILES", "PAGE_CSS", "figure_html", "page_head", "page_tail", "render_html"]

DATA_FILES: tuple[tuple[str, str], ...] = (
    ("metrics.json", "everything: timelines, pods, occupancy, reasons and summaries"),
    ("summary.csv", "one row per mode with the run's summary numbers (the detailed seed)"),
    ("seeds.csv", "one row per seed and mode with every compared number"),
    ("samples.csv", "the timelines, one row per scheduler cycle and mode"),
    ("pods.csv", "one row per pod and mode: arrival, start, end, node, devices, reason"),
    ("timings.json", "how long each mode took to simulate (wall clock: differs run to run)"),
)

POOLS_FILE = ("pools.csv", "autoscaled pools: Ready nodes at every change, per pool and mode")
COMPUTE_DOMAINS_FILE = ("computedomains.txt",
                        "ComputeDomain jobs: spanning NVLink domains, waits, stranded GPUs")

PAGE_CSS = """
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
/* Names and reasons read from the left; numbers stay right-aligned. */
#failure-table td, #queue-table td:first-child, #pool-table td:first-child { text-align: left; }
.comparison td.best, .comparison td.beyond { background: var(--best); color: var(--best-fg);
                     font-weight: 600; }
.verdict { border: 2px solid var(--best-fg); border-radius: 6px; padding: 4px 16px 10px;
           margin-top: 16px; background: #f6fff8; }
.verdict h2 { border: 0; margin-top: 8px; }
.verdict .headline { font-size: 1.05rem; font-weight: 600; }
dl dt { font-weight: 600; margin-top: 8px; }
dl dd { margin-left: 16px; }
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


def _plain(spec: MetricSpec, value: float) -> str:
    return format_mean(spec.kind, value)


def _cell(spec: MetricSpec, spread: Spread, seeds: int) -> str:
    """A mode's value: the mean over seeds with ± sd (one seed: the value)."""
    text = _plain(spec, spread.mean)
    if seeds > 1 and math.isfinite(spread.sd) and math.isfinite(spread.mean):
        text += f" ± {_plain(spec, spread.sd)}"
    return text


def _difference(spec: MetricSpec, d: Difference) -> str:
    """``other - base`` per seed, mean ± sd, shares in percentage points."""
    if not math.isfinite(d.spread.mean):
        return "—"
    if d.sign == 0:
        return "0"

    def size(v: float) -> str:
        return f"{100 * abs(v):.1f} pp" if spec.kind == "share" else _plain(spec, abs(v))

    text = ("+" if d.sign > 0 else "−") + size(d.spread.mean)
    if math.isfinite(d.spread.sd):
        text += f" ± {size(d.spread.sd)}"
    return text


def _comparison(runs: SeedRuns) -> str:
    """Every defined number per mode (mean ± sd over seeds) and, with two modes or more,
    the last mode's per-seed difference to the first; a difference beyond the seeds'
    spread is highlighted with what it means."""
    modes = runs.modes
    compare = len(modes) > 1
    last = len(modes) - 1
    cols = len(modes) + 1 + int(compare)
    head = "".join(f'<th scope="col">{escape(label)}</th>' for _, label in modes)
    if compare:
        head += (f'<th scope="col">Difference<br><small>{escape(modes[last][1])} − '
                 f"{escape(modes[0][1])}</small></th>")
    rows: list[str] = []
    group = None
    n = len(runs.seeds)
    for spec in METRICS:
        if not runs.defined(spec.key):
            continue
        if spec.group != group:
            group = spec.group
            rows.append(f'<tr class="group"><th colspan="{cols}" scope="rowgroup">'
                        f"{escape(group)}</th></tr>")
        d = runs.difference(0, last, spec.key) if compare else None
        highlight = d is not None and d.beyond and spec.better is not None
        cells: list[str] = []
        for i in range(len(modes)):
            text = escape(_cell(spec, runs.spread(i, spec.key), n))
            better = highlight and d is not None and i in (0, last) and (
                (i == last) == ((d.sign > 0) == (spec.better == "higher")))
            cells.append(f'<td class="best" title="{escape(spec.why)}">{text}</td>' if better
                         else f"<td>{text}</td>")
        if d is not None:
            mark = (f'<td class="beyond" title="beyond the seeds\' spread: '
                    f'{escape(spec.why)}">{escape(_difference(spec, d))} ✱</td>'
                    if highlight else f"<td>{escape(_difference(spec, d))}</td>")
            cells.append(mark)
        rows.append(f'<tr data-metric="{spec.key}"><th scope="row" '
                    f'title="{escape(GLOSSARY[spec.key])}">{escape(runs.label(spec))}</th>'
                    f"{''.join(cells)}</tr>")
    body = "\n".join(rows)
    return (f'<table class="comparison" id="comparison-table">\n<thead><tr>'
            f'<th scope="col">Metric</th>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>')


def _verdict(v: Verdict) -> str:
    findings = "".join(f"<li>{escape(f)}</li>" for f in v.findings)
    listed = f'<ul class="findings">{findings}</ul>' if findings else ""
    within = f'<p class="within">{escape(v.within)}</p>' if v.within else ""
    return (f'<section id="verdict" class="verdict">\n<h2>Verdict</h2>\n'
            f'<p class="headline">{escape(v.headline)}</p>\n{listed}\n{within}\n'
            f'<p class="decision"><strong>Decide:</strong> {escape(v.decision)}</p>\n'
            f'<p class="note">{escape(v.note)}</p>\n</section>')


def _pct(values: Sequence[float]) -> list[str]:
    return [format_value("duration", percentile(values, q)) if values else "—"
            for q in (50, 90, 99)]


def _latency(result: SimulationResult) -> str:
    """Per mode: scheduling latency of pods and of claims (simulated time), cycles."""
    rows: list[str] = []
    for mode in result.modes:
        pods = _pct(mode.waits())
        # Claims are created with their pod (PreEnqueue) and allocated when it binds.
        claims = _pct([w for p in mode.pods if not p.preempted and p.devices
                       and (w := p.wait) is not None]) \
            if mode.mode != "device-plugin" else ["no claims"] * 3
        started = sum(1 for p in mode.pods if not p.preempted and p.start is not None)
        per = f"{mode.scheduling_attempts / started:,.2f}" if started else "—"
        cells = "".join(f"<td>{escape(c)}</td>" for c in (*pods, *claims))
        rows.append(f'<tr><th scope="row">{escape(mode.label)}</th>{cells}'
                    f"<td>{mode.scheduling_attempts:,}</td><td>{per}</td></tr>")
    head = "".join(f'<th scope="col">{h}</th>' for h in (
        "Mode", "Pod p50", "Pod p90", "Pod p99", "Claim p50", "Claim p90", "Claim p99",
        "Cycles", "Cycles per started pod"))
    return (f'<section id="latency">\n<h2>Scheduling latency</h2>\n'
            f'<table class="comparison" id="latency-table">\n<thead><tr>{head}</tr></thead>'
            f'\n<tbody>\n{"".join(rows)}\n</tbody></table>\n'
            f'<p class="note">{escape(_TERMS["Scheduling latency"])} Pod: created → bound; '
            f"claim: created → allocated (DRA only; the device plugin has none).</p>\n"
            f"</section>")


def _measured(result: SimulationResult) -> str:
    """Per mode, what the run cost here: wall time and each scheduling cycle's compute
    time (kube-scheduler's scheduler_scheduling_attempt_duration_seconds). Only on
    request (``timings=True``): it differs run to run, and the page is otherwise the
    same bytes for the same scenario and seeds."""
    rows: list[str] = []
    for mode in result.modes:
        cycles = mode.cycle_seconds
        pct = [f"{percentile(cycles, q) * 1000:.2f} ms" if cycles else "—"
               for q in (50, 90, 99)]
        cells = "".join(f"<td>{escape(c)}</td>" for c in (
            f"{mode.wall_seconds:.2f} s", f"{len(cycles):,}", *pct))
        rows.append(f'<tr><th scope="row">{escape(mode.label)}</th>{cells}</tr>')
    head = "".join(f'<th scope="col">{h}</th>' for h in (
        "Mode", "Wall time", "Cycles timed", "Cycle p50", "Cycle p90", "Cycle p99"))
    return (f'<section id="measured">\n<h2>Measured on this machine</h2>\n'
            f'<table class="comparison" id="measured-table">\n<thead><tr>{head}</tr></thead>'
            f'\n<tbody>\n{"".join(rows)}\n</tbody></table>\n'
            f'<p class="note">Seed {result.seed}, wall clock: the compute time of each '
            f"scheduling cycle (claim allocation included) and of each mode's whole run. "
            f"These numbers differ from run to run and machine to machine (asked for with "
            f"--timings-on-page); timings.json holds them too.</p>\n</section>")


def _failures(result: SimulationResult) -> str:
    """Pods that never started, per mode, job kind and last reason."""
    rows: list[str] = []
    for mode in result.modes:
        groups: dict[tuple[str, str], list[str]] = {}
        for p in mode.pods:
            if p.preempted or p.start is not None:
                continue
            reason = p.unschedulable_reason or "not tried before the end"
            groups.setdefault((p.kind, reason), []).append(p.key)
        for (kind, reason), keys in sorted(groups.items(), key=lambda x: (-len(x[1]), x[0])):
            shown = ", ".join(keys[:3]) + (f" and {len(keys) - 3} more" if len(keys) > 3
                                           else "")
            rows.append(f"<tr><td>{escape(mode.label)}</td><td>{escape(kind)}</td>"
                        f"<td>{escape(reason)}</td><td>{len(keys)}</td>"
                        f"<td>{escape(shown)}</td></tr>")
    if not rows:
        body = ('<p id="failure-none">Every pod that arrived started, in every mode: no '
                "failure to report.</p>")
    else:
        body = ('<table class="comparison" id="failure-table">\n<thead><tr>'
                '<th scope="col">Mode</th><th scope="col">Job kind</th>'
                '<th scope="col">Last reason</th><th scope="col">Pods</th>'
                f'<th scope="col">Which</th></tr></thead>\n<tbody>\n{"".join(rows)}\n'
                "</tbody></table>")
    return (f'<section id="failures">\n<h2>Failure modes</h2>\n{body}\n'
            f'<p class="note">{escape(_TERMS["Failure modes"])} All reasons over time, '
            f"including pods that started later, are in the “Unschedulable reasons” plot.</p>"
            f"\n</section>")


def _queues(result: SimulationResult) -> str:
    """Per ClusterQueue and mode: admissions, Kueue preemptions and admission waits (""
    when no mode ran with queueing)."""
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
            f'<th scope="col">Kueue preemptions</th><th scope="col">Admission wait p50</th>'
            f'<th scope="col">Admission wait p90</th></tr></thead>\n<tbody>\n{body}\n'
            f"</tbody></table>\n"
            f'<p class="note">{escape(GLOSSARY["kueue_preemptions"])} '
            f"{escape(GLOSSARY['admission_wait_p50'])}</p>\n</section>")


def _kai_queues(result: SimulationResult) -> str:
    """Per KAI Queue and mode (the kai mode): GPU quota, fair share and allocation
    (time-weighted means), jobs started and evicted, and job waits ("" when no mode
    ran KAI)."""
    rows: list[str] = []
    for mode in result.modes:
        for queue, m in mode.kai_queues.items():
            waits = sorted(m.waits)
            p50 = percentile(waits, 50) if waits else float("nan")
            p90 = percentile(waits, 90) if waits else float("nan")
            gpus = "".join(f"<td>{m.mean(column):.2f}</td>" for column in (1, 2, 3))
            rows.append(f"<tr><td>{escape(mode.label)}</td><th scope=\"row\">{escape(queue)}</th>"
                        f"<td>{escape(m.parent or '')}</td>{gpus}"
                        f"<td>{m.started}</td><td>{m.evicted}</td>"
                        f"<td>{escape(format_value('duration', p50))}</td>"
                        f"<td>{escape(format_value('duration', p90))}</td></tr>")
    if not rows:
        return ""
    body = "\n".join(rows)
    return (f'<section id="kai-queues">\n<h2>KAI queues</h2>\n<table class="comparison" '
            f'id="kai-queue-table">\n<thead><tr><th scope="col">Mode</th>'
            f'<th scope="col">Queue</th><th scope="col">Parent</th>'
            f'<th scope="col">GPU quota (deserved)</th><th scope="col">GPU fair share</th>'
            f'<th scope="col">GPUs allocated</th><th scope="col">Jobs started</th>'
            f'<th scope="col">Jobs evicted</th><th scope="col">Job wait p50</th>'
            f'<th scope="col">Job wait p90</th></tr></thead>\n<tbody>\n{body}\n'
            f"</tbody></table>\n"
            f'<p class="note">{escape(_TERMS["KAI queues"])}</p>\n</section>')


def _pools(result: SimulationResult) -> str:
    """Autoscaling: the numbers the terminal prints, per mode, then per autoscaled pool
    and mode: nodes (min, max, peak), node-hours, scale-ups and -downs, cost ("" when
    no pool was autoscaled)."""
    rows: list[str] = []
    summary: list[str] = []
    for mode in result.modes:
        if mode.autoscaling is None:
            continue
        s = mode.autoscaling.summary()
        summary.append(
            f'<tr><th scope="row">{escape(mode.label)}</th>'
            f"<td>{escape(mode.autoscaling.model)}</td>"
            f"<td>{s['cost']:,.2f}</td><td>{s['node_hours']:,.1f}</td>"
            f"<td>{s['peak_nodes']}</td><td>{s['scale_ups']}</td><td>{s['scale_downs']}</td>"
            f"<td>{escape(format_value('duration', float(s['node_wait_p50'])))}</td>"
            f"<td>{escape(format_value('duration', float(s['node_wait_p90'])))}</td></tr>")
        for pool, m in sorted(mode.autoscaling.pools.items()):
            rows.append(f"<tr><td>{escape(mode.label)}</td><th scope=\"row\">{escape(pool)}</th>"
                        f"<td>{m.min}</td><td>{m.max}</td><td>{m.peak}</td>"
                        f"<td>{m.node_hours:,.1f}</td><td>{m.scale_ups}</td>"
                        f"<td>{m.scale_downs}</td><td>{m.price_per_hour:,.2f}</td>"
                        f"<td>{m.cost:,.2f}</td></tr>")
    if not rows:
        return ""
    body = "\n".join(rows)
    unit = escape(next(m.autoscaling.cost_unit for m in result.modes
                       if m.autoscaling is not None))
    return (f'<section id="autoscaling">\n<h2>Autoscaling</h2>\n'
            f'<table class="comparison" id="autoscaling-table">\n<thead><tr>'
            f'<th scope="col">Mode</th><th scope="col">Autoscaler</th>'
            f'<th scope="col">Total cost ({unit})</th><th scope="col">Node-hours</th>'
            f'<th scope="col">Peak nodes</th><th scope="col">Nodes added</th>'
            f'<th scope="col">Nodes removed</th><th scope="col">Wait for a new node p50</th>'
            f'<th scope="col">Wait for a new node p90</th></tr></thead>\n<tbody>\n'
            f'{"".join(summary)}\n</tbody></table>\n'
            f'<h3>Per pool</h3>\n<table class="comparison" '
            f'id="pool-table">\n<thead><tr><th scope="col">Mode</th>'
            f'<th scope="col">Pool</th><th scope="col">Min</th><th scope="col">Max</th>'
            f'<th scope="col">Peak nodes</th><th scope="col">Node-hours</th>'
            f'<th scope="col">Nodes added</th><th scope="col">Nodes removed</th>'
            f'<th scope="col">Price per node-hour ({unit})</th>'
            f'<th scope="col">Cost ({unit})</th></tr></thead>\n'
            f"<tbody>\n{body}\n</tbody></table>\n"
            f'<p class="note">{escape(GLOSSARY["autoscaled_cost"])} '
            f"{escape(GLOSSARY['node_wait_p50'])}</p>\n</section>")


def _glossary() -> str:
    items = [(spec.label, GLOSSARY[spec.key]) for spec in METRICS
             if spec.key not in _SHARED] + list(TERMS)
    body = "\n".join(f"<dt>{escape(term)}</dt><dd>{escape(text)}</dd>" for term, text in items)
    return f'<section id="glossary">\n<h2>Glossary</h2>\n<dl>\n{body}\n</dl>\n</section>'


# Percentiles after the first share its entry in the glossary.
_SHARED = frozenset({"wait_p90", "wait_p99", "wait_mean", "job_wait_p90", "admission_wait_p90",
                     "node_wait_p90"})
_TERMS = dict(TERMS)


def page_head(title: str) -> str:
    """A report page's opening up to ``</head>``: doctype, charset, viewport, generator,
    ``title`` and the shared stylesheet (every dralab page looks the same)."""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="dralab {escape(__version__)}">
<title>{escape(title)}</title>
<style>{PAGE_CSS}</style>
</head>
"""


def page_tail(files: str) -> str:
    """A report page's end: the Data section listing ``files`` (``<li>`` items, the files
    written beside the page), then the footer."""
    return f"""<section id="data">
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


def figure_html(plot: Plot) -> str:
    cls = ' class="wide"' if plot.wide else ""
    return (f'<figure id="{plot.id}"{cls} aria-label="{escape(plot.title)}">\n'
            f"<h3>{escape(plot.title)}</h3>\n{plot.svg}\n"
            f"<figcaption>{escape(plot.caption)}</figcaption>\n</figure>")


def _compute_domains(text: str | None) -> str:
    """The ComputeDomain jobs' section (issue 36), the text ``dralab simulate`` prints and
    writes to computedomains.txt; empty without ComputeDomain job kinds."""
    if text is None:
        return ""
    return (f'<section id="computedomains">\n<h2>ComputeDomain jobs</h2>\n'
            f'<pre class="computedomains">{escape(text.rstrip())}</pre>\n'
            f'<p class="note">The same text is in <a href="computedomains.txt">'
            f"computedomains.txt</a>; each job's pods and spanned NVLink domains are in "
            f"metrics.json (compute_domains).</p>\n</section>")


def render_html(result: SimulationResult, plots: Sequence[Plot],
                runs: SeedRuns | None = None, timings: bool = False,
                compute_domains: str | None = None) -> str:
    """The whole page for ``result`` with ``plots`` in order. ``runs``: the numbers of
    every seed run (``result`` is the first one's; default: ``result`` alone); the
    verdict and the comparison are over them, the rest shows ``result``.
    Deterministic unless ``timings`` (the measured cycle and run times, opt-in);
    no script, no external reference; every plot is a ``<figure id=...>`` holding an
    inline ``<svg>``.
    """
    runs = runs if runs is not None else seed_runs([result])
    labels = ", ".join(m.label for m in result.modes) or "none"
    title = f"dralab simulation — {result.scenario}"
    figures = "\n".join(figure_html(p) for p in plots)
    listed = DATA_FILES + ((POOLS_FILE,) if any(m.autoscaling is not None
                                                for m in result.modes) else ())
    if compute_domains is not None:
        listed += (COMPUTE_DOMAINS_FILE,)
    files = "\n".join(f'<li><a href="{name}">{name}</a> — {escape(what)}</li>'
                      for name, what in listed)
    n = len(runs.seeds)
    seeds = (f"seeds {', '.join(map(str, runs.seeds))}" if n > 1 else f"seed {result.seed}")
    over = (f"Means ± sd over {n} seeds; the last column is the per-seed difference."
            if n > 1 else "One seed: the values of that run; no difference is highlighted.")
    return f"""{page_head(title)}<body>
<header>
<h1>{escape(title)}</h1>
<p class="meta">Scenario <strong>{escape(result.scenario)}</strong> · {escape(seeds)} ·
{escape(format_duration(result.duration))} simulated · modes compared: {escape(labels)}</p>
</header>
<main>
{_verdict(verdict(runs, alone=alone_decision(result)))}
<section id="comparison">
<h2>Side-by-side comparison</h2>
{_comparison(runs)}
<p class="note">{escape(over)} Highlighted (✱): a difference beyond the seeds' spread, on
the better mode's value; hover for what it means. Scheduling waits are over the pods that
started (compare them with “Pods never started”) and leave out Kueue's admission wait, shown
in its own rows. Every number is defined in the <a href="#glossary">glossary</a>.</p>
</section>
<p class="note" id="detail-seed">The sections below show one run: seed {result.seed}.</p>
{_latency(result)}
{_measured(result) if timings else ""}
{_failures(result)}
{_queues(result)}
{_kai_queues(result)}
{_compute_domains(compute_domains)}
{_pools(result)}
<section id="plots-section">
<h2>Plots</h2>
<div class="plots">
{figures}
</div>
</section>
{_glossary()}
{page_tail(files)}"""
