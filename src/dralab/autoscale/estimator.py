"""The binpacking estimator: how many template nodes of one group the pending units
need, simulated with the scheduler's own plugins on a fork of the cluster.

Units go in Cluster Autoscaler's order (largest first: CPU and memory requests
relative to the template node, then arrival). Each pod tries the nodes this
estimate added (an equivalence class skips those it already failed on: nodes
only fill up -- except for pods with topology spread or pod affinity, whose
answer can turn), else one more template node if the group has room. A new
node first gets the pods that come with it (DaemonSet pods, ``TemplateNodes.
pods``), placed by the scheduler, before any pending pod. A pod that does not
fit a fresh template node cannot be helped by the group, nor can its
equivalents; one that would fit but finds the group at its max size is blocked
by "max size N reached". A gang is placed whole or not at all (a nested fork).

As CA's binpacking estimator (estimator/binpacking_estimator.go), a pod with a
hostname topology spread constraint that the newest node rejects for the
constraint may go to any other node, the cluster's own included (a new domain
can lift the global minimum); the estimate's node count is every node that took
a pod, cluster nodes included, as CA counts it.

The ``Estimate`` also measures the option for the expanders: CA's least-waste
score (unused CPU and memory fractions: the helped pods' requests against the
template's capacity times the node count), the unused DRA capacity of the new
nodes (1 - their mean DRA utilisation; only ``least-waste-dra`` reads it) and
the FGD fragmentation of the new nodes towards the helped pods' shapes.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass, field

from dralab.api.core import Pod
from dralab.api.quantity import Quantity
from dralab.api.resource import ResourceClaim
from dralab.cluster import PodInfo
from dralab.cluster.records import raw_spec_field
from dralab.controllers.resourceclaims import ensure_pod_claims
from dralab.policies.frag import Shape, TargetWorkload, node_fragmentation
from dralab.scheduler import Scheduler
from dralab.scheduler.plugins.podtopologyspread import ERR_REASON_CONSTRAINTS_NOT_MATCH

from .fastpath import best_group_for_fastpath
from .gpushare import node_gpus, pod_shape
from .groups import NodeGroup, TemplateNodes
from .placement import (
    KeyFn,
    PlaceOutcome,
    dry_run_key_fns,
    place_pod,
    place_prepared,
    prepare_pod,
)
from .price import pod_price
from .units import PodUnit, has_persistent_volumes
from .utilization import AllocatedDevices, gpu_config, node_utilization

__all__ = ["MAX_NODES_PER_SCALE_UP", "MEASURES", "Estimate", "as_group", "estimate",
           "max_nodes_reason", "max_size_reason"]


def max_size_reason(group: NodeGroup) -> str:
    return f"{group.name}: max size {group.max_size} reached"


# Cluster Autoscaler's --max-nodes-per-scaleup: the most nodes one estimate may add
# (its estimation limiter, estimator/threshold_based_limiter.go, with the static
# threshold of that flag). CA's other threshold, --max-nodegroup-binpacking-duration
# (10 s of wall clock), is not modelled: a run must not depend on the machine's speed.
MAX_NODES_PER_SCALE_UP = 1000


def max_nodes_reason(group: NodeGroup, limit: int) -> str:
    return (f"{group.name}: {limit:,} nodes in one scale-up reached "
            f"(--max-nodes-per-scaleup)")


@dataclass(slots=True)
class Estimate:
    """One group's option: the nodes it would add and the units they would take.
    ``blocked``: why a unit (by name) is not helped (a scheduler message, or the max
    size)."""

    group: NodeGroup
    nodes: list[str] = field(default_factory=list)
    units: list[PodUnit] = field(default_factory=list)
    blocked: dict[str, str] = field(default_factory=dict)
    at_max: set[str] = field(default_factory=set)
    waste: float = 0.0
    fragmentation: float = 0.0
    max_nodes: int = 0  # the limiter's cap it was made with (0: none)
    # Cluster nodes that took pods of this estimate (hostname topology spread).
    existing: list[str] = field(default_factory=list)
    dra_waste: float = 0.0
    # A zero-or-max group's option is all its nodes whatever the pods need (0: not so).
    forced_count: int = 0
    # CA's price expander's inputs (measure "price"): the helped pods' price per hour,
    # the template node's CPU (millicores) and whether it is a GPU node, and how many
    # nodes the cluster has (its preferred node size).
    pods_price: float = 0.0
    template_cpu_m: int = 0
    template_gpu: bool = False
    cluster_nodes: int = 0

    @property
    def node_count(self) -> int:
        """CA's estimated node count: the new nodes and the cluster's that took pods."""
        return self.forced_count or len(self.nodes) + len(self.existing)

    @property
    def pods(self) -> list[str]:
        return [k for unit in self.units for k in unit.keys]

    @property
    def pod_count(self) -> int:
        return sum(len(unit.pods) for unit in self.units)


def as_group(option: Estimate, group: NodeGroup) -> Estimate:
    """``option`` (of an alike group: same template apart from names and topology, same
    room) as the estimate of ``group``. Node names stay the twin's: only their number
    is read; a kept estimate is always made for its own group."""
    renamed = {max_size_reason(option.group): max_size_reason(group)}
    if option.max_nodes:
        renamed[max_nodes_reason(option.group, option.max_nodes)] = \
            max_nodes_reason(group, option.max_nodes)
    blocked = {k: renamed.get(v, v) for k, v in option.blocked.items()}
    return Estimate(group, list(option.nodes), list(option.units), blocked,
                    set(option.at_max), option.waste, option.fragmentation,
                    option.max_nodes, list(option.existing), option.dra_waste,
                    option.forced_count, option.pods_price, option.template_cpu_m,
                    option.template_gpu, option.cluster_nodes)


HOSTNAME = "kubernetes.io/hostname"


def _hostname_spread(pod: Pod) -> bool:
    """Whether a topology spread constraint of the pod is per node (CA's
    isPodUsingHostNameTopologyKey)."""
    constraints = raw_spec_field(pod, "topologySpreadConstraints")
    return isinstance(constraints, list) and any(
        isinstance(c, dict) and c.get("topologyKey") == HOSTNAME for c in constraints)


def _size_score(info: PodInfo, cpu: int, memory: int) -> float:
    score = 0.0
    if cpu:
        score += info.requests.get("cpu", 0) / cpu
    if memory:
        score += info.requests.get("memory", 0) / memory
    return score


class _Packer:
    """One estimate in progress on an open fork."""

    def __init__(self, scheduler: Scheduler, templates: TemplateNodes, group: NodeGroup,
                 offset: int, room: int, hopeless: dict[Hashable, str] | None = None,
                 max_nodes: int = 0) -> None:
        self.scheduler = scheduler
        self.templates = templates
        self.group = group
        self.offset = offset        # template nodes this loop already took from the group
        self.room = room
        self.max_nodes = max_nodes  # the limiter's cap (0: none)
        self.nodes: list[str] = []
        self.index: dict[str, int] = {}
        # Per key, the first of ``nodes`` not known to reject it: nodes only fill up
        # (a gang's tries are undone), so a node that rejected a pod rejects its
        # equivalents for the rest of the estimate. Kept per equivalence key and per
        # filter key (``Prepared.filter_key``): the pods of an Indexed Job differ in
        # labels, so each has its own equivalence key (as in CA), yet every node
        # answers them alike.
        self.first_open: dict[Hashable, int] = {}
        self.first_open_filter: dict[Hashable, int] = {}
        self.hopeless: dict[Hashable, str] = hopeless if hopeless is not None else {}
        # Once the estimate may add no node, a key that every node rejected gets the
        # same answer again (until a gang's undo frees nodes).
        self.capped: dict[Hashable, str] = {}
        self.key_fns: dict[int, dict[str, KeyFn]] = {}  # per profile (framework id)
        # An empty template node kept for the next try: a pod that fits no fresh node
        # leaves it empty, and adding and removing nodes again and again would make
        # the DRA plugin re-index their slices each time.
        self.spare: str | None = None
        # Cluster nodes (not added here) that took pods of this estimate.
        self.existing: list[str] = []
        self.monotone: dict[Hashable, bool] = {}
        self._rng = random.Random(f"template-pods:{group.name}:{offset}")

    def _spare(self) -> str:
        if self.spare is None:
            index = self.offset + len(self.nodes)
            node, slices = self.templates.node(self.group.name, index)
            cluster = self.scheduler.cluster
            cluster.add_node(node, slices)
            self.spare = node.metadata.name or ""
            for pod, claims in self.templates.pods(self.group.name, index):
                self._place_template_pod(pod, claims, self.spare)
        return self.spare

    def _place_template_pod(self, pod: Pod, claims: Sequence[ResourceClaim],
                            node: str) -> None:
        """A pod that comes with a fresh node, placed there by the scheduler (its claims
        allocated on the node's devices); one the scheduler rejects is counted on the
        node all the same, as CA force-adds a template's pods."""
        cluster = self.scheduler.cluster
        if f"{pod.metadata.namespace or 'default'}/{pod.metadata.name}" in cluster.pods:
            return
        for claim in claims:
            cluster.add_claim(claim)
        info = ensure_pod_claims(cluster, cluster.add_pod(pod), self._rng)
        if place_pod(self.scheduler, info, (node,)).node is None:
            cluster.assume_pod(info, node)

    def _is_monotone(self, info: PodInfo, key: Hashable) -> bool:
        """Whether a node that rejected the pod rejects it for the rest of the estimate:
        not so with topology spread or pod affinity, which more pods can satisfy."""
        known = self.monotone.get(key)
        if known is None:
            affinity = raw_spec_field(info.pod, "affinity")
            known = not raw_spec_field(info.pod, "topologySpreadConstraints") and not (
                isinstance(affinity, dict) and affinity.get("podAffinity"))
            self.monotone[key] = known
        return known

    def _try_added(self, info: PodInfo, key: Hashable, shared: bool) -> bool:
        """Place ``info`` on the first node this estimate added that takes it, skipping
        those known to reject it. True when placed."""
        monotone = self._is_monotone(info, key)
        start = self.first_open.get(key, 0) if monotone else 0
        nodes = self.nodes
        if start >= len(nodes):
            return False
        prepared = prepare_pod(self.scheduler, info)
        if isinstance(prepared, PlaceOutcome):
            self.first_open[key] = len(nodes)
            return False
        fkey = None
        if shared and monotone:
            fns = self.key_fns.get(id(prepared.framework))
            if fns is None:
                fns = self.key_fns[id(prepared.framework)] = dry_run_key_fns(prepared.framework)
            fkey = prepared.filter_key(fns)
        if fkey is not None:
            start = max(start, self.first_open_filter.get(fkey, 0))
        outcome = place_prepared(self.scheduler, info, prepared,
                                 (nodes[i] for i in range(start, len(nodes))))
        at = len(nodes) if outcome.node is None else self.index[outcome.node]
        self.first_open[key] = at
        if fkey is not None:
            self.first_open_filter[fkey] = at
        if outcome.node is None and outcome.reason.endswith(ERR_REASON_CONSTRAINTS_NOT_MATCH) \
                and _hostname_spread(info.pod):
            return self._try_elsewhere(info)
        return outcome.node is not None

    def _try_elsewhere(self, info: PodInfo) -> bool:
        """CA's retry of a pod the newest node rejected for its hostname topology spread:
        any node but that one may take it, the cluster's own included."""
        tried = set(self.index)
        others = [n for n in self.scheduler.cluster.node_names()
                  if n not in tried and n != self.spare]
        if not others:
            return False
        outcome = place_pod(self.scheduler, info, others)
        if outcome.node is None:
            return False
        if outcome.node not in self.existing:
            self.existing.append(outcome.node)
        return True

    def place(self, info: PodInfo, key: Hashable, shared: bool = True) -> str | None:
        """None when placed, else why not. ``shared``: whether what the nodes answered
        may be shared with pods of the same filter key (not inside a gang's fork, whose
        placements are undone)."""
        if key in self.hopeless:
            return self.hopeless[key]
        if key in self.capped and self._is_monotone(info, key):
            return self.capped[key]
        if self._try_added(info, key, shared):
            return None
        scheduler = self.scheduler
        if len(self.nodes) < self.room and self.max_nodes and \
                len(self.nodes) >= self.max_nodes:
            # CA's estimation limiter: no permission to add a node, and no try on one.
            self.capped[key] = max_nodes_reason(self.group, self.max_nodes)
            return self.capped[key]
        name = self._spare()
        if len(self.nodes) >= self.room:
            scheduler.fork()  # would it fit a fresh node? Try, then take the pod back.
            outcome = place_pod(scheduler, info, (name,))
            scheduler.revert()
            if outcome.node is not None:
                self.capped[key] = max_size_reason(self.group)
                return self.capped[key]
        else:
            outcome = place_pod(scheduler, info, (name,))
            if outcome.node is not None:
                self.index[name] = len(self.nodes)
                self.nodes.append(name)
                self.spare = None
                return None
        reason = outcome.reason or "does not fit a new node"
        if self._is_monotone(info, key):
            self.hopeless[key] = reason
        return reason

    def _may_add(self) -> bool:
        """Whether the group has room for one more node and the limiter allows it."""
        return len(self.nodes) < self.room and not (
            self.max_nodes and len(self.nodes) >= self.max_nodes)

    def _take_spare(self) -> str:
        name = self._spare()
        self.index[name] = len(self.nodes)
        self.nodes.append(name)
        self.spare = None
        return name

    def fastpath(self, units: Sequence[PodUnit]) -> dict[str, str | None]:
        """CA's tryFastPath for one equivalence group of single pods: those the nodes
        this estimate added take go there; of the rest, one fresh node is filled by
        the scheduler, and each further node (while the group has room and the limiter
        allows) is given as many pods again, bound without a Filter run -- the nodes
        are alike and the pods equivalent. Per unit, None when placed, else why not
        (those left over get the ordinary answer: the max size, the limiter)."""
        out: dict[str, str | None] = {}
        rest: list[PodUnit] = []
        for unit in units:
            if self._try_added(unit.pods[0], unit.key, True):
                out[unit.name] = None
            else:
                rest.append(unit)
        done = 0
        if rest and self._may_add():
            name = self._spare()
            scheduler = self.scheduler
            while done < len(rest) and \
                    place_pod(scheduler, rest[done].pods[0], (name,)).node is not None:
                done += 1
            per_node = done
            if per_node:
                self.index[name] = len(self.nodes)
                self.nodes.append(name)
                self.spare = None
                while done < len(rest) and self._may_add():
                    name = self._take_spare()
                    for unit in rest[done:done + per_node]:
                        scheduler.cluster.bind_pod(unit.pods[0], name)
                    done += min(per_node, len(rest) - done)
                # Every node added so far is as full as the fastpath made it.
                self.first_open[rest[0].key] = len(self.nodes)
        for unit in rest[:done]:
            out[unit.name] = None
        for unit in rest[done:]:
            out[unit.name] = self.place(unit.pods[0], unit.key)
        return out

    def undo_to(self, before: int, existing_before: int) -> None:
        """After reverting a gang's fork: forget the nodes it added and the cluster nodes
        it used (one that was the spare before the fork is still there, empty: the
        spare again)."""
        cluster = self.scheduler.cluster
        survivors = [n for n in self.nodes[before:] if n in cluster.nodes]
        for name in self.nodes[before:]:
            del self.index[name]
        del self.nodes[before:]
        if self.spare is not None and self.spare not in cluster.nodes:
            self.spare = None
        if survivors:
            self.spare = survivors[0]
        self.first_open = {k: min(v, before) for k, v in self.first_open.items()}
        self.first_open_filter = {k: min(v, before)
                                  for k, v in self.first_open_filter.items()}
        self.capped.clear()
        del self.existing[existing_before:]

    def drop_spare(self) -> None:
        if self.spare is not None:
            self.scheduler.cluster.remove_node(self.spare)
            self.spare = None


MEASURES = frozenset({"waste", "fragmentation"})


def estimate(scheduler: Scheduler, templates: TemplateNodes, group: NodeGroup,
             units: Sequence[PodUnit], offset: int = 0, keep: bool = False,
             measures: Collection[str] = MEASURES,
             hopeless: dict[Hashable, str] | None = None, max_nodes: int = 0,
             fastpath: bool = False) -> Estimate:
    """The option of scaling up ``group`` for ``units``. The scheduler's cluster is
    left as it was unless ``keep`` (then the new nodes and placements stay, for the
    caller's own fork). ``offset``: nodes of the group added earlier in this loop.
    ``measures``: which of the new nodes' measures to work out (``waste``,
    ``fragmentation``; the others stay 0: only the expanders read them).
    ``hopeless``: the pods (by equivalence key) known not to fit a fresh node of the
    group, with why; shared by estimates of one group in one loop, and added to.
    ``max_nodes``: CA's estimation limiter (``MAX_NODES_PER_SCALE_UP``; 0: none): the
    estimate adds at most that many nodes, and a unit that would need one more is
    blocked by ``max_nodes_reason`` (a later scale-up may take it). ``fastpath``: CA's
    --fastpath-binpacking-enabled (``_fastpath_group``, ``_Packer.fastpath``)."""
    room = group.room - offset
    result = Estimate(group, max_nodes=max_nodes)
    first, _ = templates.node(group.name, offset)
    cpu = first.status.allocatable.get("cpu")
    memory = first.status.allocatable.get("memory")
    cpu_m = cpu.milli_value() if cpu is not None else 0
    mem_m = memory.milli_value() if memory is not None else 0
    ordered = sorted(units, key=lambda u: -max(_size_score(p, cpu_m, mem_m) for p in u.pods))
    fast: list[PodUnit] = []
    if fastpath:
        capacity = first.status.capacity or first.status.allocatable
        ordered, fast = _fastpath_group(ordered, capacity.get("cpu"), capacity.get("memory"))
    packer = _Packer(scheduler, templates, group, offset, room, hopeless, max_nodes)
    scheduler.fork()
    try:
        for unit in ordered:
            gang = len(unit.pods) > 1
            if gang:
                scheduler.fork()
            before = len(packer.nodes)
            existing_before = len(packer.existing)
            reason = None
            for info in unit.pods:
                reason = packer.place(info, unit.key if not gang else info.key, not gang)
                if reason is not None:
                    break
            if gang:
                if reason is None:
                    scheduler.commit()
                else:
                    scheduler.revert()
                    packer.undo_to(before, existing_before)
            if reason is None:
                result.units.append(unit)
            else:
                result.blocked[unit.name] = reason
                if reason == max_size_reason(group):
                    result.at_max.add(unit.name)
        if fast:
            answers = packer.fastpath(fast)
            for unit in fast:
                answer = answers[unit.name]
                if answer is None:
                    result.units.append(unit)
                    continue
                result.blocked[unit.name] = answer
                if answer == max_size_reason(group):
                    result.at_max.add(unit.name)
        result.nodes = list(packer.nodes)
        result.existing = list(packer.existing)
        if measures:
            _measure(scheduler, templates, result, measures)
        if keep:
            packer.drop_spare()
    finally:
        if keep:
            scheduler.commit()
        else:
            scheduler.revert()
    # The arrival order of the helped units, whatever order they were packed in.
    rank = {u.name: i for i, u in enumerate(units)}
    result.units.sort(key=lambda u: rank[u.name])
    return result


def _fastpath_group(ordered: list[PodUnit], cpu: Quantity | None,
                    memory: Quantity | None) -> tuple[list[PodUnit], list[PodUnit]]:
    """``ordered`` without the equivalence group the fastpath packs, and that group
    (CA's determineBestPEGToFastpath over the groups in their order). Only single pods
    without ResourceClaims or PersistentVolumeClaims form candidate groups here: their
    Reserve writes nothing per node, so binding them unsimulated leaves the fork as the
    scheduler would have."""
    groups: dict[Hashable, list[PodUnit]] = {}
    for unit in ordered:
        groups.setdefault(unit.key, []).append(unit)
    candidates = [g for g in groups.values() if len(g[0].pods) == 1
                  and not g[0].pods[0].pod.spec.resource_claims
                  and not has_persistent_volumes(g[0].pods[0].pod)]
    best = best_group_for_fastpath(
        [[u.pods[0].pod for u in g] for g in candidates],
        cpu.as_approximate_float() if cpu is not None else 0.0,
        memory.as_approximate_float() if memory is not None else 0.0)
    if best < 0:
        return ordered, []
    chosen = {u.name for u in candidates[best]}
    return [u for u in ordered if u.name not in chosen], candidates[best]


def _measure(scheduler: Scheduler, templates: TemplateNodes, result: Estimate,
             measures: Collection[str]) -> None:
    if not result.nodes and not result.existing:
        return
    cluster = scheduler.cluster
    allocated = AllocatedDevices(cluster)
    if "waste" in measures:
        result.waste = _least_waste(templates, result)
    if "price" in measures:
        template, _ = templates.node(result.group.name, 0)
        cpu = (template.status.capacity or template.status.allocatable).get("cpu")
        result.template_cpu_m = cpu.milli_value() if cpu is not None else 0
        result.template_gpu = gpu_config(template, False) is not None
        result.pods_price = sum(pod_price(info.requests) for unit in result.units
                                for info in unit.pods)
        result.cluster_nodes = templates.cluster_size
    if "dra_waste" in measures:
        dra: list[float] = []
        for name in result.nodes:
            util = node_utilization(cluster, cluster.nodes[name], allocated)
            if util.dra is not None:
                dra.append(util.dra)
        result.dra_waste = 1.0 - sum(dra) / len(dra) if dra else 0.0
    if "fragmentation" not in measures:
        return
    views = {name: node_gpus(cluster, name, allocated) for name in result.nodes}
    shapes: Counter[Shape] = Counter()
    for unit in result.units:
        for info in unit.pods:
            shapes[pod_shape(cluster, info, views)] += 1
    target = TargetWorkload.of(list(shapes), list(shapes.values()))
    total = 0.0
    for name in result.nodes:
        node = cluster.nodes[name]
        total += node_fragmentation(node.alloc_cpu - node.requested.get("cpu", 0),
                                    views[name].free_shares(), 0, target)
    result.fragmentation = total


def _least_waste(templates: TemplateNodes, result: Estimate) -> float:
    """CA's least-waste score (expander/waste/waste.go): the unused fraction of CPU
    plus that of memory, the helped pods' requests against the template's capacity
    times the node count. A resource the template has none of counts as NaN there;
    here as 0 (no waste to speak of)."""
    node, _ = templates.node(result.group.name, 0)
    capacity = node.status.capacity or node.status.allocatable
    count = result.node_count
    cpu_q, mem_q = capacity.get("cpu"), capacity.get("memory")
    avail_cpu = (cpu_q.milli_value() if cpu_q is not None else 0) * count
    avail_mem = (mem_q.milli_value() if mem_q is not None else 0) * count
    used_cpu = used_mem = 0
    for unit in result.units:
        for info in unit.pods:
            used_cpu += info.requests.get("cpu", 0)
            used_mem += info.requests.get("memory", 0)
    waste = (avail_cpu - used_cpu) / avail_cpu if avail_cpu else 0.0
    waste += (avail_mem - used_mem) / avail_mem if avail_mem else 0.0
    return waste
