"""The report's plots, each drawn from a ``SimulationResult`` into an inline SVG.

Pure: returns strings, writes nothing. One colour per mode, in comparison
order, across every plot. matplotlib is imported lazily (see ``svg``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dralab.sim.results import ModeResult, SimulationResult, percentile

from .claims import claim_status
from .metrics import format_duration
from .svg import figure_to_svg, plot_style

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["AUTOSCALING_PLOT_IDS", "KAI_PLOT_IDS", "PLOT_IDS", "QUEUE_PLOT_IDS", "Plot",
           "colour", "render_plots"]

# Colour-blind-safe (Okabe-Ito), distinct from the heat map's viridis.
_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
_WIDE = 9.0     # inches; figures are scaled by CSS, this only fixes proportions
_NARROW = 5.4
_MAX_NODE_LABELS = 40


@dataclass(frozen=True, slots=True)
class Plot:
    """One figure of the page: ``id`` is the ``<figure>`` id, ``wide`` spans the page."""

    id: str
    title: str
    caption: str
    svg: str
    wide: bool


@dataclass(frozen=True, slots=True)
class _TimeUnit:
    name: str
    seconds: float


def _time_unit(span: float) -> _TimeUnit:
    # Axis ticks read best in the largest unit that still gives a few ticks.
    if span >= 3 * 3600:
        return _TimeUnit("h", 3600.0)
    if span >= 3 * 60:
        return _TimeUnit("min", 60.0)
    return _TimeUnit("s", 1.0)


def colour(i: int) -> str:
    """The ``i``-th series' colour, the same on every plot of every page."""
    return _COLOURS[i % len(_COLOURS)]


def _new_figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _empty(ax: Axes, message: str) -> None:
    ax.text(0.5, 0.5, message, transform=ax.transAxes, ha="center", va="center",
            fontsize=10, color="#555555")
    ax.set_xticks([])
    ax.set_yticks([])


def _step_lines(ax: Axes, result: SimulationResult, unit: _TimeUnit,
                value: Callable[[ModeResult], list[float]], style: str = "-",
                suffix: str = "") -> None:
    for i, mode in enumerate(result.modes):
        ts = [s.t / unit.seconds for s in mode.samples]
        ax.plot(ts, value(mode), drawstyle="steps-post", color=colour(i), lw=1.4,
                ls=style, label=mode.label + suffix)
    ax.set_xlim(0, max(result.duration, max((m.span for m in result.modes), default=0.0))
                / unit.seconds or 1.0)
    ax.set_xlabel(f"simulated time ({unit.name})")


