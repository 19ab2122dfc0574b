"""Karpenter's consolidation, as its disruption controller decides it
(sigs.k8s.io/karpenter pkg/controllers/disruption: emptiness.go,
multinodeconsolidation.go, singlenodeconsolidation.go, consolidation.go, types.go).

Candidates are the NodePools' nodes (the autoscaled pools) that are consolidatable
(no pod event for their NodePool's ``consolidateAfter``), not annotated
``karpenter.sh/do-not-disrupt: "true"``, not deleting, without a running pod whose
do-not-disrupt is active, and without a pod a PodDisruptionBudget stops from eviction
(``karpenter_pdb``). Each is held to its own NodePool (``karpenter.sh/nodepool``):
none of a static NodePool's, none of one whose consolidateAfter is Never, only empty
ones of a WhenEmpty one, and within that NodePool's budgets (``karpenter_budgets``).
Their reschedulable pods are the active ones not owned by a DaemonSet or a Node; a
pod without an owner is evicted too (Karpenter does not need a controller).
A candidate's disruption cost is 1 plus each reschedulable pod's eviction cost
(1 + pod-deletion-cost/2^27 + priority/2^25, clamped to [-10, 10], at least 0); it is
empty when that is 1. Candidates are tried by savings ratio (price / cost), highest
first.

One command per loop, the first of these methods that finds one:

1. Emptiness: every empty candidate, as far as its NodePool's budgets for ``Empty``
   allow.
2. Multi-node consolidation (policy WhenEmptyOrUnderutilized, non-empty candidates
   within the ``Underutilized`` budget): the longest prefix (binary search over 2..100
   candidates) whose pods all land on the other nodes plus at most one new node,
   cheaper than the candidates together and than any of their own instance types.
3. Single-node consolidation: the first candidate whose pods land on the other
   nodes (delete) or on them plus one new node cheaper than it (replace).

A simulation deletes the candidates' pods, re-creates them pending and places them,
largest first (CPU, then memory), with the scheduler's plugins on the other nodes --
not on a node still within its NodePool's consolidateAfter of its last pod event
(IsUnderConsolidateAfter); those left over must all fit one fresh node of a single
instance type. The offerings
(pools) one fresh node of which takes them are the replacement NodeClaim's options;
``karpenter_offerings`` filters them by price, capacity type (spot-to-spot rules,
reserved capacity) and minValues as upstream, and launches the cheapest allowed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import msgspec

from dralab.api.core import Node, Pod, PodStatus
from dralab.cluster import PodInfo
from dralab.scheduler import Scheduler

from .estimator import estimate
from .groups import NodeGroup, TemplateNodes, pool_of
from .karpenter_budgets import NodePoolBudgets, within_budgets
from .karpenter_nodepool import (
    REASON_EMPTY,
    REASON_UNDERUTILIZED,
    WHEN_EMPTY_OR_UNDERUTILIZED,
    do_not_disrupt_node,
)
from .karpenter_offerings import (
    CAPACITY_TYPE,
    INSTANCE_TYPE,
    ON_DEMAND,
    ConsolidationCandidate,
    Offering,
    choose_replacement,
)
from .karpenter_pdb import PdbLimit, blocking_pdbs, do_not_disrupt_active
from .karpenter_template import NODEPOOL_LABEL
from .placement import place_pod
from .units import pod_units

__all__ = ["EMPTINESS", "EPHEMERAL_TAINTS", "METHODS", "Command", "DisruptionCandidate",
           "eviction_cost", "find_command", "initialized", "method_of", "node_candidates",
           "validate_command"]

# Upstream's constants (multinodeconsolidation.go, types.go).
MAX_MULTI_NODE_CANDIDATES = 100
PER_NODE_BASE_DISRUPTION_COST = 1.0


def eviction_cost(pod: Pod) -> float:
    """disruption.EvictionCost: 1, plus the pod-deletion-cost and priority terms."""
    cost = 1.0
    text = (pod.metadata.annotations or {}).get("controller.kubernetes.io/pod-deletion-cost")
    if text is not None:
        with contextlib.suppress(ValueError):  # upstream logs and ignores a bad cost
            cost += float(text) / 2**27
    if pod.spec.priority is not None:
        cost += pod.spec.priority / 2**25
    return min(10.0, max(-10.0, cost))


def _owned_by(pod: Pod, api_version: str, kind: str) -> bool:
    return any(ref.kind == kind and ref.api_version == api_version
               for ref in pod.metadata.owner_references)


def _active(pod: Pod) -> bool:
    return pod.status.phase not in ("Succeeded", "Failed") and \
        pod.metadata.deletion_timestamp is None


# Karpenter's lifecycle marks (pkg/apis/v1 labels.go, taints.go).
INITIALIZED_LABEL = "karpenter.sh/initialized"
REGISTERED_LABEL = "karpenter.sh/registered"
UNREGISTERED_TAINT = "karpenter.sh/unregistered"
# scheduling.KnownEphemeralTaints: taints an initializing node is expected to lose.
EPHEMERAL_TAINTS = frozenset({
    ("node.kubernetes.io/not-ready", "NoSchedule"), ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoSchedule"),
    ("node.cloudprovider.kubernetes.io/uninitialized", "NoSchedule"),
    (UNREGISTERED_TAINT, "NoExecute")})


def initialized(node: Node) -> bool:
    """StateNode.Initialized, as dralab reads a node: a NodePool's node (labelled
    ``karpenter.sh/nodepool``) that still shows Karpenter's lifecycle -- the
    ``karpenter.sh/unregistered`` taint, or ``karpenter.sh/registered`` without
    ``karpenter.sh/initialized: "true"`` -- is not initialized yet. Nodes without
    those marks (other capacity, and the Fleet's own nodes, which exist Ready) are."""
    labels = node.metadata.labels or {}
    if NODEPOOL_LABEL not in labels or labels.get(INITIALIZED_LABEL) == "true":
        return True
    if any(t.key == UNREGISTERED_TAINT for t in node.spec.taints):
        return False
    return labels.get(REGISTERED_LABEL) != "true"


def _without_ephemeral_taints(node: Node) -> Node:
    taints = [t for t in node.spec.taints if (t.key, t.effect) not in EPHEMERAL_TAINTS]
    return msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, taints=taints))


