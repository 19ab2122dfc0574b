"""The admitted workloads as the admission engine needs them: per ClusterQueue, with
their usage per (flavor, resource), kept in step with the quota tree."""

from __future__ import annotations

from collections.abc import Iterable

from dralab.queueing.kueue.quota import FlavorResource, QuotaTree
from dralab.queueing.model import Admission

__all__ = ["AdmittedIndex", "admission_usage"]


def admission_usage(admission: Admission) -> dict[FlavorResource, int]:
    usage: dict[FlavorResource, int] = {}
    for pod_set in admission.pod_sets:
        for resource, amount in pod_set.usage.items():
            flavor = pod_set.flavors.get(resource)
            if flavor is None or not amount:
                continue
            fr = (flavor, resource)
            usage[fr] = usage.get(fr, 0) + amount
    return usage


class AdmittedIndex:
    """Which workloads hold quota where; every change goes through ``add``/``remove``
    so that the quota tree's usage is always the sum of what is here.

    ``holders`` finds preemption candidates without a scan: per ClusterQueue and
    (flavor, resource), the workloads using it by priority."""

    def __init__(self, tree: QuotaTree) -> None:
        self.tree = tree
        self.cluster_queue: dict[str, str] = {}
        self.usage: dict[str, dict[FlavorResource, int]] = {}
        self.priority: dict[str, int] = {}
        self.by_cluster_queue: dict[str, set[str]] = {name: set() for name in tree.cluster_queues}
        self.holders: dict[str, dict[FlavorResource, dict[int, set[str]]]] = {
            name: {} for name in tree.cluster_queues}
        # Per cohort tree (``QuotaTree.root_name``): how many admissions and removals it
        # has seen. Equal counts mean the same admitted workloads and usage there, so
        # answers computed from them (the preemption oracle's) still hold.
        self.changes: dict[str, int] = {}
        # Per ClusterQueue: how many admissions and removals it has seen (its holders
        # change only then), and answers derived from its holders by the preemption
        # searches, each stored with the version it read (``derived``).
        self.versions: dict[str, int] = {}
        # Per cohort tree and (flavor, resource): how many admissions, removals and
        # held reservations using it the tree has seen. A classic preemption search for
        # one (flavor, resource) reads only its holders and its usage (``fr_version``).
        self.fr_changes: dict[tuple[str, FlavorResource], int] = {}
        self.derived: dict[tuple[object, ...], tuple[int, object]] = {}

    def add(self, key: str, cluster_queue: str, usage: dict[FlavorResource, int],
            priority: int) -> None:
        self.cluster_queue[key] = cluster_queue
        self.usage[key] = usage
        self.priority[key] = priority
        self.by_cluster_queue.setdefault(cluster_queue, set()).add(key)
        holders = self.holders.setdefault(cluster_queue, {})
        for fr in usage:
            holders.setdefault(fr, {}).setdefault(priority, set()).add(key)
        self.tree.add_usage(cluster_queue, usage, 1)
        self._changed(cluster_queue, usage)
        self.versions[cluster_queue] = self.versions.get(cluster_queue, 0) + 1

    def touched(self, cluster_queue: str, frs: Iterable[FlavorResource]) -> None:
        """Usage of ``frs`` in ``cluster_queue``'s cohort tree changed outside
        ``add``/``remove`` (a reservation held for one cycle): answers kept for that
        tree are stale."""
        self._changed(cluster_queue, frs)

    def _changed(self, cluster_queue: str, frs: Iterable[FlavorResource]) -> None:
        root = self.tree.root_name(cluster_queue)
        self.changes[root] = self.changes.get(root, 0) + 1
        fr_changes = self.fr_changes
        for fr in frs:
            fr_changes[(root, fr)] = fr_changes.get((root, fr), 0) + 1

    def fr_version(self, cluster_queue: str, fr: FlavorResource) -> int:
        """How often the holders or usage of ``fr`` changed in ``cluster_queue``'s
        cohort tree (trial evictions, undone, do not count)."""
        return self.fr_changes.get((self.tree.root_name(cluster_queue), fr), 0)

    def remove(self, key: str) -> str:
        cluster_queue = self.cluster_queue.pop(key)
        usage = self.usage.pop(key)
        priority = self.priority.pop(key)
        self.by_cluster_queue[cluster_queue].discard(key)
        holders = self.holders[cluster_queue]
        for fr in usage:
            by_priority = holders[fr]
            keys = by_priority[priority]
            keys.discard(key)
            if not keys:
                del by_priority[priority]
        self.tree.add_usage(cluster_queue, usage, -1)
        self._changed(cluster_queue, usage)
        self.versions[cluster_queue] = self.versions.get(cluster_queue, 0) + 1
        return cluster_queue

    def __contains__(self, key: object) -> bool:
        return key in self.cluster_queue
