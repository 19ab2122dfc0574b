"""The numbers the report compares per mode: the run's summary plus what queueing and
autoscaling add, each under one key that the tables, the verdict and the glossary share.

``mode_numbers`` is the one place these are derived, so the comparison table, the
terminal, ``seeds.csv`` and the verdict cannot show two values for one thing. Pure.
"""

from __future__ import annotations

import math

from dralab.sim.results import SUMMARY_KEYS, ModeResult, percentile

__all__ = ["AUTOSCALING_KEYS", "NUMBER_KEYS", "QUEUE_KEYS", "admission_waits", "mode_numbers"]

QUEUE_KEYS: tuple[str, ...] = ("job_wait_p50", "job_wait_p90", "admission_wait_p50",
                               "admission_wait_p90", "kueue_preemptions")
AUTOSCALING_KEYS: tuple[str, ...] = ("autoscaled_cost", "autoscaled_node_hours",
                                     "autoscaled_peak_nodes", "nodes_added", "nodes_removed",
                                     "node_wait_p50", "node_wait_p90")
NUMBER_KEYS: tuple[str, ...] = (*SUMMARY_KEYS, "cycles_per_started_pod", *QUEUE_KEYS,
                                *AUTOSCALING_KEYS)


def admission_waits(mode: ModeResult) -> list[float]:
    """Every admitted workload's wait for Kueue (submitted -> admitted), all queues pooled."""
    return sorted(w for q in mode.queues.values() for w in q.waits)


def mode_numbers(mode: ModeResult) -> dict[str, float]:
    """``NUMBER_KEYS`` -> value for ``mode``; NaN where undefined (no queueing or KAI, no
    autoscaled pool, no started pod)."""
    out = {k: float(v) for k, v in mode.summary().items()}
    started = out["pods_started"]
    out["cycles_per_started_pod"] = (mode.scheduling_attempts / started if started
                                     else math.nan)
    jobs = sorted(mode.job_waits)
    out["job_wait_p50"] = percentile(jobs, 50) if jobs else math.nan
    out["job_wait_p90"] = percentile(jobs, 90) if jobs else math.nan
    waits = admission_waits(mode)
    queued = bool(mode.queues)
    out["admission_wait_p50"] = percentile(waits, 50) if waits else math.nan
    out["admission_wait_p90"] = percentile(waits, 90) if waits else math.nan
    out["kueue_preemptions"] = (float(sum(q.preempted for q in mode.queues.values()))
                                if queued else math.nan)
    scaling = mode.autoscaling.summary() if mode.autoscaling is not None else None
    pairs = (("autoscaled_cost", "cost"), ("autoscaled_node_hours", "node_hours"),
             ("autoscaled_peak_nodes", "peak_nodes"), ("nodes_added", "scale_ups"),
             ("nodes_removed", "scale_downs"), ("node_wait_p50", "node_wait_p50"),
             ("node_wait_p90", "node_wait_p90"))
    for key, source in pairs:
        out[key] = float(scaling[source]) if scaling is not None else math.nan
    return out