def reschedulable(pod: Pod) -> bool:
    """pod.IsReschedulable: active, not a DaemonSet's or a Node's (mirror) pod."""
    return _active(pod) and not _owned_by(pod, "apps/v1", "DaemonSet") and \
        not _owned_by(pod, "v1", "Node")


@dataclass(slots=True)
class DisruptionCandidate:
    node: str
    pool: str          # the instance type (the Fleet pool)
    price: float
    pods: list[PodInfo]  # reschedulable
    cost: float        # RescheduleDisruptionCost
    instance_type: str = ""            # its node's labels (the NodeClaim's)
    capacity_type: str = ON_DEMAND
    nodepool: str = "default"          # its NodePool (its budgets and disruption block)

    @property
    def empty(self) -> bool:
        return self.cost <= PER_NODE_BASE_DISRUPTION_COST

    @property
    def savings_ratio(self) -> float:
        return self.price / self.cost


@dataclass(frozen=True, slots=True)
class Command:
    """Delete ``candidates``; with ``replacement`` (an instance type), launch one node of
    it for ``moved`` pods. ``reason``: Empty or Underutilized."""

    candidates: tuple[DisruptionCandidate, ...]
    reason: str
    replacement: str | None = None
    new_node: str | None = None
    moved: tuple[str, ...] = ()
    # The replacement NodeClaim's instance type options, cheapest first.
    options: tuple[str, ...] = ()


# Karpenter's consolidation methods, in the disruption controller's order.
EMPTINESS, MULTI_NODE, SINGLE_NODE = "Emptiness", "MultiNodeConsolidation", \
    "SingleNodeConsolidation"
METHODS = (EMPTINESS, MULTI_NODE, SINGLE_NODE)