def _legend(ax: Axes, columns: int = 2) -> None:
    """The legend below the axes, outside the data, so no curve hides under it."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.22),
                  ncols=columns, borderaxespad=0.0)


def _allocation(result: SimulationResult) -> Figure:
    unit = _time_unit(result.duration)
    fig = _new_figure(_WIDE, 4.6)
    top, bottom = fig.subplots(2, 1, sharex=True)
    _step_lines(top, result, unit, lambda m: [100 * s.gpu_capacity_allocated for s in m.samples],
                suffix=", allocated")
    # Drawn on top, dashed, each dash with a white halo: where requested equals allocated
    # (DRA) the dashes still show over the solid line instead of vanishing under it.
    from matplotlib import patheffects

    halo = [patheffects.withStroke(linewidth=4.0, foreground="white")]
    for i, mode in enumerate(result.modes):
        top.plot([s.t / unit.seconds for s in mode.samples],
                 [100 * s.gpu_capacity_requested for s in mode.samples],
                 drawstyle="steps-post", color=colour(i), lw=1.8, ls=(0, (3, 3)),
                 zorder=3, path_effects=halo, label=mode.label + ", requested")
    top.set_ylim(0, 102)
    top.set_ylabel("GPU capacity (%)")
    top.set_xlabel("")
    handles, labels = top.get_legend_handles_labels()
    top.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0),
               borderaxespad=0.0)
    _step_lines(bottom, result, unit, lambda m: [float(s.gpus_busy) for s in m.samples])
    total = max((s.gpus_total for m in result.modes for s in m.samples), default=0)
    if total:
        bottom.axhline(total, color="#888888", lw=0.9, ls="--")
        bottom.annotate(f"{total} GPUs in the fleet", (0.005, total), xycoords=("axes fraction",
                        "data"), xytext=(0, -3), textcoords="offset points", va="top",
                        fontsize=8, color="#555555")
        bottom.set_ylim(0, total * 1.05)
    from matplotlib.ticker import MaxNLocator

    bottom.yaxis.set_major_locator(MaxNLocator(integer=True))
    bottom.set_ylabel("GPUs busy")
    handles, labels = bottom.get_legend_handles_labels()
    bottom.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0.0)
    return fig


def _pending(result: SimulationResult) -> Figure:
    unit = _time_unit(result.duration)
    fig = _new_figure(_NARROW, 3.2)
    ax = fig.subplots()
    _step_lines(ax, result, unit, lambda m: [float(s.pending_pods) for s in m.samples])
    from matplotlib.ticker import MaxNLocator

    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("pending pods")
    _legend(ax)
    return fig


def _fragmentation(result: SimulationResult) -> Figure:
    unit = _time_unit(result.duration)
    fig = _new_figure(_NARROW, 3.2)
    ax = fig.subplots()
    _step_lines(ax, result, unit, lambda m: [100 * s.fragmentation for s in m.samples])
    ax.set_ylim(0, 102)
    ax.set_ylabel("fragmentation (% of GPU capacity)")
    _legend(ax)
    return fig


def _wait(result: SimulationResult) -> Figure:
    fig = _new_figure(_NARROW, 3.2)
    ax = fig.subplots()
    all_waits = [w for m in result.modes for w in m.waits()]
    if not all_waits:
        _empty(ax, "No pod started, so there are no wait times")
        return fig
    unit = _time_unit(max(all_waits))
    right = max(all_waits) / unit.seconds or 1.0
    for i, mode in enumerate(result.modes):
        waits = sorted(mode.waits())
        if not waits:
            ax.plot([], [], color=colour(i), label=f"{mode.label} (no pod started)")
            continue
        n = len(waits)
        xs = [waits[0] / unit.seconds] + [w / unit.seconds for w in waits] + [right]
        ys = [0.0] + [100.0 * (k + 1) / n for k in range(n)] + [100.0]
        p50 = format_duration(percentile(waits, 50))
        p90 = format_duration(percentile(waits, 90))
        ax.plot(xs, ys, drawstyle="steps-post", color=colour(i), lw=1.4,
                label=f"{mode.label} (p50 {p50}, p90 {p90})")
    ax.set_xlim(0, right * 1.02)
    ax.set_ylim(0, 102)
    ax.set_xlabel(f"scheduling wait, pod created → started ({unit.name})")
    ax.set_ylabel("started pods waiting ≤ x (%)")
    _legend(ax, columns=1)
    return fig


def _claims(result: SimulationResult) -> Figure:
    """Per mode a panel: pods by the state of their GPU claims, stacked."""
    unit = _time_unit(result.duration)
    modes = result.modes
    fig = _new_figure(_WIDE, 3.6)
    if not modes:
        _empty(fig.subplots(), "No mode ran")
        return fig
    axes = fig.subplots(1, len(modes), sharey=True, squeeze=False)[0]
    greys = ("#D55E00", "#CC79A7", "#E69F00", "#F0E442", "#999999")
    for ax, mode in zip(axes, modes, strict=True):
        status = claim_status(mode)
        ts = [t / unit.seconds for t in status.times]
        series = [("allocated (running)", "#009E73", status.allocated),
                  ("pending (not tried yet)", "#56B4E9", status.pending),
                  *((f"failed: {textwrap.shorten(r, 48)}", greys[k % len(greys)], v)
                    for k, (r, v) in enumerate(status.failed))]
        ax.stackplot(ts, *[list(v) for _, _, v in series], labels=[n for n, _, _ in series],
                     colors=[c for _, c, _ in series], step="post", alpha=0.9)
        ax.set_title(mode.label)
        ax.set_xlim(0, result.duration / unit.seconds or 1.0)
        ax.set_xlabel(f"simulated time ({unit.name})")
        ax.set_ylim(bottom=0)
        _legend(ax, columns=1)
    axes[0].set_ylabel("pods")
    return fig


def _node_ticks(ax: Axes, nodes: Sequence[str]) -> None:
    step = max(1, -(-len(nodes) // _MAX_NODE_LABELS))
    rows = range(0, len(nodes), step)
    ax.set_yticks(list(rows), [nodes[r] for r in rows], fontsize=7.5 if len(nodes) > 16 else 8.5)


def _occupancy(result: SimulationResult) -> Figure:
    import numpy as np

    unit = _time_unit(result.duration)
    n_nodes = max((len(m.occupancy.nodes) for m in result.modes), default=0)
    fig = _new_figure(_WIDE, min(max(2.2 + 0.2 * n_nodes, 3.0), 12.0))
    modes = result.modes
    if not any(m.occupancy.nodes and m.occupancy.times for m in modes):
        _empty(fig.subplots(), "No occupancy data")
        return fig
    same_nodes = len({m.occupancy.nodes for m in modes}) == 1
    axes = fig.subplots(1, len(modes), sharey=same_nodes, squeeze=False)[0]
    image = None
    for i, (ax, mode) in enumerate(zip(axes, modes, strict=True)):
        occ = mode.occupancy
        ax.grid(False)
        ax.set_title(mode.label)
        if not (occ.nodes and occ.times):
            _empty(ax, "No occupancy data")
            continue
        # Bins are of equal width; a single bin runs to the end of the run.
        width = (occ.times[1] - occ.times[0] if len(occ.times) > 1
                 else max(result.duration - occ.times[0], 1.0))
        data = 100.0 * np.array(occ.matrix, dtype=float)
        image = ax.imshow(data, aspect="auto", interpolation="nearest", cmap="viridis",
                          vmin=0.0, vmax=100.0, origin="upper",
                          extent=(occ.times[0] / unit.seconds,
                                  (occ.times[-1] + width) / unit.seconds,
                                  len(occ.nodes) - 0.5, -0.5))
        _node_ticks(ax, occ.nodes)
        if same_nodes and i > 0:
            ax.tick_params(labelleft=False)
        ax.set_xlabel(f"simulated time ({unit.name})")
    if image is not None:
        fig.colorbar(image, ax=list(axes), label="GPU capacity allocated (%)", shrink=0.9,
                     pad=0.01)
    return fig


def _reasons(result: SimulationResult) -> Figure:
    totals: dict[str, int] = {}
    for mode in result.modes:
        for reason, count in mode.unschedulable_reasons.items():
            totals[reason] = totals.get(reason, 0) + count
    # Most frequent first, then by name, so the order is stable.
    reasons = sorted(totals, key=lambda r: (-totals[r], r))
    n_modes = max(len(result.modes), 1)
    fig = _new_figure(_NARROW, min(max(1.4 + 0.28 * len(reasons) * n_modes, 2.6), 12.0))
    ax = fig.subplots()
    if not reasons:
        _empty(ax, "No pod was ever unschedulable")
        return fig
    bar = 0.8 / n_modes
    for i, mode in enumerate(result.modes):
        ys = [r + (i - (n_modes - 1) / 2) * bar for r in range(len(reasons))]
        counts = [mode.unschedulable_reasons.get(reason, 0) for reason in reasons]
        bars = ax.barh(ys, counts, height=bar * 0.92, color=colour(i), label=mode.label)
        ax.bar_label(bars, padding=2, fontsize=7.5)
    ax.set_yticks(range(len(reasons)), [textwrap.fill(r, 34) for r in reasons])
    ax.invert_yaxis()
    ax.set_xlabel("unschedulable verdicts")
    ax.grid(axis="y", visible=False)
    ax.margins(x=0.12)
    _legend(ax, columns=1)
    return fig


@dataclass(frozen=True, slots=True)
class _PlotSpec:
    id: str
    title: str
    caption: str
    draw: Callable[[SimulationResult], Figure]
    wide: bool


_PLOTS: tuple[_PlotSpec, ...] = (
    _PlotSpec("plot-allocation", "GPU allocation over time",
              "Share of the fleet's GPU capacity allocated (solid; MIG slices and shares count "
              "by their fraction) and asked for by the running pods (dashed, drawn on top: "
              "under DRA it lies on the allocation; the device plugin hands out whole GPUs, "
              "so its gap is capacity allocated but never asked for), "
              "and physical GPUs holding at least one allocation.",
              _allocation, True),
    _PlotSpec("plot-claims", "Claim allocation status over time",
              "Pods by the state of their GPU claims (DRA: ResourceClaims; device plugin: "
              "extended resources): allocated to a running pod, pending, or failed after a "
              "scheduling cycle said no, by the last reason (counted from the pod's "
              "arrival).", _claims, True),
    _PlotSpec("plot-pending", "Pending pods over time",
              "Pods that have arrived and wait to be scheduled.", _pending, False),
    _PlotSpec("plot-fragmentation", "Fragmentation over time",
              "Idle GPU capacity that the workload's common request shapes cannot use.",
              _fragmentation, False),
    _PlotSpec("plot-wait", "Scheduling wait distribution",
              "Cumulative distribution of the scheduling wait (pod created → started) over "
              "the pods that started, each pod once, as in the tables (pods that never "
              "started are counted there).", _wait, False),
    _PlotSpec("plot-reasons", "Unschedulable reasons by kind",
              "How often the scheduler found a pod unschedulable, by reason kind.",
              _reasons, False),
    _PlotSpec("plot-occupancy", "Per-node occupancy",
              "Mean share of each node's GPU capacity allocated, per time bin; one panel "
              "per mode.", _occupancy, True),
)

def _queue_lines(result: SimulationResult, ylabel: str,
                 value: Callable[[tuple[float, int, int]], float]) -> Figure:
    """One line per (mode, ClusterQueue) over the admission samples."""
    unit = _time_unit(result.duration)
    fig = _new_figure(_NARROW, 3.2)
    ax = fig.subplots()
    styles = ("-", "--", ":", "-.")
    for i, mode in enumerate(result.modes):
        for j, (queue, metrics) in enumerate(sorted(mode.queues.items())):
            ts = [t / unit.seconds for t, _, _ in metrics.samples]
            ax.plot(ts, [value(x) for x in metrics.samples], drawstyle="steps-post",
                    color=colour(i), ls=styles[j % len(styles)], lw=1.4,
                    label=f"{mode.label}: {queue}")
    ax.set_xlim(0, result.duration / unit.seconds or 1.0)
    ax.set_xlabel(f"simulated time ({unit.name})")
    from matplotlib.ticker import MaxNLocator

    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(ylabel)
    _legend(ax)
    return fig


def _queue_pending(result: SimulationResult) -> Figure:
    return _queue_lines(result, "pending workloads", lambda x: float(x[1]))


def _queue_admitted(result: SimulationResult) -> Figure:
    return _queue_lines(result, "admitted workloads", lambda x: float(x[2]))


# Shown only when a mode ran with queueing on.
_QUEUE_PLOTS: tuple[_PlotSpec, ...] = (
    _PlotSpec("plot-queue-pending", "Pending workloads per ClusterQueue",
              "Workloads waiting for admission, per ClusterQueue (line style) and mode "
              "(colour).", _queue_pending, False),
    _PlotSpec("plot-queue-admitted", "Admitted workloads per ClusterQueue",
              "Workloads holding quota, per ClusterQueue and mode: each queue's share of "
              "the fleet over time.", _queue_admitted, False),
)

def _kai_shares(result: SimulationResult) -> Figure:
    """Per leaf KAI queue (colour) and mode: GPUs allocated (solid) against the fair
    share KAI's proportion plugin gave it (dashed), after each session."""
    unit = _time_unit(result.duration)
    fig = _new_figure(_NARROW, 3.2)
    ax = fig.subplots()
    k = 0
    several = sum(1 for m in result.modes if m.kai_queues) > 1
    for mode in result.modes:
        parents = {m.parent for m in mode.kai_queues.values() if m.parent}
        for queue, metrics in sorted(mode.kai_queues.items()):
            if queue in parents or not metrics.samples:
                continue
            ts = [s[0] / unit.seconds for s in metrics.samples]
            shade = colour(k)
            k += 1
            label = f"{mode.label}: {queue}" if several else queue
            ax.plot(ts, [s[3] for s in metrics.samples], drawstyle="steps-post",
                    color=shade, ls="-", lw=1.4,
                    label=f"{label} allocated")
            ax.plot(ts, [s[2] for s in metrics.samples], drawstyle="steps-post",
                    color=shade, ls="--", lw=1.0, label=f"{label} fair share")
    ax.set_xlim(0, result.duration / unit.seconds or 1.0)
    ax.set_xlabel(f"simulated time ({unit.name})")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("GPUs (KAI's units)")
    _legend(ax)
    return fig


