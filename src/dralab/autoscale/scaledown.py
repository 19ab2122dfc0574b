"""Scale-down: which nodes of autoscaled pools could go, as Cluster Autoscaler's
planner finds them, and when they may go (``UnneededNodes``, CA's unneeded.Nodes).

A loop (``unneeded_nodes``): ``eligibility`` (CA's ``FilterOutUnremovable``) measures
every node of an autoscaled pool on the cluster as it is and keeps those being
deleted, annotated scale-down-disabled, unmeasurable or above the threshold; the
others are simulated away in name order (``categorize_nodes``), at most CA's
unneeded-nodes limit of them (``UnneededNodes.limit``). A node's removal
(``simulate_node_removal``, CA's RemovalSimulator): CA's drainability rules
(``drainability``) sort its pods into moved, left (DaemonSet, mirror,
long-terminating) and waited for (safe-to-evict "on-completion"), or name the pod
that blocks; the node becomes a pod-less ghost tainted ToBeDeletedByClusterAutoscaler
and its pods are deleted (claims released as the claim controller releases them),
re-created pending and placed with the scheduler's plugins on the other nodes; when
they all fit the node leaves the simulated cluster and the next candidate sees the
moved pods. dralab also keeps a pool at its min size and the cluster at
--cores-total/--memory-total's minima while simulating (CA checks those when it
picks nodes to delete). ``UnneededNodes.removable_at`` then says which unneeded nodes
may go now (unneeded or unready long enough, min size, minima, all of an atomic
group, no on-completion pods), and ``crop_to_budget`` how many at once. Atomic groups
(CA's ZeroOrMaxNodeScaling: a pool's ``autoscaling.zeroOrMaxNodeScaling``) go whole or
not at all: their nodes are not counted by the unneeded-nodes limit, a group not all of
whose nodes may go is kept with AtomicScaleDownFailed, and the budgets take such
groups first and whole. Every node kept says why, with CA's ``UnremovableReason``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import msgspec

from dralab.api.core import Node, Pod, PodStatus, Taint
from dralab.cluster import PodInfo
from dralab.scheduler import Scheduler

from .decisions import ScaleDown
from .drainability import DeleteOptions, DrainContext, DrainRule, default_rules, pods_to_move
from .eligibility import (
    TO_BE_DELETED_TAINT,
    EligibilityOptions,
    Unremovable,
    filter_out_unremovable,
    is_ready,
    scale_down_disabled,
)
from .groups import NodeGroup, pool_of
from .placement import place_pod
from .units import is_movable
from .utilization import AllocatedDevices, PoolCache, is_daemonset_pod, is_mirror_pod

__all__ = ["DELETION_CANDIDATE_TAINT", "AtomicSize", "ScaleDownOptions", "UnneededNode",
           "UnneededNodes", "categorize_nodes", "crop_to_budget", "has_pods_to_move",
           "inject_recent_evictions", "is_static_pod", "move_pods", "node_cores_memory",
           "simulate_node_removal", "unneeded_nodes"]

# CA's soft taint on the nodes it found unneeded (its value: the unix time it was set).
DELETION_CANDIDATE_TAINT = "DeletionCandidateOfClusterAutoscaler"


class ScaleDownOptions(EligibilityOptions, Protocol):
    """The flags scale-down reads beyond eligibility's."""

    @property
    def cores_total(self) -> tuple[int, int]: ...
    @property
    def memory_total(self) -> tuple[int, int]: ...
    @property
    def skip_nodes_with_system_pods(self) -> bool: ...
    @property
    def skip_nodes_with_local_storage(self) -> bool: ...
    @property
    def skip_nodes_with_custom_controller_pods(self) -> bool: ...
    @property
    def blocking_system_pod_disruption_timeout(self) -> float: ...


def _fresh(pod: Pod) -> Pod:
    """The pod as its controller would re-create it: no node, no status."""
    spec = msgspec.structs.replace(pod.spec, node_name=None)
    return msgspec.structs.replace(pod, spec=spec, status=PodStatus())