def node_candidates(scheduler: Scheduler, groups: Mapping[str, NodeGroup],
                    consolidatable: Callable[[str], bool], pdbs: Sequence[PdbLimit] = (),
                    wall: float | None = None,
                    nodepool_of: Callable[[Node], str] | None = None
                    ) -> list[DisruptionCandidate]:
    """The NodePools' nodes that may be disrupted now, in name order; ``pdbs``: the
    PodDisruptionBudgets (a node with a pod they stop from eviction is none); ``wall``:
    the loop's unix time, if known (duration-based do-not-disrupt runs out by it);
    ``nodepool_of``: a node's NodePool (else its ``karpenter.sh/nodepool`` label)."""
    cluster = scheduler.cluster
    out = []
    for name in sorted(cluster.node_names()):
        info = cluster.nodes[name]
        pool = pool_of(info.node)
        if pool not in groups or pool is None:
            continue  # not Karpenter's (non-NodePool capacity)
        if do_not_disrupt_node(info.node) or info.node.metadata.deletion_timestamp:
            continue
        if not initialized(info.node):
            continue  # "node isn't initialized" (ValidateNodeDisruptable)
        if not consolidatable(name):
            continue
        pods = [p.pod for p in info.pods]
        if any(_active(p) and do_not_disrupt_active(p, wall) for p in pods):
            continue
        if blocking_pdbs(pdbs, pods, wall):
            continue  # "pdb prevents pod evictions" (ValidatePodsDisruptable)
        moving = [p for p in info.pods if reschedulable(p.pod)]
        cost = PER_NODE_BASE_DISRUPTION_COST + sum(max(0.0, eviction_cost(p.pod))
                                                   for p in moving)
        labels = info.node.metadata.labels or {}
        nodepool = nodepool_of(info.node) if nodepool_of is not None else \
            labels.get(NODEPOOL_LABEL, "default")
        out.append(DisruptionCandidate(name, pool, groups[pool].price_per_hour, moving, cost,
                                       labels.get(INSTANCE_TYPE, pool),
                                       labels.get(CAPACITY_TYPE, ON_DEMAND), nodepool))
    return out


def _sorted(candidates: Sequence[DisruptionCandidate]) -> list[DisruptionCandidate]:
    return sorted(candidates, key=lambda c: (-c.savings_ratio, c.node))


def _fresh(pod: Pod) -> Pod:
    """The pod as its controller re-creates it: no node, no status."""
    spec = msgspec.structs.replace(pod.spec, node_name=None)
    return msgspec.structs.replace(pod, spec=spec, status=PodStatus())


def _size(info: PodInfo) -> tuple[int, int, str]:
    return (-info.requests.get("cpu", 0), -info.requests.get("memory", 0), info.key)


@dataclass(frozen=True, slots=True)
class Replacing:
    """What choosing a replacement reads besides the simulation: each pool's offering,
    the SpotToSpotConsolidation gate, the NodePool's minValues, and the capacity types
    a NodeClaim for some pods may have (``karpenter_offerings``); and ``closed``, the
    nodes the simulation puts no candidate's pod on: those under their NodePool's
    consolidateAfter (the scheduler's destination check, IsUnderConsolidateAfter)."""

    offerings: Mapping[str, Offering]
    spot_to_spot: bool = False
    min_values: Mapping[str, int] = field(default_factory=dict)
    capacity_types: Callable[[Sequence[PodInfo]], frozenset[str]] = \
        lambda pods: frozenset({ON_DEMAND})
    closed: frozenset[str] = frozenset()