# Shown only when a mode ran KAI.
_KAI_PLOTS: tuple[_PlotSpec, ...] = (
    _PlotSpec("plot-kai-shares", "KAI fair share and allocation per queue",
              "GPUs each leaf KAI queue held (solid) against its fair share (dashed) as "
              "KAI's proportion plugin divided the fleet after each session; a queue below "
              "its fair share with jobs waiting is what reclaim acts on. A MIG instance "
              "counts its compute slices, as in KAI's queues.", _kai_shares, False),
)


def _pool_nodes(result: SimulationResult) -> Figure:
    """Ready nodes per autoscaled pool (line style) and mode (colour), as steps."""
    unit = _time_unit(result.duration)
    fig = _new_figure(_NARROW, 3.2)
    ax = fig.subplots()
    styles = ("-", "--", ":", "-.")
    for i, mode in enumerate(result.modes):
        if mode.autoscaling is None:
            continue
        for j, (pool, metrics) in enumerate(sorted(mode.autoscaling.pools.items())):
            points = list(metrics.nodes)
            # Steps hold their value until the end of the run.
            ts = [t / unit.seconds for t, _ in points] + [result.duration / unit.seconds]
            ns = [n for _, n in points] + [points[-1][1] if points else 0]
            ax.plot(ts, ns, drawstyle="steps-post", color=colour(i),
                    ls=styles[j % len(styles)], lw=1.4, label=f"{mode.label}: {pool}")
    ax.set_xlim(0, result.duration / unit.seconds or 1.0)
    ax.set_xlabel(f"simulated time ({unit.name})")
    from matplotlib.ticker import MaxNLocator

    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("Ready nodes")
    _legend(ax)
    return fig


