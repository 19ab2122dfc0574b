"""Which summary numbers the report shows, how each reads, and which value is better.

Shared by the HTML comparison table and the terminal summary so both say the
same thing. Pure: no I/O, no matplotlib.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["METRICS", "MetricSpec", "best_indices", "format_duration", "format_value"]

Kind = Literal["count", "duration", "share", "number"]
Better = Literal["higher", "lower"] | None


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One row of the comparison: a ``ModeResult.summary()`` key and how to present it.

    ``better`` is None where neither direction is better in general (e.g. more
    busy GPUs may mean more work done or worse packing).
    """

    key: str
    label: str
    group: str
    kind: Kind
    better: Better


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("pods_arrived", "Pods arrived", "Pods", "count", None),
    MetricSpec("pods_started", "Pods started", "Pods", "count", "higher"),
    MetricSpec("pods_completed", "Pods completed", "Pods", "count", "higher"),
    MetricSpec("pods_never_started", "Pods never started", "Pods", "count", "lower"),
    MetricSpec("throughput_pods_per_hour", "Throughput (completed pods/h)", "Pods", "number",
               "higher"),
    MetricSpec("wait_p50", "Wait p50", "Wait time (started pods)", "duration", "lower"),
    MetricSpec("wait_p90", "Wait p90", "Wait time (started pods)", "duration", "lower"),
    MetricSpec("wait_p99", "Wait p99", "Wait time (started pods)", "duration", "lower"),
    MetricSpec("wait_mean", "Wait mean", "Wait time (started pods)", "duration", "lower"),
    MetricSpec("mean_gpu_capacity_allocated", "Mean GPU capacity allocated", "GPUs", "share",
               None),
    MetricSpec("mean_gpu_capacity_requested", "Mean GPU capacity requested by running pods",
               "GPUs", "share", "higher"),
    MetricSpec("gpu_allocation_efficiency", "Allocation efficiency (requested / allocated)",
               "GPUs", "share", "higher"),
    MetricSpec("peak_gpu_capacity_allocated", "Peak GPU capacity allocated", "GPUs", "share",
               None),
    MetricSpec("mean_gpus_busy", "Mean GPUs busy", "GPUs", "number", None),
    MetricSpec("mean_fragmentation", "Mean fragmentation", "GPUs", "share", "lower"),
    MetricSpec("scheduling_attempts", "Scheduling attempts", "Scheduler", "count", None),
    MetricSpec("preemptions", "Preemptions", "Scheduler", "count", "lower"),
)


def format_duration(seconds: float) -> str:
    """A duration with a unit a person reads at a glance: ``"45 s"``, ``"2.5 min"``, ``"1.2 h"``."""
    if not math.isfinite(seconds):
        return "—"
    a = abs(seconds)
    if a < 60:
        return f"{seconds:.3g} s"
    if a < 3600:
        return f"{seconds / 60:.3g} min"
    if a < 2 * 86400:
        return f"{seconds / 3600:.3g} h"
    return f"{seconds / 86400:.3g} d"


def format_value(kind: Kind, value: float | int) -> str:
    """``value`` as shown in a table cell; undefined (NaN) values show as an em dash."""
    if isinstance(value, float) and not math.isfinite(value):
        return "—"
    if kind == "count":
        return f"{int(value):,}"
    if kind == "duration":
        return format_duration(float(value))
    if kind == "share":
        return f"{100 * value:.1f} %"
    return f"{value:,.2f}"


def best_indices(spec: MetricSpec, values: Sequence[float | int]) -> frozenset[int]:
    """Indices of the best values for ``spec``; empty when there is no better direction,
    fewer than two defined values, or all defined values are equal. Ties are all best.
    """
    if spec.better is None:
        return frozenset()
    defined = [(i, float(v)) for i, v in enumerate(values) if math.isfinite(v)]
    if len(defined) < 2:
        return frozenset()
    nums = [v for _, v in defined]
    target = max(nums) if spec.better == "higher" else min(nums)
    if all(v == target for v in nums):
        return frozenset()
    return frozenset(i for i, v in defined if v == target)
