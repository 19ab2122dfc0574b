"""The comparison as a rich table for the terminal (what ``dralab simulate`` prints).

The same rows, values and highlights as the page's comparison (``page._comparison``):
means ± sd over the seeds, the difference column, and the autoscaling rows.
"""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from dralab.sim.results import SimulationResult, percentile

from .metrics import METRICS, format_duration
from .page import _cell, _difference
from .spread import SeedRuns, seed_runs

__all__ = ["render_kai_queues", "render_summary_table"]


def render_summary_table(result: SimulationResult, runs: SeedRuns | None = None) -> Table:
    """One row per defined metric, one column per mode (mean ± sd over ``runs``' seeds,
    default ``result`` alone) and the last mode's difference to the first; a difference
    beyond the seeds' spread in bold green with a ✱. Pure: builds the table, prints nothing.
    """
    runs = runs if runs is not None else seed_runs([result])
    n = len(runs.seeds)
    seeds = f"{n} seeds ({', '.join(map(str, runs.seeds))}), mean ± sd" if n > 1 \
        else f"seed {result.seed}"
    table = Table(title=f"{result.scenario} — {seeds}, "
                        f"{format_duration(result.duration)} simulated",
                  title_justify="left")
    table.add_column("metric")
    for _, label in runs.modes:
        table.add_column(label, justify="right")
    compare = len(runs.modes) > 1
    last = len(runs.modes) - 1
    if compare:
        table.add_column("difference", justify="right")
    group = None
    for spec in METRICS:
        if not runs.defined(spec.key):
            continue
        if spec.group != group and group is not None:
            table.add_section()
        group = spec.group
        cells = [Text(_cell(spec, runs.spread(i, spec.key), n)) for i in range(len(runs.modes))]
        if compare:
            d = runs.difference(0, last, spec.key)
            beyond = d.beyond and spec.better is not None
            cells.append(Text(_difference(spec, d) + (" ✱" if beyond else ""),
                              style="bold green" if beyond else ""))
        table.add_row(runs.label(spec), *cells)
    if any(m.wall_seconds > 0 for m in result.modes):
        table.add_section()
        table.add_row(f"wall time (seed {result.seed})",
                      *(format_duration(m.wall_seconds) for m in result.modes),
                      *([""] if compare else []))
    if any(m.cycle_seconds for m in result.modes):
        # Measured, so only here and in timings.json: the page stays the same bytes.
        table.add_row(f"cycle compute time p50 / p99 (seed {result.seed})",
                      *(_cycle_times(m.cycle_seconds) for m in result.modes),
                      *([""] if compare else []))
    return table


def _cycle_times(seconds: tuple[float, ...]) -> str:
    if not seconds:
        return "—"
    return (f"{1000 * percentile(seconds, 50):.2g} ms / "
            f"{1000 * percentile(seconds, 99):.2g} ms")


def render_kai_queues(result: SimulationResult) -> Table | None:
    """The report's KAI queues table for the terminal (``result``'s seed): per KAI Queue
    of each mode that ran KAI, GPU quota, fair share and allocation (time-weighted
    means), jobs started and evicted, job waits; None when no mode ran KAI."""
    rows = [(mode, queue, m) for mode in result.modes for queue, m in mode.kai_queues.items()]
    if not rows:
        return None
    table = Table(title=f"KAI queues — seed {result.seed}: GPUs (KAI's units, means over "
                        "time) of quota, fair share and allocation; jobs started, evicted; "
                        "job waits", title_justify="left", box=box.SIMPLE_HEAD)
    several = len({mode.mode for mode, _, _ in rows}) > 1
    if several:
        table.add_column("mode")
    table.add_column("queue", no_wrap=True)
    for title in ("quota", "fair", "alloc", "started", "evicted", "wait p50", "wait p90"):
        table.add_column(title, justify="right", no_wrap=True)
    for mode, queue, m in rows:
        waits = sorted(m.waits)
        shown = [format_duration(percentile(waits, q)) if waits else "—" for q in (50, 90)]
        # a child queue under its parent, indented
        name = f"  {queue}" if m.parent else queue
        table.add_row(*([mode.label] if several else []), name,
                      *(f"{m.mean(c):.1f}" for c in (1, 2, 3)), str(m.started),
                      str(m.evicted), *shown)
    return table