def _goes_with_node(pod: Pod) -> bool:
    """DaemonSet and mirror pods are not moved: they end with their node."""
    return is_daemonset_pod(pod) or is_mirror_pod(pod)


def _ghost(node: Node, now: float | None) -> Node:
    """The node as CA leaves it in its snapshot while it drains it: tainted
    ToBeDeletedByClusterAutoscaler NoSchedule (still a topology domain for spread
    constraints that ignore taints)."""
    taint = Taint(key=TO_BE_DELETED_TAINT, value=str(int(now or 0)), effect="NoSchedule")
    spec = msgspec.structs.replace(node.spec, taints=[*node.spec.taints, taint])
    return msgspec.structs.replace(node, spec=spec)


def _move(scheduler: Scheduler, node: str, targets: Callable[[], Iterable[str]],
          rules: Sequence[DrainRule] | None = None, ctx: DrainContext | None = None
          ) -> tuple[str, str] | None:
    """Move every pod off ``node`` (on the caller's fork): None when all moved, else
    CA's reason and what blocked. ``rules``: CA's drainability rules (with ``ctx``),
    and CA's RemovalSimulator: the node becomes a pod-less tainted ghost while its pods
    are placed and is removed once they all are. None: DaemonSet and mirror pods stay,
    the others move when ``is_movable``, the node stays as it is."""
    cluster = scheduler.cluster
    info = cluster.nodes.get(node)
    if info is None:
        return "NoNodeInfo", "no such node"
    pods: list[PodInfo] = []
    if rules is None:
        for pod in info.pods:
            if _goes_with_node(pod.pod):
                continue
            if not is_movable(pod.pod):
                return "BlockedByPod", f"pod {pod.key} is not replicated"
            pods.append(pod)
    else:
        by_pod = {id(p.pod): p for p in info.pods}
        found = pods_to_move((p.pod for p in info.pods), rules, ctx or DrainContext())
        if found.blocking is not None:
            _, reason, error = found.blocking
            return "BlockedByPod", f"{reason}: {error}"
        pods = [by_pod[id(p)] for p in found.pods]
    fresh: list[tuple[str, Pod]] = []
    for pod in pods:
        scheduler.delete_pod(pod.key)
        fresh.append((pod.key, _fresh(pod.pod)))
    if rules is not None:
        for pod in list(cluster.nodes[node].pods):
            scheduler.delete_pod(pod.key)  # the ghost is pod-less
        cluster.add_node(_ghost(info.node, (ctx or DrainContext()).now))
    for key, spec in fresh:
        moved = cluster.add_pod(spec)
        framework = scheduler.framework_for(moved)
        if framework is None or not framework.run_pre_enqueue(moved).is_success():
            return "NoPlaceToMovePods", f"pod {key} cannot be re-created"
        if place_pod(scheduler, moved, [n for n in targets() if n != node]).node is None:
            return "NoPlaceToMovePods", f"pod {key} fits on no other node"
    if rules is not None:
        cluster.remove_node(node)
    return None


