"""The comparison as a rich table for the terminal (what ``dralab simulate`` prints)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from dralab.sim.results import SimulationResult

from .metrics import METRICS, best_indices, format_duration, format_value

__all__ = ["render_summary_table"]


def render_summary_table(result: SimulationResult) -> Table:
    """One row per summary metric, one column per mode; the better value in bold green.

    Pure: builds the table, prints nothing.
    """
    table = Table(title=f"{result.scenario} — seed {result.seed}, "
                        f"{format_duration(result.duration)} simulated",
                  title_justify="left")
    table.add_column("metric")
    for mode in result.modes:
        table.add_column(mode.label, justify="right")
    summaries = [m.summary() for m in result.modes]
    group = None
    for spec in METRICS:
        if spec.group != group and group is not None:
            table.add_section()
        group = spec.group
        values = [s[spec.key] for s in summaries]
        best = best_indices(spec, values)
        cells = [Text(format_value(spec.kind, v), style="bold green" if i in best else "")
                 for i, v in enumerate(values)]
        table.add_row(spec.label, *cells)
    if any(m.autoscaling is not None for m in result.modes):
        _autoscaling_rows(table, result)
    if any(m.wall_seconds > 0 for m in result.modes):
        table.add_section()
        table.add_row("wall time", *(format_duration(m.wall_seconds) for m in result.modes))
    return table


def _autoscaling_rows(table: Table, result: SimulationResult) -> None:
    """Autoscaled pools: cost, peak nodes, nodes added / removed, wait for a new node."""
    table.add_section()
    rows: list[tuple[str, list[str]]] = [("autoscaled cost", []), ("autoscaled peak nodes", []),
                                         ("nodes added / removed", []),
                                         ("wait for a new node p50", [])]
    for mode in result.modes:
        if mode.autoscaling is None:
            for _, cells in rows:
                cells.append("-")
            continue
        s = mode.autoscaling.summary()
        rows[0][1].append(f"{s['cost']:,.2f}")
        rows[1][1].append(str(s["peak_nodes"]))
        rows[2][1].append(f"{s['scale_ups']} / {s['scale_downs']}")
        rows[3][1].append(format_duration(float(s["node_wait_p50"])))
    for label, cells in rows:
        table.add_row(label, *cells)
