"""Which numbers the report shows, how each reads, and which value is better.

Shared by the HTML comparison table and the terminal summary so both say the
same thing. Pure: no I/O, no matplotlib.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["METRICS", "MetricSpec", "best_indices", "format_duration", "format_mean",
           "format_value"]

Kind = Literal["count", "duration", "share", "number", "money"]
Better = Literal["higher", "lower"] | None


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One row of the comparison: a ``report.numbers.NUMBER_KEYS`` key and how to show it.

    ``better`` is None where neither direction is better in general (e.g. fragmentation:
    a fleet holding fewer GPUs has more idle capacity to fragment). ``why`` says what a
    difference beyond the seeds' spread means; it is the highlight's explanation.
    A row whose values are undefined in every mode (no queueing, no autoscaling) is
    left out of the tables.
    """

    key: str
    label: str
    group: str
    kind: Kind
    better: Better
    why: str = ""


_WAIT = "Scheduling wait (pod created → started)"
_JOB = "Job wait (job arrived → its first pod started)"
_FEWER = "the same work held fewer GPUs (compare pods started and throughput)"

METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("pods_arrived", "Pods arrived", "Pods", "count", None),
    MetricSpec("pods_started", "Pods started", "Pods", "count", "higher",
               "more pods got a place"),
    MetricSpec("pods_completed", "Pods completed", "Pods", "count", "higher",
               "more pods ran to the end"),
    MetricSpec("pods_never_started", "Pods never started", "Pods", "count", "lower",
               "fewer pods were left pending at the end"),
    MetricSpec("throughput_pods_per_hour", "Throughput (completed pods/h)", "Pods", "number",
               "higher", "more pods completed per hour"),
    MetricSpec("wait_p50", "Scheduling wait p50", _WAIT, "duration", "lower",
               "pods started sooner after they were created"),
    MetricSpec("wait_p90", "Scheduling wait p90", _WAIT, "duration", "lower",
               "the slowest tenth of pods started sooner"),
    MetricSpec("wait_p99", "Scheduling wait p99", _WAIT, "duration", "lower",
               "the slowest pods started sooner"),
    MetricSpec("wait_mean", "Scheduling wait mean", _WAIT, "duration", "lower",
               "pods started sooner on average"),
    MetricSpec("job_wait_p50", "Job wait p50 (queue included)", _JOB, "duration", "lower",
               "jobs started sooner after they arrived"),
    MetricSpec("job_wait_p90", "Job wait p90 (queue included)", _JOB, "duration", "lower",
               "the slowest tenth of jobs started sooner"),
    MetricSpec("admission_wait_p50", "Admission wait p50 (Kueue)",
               "Admission wait (job submitted → admitted by Kueue)", "duration", "lower",
               "jobs were admitted sooner"),
    MetricSpec("admission_wait_p90", "Admission wait p90 (Kueue)",
               "Admission wait (job submitted → admitted by Kueue)", "duration", "lower",
               "the slowest tenth of jobs were admitted sooner"),
    # A share of the fleet present: with autoscaling the fleet shrinks as well, so a
    # higher share may be better packing, not more use. Mean GPUs busy is the count.
    MetricSpec("mean_gpu_capacity_allocated", "Mean GPU capacity allocated", "GPUs", "share",
               None),
    MetricSpec("mean_gpu_capacity_requested", "Mean GPU capacity requested by running pods",
               "GPUs", "share", None),
    MetricSpec("gpu_allocation_efficiency", "Allocation efficiency (requested / allocated)",
               "GPUs", "share", "higher", "less of what was allocated sat unused by its pod"),
    MetricSpec("peak_gpu_capacity_allocated", "Peak GPU capacity allocated", "GPUs", "share",
               None),
    MetricSpec("mean_gpus_busy", "Mean GPUs busy", "GPUs", "number", "lower", _FEWER),
    MetricSpec("mean_fragmentation", "Mean fragmentation", "GPUs", "share", None),
    MetricSpec("scheduling_attempts", "Scheduling cycles", "Scheduler", "count", None),
    # Effort, not an outcome: the pods' wait is its own row (never highlighted).
    MetricSpec("cycles_per_started_pod", "Scheduling cycles per started pod", "Scheduler",
               "number", None),
    MetricSpec("preemptions", "Scheduler preemptions (pods evicted)",
               "Scheduler", "count", "lower", "fewer running pods were evicted"),
    MetricSpec("kueue_preemptions", "Kueue preemptions (workloads evicted)",
               "Scheduler", "count", "lower", "fewer admitted workloads were evicted"),
    MetricSpec("autoscaled_cost", "Cost of autoscaled pools", "Autoscaling", "money", "lower",
               "the autoscaled nodes cost less"),
    MetricSpec("autoscaled_node_hours", "Node-hours of autoscaled pools", "Autoscaling",
               "number", "lower", "fewer node-hours were paid for"),
    MetricSpec("autoscaled_peak_nodes", "Peak autoscaled nodes", "Autoscaling", "count",
               "lower", "fewer nodes were needed at the busiest time"),
    MetricSpec("nodes_added", "Nodes added", "Autoscaling", "count", None),
    MetricSpec("nodes_removed", "Nodes removed", "Autoscaling", "count", None),
    MetricSpec("node_wait_p50", "Wait for a new node p50 (scale-up latency)", "Autoscaling",
               "duration", "lower", "pods that needed a new node got it sooner"),
    MetricSpec("node_wait_p90", "Wait for a new node p90 (scale-up latency)", "Autoscaling",
               "duration", "lower", "the slowest scale-ups were quicker"),
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
    return f"{value:,.2f}"  # number, money (the unit is the scenario's pricePerHour's)


def format_mean(kind: Kind, value: float) -> str:
    """A mean over seeds (or a spread) as shown everywhere: as ``format_value``, except
    that a count that is not whole keeps one decimal instead of being truncated."""
    if kind == "count" and math.isfinite(value) and not float(value).is_integer():
        return f"{value:,.1f}"
    return format_value(kind, value)


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