def simulate_node_removal(scheduler: Scheduler, node: str, destinations: Collection[str],
                          rules: Sequence[DrainRule], ctx: DrainContext, persist: bool = False
                          ) -> tuple[list[str], Unremovable | None]:
    """CA's ``RemovalSimulator.SimulateNodeRemoval``: whether ``node``'s pods can all
    move to ``destinations``; (the pods it reschedules, None) or ([], why not). The
    cluster is left as it was unless ``persist`` and the node could go."""
    info = scheduler.cluster.nodes.get(node)
    if info is None:
        return [], Unremovable(node, "NoNodeInfo", "no such node")
    keys = {id(p.pod): p.key for p in info.pods}
    moved = [keys[id(p)] for p in pods_to_move((p.pod for p in info.pods), rules, ctx).pods]
    scheduler.fork()
    blocked = _move(scheduler, node, lambda: sorted(destinations), rules, ctx)
    if blocked is None and persist:
        scheduler.commit()
    else:
        scheduler.revert()
    if blocked is not None:
        return [], Unremovable(node, blocked[0], blocked[1], pool_of(info.node) or "")
    return moved, None


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
                   cache: PoolCache | None = None, wall_time: float | None = None,
                   limit: int | None = None) -> tuple[list[ScaleDown], list[Unremovable]]:
    """The nodes that could go now, and the nodes of autoscaled pools kept with the
    reason (see the module docstring); the cluster is left as it was. ``now``: the
    loop's clock (``ScaleDown.since``); ``wall_time``: unix seconds, None without a
    wall clock. ``cache``: pool utilisations kept across calls. ``limit``: CA's
    unneeded-nodes limit (``UnneededNodes.limit``)."""
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
    rules = default_rules(DeleteOptions(
        options.skip_nodes_with_system_pods, options.skip_nodes_with_local_storage,
        options.skip_nodes_with_custom_controller_pods,
        options.blocking_system_pod_disruption_timeout))
    ctx = DrainContext((), wall_time)
    # The candidates' Node objects: a node that can go leaves the simulated cluster.
    nodes = {name: cluster.nodes[name].node for name in found.unneeded}

    def admit(name: str) -> Unremovable | None:
        # dralab keeps a group at its min size and the cluster at --cores-total and
        # --memory-total's minima already while simulating (CA checks them when it
        # picks nodes to delete): a node that may not go is not simulated away.
        node = nodes[name]
        group = groups[pool_of(node) or ""]
        if sizes.get(group.name, 0) <= group.min_size:
            return Unremovable(name, "NodeGroupMinSizeReached",
                               f"{group.name}: min size {group.min_size}", group.name)
        node_cores, node_memory = node_cores_memory(node)
        if cores - node_cores < options.cores_total[0] or \
                memory - node_memory < options.memory_total[0]:
            return Unremovable(name, "MinimalResourceLimitExceeded",
                               "the cluster would go under --cores-total or "
                               "--memory-total's minimum", group.name)
        return None

    def removed(name: str) -> None:
        nonlocal cores, memory
        node = nodes[name]
        sizes[pool_of(node) or ""] -= 1
        node_cores, node_memory = node_cores_memory(node)
        cores -= node_cores
        memory -= node_memory

    scheduler.fork()
    try:
        removable, refused = categorize_nodes(
            scheduler, found.unneeded, cluster.node_names(), rules, ctx, admit, removed, limit,
            lambda name: groups[pool_of(nodes[name]) or ""].zero_or_max)
    finally:
        scheduler.revert()
    gone = {name for name, _ in removable}
    waiting = {name for name in gone if pods_to_move(
        (p.pod for p in cluster.nodes[name].pods), rules, ctx).on_completion_pods}
    out = [ScaleDown(name, pool_of(nodes[name]) or "", found.utilization[name].value, now,
                     name in waiting)
           for name in found.unneeded if name in gone]
    return out, kept + refused


CONFIG_SOURCE = "kubernetes.io/config.source"
# planner getKnownOwnerRef: the controllers whose replicas CA can count.
KNOWN_OWNERS = ("StatefulSet", "Job", "ReplicaSet", "ReplicationController")


def is_static_pod(pod: Pod) -> bool:
    """Read by the kubelet from a file or URL, not the API server."""
    source = (pod.metadata.annotations or {}).get(CONFIG_SOURCE)
    return source is not None and source != "api"