def _cost(result: SimulationResult) -> Figure:
    """Cumulative cost (solid, left axis) and cost rate per hour (dotted, right axis)."""
    unit = _time_unit(result.duration)
    fig = _new_figure(_NARROW, 3.2)
    ax = fig.subplots()
    rate_ax = ax.twinx()
    for i, mode in enumerate(result.modes):
        if mode.autoscaling is None:
            continue
        samples = mode.autoscaling.samples
        ts = [t / unit.seconds for t, _, _ in samples]
        ax.plot(ts, [c for _, c, _ in samples], color=colour(i), lw=1.6,
                label=f"{mode.label}: cumulative")
        rate_ax.plot(ts, [r for _, _, r in samples], drawstyle="steps-post",
                     color=colour(i), ls=":", lw=1.2, label=f"{mode.label}: per hour")
    ax.set_xlim(0, result.duration / unit.seconds or 1.0)
    ax.set_xlabel(f"simulated time ({unit.name})")
    ax.set_ylim(bottom=0)
    rate_ax.set_ylim(bottom=0)
    ax.set_ylabel("cumulative cost")
    rate_ax.set_ylabel("cost per hour")
    rate_ax.grid(visible=False)
    lines = ax.get_lines() + rate_ax.get_lines()
    ax.legend(lines, [str(line.get_label()) for line in lines], loc="upper center",
              bbox_to_anchor=(0.5, -0.22), ncols=2, borderaxespad=0.0, fontsize=7.5)
    return fig


