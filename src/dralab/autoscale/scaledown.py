"""Scale-down candidates: nodes of autoscaled pools that are under-utilised and whose
pods can all move to other nodes (Cluster Autoscaler's rules, simulated on a fork).

First ``eligibility`` (CA's ``FilterOutUnremovable``) measures every node of an
autoscaled pool on the cluster as it is, before any removal is simulated, and keeps
those being deleted, annotated scale-down-disabled, unmeasurable or above the
threshold. Then per remaining node, in name order: its pool must stay at or above
its min size and the cluster at or above ``--cores-total`` / ``--memory-total``'s
minima (counting the nodes already chosen); DaemonSet and mirror pods go with the
node; every other pod must be movable (``is_movable``) and must fit on a node that
stays -- deleted (its claims released as the claim controller releases them),
re-created pending and placed with the scheduler's plugins. A node whose pods all
moved is unneeded, and its pods stay moved while the next nodes are checked, so the
unneeded nodes can all go together. Every node kept says why, with CA's
``UnremovableReason``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

import msgspec

from dralab.api.core import Node, Pod, PodStatus
from dralab.cluster import PodInfo
from dralab.scheduler import Scheduler

from .decisions import ScaleDown
from .eligibility import EligibilityOptions, Unremovable, filter_out_unremovable
from .groups import NodeGroup, pool_of
from .placement import place_pod
from .units import is_movable
from .utilization import AllocatedDevices, PoolCache, is_daemonset_pod, is_mirror_pod

__all__ = ["ScaleDownOptions", "move_pods", "node_cores_memory", "unneeded_nodes"]


class ScaleDownOptions(EligibilityOptions, Protocol):
    """The flags scale-down reads beyond eligibility's."""

    @property
    def cores_total(self) -> tuple[int, int]: ...
    @property
    def memory_total(self) -> tuple[int, int]: ...


def _fresh(pod: Pod) -> Pod:
    """The pod as its controller would re-create it: no node, no status."""
    spec = msgspec.structs.replace(pod.spec, node_name=None)
    return msgspec.structs.replace(pod, spec=spec, status=PodStatus())


def _goes_with_node(pod: Pod) -> bool:
    """DaemonSet and mirror pods are not moved: they end with their node."""
    return is_daemonset_pod(pod) or is_mirror_pod(pod)


def _move(scheduler: Scheduler, node: str, targets: Callable[[], Iterable[str]]
          ) -> tuple[str, str] | None:
    """Move every pod off ``node`` (on the caller's fork): None when all moved, else
    CA's reason and what blocked."""
    cluster = scheduler.cluster
    info = cluster.nodes.get(node)
    if info is None:
        return "NoNodeInfo", "no such node"
    pods: list[PodInfo] = [p for p in info.pods if not _goes_with_node(p.pod)]
    for pod in pods:
        if not is_movable(pod.pod):
            return "BlockedByPod", f"pod {pod.key} is not replicated"
    for pod in pods:
        scheduler.delete_pod(pod.key)
        moved = cluster.add_pod(_fresh(pod.pod))
        framework = scheduler.framework_for(moved)
        if framework is None or not framework.run_pre_enqueue(moved).is_success():
            return "NoPlaceToMovePods", f"pod {pod.key} cannot be re-created"
        if place_pod(scheduler, moved, targets()).node is None:
            return "NoPlaceToMovePods", f"pod {pod.key} fits on no other node"
    return None


def move_pods(scheduler: Scheduler, node: str, targets: Callable[[], Iterable[str]]
              ) -> str | None:
    """Move every pod off ``node`` onto ``targets()`` (on the caller's fork): None when
    all moved, else why not."""
    blocked = _move(scheduler, node, targets)
    return None if blocked is None else blocked[1]


def node_cores_memory(node: Node) -> tuple[int, int]:
    """(cores, memory bytes) of the node's capacity, as CA's resource limits count
    them (cores rounded up)."""
    capacity = node.status.capacity or node.status.allocatable
    cpu = capacity.get("cpu")
    memory = capacity.get("memory")
    cores = -(-cpu.milli_value() // 1000) if cpu is not None else 0
    return cores, (-(-memory.milli_value() // 1000) if memory is not None else 0)


def unneeded_nodes(scheduler: Scheduler, groups: Mapping[str, NodeGroup],
                   options: ScaleDownOptions, now: float = 0.0,
                   cache: PoolCache | None = None, wall_time: float | None = None
                   ) -> tuple[list[ScaleDown], list[Unremovable]]:
    """The nodes that could go now, and the nodes of autoscaled pools kept with the
    reason (see the module docstring); the cluster is left as it was. ``now``: the
    loop's clock (``ScaleDown.since``); ``wall_time``: unix seconds, None without a
    wall clock. ``cache``: pool utilisations kept across calls."""
    cluster = scheduler.cluster
    sizes: dict[str, int] = {}
    cores = memory = 0
    candidates: list[str] = []
    for name in sorted(cluster.node_names()):
        node = cluster.nodes[name].node
        node_cores, node_memory = node_cores_memory(node)
        cores += node_cores
        memory += node_memory
        pool = pool_of(node)
        if pool is None:
            continue
        sizes[pool] = sizes.get(pool, 0) + 1
        if pool in groups:
            candidates.append(name)
    found = filter_out_unremovable(cluster, candidates, groups, options, wall_time,
                                   AllocatedDevices(cluster), cache)
    kept = list(found.unremovable)
    gone: set[str] = set()
    out: list[ScaleDown] = []

    def targets() -> list[str]:
        return [n for n in cluster.node_names() if n not in gone]

    scheduler.fork()
    try:
        for name in found.unneeded:
            node = cluster.nodes[name].node
            group = groups[pool_of(node) or ""]
            value = found.utilization[name].value
            if sizes.get(group.name, 0) <= group.min_size:
                kept.append(Unremovable(name, "NodeGroupMinSizeReached",
                                        f"{group.name}: min size {group.min_size}",
                                        group.name))
                continue
            node_cores, node_memory = node_cores_memory(node)
            if cores - node_cores < options.cores_total[0] or \
                    memory - node_memory < options.memory_total[0]:
                kept.append(Unremovable(name, "MinimalResourceLimitExceeded",
                                        "the cluster would go under --cores-total or "
                                        "--memory-total's minimum", group.name))
                continue
            scheduler.fork()
            gone.add(name)
            blocked = _move(scheduler, name, targets)
            if blocked is None:
                scheduler.commit()
                sizes[group.name] -= 1
                cores -= node_cores
                memory -= node_memory
                out.append(ScaleDown(name, group.name, value, now))
            else:
                scheduler.revert()
                gone.discard(name)
                kept.append(Unremovable(name, blocked[0], blocked[1], group.name))
    finally:
        scheduler.revert()
    return out, kept
