"""``--balance-similar-node-groups``: split a scale-up between node groups of one shape,
as Cluster Autoscaler does (processors/nodegroupset: compare_nodegroups.go and
balancing_processor.go; core/scaleup/orchestrator: ComputeSimilarNodeGroups).

Two groups are similar when their template nodes have the same capacity (memory
within 1.5 %), allocatable and free resources within 5 %, and the same labels but
for the ignored ones (hostname, zone and region, the pool label, and
``--balancing-ignore-label``). A similar group takes part only when it can schedule
every pod group the chosen one can. The nodes go to the smallest groups first, each
kept under its max size.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

from dralab.api.core import Node, Pod
from dralab.cluster.records import pod_requests

__all__ = ["BASIC_IGNORED_LABELS", "balance", "compute_similar", "nodes_similar"]

# compare_nodegroups.go BasicIgnoredLabels, plus dralab's pool label (the group's own,
# as the test's nodeGroupLabel is ignored there).
BASIC_IGNORED_LABELS = frozenset({
    "kubernetes.io/hostname", "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region", "beta.kubernetes.io/fluentd-ds-ready",
    "kops.k8s.io/instancegroup", "dralab.dev/pool"})
# config: the default NodeGroupDifferenceRatios.
MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO = 0.015
MAX_ALLOCATABLE_DIFFERENCE_RATIO = 0.05
MAX_FREE_DIFFERENCE_RATIO = 0.05


def _milli(resources: Mapping[str, object]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, q in resources.items():
        milli = getattr(q, "milli_value", None)
        if milli is not None:
            out[name] = milli()
    return out


def _within(a: int, b: int, ratio: float) -> bool:
    larger, smaller = max(a, b), min(a, b)
    return larger - smaller <= larger * ratio


def _maps_within(a: Mapping[str, int], b: Mapping[str, int], ratio: float) -> bool:
    # A resource only one side has is a mismatch (resourceListWithinTolerance's len 2).
    return a.keys() == b.keys() and all(_within(a[k], b[k], ratio) for k in a)


def nodes_similar(n1: Node, n2: Node, pods1: Sequence[Pod] = (), pods2: Sequence[Pod] = (),
                  ignored: Iterable[str] = ()) -> bool:
    """IsCloudProviderNodeInfoSimilar for two template nodes and the pods that come with
    them (``ignored``: extra labels to ignore)."""
    cap1, cap2 = _milli(n1.status.capacity), _milli(n2.status.capacity)
    if cap1.keys() != cap2.keys():
        return False
    for name in cap1:
        if name == "memory":
            if not _within(cap1[name], cap2[name], MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO):
                return False
        elif cap1[name] != cap2[name]:
            return False
    alloc1 = _milli(n1.status.allocatable or n1.status.capacity)
    alloc2 = _milli(n2.status.allocatable or n2.status.capacity)
    if not _maps_within(alloc1, alloc2, MAX_ALLOCATABLE_DIFFERENCE_RATIO):
        return False
    if not _maps_within(_free(alloc1, pods1), _free(alloc2, pods2), MAX_FREE_DIFFERENCE_RATIO):
        return False
    skip = BASIC_IGNORED_LABELS | set(ignored)
    labels1 = {k: v for k, v in (n1.metadata.labels or {}).items() if k not in skip}
    labels2 = {k: v for k, v in (n2.metadata.labels or {}).items() if k not in skip}
    return labels1 == labels2


def _free(allocatable: Mapping[str, int], pods: Sequence[Pod]) -> dict[str, int]:
    # Free is taken over the resources the pods request (ResourceToResourceList of the
    # node's requested), as upstream compares it.
    requested: dict[str, int] = {}
    for pod in pods:
        for name, value in pod_requests(pod).items():
            requested[name] = requested.get(name, 0) + value
    return {name: allocatable.get(name, 0) - value for name, value in requested.items()}


def compute_similar(group: str, candidates: Iterable[str],
                    schedulable: Mapping[str, Iterable[Hashable]], enabled: bool) -> list[str]:
    """ComputeSimilarNodeGroups: of the ``candidates`` (the groups similar to ``group``),
    those that can schedule every pod group ``group`` can (``schedulable``: pod groups
    per node group); none when balancing is off or ``group`` schedules nothing."""
    if not enabled:
        return []
    own = set(schedulable.get(group, ()))
    if not own:
        return []
    return [c for c in candidates if c in schedulable and own <= set(schedulable[c])]


def balance(groups: Sequence[tuple[str, int, int]], new_nodes: int) -> dict[str, int]:
    """BalanceScaleUpBetweenGroups: ``new_nodes`` over (name, current size, max size),
    one at a time to the smallest group with room; the nodes each group gets (groups
    getting none left out; more than the room of all is capped)."""
    open_groups = [(size, i, name, high) for i, (name, size, high) in enumerate(groups)
                   if size < high]
    sizes = {name: size for size, _, name, _ in open_groups}
    limits = {name: high for _, _, name, high in open_groups}
    order = {name: i for _, i, name, _ in open_groups}
    added: dict[str, int] = {}
    left = min(new_nodes, sum(limits[n] - sizes[n] for n in sizes))
    while left > 0:
        # The smallest group with room (ties: the first given).
        name = min((n for n in sizes if sizes[n] < limits[n]),
                   key=lambda n: (sizes[n], order[n]))
        sizes[name] += 1
        added[name] = added.get(name, 0) + 1
        left -= 1
    return added