def inject_recent_evictions(scheduler: Scheduler, pods: Sequence[Pod],
                            replicas: Mapping[tuple[str, str, str], tuple[int, int]]
                            ) -> list[str]:
    """CA's ``injectRecentlyEvictedPods``, on the caller's fork: the pods evicted from
    nodes being deleted that their controllers will re-create (not static, mirror or
    DaemonSet pods; of a known controller, as many as its target replicas exceed its
    current ones; of another or none, all) are placed anywhere they fit, in order,
    until one fits nowhere. ``replicas``: (kind, namespace, name) -> (target,
    current); a controller missing there counts as unknown. Returns the placed keys."""
    cluster = scheduler.cluster
    added: dict[tuple[str, str, str], int] = {}
    chosen: list[Pod] = []
    for pod in pods:
        if is_static_pod(pod) or is_mirror_pod(pod) or is_daemonset_pod(pod):
            continue
        ref = next((r for r in pod.metadata.owner_references if r.kind in KNOWN_OWNERS), None)
        key = (ref.kind, pod.metadata.namespace or "default", ref.name) if ref else None
        known = replicas.get(key) if key is not None else None
        if key is None or known is None:
            chosen.append(pod)
            continue
        target, current = known
        if target > current and added.get(key, 0) < target - current:
            chosen.append(pod)
            added[key] = added.get(key, 0) + 1
    placed: list[str] = []
    for pod in chosen:
        info = cluster.add_pod(_fresh(pod))
        if place_pod(scheduler, info, cluster.node_names()).node is None:
            scheduler.delete_pod(info.key)
            break  # CA stops at the first pod that fits nowhere
        placed.append(info.key)
    return placed


def categorize_nodes(scheduler: Scheduler, candidates: Sequence[str],
                     destinations: Collection[str], rules: Sequence[DrainRule],
                     ctx: DrainContext, admit: Callable[[str], Unremovable | None] | None = None,
                     removed: Callable[[str], None] | None = None, limit: int | None = None,
                     atomic: Callable[[str], bool] | None = None,
                     ) -> tuple[list[tuple[str, list[str]]], list[Unremovable]]:
    """CA's ``Planner.categorizeNodes`` after eligibility, on the caller's fork: each
    candidate's removal simulated in order and kept when it succeeds (its pods stay
    moved, it leaves the cluster and the destinations). ``admit``: a check before a
    candidate is simulated (None: go ahead); ``removed``: told of each node that can
    go; ``limit``: no more candidates are simulated once this many can go (CA's
    unneeded-nodes limit; the rest are neither); ``atomic``: whether a node is of a
    ZeroOrMaxNodeScaling group, whose removable nodes the limit does not count (CA: an
    atomic group goes whole). Returns the removable nodes with the pods they move, and
    the unremovable ones."""
    targets = set(destinations)
    removable: list[tuple[str, list[str]]] = []
    kept: list[Unremovable] = []
    atomic_count = 0
    for name in candidates:
        if limit is not None and len(removable) - atomic_count >= limit:
            break
        refused = admit(name) if admit is not None else None
        if refused is not None:
            kept.append(refused)
            continue
        moved, why = simulate_node_removal(scheduler, name, targets, rules, ctx, persist=True)
        if why is None:
            removable.append((name, moved))
            if atomic is not None and atomic(name):
                atomic_count += 1
            targets.discard(name)
            if removed is not None:
                removed(name)
        else:
            kept.append(why)
    return removable, kept


def has_pods_to_move(scheduler: Scheduler, node: str) -> bool:
    """Whether removing ``node`` needs a drain: it runs pods other than DaemonSet and
    mirror pods (CA's NodeToBeRemoved.PodsToReschedule)."""
    info = scheduler.cluster.nodes.get(node)
    return info is not None and any(not _goes_with_node(p.pod) for p in info.pods)


# (node group or None, node Ready) -> the unneeded (Ready) or unready time, seconds;
# ValueError when it cannot be had.
RemovalTime = Callable[[str | None, bool], float]


@dataclass(slots=True)
class UnneededNode:
    """A node found unneeded: since when (the caller's clock) and how long it must stay
    unneeded before it may go (``threshold``; None: it could not be had)."""

    node: Node
    since: float
    threshold: float | None
    empty: bool
    # It runs safe-to-evict "on-completion" pods: it may not go before they end.
    waiting: bool = False

    @property
    def name(self) -> str:
        return self.node.metadata.name or ""