@dataclass(slots=True)
class _Simulation:
    scheduler: Scheduler
    templates: TemplateNodes
    groups: Mapping[str, NodeGroup]
    offerings: Mapping[str, Offering]
    # Nodes under their NodePool's consolidateAfter: no candidate's pod lands there.
    closed: frozenset[str] = frozenset()
    leftover: list[PodInfo] = field(default_factory=list)
    # Pods the simulation put on nodes not initialized yet (the command is invalid).
    on_uninitialized: list[str] = field(default_factory=list)

    def evict(self, candidates: Sequence[DisruptionCandidate]) -> None:
        """On the open fork: the candidates' pods re-created pending and placed on the
        nodes that stay, initialized ones first (Karpenter's scheduler tries those
        before the uninitialized, whose ephemeral taints it ignores); those that fit
        nowhere are left over."""
        cluster = self.scheduler.cluster
        gone = {c.node for c in candidates}
        targets = [n for n in cluster.node_names() if n not in gone
                   and not cluster.nodes[n].node.metadata.deletion_timestamp]
        ready = [n for n in targets if initialized(cluster.nodes[n].node)
                 and n not in self.closed]
        later = sorted({n for n in targets if not initialized(cluster.nodes[n].node)},
                       key=targets.index)
        for name in later:
            cluster.add_node(_without_ephemeral_taints(cluster.nodes[name].node))
        pods = sorted((p for c in candidates for p in c.pods), key=_size)
        for pod in pods:
            self.scheduler.delete_pod(pod.key)
        for pod in pods:
            moved = cluster.add_pod(_fresh(pod.pod))
            # PreEnqueue: what the claim controller does for a new pod (its claims
            # from templates) before it can be scheduled.
            framework = self.scheduler.framework_for(moved)
            if framework is None or not framework.run_pre_enqueue(moved).is_success():
                self.leftover.append(moved)
            elif place_pod(self.scheduler, moved, ready).node is not None:
                continue
            elif later and place_pod(self.scheduler, moved, later).node is not None:
                self.on_uninitialized.append(moved.key)
            else:
                self.leftover.append(moved)

    def fitting(self, max_price: float) -> dict[str, str]:
        """Per pool (offering) one fresh node of which (its DaemonSet pods on it, as the
        estimator places them) takes every leftover pod: the new node's name. Only the
        instance types with an offering cheaper than ``max_price`` are tried: no other
        can be a cheaper replacement."""
        units = pod_units(self.leftover)
        cheap = {self.offerings[g].instance_type for g, group in self.groups.items()
                 if group.price_per_hour < max_price}
        out = {}
        for group in sorted(self.groups.values(), key=lambda g: (g.price_per_hour, g.name)):
            if group.room <= 0 or self.offerings[group.name].instance_type not in cheap:
                continue
            one = replace(group, size=group.max_size - 1)  # room for exactly one node
            option = estimate(self.scheduler, self.templates, one, units, measures=())
            if len(option.units) == len(units) and len(option.nodes) == 1:
                out[group.name] = option.nodes[0]
        return out


def _compute(scheduler: Scheduler, templates: TemplateNodes, groups: Mapping[str, NodeGroup],
             replacing: Replacing, candidates: Sequence[DisruptionCandidate], reason: str,
             multi: bool) -> Command | None:
    """consolidation.computeConsolidation for ``candidates`` (None: no valid command)."""
    price = sum(c.price for c in candidates)
    scheduler.fork()
    try:
        sim = _Simulation(scheduler, templates, groups, replacing.offerings,
                          replacing.closed)
        sim.evict(candidates)
        if sim.on_uninitialized:
            return None  # "would schedule against uninitialized nodeclaim"
        if not sim.leftover:
            return Command(tuple(candidates), reason)
        fitting = sim.fitting(price)
        allowed = replacing.capacity_types(sim.leftover)
    finally:
        scheduler.revert()
    if not fitting:
        return None  # more than one new node would be needed, or none takes the pods
    chosen = choose_replacement(
        [replacing.offerings[pool] for pool in fitting],
        [ConsolidationCandidate(c.instance_type, c.capacity_type, c.price) for c in candidates],
        allowed, multi=multi, spot_to_spot=replacing.spot_to_spot,
        min_values=replacing.min_values)
    if chosen is None:
        return None
    pool = chosen.launch.pool
    moved = tuple(sorted(p.key for c in candidates for p in c.pods))
    return Command(tuple(candidates), reason, pool, fitting[pool], moved,
                   tuple(o.name for o in chosen.options))


def _plain_offering(group: NodeGroup) -> Offering:
    """A pool as an on-demand offering of its own instance type (no labels read)."""
    return Offering(group.name, group.name, ON_DEMAND, None, group.price_per_hour,
                    group.room > 0, {})


def _enabled(budgets: NodePoolBudgets, candidate: DisruptionCandidate) -> bool:
    """Whether the candidate's NodePool consolidates at all: not static (a static
    NodePool's nodes are never consolidated, OwnedByStaticNodePool) and its
    consolidateAfter not Never."""
    settings = budgets.settings(candidate.nodepool)
    return settings is not None and settings.replicas is None and \
        settings.consolidate_after is not None


def _underutilized(budgets: NodePoolBudgets, candidate: DisruptionCandidate) -> bool:
    """Whether the candidate's NodePool lets a non-empty node go (WhenEmpty does not)."""
    settings = budgets.settings(candidate.nodepool)
    return settings is not None and \
        settings.consolidation_policy == WHEN_EMPTY_OR_UNDERUTILIZED


