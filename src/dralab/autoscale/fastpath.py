"""Which pods Cluster Autoscaler's fastpath binpacking may pack, and which group of
them it packs (--fastpath-binpacking-enabled, off by default as CA's flag).

The fastpath (CA's estimator/binpacking_estimator.go, tryFastPath) fills one fresh
template node with pods of one equivalence group by simulation, then counts the
rest onto as many more identical nodes, that many pods each, without simulating
them. It runs only on the last group of an estimate, so the group that saves the
most simulations is moved last: the one with the most ``pods - pods / nodes``, its
node count the most of what its first container's CPU and memory requests need of
the template's capacity and of its hostname anti-affinity to itself (the last one
on a tie, to stay near the pods' own order). A group with topology spread
constraints, or required pod anti-affinity on another key than the hostname, is
never chosen: how many of its pods a node takes can change from node to node.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dralab.api.core import Pod
from dralab.cluster.records import raw_spec_field
from dralab.scheduler.plugins.podtopologyspread_constraints import parse_selector

__all__ = ["best_group_for_fastpath", "fastpath_applies"]

HOSTNAME = "kubernetes.io/hostname"


def _anti_affinity_terms(pod: Pod) -> list[dict[str, object]]:
    affinity = raw_spec_field(pod, "affinity")
    if not isinstance(affinity, dict):
        return []
    anti = affinity.get("podAntiAffinity")
    if not isinstance(anti, dict):
        return []
    terms = anti.get("requiredDuringSchedulingIgnoredDuringExecution")
    return [t for t in terms if isinstance(t, dict)] if isinstance(terms, list) else []


def fastpath_applies(pod: Pod) -> bool:
    """CA's shouldUseFastPath for a group whose first pod is ``pod``."""
    if raw_spec_field(pod, "topologySpreadConstraints") is not None:
        return False
    return all(t.get("topologyKey") == HOSTNAME for t in _anti_affinity_terms(pod))


def _requests(pod: Pod) -> tuple[float, float] | None:
    """CPU (cores) and memory (bytes) the first container requests; None without
    requests (CA reads containers[0] only)."""
    containers = pod.spec.containers
    if not containers or not containers[0].resources.requests:
        return None
    requests = containers[0].resources.requests
    cpu, memory = requests.get("cpu"), requests.get("memory")
    return (cpu.as_approximate_float() if cpu is not None else 0.0,
            memory.as_approximate_float() if memory is not None else 0.0)


def _nodes_needed(pods: Sequence[Pod], cpu_capacity: float, memory_capacity: float) -> int:
    first = pods[0]
    by_anti_affinity = 0
    labels = first.metadata.labels or {}
    for term in _anti_affinity_terms(first):
        if term.get("topologyKey") == HOSTNAME and \
                term.get("labelSelector") is not None and \
                parse_selector(term.get("labelSelector")).matches(labels):
            by_anti_affinity = len(pods)
    by_cpu = by_memory = 0
    requests = _requests(first)
    if requests is not None:
        cpu, memory = requests
        # CA divides by the capacity as a float: no capacity gives +Inf or NaN, which
        # its int conversion turns into no count here.
        if cpu_capacity > 0:
            by_cpu = math.ceil(len(pods) * cpu / cpu_capacity)
        if memory_capacity > 0:
            by_memory = math.ceil(len(pods) * memory / memory_capacity)
    return max(by_anti_affinity, by_cpu, by_memory)


def best_group_for_fastpath(groups: Sequence[Sequence[Pod]], cpu_capacity: float,
                            memory_capacity: float) -> int:
    """CA's determineBestPEGToFastpath: the index of the group (equivalent pods, the
    first standing for all) to pack last by the fastpath, -1 when none may be.
    ``cpu_capacity`` in cores and ``memory_capacity`` in bytes: the template node's
    capacity."""
    best, most_saved = -1, 0
    for i, pods in enumerate(groups):
        if not pods:
            continue
        nodes = _nodes_needed(pods, cpu_capacity, memory_capacity)
        saved = len(pods) - len(pods) // nodes if nodes > 0 else 0
        if saved >= most_saved and fastpath_applies(pods[0]):
            best, most_saved = i, saved
    return best