class UnneededNodes:
    """The unneeded nodes across loops, as CA's ``core/scaledown/unneeded.Nodes``:
    ``update`` keeps the time a node was first found unneeded (and takes its newest
    object and removal time: the unready time for a node that is not Ready);
    ``removable_at`` says which may go now, empty nodes first, and why the others
    may not. ``group_of``: a node's node group, None when it is not autoscaled."""

    def __init__(self, removal_time: RemovalTime,
                 group_of: Callable[[Node], str | None]) -> None:
        self._removal_time = removal_time
        self._group_of = group_of
        self._by_name: dict[str, UnneededNode] = {}
        self._latest: float | None = None
        self.min_interval: float | None = None  # the shortest time between two loops

    def limit(self, now: float, parallelism: int, unneeded_time: float) -> int:
        """CA's planner ``unneededNodesLimit`` for the loop at ``now`` (which it records):
        the unneeded nodes so far plus twice --max-scale-down-parallelism, and at most
        as many as could be deleted over the unneeded time at this loop rate."""
        if self.min_interval is None:
            self.min_interval = unneeded_time if unneeded_time > 0 else 1e-9
        if self._latest is not None and now - self._latest < self.min_interval:
            self.min_interval = now - self._latest
        self._latest = now
        loop = max(self.min_interval, 1e-9)
        extra = parallelism
        wait = max(unneeded_time, loop)
        return min(len(self._by_name) + parallelism + extra,
                   parallelism * int(wait / loop) + extra)

    def _threshold(self, node: Node) -> float | None:
        group = self._group_of(node)
        if group is None:
            return 0.0  # not autoscaled: removable_at says so
        try:
            return self._removal_time(group, is_ready(node))
        except ValueError:
            return None

    def update(self, nodes: Iterable[tuple[Node, bool]], now: float,
               since: Callable[[Node], float | None] | None = None,
               waiting: Collection[str] = ()) -> None:
        """The nodes unneeded at ``now``, each with whether it is empty; nodes no longer
        among them are forgotten. ``since``: when a new node was unneeded already
        (None: now); ``waiting``: those running on-completion pods."""
        updated: dict[str, UnneededNode] = {}
        for node, empty in nodes:
            name = node.metadata.name or ""
            known = self._by_name.get(name)
            first = known.since if known is not None else \
                (since(node) if since is not None else None)
            updated[name] = UnneededNode(node, now if first is None else first,
                                         self._threshold(node), empty, name in waiting)
        self._by_name = updated

    def load_from_existing_taints(self, nodes: Iterable[Node], now: float, ttl: float) -> None:
        """CA's LoadFromExistingTaints: nodes carrying the DeletionCandidate taint set
        less than ``ttl`` before ``now`` (unix seconds) are unneeded since then; a taint
        value that is not a unix time is skipped."""
        found: dict[str, tuple[Node, float]] = {}
        for node in nodes:
            for taint in node.spec.taints:
                if taint.key != DELETION_CANDIDATE_TAINT:
                    continue
                try:
                    since = float(int(taint.value or ""))
                except ValueError:
                    break
                if since + ttl >= now:
                    found[node.metadata.name or ""] = (node, since)
                break
        if found:
            self.update(((n, True) for n, _ in found.values()), now,
                        lambda n: found[n.metadata.name or ""][1])

    def contains(self, name: str) -> bool:
        return name in self._by_name

    def drop(self, name: str) -> None:
        self._by_name.pop(name, None)

    def as_list(self) -> list[UnneededNode]:
        return [self._by_name[n] for n in sorted(self._by_name)]

    def removable_at(self, now: float, sizes: Mapping[str, int], min_sizes: Mapping[str, int],
                     deletions: Mapping[str, int] | None = None,
                     minimums: Mapping[str, int] | None = None,
                     cluster_nodes: Iterable[Node] = (),
                     atomic: Collection[str] = ()
                     ) -> tuple[list[str], list[str], list[Unremovable]]:
        """(empty nodes, nodes to drain, the others with CA's reason) at ``now``, as CA's
        ``RemovableAt`` then ``NodesToDelete`` (a node with on-completion pods is kept
        with BlockedByOnCompletionPod). ``sizes``/``min_sizes``: per node group;
        ``deletions``: deletions in progress per group; ``minimums``: cluster-wide minima
        of "cores", "memory" (bytes) and "nodes", over ``cluster_nodes``; ``atomic``: the
        ZeroOrMaxNodeScaling groups, whose nodes go only all together (CA's
        AtomicResizeFilteringProcessor: as many as the group's target size in ``sizes``
        or its registered nodes among ``cluster_nodes``; else AtomicScaleDownFailed)."""
        cluster_nodes = list(cluster_nodes)
        sizes = dict(sizes)
        targets = {group: sizes.get(group, 0) for group in atomic}
        deletions = deletions or {}
        minimums = {k: v for k, v in (minimums or {}).items() if v > 0}
        totals = dict.fromkeys(minimums, 0)
        if minimums:
            for node in cluster_nodes:
                for key, value in zip(("cores", "memory", "nodes"),
                                      (*node_cores_memory(node), 1), strict=True):
                    if key in totals:
                        totals[key] += value
        kept: list[Unremovable] = []
        candidates: list[UnneededNode] = []
        for want_empty in (True, False):
            for item in self.as_list():
                if item.empty != want_empty:
                    continue
                reason = self._unremovable_reason(item, now, sizes, min_sizes, deletions,
                                                  minimums, totals)
                if reason is None:
                    candidates.append(item)
                else:
                    kept.append(Unremovable(item.name, reason[0], reason[1],
                                            self._group_of(item.node) or ""))
        if targets:
            candidates = self._whole_atomic_groups(candidates, targets, cluster_nodes, kept)
        empty: list[str] = []
        drain: list[str] = []
        for item in candidates:
            if item.waiting:
                kept.append(Unremovable(item.name, "BlockedByOnCompletionPod",
                                        "it runs safe-to-evict: on-completion pods",
                                        self._group_of(item.node) or ""))
            else:
                (empty if item.empty else drain).append(item.name)
        return empty, drain, kept

    def _whole_atomic_groups(self, candidates: list[UnneededNode], targets: Mapping[str, int],
                             cluster_nodes: Sequence[Node], kept: list[Unremovable]
                             ) -> list[UnneededNode]:
        """The candidates but those of atomic groups not all of whose nodes are among
        them (their target size, or all their registered nodes): those are kept with
        AtomicScaleDownFailed."""
        by_group: dict[str, list[UnneededNode]] = {}
        out: list[UnneededNode] = []
        for item in candidates:
            group = self._group_of(item.node)
            if group is not None and group in targets:
                by_group.setdefault(group, []).append(item)
            else:
                out.append(item)
        registered = dict.fromkeys(by_group, 0)
        for node in cluster_nodes:
            group = self._group_of(node)
            if group in registered:
                registered[group] += 1
        for group, items in by_group.items():
            if len(items) in (targets[group], registered[group]):
                out += items
                continue
            kept += [Unremovable(i.name, "AtomicScaleDownFailed",
                                 f"{group}: ZeroOrMaxNodeScaling, all {targets[group]} nodes "
                                 f"must go at once ({len(items)} can)", group)
                     for i in items]
        return out

    def _unremovable_reason(self, item: UnneededNode, now: float, sizes: dict[str, int],
                            min_sizes: Mapping[str, int], deletions: Mapping[str, int],
                            minimums: Mapping[str, int], totals: dict[str, int]
                            ) -> tuple[str, str] | None:
        if item.threshold is None:
            return "UnexpectedError", "the unneeded or unready time could not be had"
        if scale_down_disabled(item.node):
            return "ScaleDownDisabledAnnotation", ""
        if item.threshold > 0 and not item.since + item.threshold < now:
            if is_ready(item.node):
                return "NotUnneededLongEnough", f"unneeded since {item.since:g}"
            return "NotUnreadyLongEnough", f"unready and unneeded since {item.since:g}"
        group = self._group_of(item.node)
        if group is None:
            return "NotAutoscaled", ""
        size = sizes.get(group)
        if size is None:
            return "UnexpectedError", f"node group {group} size not known"
        low = min_sizes.get(group, 0)
        if size - deletions.get(group, 0) <= low:
            return "NodeGroupMinSizeReached", f"{group}: min size {low}"
        usage = dict(zip(("cores", "memory", "nodes"), (*node_cores_memory(item.node), 1),
                         strict=True))
        if any(totals[k] - usage[k] < low for k, low in minimums.items()):
            return "MinimalResourceLimitExceeded", \
                "the cluster would go under a minimum (--cores-total, --memory-total)"
        for key in minimums:
            totals[key] -= usage[key]
        sizes[group] = size - 1
        return None