def find_command(scheduler: Scheduler, templates: TemplateNodes,
                 groups: Mapping[str, NodeGroup], budgets: NodePoolBudgets,
                 candidates: Sequence[DisruptionCandidate],
                 replacing: Replacing | None = None, methods: Sequence[str] = METHODS
                 ) -> Command | None:
    """The loop's one disruption command (see the module docstring). ``budgets``: the
    NodePools, their nodes and those already being deleted (they use up the budgets,
    BuildDisruptionBudgetMapping), each candidate held to its own NodePool's
    disruption block and budgets; ``methods``: those to try, in Karpenter's order."""
    if replacing is None:
        replacing = Replacing({name: _plain_offering(g) for name, g in groups.items()})
    ordered = _sorted([c for c in candidates if _enabled(budgets, c)])
    empty = [c for c in ordered if c.empty]
    if empty and EMPTINESS in methods:
        chosen = within_budgets(empty, budgets.mapping(REASON_EMPTY))
        if chosen:
            return Command(tuple(chosen), REASON_EMPTY)
    busy = [c for c in ordered if not c.empty and _underutilized(budgets, c)]
    if not busy:
        return None
    batch = within_budgets(busy, budgets.mapping(REASON_UNDERUTILIZED))
    best = _multi_node(scheduler, templates, groups, replacing, batch) \
        if MULTI_NODE in methods else None
    if best is not None:
        return best
    if SINGLE_NODE not in methods:
        return None
    # A method of its own: the budgets afresh, one candidate per command.
    allowed = budgets.mapping(REASON_UNDERUTILIZED)
    for candidate in busy:
        if allowed.get(candidate.nodepool, 0) <= 0:
            continue
        command = _compute(scheduler, templates, groups, replacing, (candidate,),
                           REASON_UNDERUTILIZED, multi=False)
        if command is not None:
            return command
    return None


def _multi_node(scheduler: Scheduler, templates: TemplateNodes,
                groups: Mapping[str, NodeGroup], replacing: Replacing,
                batch: Sequence[DisruptionCandidate]) -> Command | None:
    """firstNConsolidationOption: binary search for the longest prefix with a command."""
    if len(batch) < 2:
        return None
    low, high = 1, min(len(batch), MAX_MULTI_NODE_CANDIDATES)
    if len(batch) <= high:
        high = len(batch) - 1
    saved: Command | None = None
    while low <= high:
        mid = (low + high) // 2
        command = _compute(scheduler, templates, groups, replacing, batch[:mid + 1],
                           REASON_UNDERUTILIZED, multi=True)
        if command is not None:
            saved = command
            low = mid + 1
        else:
            high = mid - 1
    return saved


def method_of(command: Command) -> str:
    """The disruption method that made ``command``."""
    if command.reason == REASON_EMPTY:
        return EMPTINESS
    return MULTI_NODE if len(command.candidates) > 1 else SINGLE_NODE


def validate_command(scheduler: Scheduler, templates: TemplateNodes,
                     groups: Mapping[str, NodeGroup], budgets: NodePoolBudgets,
                     command: Command, current: Sequence[DisruptionCandidate],
                     replacing: Replacing | None = None) -> Command | None:
    """The command as Karpenter's validator finds it after the validation wait
    (validation.go), ``current`` being the candidates then: None when it no longer
    holds. An Empty command keeps those of its nodes still empty candidates, within
    the budgets (EmptinessValidator); an Underutilized one needs every node still a
    candidate within the budgets, and the scheduling simulation to give the same
    result -- no new node for a delete, one whose instance types include the
    command's for a replace (ConsolidationValidator.validateCommand)."""
    if replacing is None:
        replacing = Replacing({name: _plain_offering(g) for name, g in groups.items()})
    now = {c.node: c for c in current}
    allowed = budgets.mapping(command.reason)
    if command.reason == REASON_EMPTY:
        still = [now[c.node] for c in command.candidates if c.node in now and now[c.node].empty]
        kept = within_budgets(still, allowed)
        return Command(tuple(kept), REASON_EMPTY) if kept else None
    if any(c.node not in now for c in command.candidates) or \
            len(within_budgets(command.candidates, allowed)) < len(command.candidates):
        return None  # churn, or the budgets no longer allow it
    again = _compute(scheduler, templates, groups, replacing,
                     [now[c.node] for c in command.candidates], command.reason,
                     multi=len(command.candidates) > 1)
    if again is None or (again.replacement is None) != (command.replacement is None):
        return None  # "scheduling simulation produced new results"
    if command.replacement is not None and not set(command.options) <= set(again.options):
        return None
    return again if command.replacement is None else command
