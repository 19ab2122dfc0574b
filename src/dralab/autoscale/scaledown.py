"""Scale-down candidates: nodes of autoscaled pools that are under-utilised and whose
pods can all move to other nodes (Cluster Autoscaler's rules, simulated on a fork).

Per node, in name order: its utilisation (``node_utilization``, taken before any
removal is simulated, as CA does) must be below the threshold and its pool above
its min size (counting the nodes already chosen);
DaemonSet pods go with the node; every other pod must be movable (``is_movable``)
and must fit on a node that stays -- deleted (its claims released as the claim
controller releases them), re-created pending and placed with the scheduler's
plugins. A node whose pods all moved is a candidate, and its pods stay moved
while the next nodes are checked, so the candidates can all go together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import msgspec

from dralab.api.core import Pod, PodStatus
from dralab.cluster import PodInfo
from dralab.scheduler import Scheduler

from .decisions import ScaleDown
from .groups import NodeGroup, pool_of
from .placement import place_pod
from .units import is_daemon_pod, is_movable
from .utilization import AllocatedDevices, PoolCache, node_utilization

__all__ = ["move_pods", "unneeded_nodes"]


def _fresh(pod: Pod) -> Pod:
    """The pod as its controller would re-create it: no node, no status."""
    spec = msgspec.structs.replace(pod.spec, node_name=None)
    return msgspec.structs.replace(pod, spec=spec, status=PodStatus())


def move_pods(scheduler: Scheduler, node: str, targets: Callable[[], Iterable[str]]
              ) -> str | None:
    """Move every pod off ``node`` onto ``targets()`` (on the caller's fork): None when
    all moved, else why not."""
    cluster = scheduler.cluster
    info = cluster.nodes.get(node)
    if info is None:
        return "no such node"
    pods: list[PodInfo] = [p for p in info.pods if not is_daemon_pod(p.pod)]
    for pod in pods:
        if not is_movable(pod.pod):
            return f"pod {pod.key} is not replicated"
    for pod in pods:
        scheduler.delete_pod(pod.key)
        moved = cluster.add_pod(_fresh(pod.pod))
        framework = scheduler.framework_for(moved)
        if framework is None or not framework.run_pre_enqueue(moved).is_success():
            return f"pod {pod.key} cannot be re-created"
        if place_pod(scheduler, moved, targets()).node is None:
            return f"pod {pod.key} fits on no other node"
    return None


def unneeded_nodes(scheduler: Scheduler, groups: Mapping[str, NodeGroup], threshold: float,
                   now: float = 0.0, cache: PoolCache | None = None) -> list[ScaleDown]:
    """The nodes that could go now (see the module docstring); the cluster is left as
    it was. ``cache``: pool utilisations kept across calls (``node_utilization``)."""
    cluster = scheduler.cluster
    allocated = AllocatedDevices(cluster)
    sizes: dict[str, int] = {}
    # As CA, every candidate's utilisation is taken from the cluster as it is, before
    # any removal is simulated.
    candidates: list[tuple[str, NodeGroup, float]] = []
    for name in sorted(cluster.node_names()):
        info = cluster.nodes[name]
        pool = pool_of(info.node)
        if pool is None:
            continue
        sizes[pool] = sizes.get(pool, 0) + 1
        group = groups.get(pool)
        if group is not None:
            value = node_utilization(cluster, info, allocated, cache).value
            if value < threshold:
                candidates.append((name, group, value))
    gone: set[str] = set()
    out: list[ScaleDown] = []

    def targets() -> list[str]:
        return [n for n in cluster.node_names() if n not in gone]

    scheduler.fork()
    try:
        for name, group, value in candidates:
            if sizes.get(group.name, 0) <= group.min_size:
                continue
            scheduler.fork()
            gone.add(name)
            if move_pods(scheduler, name, targets) is None:
                scheduler.commit()
                sizes[group.name] -= 1
                out.append(ScaleDown(name, group.name, value, now))
            else:
                scheduler.revert()
                gone.discard(name)
    finally:
        scheduler.revert()
    return out