@dataclass(frozen=True, slots=True)
class AtomicSize:
    """A ZeroOrMaxNodeScaling group as CA's budgets see it: its target size and its
    registered nodes (those in the cluster)."""

    target: int
    registered: int

    def whole(self, count: int) -> bool:
        """Whether ``count`` nodes are the whole group (CA lets either size do)."""
        return count in (self.target, self.registered)


def _buckets(names: Sequence[str], group_of: Callable[[str], str | None] | None
             ) -> dict[str | None, list[str]]:
    """The nodes by group, groups in the order they first appear (CA's ``group``)."""
    out: dict[str | None, list[str]] = {}
    for name in names:
        out.setdefault(group_of(name) if group_of is not None else None, []).append(name)
    return out


def _crop_individual(buckets: Iterable[list[str]], budget: int) -> list[str]:
    out: list[str] = []
    for nodes in buckets:
        if budget < 1:
            break
        taken = nodes[:budget]
        out += taken
        budget -= len(taken)
    return out


def crop_to_budget(empty: Sequence[str], drain: Sequence[str], parallelism: int,
                   drain_parallelism: int, empty_in_progress: int = 0,
                   drain_in_progress: int = 0,
                   group_of: Callable[[str], str | None] | None = None,
                   atomic: Mapping[str, AtomicSize] | None = None
                   ) -> tuple[list[str], list[str]]:
    """CA's scale-down budgets (``budgets.CropNodes``): at most
    --max-scale-down-parallelism deletions at once, empty nodes first, of them at most
    --max-drain-parallelism nodes that need a drain. ``group_of``: a node's group (the
    nodes are then taken group by group); ``atomic``: the ZeroOrMaxNodeScaling groups,
    taken first and whole (empty and drain nodes together) or not at all, the first one
    even beyond the budgets (CA: so that large groups are not starved), a group whose
    nodes are not all there never. Returns the empty and drain nodes to delete, atomic
    groups' first."""
    atomic = atomic or {}
    empty_groups = _buckets(empty, group_of)
    drain_groups = _buckets(drain, group_of)
    budget = parallelism - empty_in_progress - drain_in_progress
    drain_budget = drain_parallelism - drain_in_progress
    out_empty: list[str] = []
    out_drain: list[str] = []
    can_overflow = True
    for group, nodes in empty_groups.items():
        size = atomic.get(group) if group is not None else None
        if size is None:
            continue
        drains = drain_groups.get(group, [])
        over = budget < len(nodes) + len(drains) or drain_budget < len(drains)
        if over and (budget == 0 or (drains and drain_budget == 0) or not can_overflow):
            break
        if not size.whole(len(nodes) + len(drains)):
            continue  # only part of the group could go: none of it does
        out_empty += nodes
        out_drain += drains
        budget -= len(nodes) + len(drains)
        drain_budget -= len(drains)
        can_overflow = False
    drain_budget = min(budget, drain_budget)
    for group, nodes in drain_groups.items():
        size = atomic.get(group) if group is not None else None
        if size is None or group in empty_groups:
            continue  # individual, or taken with its empty nodes above
        if drain_budget < len(nodes) and (drain_budget == 0 or not can_overflow):
            break
        if not size.whole(len(nodes)):
            continue
        out_drain += nodes
        budget -= len(nodes)
        drain_budget -= len(nodes)
        can_overflow = False
    taken = _crop_individual((nodes for group, nodes in empty_groups.items()
                              if group not in atomic), budget)
    out_empty += taken
    budget -= len(taken)
    drain_budget = min(budget, drain_budget)
    out_drain += _crop_individual((nodes for group, nodes in drain_groups.items()
                                   if group not in atomic), drain_budget)
    return out_empty, out_drain
