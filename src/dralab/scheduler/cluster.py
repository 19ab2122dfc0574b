"""The cluster a scheduling run works on, as the scheduler's modules name it.

The store itself lives in ``dralab.cluster`` (a layer below the scheduler); this
module re-exports what the scheduler and its plugins use, under the names they
have always used.
"""

from __future__ import annotations

from dralab.cluster import (
    CPU,
    DEFAULT_MEMORY_MILLI,
    DEFAULT_MILLI_CPU,
    MEMORY,
    PODS,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    ClusterState,
    NodeInfo,
    PodInfo,
    delete_gracefully,
    observed_generation,
    pod_non_zero_requests,
    pod_requests,
    prepare_for_create,
    set_pod_condition,
    snapshot_moment,
    update_condition,
)

__all__ = [
    "CPU",
    "DEFAULT_MEMORY_MILLI",
    "DEFAULT_MILLI_CPU",
    "MEMORY",
    "PODS",
    "PREEMPT_LOWER_PRIORITY",
    "PREEMPT_NEVER",
    "ClusterState",
    "NodeInfo",
    "PodInfo",
    "delete_gracefully",
    "observed_generation",
    "pod_non_zero_requests",
    "pod_requests",
    "prepare_for_create",
    "set_pod_condition",
    "snapshot_moment",
    "update_condition",
]