# Shown only when a mode ran with autoscaled pools.
_AUTOSCALING_PLOTS: tuple[_PlotSpec, ...] = (
    _PlotSpec("plot-pool-nodes", "Nodes over time",
              "Ready nodes of each autoscaled pool (line style) per mode (colour): the "
              "autoscaler's scale-ups (after the pool's provisioning delay) and scale-downs.",
              _pool_nodes, False),
    _PlotSpec("plot-cost", "Cost over time",
              "Cumulative cost of the autoscaled pools (solid: pricePerHour x node-hours, a "
              "node billed from joining to leaving) and the cost rate per hour (dotted).",
              _cost, False),
)

PLOT_IDS: tuple[str, ...] = tuple(p.id for p in _PLOTS)
QUEUE_PLOT_IDS: tuple[str, ...] = tuple(p.id for p in _QUEUE_PLOTS)
KAI_PLOT_IDS: tuple[str, ...] = tuple(p.id for p in _KAI_PLOTS)
AUTOSCALING_PLOT_IDS: tuple[str, ...] = tuple(p.id for p in _AUTOSCALING_PLOTS)


def render_plots(result: SimulationResult) -> list[Plot]:
    """Every plot of the report, in page order (ids: ``PLOT_IDS``, then
    ``QUEUE_PLOT_IDS`` when queueing was on, ``KAI_PLOT_IDS`` when a mode ran KAI,
    ``AUTOSCALING_PLOT_IDS`` with autoscaled pools). Deterministic."""
    out: list[Plot] = []
    specs = _PLOTS + (_QUEUE_PLOTS if any(m.queues for m in result.modes) else ()) + (
        _KAI_PLOTS if any(m.kai_queues for m in result.modes) else ()) + (
        _AUTOSCALING_PLOTS if any(m.autoscaling is not None for m in result.modes) else ())
    for spec in specs:
        with plot_style(spec.id):
            fig = spec.draw(result)
            svg = figure_to_svg(fig, spec.id, spec.title)
        out.append(Plot(spec.id, spec.title, spec.caption, svg, spec.wide))
    return out
