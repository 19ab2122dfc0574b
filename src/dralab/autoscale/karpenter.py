"""The Karpenter model: one NodePool whose instance types are the autoscaled pools.

Provisioning: the pending units are packed onto new nodes one node at a time;
for each new node every instance type with room is tried, filled from a fresh
template node with the remaining units (largest first, the scheduler's plugins
deciding), and the type with the lowest price per packed pod wins (ties: more
pods, then the type's name). Repeated until no type takes any unit: the cheapest
set of nodes this greedy finds. Units no type can take are pending with the same
reasons as the Cluster Autoscaler model gives.

Limits (``spec.limits``): the NodePool's nodes' capacity summed (cpu, memory,
any resource; ``nodes`` counts nodes) never passes them; a type whose node would
is not launched, and a pod only such types could take is pending with Karpenter's
"all available instance types exceed limits for nodepool".

Consolidation (only in a loop that launched nothing; pods no type can take do not
block it): Karpenter's disruption methods (``karpenter_disruption``), each node with
its NodePool's ``spec.disruption`` (``karpenter_nodepool``): one command per loop --
delete the empty nodes, or delete/replace several nodes at once, or one node. A
replacement is a scale-down of the old nodes plus a scale-up of one node of the new
type for the moved pods. A node is consolidatable once no pod arrived on or left it
for ``consolidateAfter`` (by the loops' clock; a node first seen counts from then).
Pools' min sizes are respected (a dralab addition; Karpenter has none).

Capacity reservations (reserved pools, ``karpenter_reservations``): each new node holds
every reservation it could launch into, and a pod whose reservations are all held gets
no node in that loop rather than falling back to on-demand, spot or a lighter NodePool.

Hard topology spread counts the domains Karpenter can launch into (every instance
type's zone and other labels; a new node is an empty hostname domain), as stand-in
nodes on the loop's fork (``karpenter_domains``), not only those of nodes that exist.

The NodePool's requirements (``spec.template.spec.requirements``) pick which pools are
its instance types (their template node's labels must meet them); its template labels
and taints are on the pools' nodes (``karpenter_template``, applied to the Fleet
document by the input readers).

DRA: with ``ignore_dra_requests`` (Karpenter's ``--ignore-dra-requests``, default true)
pods with resource claims get no launch, with Karpenter's message, and nodes running
them are not consolidated. False (opt-in) is DRA-aware provisioning: claims are placed
on the template nodes' ResourceSlices, as Karpenter's DRA scheduling does.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from dralab.api.core import Node, Pod, Taint
from dralab.api.gcpause import gc_paused
from dralab.api.taints import tolerates
from dralab.api.workloads import DaemonSet
from dralab.cluster import PodInfo
from dralab.cluster.records import raw_spec_field
from dralab.controllers.resourceclaims import ensure_pod_claims
from dralab.fleet import Fleet
from dralab.scheduler import Scheduler

from .clusterautoscaler import pending_reason
from .decisions import LoopDecisions, PendingPod, ScaleDown, ScaleUp
from .estimator import Estimate, as_group, estimate
from .groups import NodeGroup, TemplateNodes, node_groups, pool_of, pool_sizes, template_signatures
from .karpenter_budgets import NodePoolBudgets
from .karpenter_claims import (
    NodeClaimState,
    claim_pool,
    claimed_nodes,
    uninitialized_by_claim,
    unjoined,
)
from .karpenter_daemons import (
    daemon_set_owner,
    on_new_nodes,
    sized_from_pods,
    without_node_selection,
)
from .karpenter_deleting import take_deleting_pods
from .karpenter_disruption import (
    EMPTINESS,
    METHODS,
    Command,
    DisruptionCandidate,
    Replacing,
    find_command,
    initialized,
    method_of,
    node_candidates,
    validate_command,
)
from .karpenter_domains import add_domain_nodes
from .karpenter_inflight import Launch, in_flight_names, place_in_flight
from .karpenter_limits import NodePoolLimits
from .karpenter_nodeclaim import CAPACITY_TYPE, LaunchedNode, NodeClaimPlan, cheapest_first
from .karpenter_nodepool import (
    DRA_NOT_SUPPORTED,
    MIN_VALUES_STRICT,
    NodePoolSettings,
    dynamic_nodepools,
    has_dra_requirements,
    min_values_error,
    unmet_min_values,
)
from .karpenter_offerings import Offering, capacity_types_for, offering_of
from .karpenter_pdb import PdbLimit
from .karpenter_preferences import RESPECT, preferred_pools
from .karpenter_reservations import RESERVED_OFFERING_ERROR, Reservations
from .karpenter_validation import ValidationWait
from .karpenter_volumes import ignore_local_hostname_affinity, invalid_volume_units
from .placement import place_pod
from .units import PodUnit, pod_units, topology_sensitive
from .utilization import AllocatedDevices, PoolCache, node_utilization

__all__ = ["Karpenter"]

INSTANCE_TYPE = "node.kubernetes.io/instance-type"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
# Karpenter's pod errors when no NodePool can be used, or none has an instance type.
NO_NODEPOOLS = "no dynamic nodepools found"
NO_INSTANCE_TYPES = "nodepool requirements filtered out all available instance types"


def _one_more(group: NodeGroup, offset: int) -> NodeGroup:
    """``group`` with room for exactly one node after ``offset`` new ones."""
    return NodeGroup(group.name, group.max_size - 1 - offset, group.min_size,
                     group.max_size, group.price_per_hour, group.provisioning_delay,
                     group.priority)


def _signatures(fleet: Fleet, units: Sequence[PodUnit]) -> dict[str, bytes]:
    """Pools alike but for names and topology share one estimate, unless where a node
    sits can matter to a pod: its affinity, spread or selectors, or its volumes (a
    volume's node affinity or its StorageClass's allowed topologies pin zones)."""
    labels = fleet.spec.topology_labels
    keys = (labels.zone, labels.block, labels.rack)
    if any(topology_sensitive(p.pod, keys) or raw_spec_field(p.pod, "volumes")
           for u in units for p in u.pods):
        return {}
    return template_signatures(fleet)


def _units_for(units: Sequence[PodUnit], preferred: dict[str, frozenset[str]], pool: str
               ) -> Sequence[PodUnit]:
    """The units ``pool`` may take: all but those held to other pools by preference."""
    if not preferred:
        return units
    return [u for u in units if u.name not in preferred or pool in preferred[u.name]]


def _pools_for(unit: PodUnit, chosen: dict[str, frozenset[str]],
               preferred: dict[str, frozenset[str]], pools: Iterable[str]) -> set[str]:
    """The pools ``unit`` may go to: its NodePool's by weight and its preferred ones."""
    return {p for p in pools if (unit.name not in chosen or p in chosen[unit.name])
            and (unit.name not in preferred or p in preferred[unit.name])}


def _cost(option: Estimate) -> tuple[float, int, str]:
    return (round(option.group.price_per_hour / max(1, option.pod_count), 9),
            -option.pod_count, option.group.name)


@dataclass(slots=True)
class Karpenter:
    scheduler: Scheduler
    fleet: Fleet
    fleet_seed: int | None = None  # the Fleet's seed for template nodes (spec.seed)
    consolidation: bool = True
    # The DaemonSets whose pods a new node gets (Karpenter's daemonset overhead): each
    # launch and replacement is sized with them on it.
    daemon_sets: tuple[DaemonSet, ...] = ()
    # Karpenter's --ignore-dra-requests, with its default true: pods with resource claims
    # are neither provisioned for nor moved by consolidation. False (opt-in) is DRA-aware
    # provisioning: claims are placed on the template nodes' ResourceSlices.
    ignore_dra_requests: bool = True
    nodepool: NodePoolSettings = field(default_factory=NodePoolSettings)
    # Several NodePools (empty: ``nodepool`` alone). A pool is the NodePool's its
    # template node's karpenter.sh/nodepool label names (karpenter_template).
    nodepools: tuple[NodePoolSettings, ...] = ()
    # Karpenter's --preference-policy (its default Respect: preferred node affinity is
    # tried as a requirement first; karpenter_preferences). Ignore leaves it out.
    preference_policy: str = RESPECT
    # Karpenter's SpotToSpotConsolidation feature gate (--feature-gates, default false):
    # whether consolidation may replace spot nodes with cheaper spot nodes.
    spot_to_spot_consolidation: bool = False
    # The input's PodDisruptionBudgets (karpenter_pdb): nodes with pods they stop from
    # eviction are not disrupted.
    pdbs: tuple[PdbLimit, ...] = ()
    # The unix time of the loops' clock 0 (None: no wall clock): a pod's duration-based
    # karpenter.sh/do-not-disrupt runs out by it, from the pod's status.startTime.
    clock_epoch: float | None = None
    # Whether a loop works out the NodeClaims of its launches (last_node_claims; their
    # instance type options cost an estimate per NodePool type and launched node).
    report_node_claims: bool = False
    # Karpenter's DefaultTerminationGracePeriod (a NodeClaim's when its NodePool sets none).
    default_termination_grace_period: str | None = None
    last_node_claims: tuple[NodeClaimPlan, ...] = ()
    # The input's karpenter.sh/v1 NodeClaims (karpenter_claims): those without a node are
    # capacity in flight; a node whose NodeClaim is not Initialized is in flight.
    node_claims: tuple[NodeClaimState, ...] = ()
    # Karpenter's --min-values-policy (Strict, its default, or BestEffort).
    min_values_policy: str = MIN_VALUES_STRICT
    # What arrives during consolidation's validation wait (karpenter_validation); None:
    # nothing, and the command is not validated again.
    validation_wait: ValidationWait | None = None
    # The last loop's consolidation command (its replacement's instance type options).
    last_command: Command | None = None
    _templates: TemplateNodes | None = field(default=None)
    # Pool utilisations across loops (consolidation measures every node each loop).
    _utilization: PoolCache = field(default_factory=PoolCache)
    # Per node, its pods at the last loop they changed and when (consolidateAfter).
    _pod_events: dict[str, tuple[frozenset[str], float]] = field(default_factory=dict)
    # The nodes this model launched (and replaced with) in earlier loops that have not
    # joined yet: Karpenter's in-flight NodeClaims (karpenter_inflight).
    _in_flight: list[Launch] = field(default_factory=list)

    def _sizes(self) -> dict[str, int]:
        """Each pool's nodes, those launched and not joined yet included (the model's and
        the input's NodeClaims without a node)."""
        sizes = pool_sizes(self.fleet, (i.node for i in self.scheduler.cluster.nodes.values()))
        for claim in unjoined(self.node_claims, self.scheduler.cluster.node_names()):
            pool = claim_pool(claim, self.fleet)
            if pool is not None:
                sizes[pool] = sizes.get(pool, 0) + 1
        for launch in self._in_flight:
            sizes[launch.pool] = sizes.get(launch.pool, 0) + len(launch.nodes)
        return sizes

    def nodes_ready(self, pool: str, count: int = 1) -> None:
        """``count`` nodes of ``pool`` joined: they are no longer in flight (the
        earliest launches first), and the pool's next template names moved on."""
        kept = []
        for launch in self._in_flight:
            if launch.pool == pool and count > 0:
                gone = min(count, len(launch.nodes))
                count -= gone
                launch = Launch(pool, launch.nodes[gone:], launch.pods)
            if launch.nodes:
                kept.append(launch)
        self._in_flight = kept
        self._templates = None

    def launches_withdrawn(self, pool: str, count: int = 1) -> None:
        """``count`` nodes of ``pool`` launched will never join (their NodeClaims were
        deleted first, e.g. terminated while launching): no longer in flight, and not
        nodes of the cluster either -- their pods need capacity again."""
        self.nodes_ready(pool, count)

    def _record_launches(self, ups: Sequence[ScaleUp], templates: TemplateNodes) -> None:
        """The nodes of this loop's launches, in flight until ``nodes_ready``."""
        for up in ups:
            nodes = tuple(templates.node(up.pool, i) for i in range(up.add))
            self._in_flight.append(Launch(up.pool, nodes, up.pods))
        if ups:
            self._templates = None

    def _daemon_sets(self, new_nodes: bool = True) -> tuple[DaemonSet, ...]:
        """The DaemonSets a new node's overhead counts, each sized from a pod of it when
        there is one (``karpenter_daemons``); without those whose pods have DRA
        requirements while DRA requests are ignored (shouldSkipDaemonPod). ``new_nodes``
        False: as for a node that exists (its lifecycle labels are its own)."""
        sized = sized_from_pods(self.daemon_sets,
                                (i.pod for i in self.scheduler.cluster.pods.values()))
        if new_nodes:
            sized = on_new_nodes(sized)
        if not self.ignore_dra_requests:
            return sized
        return tuple(d for d in sized if not has_dra_requirements(d.spec.template.spec))

    def templates(self) -> TemplateNodes:
        if self._templates is None:
            taken = [*self.scheduler.cluster.node_names(), *in_flight_names(self._in_flight)]
            self._templates = TemplateNodes(self.fleet, self._sizes(), taken, self.fleet_seed,
                                            daemon_sets=self._daemon_sets())
        return self._templates

    def loop(self, pending: Sequence[PodInfo], now: float = 0.0) -> LoopDecisions:
        # Forks build and drop many small acyclic objects: the cyclic GC only rescans.
        with gc_paused():
            return self._loop(pending, now)

    def all_nodepools(self) -> tuple[NodePoolSettings, ...]:
        return self.nodepools or (self.nodepool,)

    def nodepool_of(self, pool: str) -> NodePoolSettings:
        """The NodePool whose instance type ``pool`` is (the first, without a match)."""
        nodepools = self.all_nodepools()
        if len(nodepools) == 1:
            return nodepools[0]
        labels = self.templates().node(pool, 0)[0].metadata.labels or {}
        name = labels.get(NODEPOOL_LABEL)
        return next((n for n in nodepools if n.name == name), nodepools[0])

    def _groups(self, usable: bool = True) -> dict[str, NodeGroup]:
        """The autoscaled pools that are a usable NodePool's instance types: its
        template node meets the requirements of its NodePool, which is dynamic (not
        static, Ready, not deleting). ``usable`` False: any NodePool's (the pools
        whose nodes are its nodes, which consolidation reads)."""
        groups = node_groups(self.fleet, self._sizes())
        nodepools = self.all_nodepools()
        if len(nodepools) == 1 and not nodepools[0].requirements and (
                nodepools[0].dynamic or not usable):
            return groups
        templates = self.templates()
        out = {}
        for name, g in groups.items():
            nodepool = self.nodepool_of(name)
            if (nodepool.dynamic or not usable) and nodepool.admits(
                    templates.node(name, 0)[0].metadata.labels or {}):
                out[name] = g
        return out

    def nodepool_of_node(self, node: Node) -> NodePoolSettings:
        """The NodePool a node is of: the one its karpenter.sh/nodepool label names, as
        Karpenter reads it, else its pool's."""
        name = (node.metadata.labels or {}).get(NODEPOOL_LABEL)
        named = next((n for n in self.all_nodepools() if n.name == name), None)
        return named if named is not None else self.nodepool_of(pool_of(node) or "")

    def _loop(self, pending: Sequence[PodInfo], now: float) -> LoopDecisions:
        groups = self._groups()
        ordered = sorted(groups.values(), key=lambda g: g.name)
        # pod.IsProvisionable: a DaemonSet's or a Node's (mirror) pod gets no node.
        pending = [p for p in pending if daemon_set_owner(p.pod) is None
                   and not any(r.kind == "Node" for r in p.pod.metadata.owner_references)]
        units = pod_units(p for p in pending if p.assumed_node is None)
        blocked: dict[str, str] = {}
        if not groups:
            # NewScheduler: no usable NodePool, or none with an instance type.
            reason = NO_INSTANCE_TYPES if dynamic_nodepools(self.all_nodepools()) \
                else NO_NODEPOOLS
            for unit in units:
                blocked[unit.name] = reason
            units = []
        if self.ignore_dra_requests:
            # Karpenter's default: DRA pods are not provisioned for (DRAError).
            for unit in units:
                if any(has_dra_requirements(p.pod) for p in unit.pods):
                    blocked[unit.name] = DRA_NOT_SUPPORTED
            units = [u for u in units if u.name not in blocked]
        # Karpenter's own claim checks beyond kube-scheduler's (karpenter_volumes).
        blocked.update(invalid_volume_units(self.scheduler.cluster, units))
        units = [u for u in units if u.name not in blocked]
        scheduler, templates = self.scheduler, self.templates()
        added: Counter[str] = Counter()
        launched: dict[str, list[str]] = {}
        # Each pool's NodePool, and each NodePool's spec.limits on its nodes.
        pool_np = {name: self.nodepool_of(name).name for name in groups}
        limits = {n.name: NodePoolLimits(n.limits, (
            i.node for i in scheduler.cluster.nodes.values()
            if pool_np.get(pool_of(i.node) or "") == n.name), n.name)
            for n in self.all_nodepools()}
        beyond: set[str] = set()  # types whose next node would pass the limits
        no_room = self._overhead_misfits(ordered)
        claims: list[LaunchedNode] = []
        scheduler.fork()
        try:
            ignore_local_hostname_affinity(scheduler.cluster)
            # The pods of nodes being deleted are provisioned for too (karpenter_deleting).
            wall = None if self.clock_epoch is None else self.clock_epoch + now
            moving = [p for p in take_deleting_pods(scheduler, self.pdbs, wall)
                      if not (self.ignore_dra_requests and has_dra_requirements(p.pod))]
            units = [*units, *pod_units(moving)]
            # Nodes in flight first: a pod one of them takes needs no new node.
            # Karpenter's domains for new NodeClaims, for hard topology spread.
            helped, taken_units = place_in_flight(
                scheduler, self._in_flight,
                {n.name: n.startup_taints for n in self.all_nodepools()}, units,
                lambda: add_domain_nodes(scheduler, templates, groups, units),
                self._daemon_sets(new_nodes=False), templates, groups,
                claimed_nodes(self.node_claims, self.fleet, templates, groups,
                              scheduler.cluster.node_names()),
                uninitialized_by_claim(self.node_claims))
            units = [u for u in units if u.name not in taken_units]
            # Units held to the pools their preferred node affinity picks (Respect).
            preferred = self._preferred(units, ordered)
            # Per unit, the pools of the heaviest NodePool that can take it (under its
            # preferences while they hold).
            chosen, refused = self._nodepool_choice(units, ordered, no_room, pool_np,
                                                    preferred)
            blocked.update(refused)
            units = [u for u in units if u.name not in refused]
            # One node's estimate per type, reused while every class of pods it packed
            # still has as many pods left: identical pods pack the same way on the
            # type's next node too (the node launched is always packed anew). Alike
            # types share one estimate.
            cache: dict[str, tuple[Counter[Hashable], Estimate]] = {}
            signatures = {} if preferred else _signatures(self.fleet, units)
            stalled: set[str] = set()
            # Capacity reservations held by this loop's new nodes (karpenter_reservations).
            held = Reservations.of(ordered, lambda p: templates.node(p, 0)[0].metadata.labels
                                   or {})

            def takes(pool: str, us: Sequence[PodUnit]) -> bool:
                return len(estimate(scheduler, templates, _one_more(groups[pool], added[pool]),
                                    us, added[pool], measures=()).units) == len(us)
            while units:
                if held:
                    refused_now = held.refused(units, {
                        u.name: _pools_for(u, chosen, preferred, groups) for u in units}, takes)
                    blocked.update(dict.fromkeys(refused_now, RESERVED_OFFERING_ERROR))
                    units = [u for u in units if u.name not in refused_now]
                    if not units:
                        break
                left = Counter(u.key for u in units)
                options = []
                alike: dict[bytes, Estimate] = {}
                for g in ordered:
                    if g.room - added[g.name] <= 0 or g.name in stalled or g.name in no_room \
                            or not held.open(g.name):
                        continue
                    limit = limits[pool_np[g.name]]
                    if limit.limited and not limit.allows(
                            templates.node(g.name, added[g.name])[0]):
                        beyond.add(g.name)
                        continue
                    here = _units_for(_units_for(units, chosen, g.name), preferred, g.name)
                    if not here:
                        continue
                    hit = cache.get(g.name)
                    if hit is None or any(left[k] < n for k, n in hit[0].items()):
                        sig = signatures.get(g.name)
                        twin = alike.get(sig) if sig is not None and not added[g.name] \
                            else None
                        option = as_group(twin, _one_more(g, 0)) if twin is not None else \
                            estimate(scheduler, templates, _one_more(g, added[g.name]),
                                     here, added[g.name], measures=())
                        if sig is not None and not added[g.name]:
                            alike.setdefault(sig, option)
                        hit = (Counter(u.key for u in option.units), option)
                        cache[g.name] = hit
                    options.append(hit[1])
                helpful = [o for o in options if o.units]
                if not helpful and any(u.name in preferred for u in units):
                    # The preferred pools take none of the remaining units: relax their
                    # preferences (as Karpenter does for a pod that failed to schedule).
                    preferred = {}
                    chosen, _ = self._nodepool_choice(units, ordered, no_room, pool_np)
                    cache.clear()
                    continue
                if not helpful:
                    everything = [estimate(scheduler, templates, g, units, added[g.name],
                                           measures=()) for g in ordered
                                  if g.name not in beyond and g.name not in no_room]
                    # A unit only types beyond the limits could take: Karpenter's error.
                    over: dict[str, str] = {}
                    for g in ordered:
                        if g.name in beyond:
                            for u in estimate(scheduler, templates,
                                              _one_more(g, added[g.name]), units,
                                              added[g.name], measures=()).units:
                                over.setdefault(u.name, limits[pool_np[g.name]].reason())
                    for unit in units:
                        blocked[unit.name] = over.get(unit.name) or \
                            pending_reason(unit, everything)
                    break
                best = min(helpful, key=_cost)
                name = best.group.name
                # The reservations the new node could launch into: its NodePool's reserved
                # pools that take its pods.
                holds = [p for p in held.reservable(groups) if pool_np[p] == pool_np[name]
                         and (p == name or takes(p, best.units))]
                kept = estimate(scheduler, templates, _one_more(groups[name], added[name]),
                                _units_for(_units_for(units, chosen, name), preferred, name),
                                added[name], keep=True, measures=())
                if not kept.units:
                    # The cached option no longer holds: estimate the type afresh, and
                    # leave it out until something else moves.
                    cache.pop(name, None)
                    stalled.add(name)
                    continue
                stalled.clear()
                held.reserve(holds)
                if self.report_node_claims:
                    claims.extend(self._launched_nodes(name, kept.nodes, pending))
                for index in range(added[name], added[name] + len(kept.nodes)):
                    limits[pool_np[name]].take(templates.node(name, index)[0])
                beyond.clear()  # limits only shrink, but each type is checked again
                added[name] += len(kept.nodes)
                launched.setdefault(name, []).extend(kept.pods)
                taken = {u.name for u in kept.units}
                units = [u for u in units if u.name not in taken]
        finally:
            scheduler.revert()
        self.last_node_claims = tuple(self._node_claim(c, groups, pool_np, pending)
                                      for c in claims)
        ups = tuple(ScaleUp(pool, added[pool], tuple(pods),
                            now + groups[pool].provisioning_delay)
                    for pool, pods in sorted(launched.items()))
        pending_pods = tuple(PendingPod(key, blocked[unit.name])
                             for unit in pod_units(p for p in pending if p.assumed_node is None)
                             if unit.name in blocked for key in unit.keys)
        self._record_launches(ups, templates)
        if ups or helped or not self.consolidation:
            # Pods waiting for nodes in flight: no consolidation in this loop either.
            return LoopDecisions(ups, pending_pods, helped_by_upcoming=tuple(helped))
        removed, replacements = self._consolidate(groups, self._groups(usable=False), now)
        self._record_launches(replacements, self.templates())
        return LoopDecisions(replacements, pending_pods, removed, removed)

    def _launched_nodes(self, pool: str, nodes: Sequence[str], pending: Sequence[PodInfo]
                        ) -> list[LaunchedNode]:
        """The nodes a launch just placed pods on (in the loop's fork): their pending
        pods and what all their pods, DaemonSet pods included, request."""
        cluster = self.scheduler.cluster
        keys = {p.key for p in pending}
        out = []
        for node in nodes:
            infos = cluster.nodes[node].pods
            requests: Counter[str] = Counter()
            for info in infos:
                requests.update(info.requests)
            out.append(LaunchedNode(pool, node, tuple(sorted(p.key for p in infos
                                                             if p.key in keys)),
                                    dict(requests), len(infos)))
        return out

    def _node_claim(self, launched: LaunchedNode, groups: dict[str, NodeGroup],
                    pool_np: dict[str, str], pending: Sequence[PodInfo]) -> NodeClaimPlan:
        """A launched node's NodeClaim: its instance type options are its NodePool's
        types one fresh node of which takes all of its pending pods."""
        templates = self.templates()
        units = pod_units(p for p in pending if p.key in set(launched.pods))
        options = []
        for g in groups.values():
            if pool_np[g.name] != pool_np[launched.pool]:
                continue
            if g.name != launched.pool and len(estimate(
                    self.scheduler, templates, _one_more(g, 0), units, 0,
                    measures=()).units) < len(units):
                continue
            labels = templates.node(g.name, 0)[0].metadata.labels or {}
            options.append((labels.get(INSTANCE_TYPE, g.name), g.price_per_hour,
                            labels.get(CAPACITY_TYPE), labels))
        node_labels = templates.node(launched.pool, 0)[0].metadata.labels or {}
        nodepool = self.nodepool_of(launched.pool)
        # BestEffort relaxes minValues to what the options have (Strict launched none
        # short of them).
        relaxed = unmet_min_values(nodepool, [o[3] for o in options])
        return NodeClaimPlan(
            nodepool, launched.pool, launched.node, dict(node_labels),
            cheapest_first([(o[0], o[1]) for o in options]),
            tuple(sorted({o[2] for o in options if o[2]})), launched.requests,
            launched.pod_count, launched.pods, self.default_termination_grace_period,
            bool(relaxed), relaxed)

    def _nodepool_choice(self, units: Sequence[PodUnit], groups: Sequence[NodeGroup],
                         skip: set[str], pool_np: dict[str, str],
                         preferred: dict[str, frozenset[str]] | None = None
                         ) -> tuple[dict[str, frozenset[str]], dict[str, str]]:
        """With several usable NodePools, per unit the pools of the first NodePool (by
        weight, OrderByWeight) one fresh node of which can take it: Karpenter tries the
        NodeClaim templates in that order and keeps the first that fits. A NodePool
        with a PreferNoSchedule taint the pod does not tolerate is tried after the
        others (Karpenter tolerates PreferNoSchedule only when relaxing). Under the
        Strict minValues policy a NodePool whose types that take the unit do not meet
        its requirements' minValues does not take it; a unit no NodePool takes for
        that alone is refused, with Karpenter's error (second mapping). A unit with
        ``preferred`` pools gets the first NodePool one of those takes it in, if any
        (its preferences are requirements until relaxed)."""
        order = dynamic_nodepools(self.all_nodepools())
        by_np = {n.name: [g for g in groups if pool_np.get(g.name) == n.name
                          and g.name not in skip and g.room > 0] for n in order}
        strict = self.min_values_policy == MIN_VALUES_STRICT and any(
            r.min_values is not None for n in order for r in n.requirements)
        if sum(1 for pools in by_np.values() if pools) < 2 and not strict:
            return {}, {}
        scheduler, templates = self.scheduler, self.templates()

        def takes(g: NodeGroup, unit: PodUnit) -> bool:
            return bool(estimate(scheduler, templates, _one_more(g, 0), [unit], 0,
                                 measures=()).units)
        out: dict[str, frozenset[str]] = {}
        refused: dict[str, str] = {}
        for unit in units:
            pod = unit.pods[0].pod
            avoided = [n for n in order if any(
                t.get("effect") == "PreferNoSchedule" and not any(
                    tolerates(tol, Taint(key=t["key"], value=t.get("value"),
                                         effect=t["effect"]))
                    for tol in pod.spec.tolerations) for t in n.taints)]
            unmet: dict[str, int] = {}
            for nodepool in [n for n in order if n not in avoided] + avoided:
                if strict and any(r.min_values is not None for r in nodepool.requirements):
                    takers = [templates.node(g.name, 0)[0].metadata.labels or {}
                              for g in by_np[nodepool.name] if takes(g, unit)]
                    missing = unmet_min_values(nodepool, takers)
                    if takers and missing:
                        unmet.update(missing)
                        continue
                    if not takers:
                        continue
                elif not any(takes(g, unit) for g in by_np[nodepool.name]):
                    continue
                out[unit.name] = frozenset(g.name for g in by_np[nodepool.name])
                break
            else:
                if unmet:
                    refused[unit.name] = min_values_error(list(unmet))
        for unit in units:
            wanted = (preferred or {}).get(unit.name)
            first = next((n for n in order if wanted is not None and any(
                g.name in wanted and takes(g, unit) for g in by_np[n.name])), None)
            if first is not None and unit.name not in refused:
                out[unit.name] = frozenset(g.name for g in by_np[first.name])
        return out, refused

    def _preferred(self, units: Sequence[PodUnit], groups: Sequence[NodeGroup]
                   ) -> dict[str, frozenset[str]]:
        """Per unit with a preferred node-affinity term some pool meets, those pools
        (``karpenter_preferences``); empty under the Ignore policy."""
        if self.preference_policy != RESPECT:
            return {}
        templates = self.templates()
        nodes = {g.name: templates.node(g.name, 0)[0] for g in groups}
        out = {}
        for unit in units:
            pools = preferred_pools(unit.pods[0].pod, nodes)
            if pools is not None:
                out[unit.name] = pools
        return out

    def _overhead_misfits(self, groups: Sequence[NodeGroup]) -> set[str]:
        """The types whose fresh node cannot hold the DaemonSet pods that would run on it.
        Karpenter adds the daemonset overhead to every pod set it fits on a type, so such
        a type is no option; the estimator (as Cluster Autoscaler) counts those pods on
        the node regardless and could still pack pods without requests there."""
        if not self._daemon_sets():
            return set()
        scheduler, templates = self.scheduler, self.templates()
        cluster = scheduler.cluster
        rng = random.Random("karpenter-daemonset-overhead")
        # Each type's template pods (a pod alone, or with the claims it owns: the pod).
        own: dict[str, list[Pod]] = {
            g.name: [item[0] if isinstance(item, tuple) else item
                     for item in templates.pods(g.name, 0)] for g in groups}
        # Karpenter counts a DaemonSet's pod on an instance type whose requirements it is
        # compatible with (requirements that intersect), zones included: a type offered
        # in several zones (one pool per zone here) weighs a DaemonSet pinned to one of
        # them on all of its nodes, whatever zone the node gets.
        def type_of(pool: str) -> str:
            labels = templates.node(pool, 0)[0].metadata.labels or {}
            return labels.get(INSTANCE_TYPE, pool)
        compatible: dict[str, dict[str | None, Pod]] = {}
        for pool, pods in own.items():
            for ds_pod in pods:
                compatible.setdefault(type_of(pool), {}).setdefault(
                    daemon_set_owner(ds_pod), ds_pod)
        out = set()
        for group in groups:
            node, slices = templates.node(group.name, 0)
            present = {daemon_set_owner(p) for p in own[group.name]}
            extra = [without_node_selection(p)
                     for ds, p in compatible.get(type_of(group.name), {}).items()
                     if ds is not None and ds not in present]
            scheduler.fork()
            try:
                cluster.add_node(node, slices)
                name = node.metadata.name or ""
                for pod in (*own[group.name], *extra):
                    info = ensure_pod_claims(cluster, cluster.add_pod(pod), rng)
                    if place_pod(scheduler, info, (name,)).node is None:
                        out.add(group.name)
                        break
            finally:
                scheduler.revert()
        return out

    def _consolidatable(self, now: float) -> Callable[[str], bool]:
        """Per node, whether no pod event happened for consolidateAfter (the
        NodeClaim's Consolidatable condition). Pod events are seen loop by loop."""
        cluster = self.scheduler.cluster
        seen: dict[str, tuple[frozenset[str], float]] = {}
        for name in cluster.node_names():
            pods = frozenset(p.key for p in cluster.nodes[name].pods)
            before = self._pod_events.get(name)
            seen[name] = before if before is not None and before[0] == pods else (pods, now)
        self._pod_events = seen

        def consolidatable(node: str) -> bool:
            # Each node by its own NodePool's consolidateAfter.
            after = self.nodepool_of_node(cluster.nodes[node].node).consolidate_after
            return after is not None and now - seen[node][1] >= after
        return consolidatable

    def _under_consolidate_after(self, managed: dict[str, NodeGroup], now: float
                                 ) -> frozenset[str]:
        """The NodePools' nodes still within a (non-zero) consolidateAfter of their last
        pod event (IsUnderConsolidateAfter): consolidation moves no pod onto them.
        ``_consolidatable`` has seen this loop's pod events."""
        cluster = self.scheduler.cluster
        out = set()
        for name, (_, since) in self._pod_events.items():
            node = cluster.nodes[name].node
            after = self.nodepool_of_node(node).consolidate_after
            if pool_of(node) in managed and initialized(node) and after and \
                    now - since < after:
                out.add(name)
        return frozenset(out)

    def _consolidate(self, groups: dict[str, NodeGroup], managed: dict[str, NodeGroup],
                     now: float) -> tuple[tuple[ScaleDown, ...], tuple[ScaleUp, ...]]:
        """One disruption command: the candidates are the nodes of every NodePool
        (``managed``'s pools), the replacements the usable NodePools' types
        (``groups``)."""
        scheduler = self.scheduler
        cluster = scheduler.cluster
        wall = None if self.clock_epoch is None else self.clock_epoch + now
        consolidatable = self._consolidatable(now)
        kept = self._candidates(managed, consolidatable, self.pdbs, wall)
        closed = self._under_consolidate_after(managed, now)
        # Each NodePool's budgets on its own nodes (BuildDisruptionBudgetMapping).
        budgets = NodePoolBudgets.count(self.all_nodepools(), (
            (self.nodepool_of_node(i.node).name, bool(i.node.metadata.deletion_timestamp))
            for i in cluster.nodes.values() if pool_of(i.node) in managed))
        if not kept:
            return (), ()
        misfits = self._overhead_misfits(sorted(groups.values(), key=lambda g: g.name))
        options = {n: g for n, g in groups.items() if n not in misfits}  # replacements
        # Without a usable NodePool the scheduling simulation has none to build
        # (ErrNodePoolsNotFound): only Emptiness, which needs none, can act.
        methods = METHODS if dynamic_nodepools(self.all_nodepools()) else (EMPTINESS,)
        command = find_command(scheduler, self.templates(), options, budgets, kept,
                               self._replacing(options, closed), methods)
        if command is not None and self.validation_wait is not None:
            # The validation wait's arrivals, then the command validated again.
            wait = self.validation_wait
            scheduler.fork()
            try:
                wait.arrive(scheduler)
                now_kept = self._candidates(managed, consolidatable,
                                            (*self.pdbs, *wait.pdbs), wall)
                checked = validate_command(scheduler, self.templates(), options, budgets,
                                           command, now_kept, self._replacing(options, closed))
                if checked is None and now_kept:
                    # The controller goes on to the next methods on the cluster as it
                    # is now (their own wait brings nothing more here).
                    rest = methods[methods.index(method_of(command)) + 1:]
                    checked = find_command(scheduler, self.templates(), options, budgets,
                                           now_kept, self._replacing(options, closed),
                                           rest) if rest else None
                command = checked
            finally:
                scheduler.revert()
        self.last_command = command
        if command is None:
            return (), ()
        return self._decisions(command, groups, now)

    def _candidates(self, groups: dict[str, NodeGroup], consolidatable: Callable[[str], bool],
                    pdbs: Sequence[PdbLimit], wall: float | None) -> list[DisruptionCandidate]:
        """The disruption candidates, without nodes with DRA pods while DRA requests are
        ignored, and within the pools' min sizes."""
        candidates = node_candidates(self.scheduler, groups, consolidatable, pdbs, wall,
                                     lambda node: self.nodepool_of_node(node).name)
        sizes = self._sizes()
        # Pools' min sizes (a dralab addition): a pool at its min offers no candidate.
        spare = {g.name: sizes.get(g.name, 0) - g.min_size for g in groups.values()}
        kept: list[DisruptionCandidate] = []
        for c in candidates:
            if self.ignore_dra_requests and any(has_dra_requirements(p.pod) for p in c.pods):
                continue  # its DRA pods would fail the simulation (DRAError): no command
            if spare[c.pool] > 0:
                spare[c.pool] -= 1
                kept.append(c)
        return kept

    def _replacing(self, groups: dict[str, NodeGroup],
                   closed: frozenset[str] = frozenset()) -> Replacing:
        """The pools as Karpenter's offerings (``karpenter_offerings``) for choosing a
        replacement, with the gate and the NodePool's minValues; ``closed``: the nodes
        under their NodePool's consolidateAfter."""
        templates = self.templates()
        offerings: dict[str, Offering] = {
            name: offering_of(name, templates.node(name, 0)[0].metadata.labels or {},
                              g.price_per_hour, g.room > 0) for name, g in groups.items()}
        min_values = {r.key: r.min_values for r in self.nodepool.requirements
                      if r.min_values is not None}
        return Replacing(offerings, self.spot_to_spot_consolidation, min_values,
                         lambda pods: capacity_types_for((p.pod for p in pods),
                                                         offerings.values()), closed)

    def _decisions(self, command: Command, groups: dict[str, NodeGroup], now: float
                   ) -> tuple[tuple[ScaleDown, ...], tuple[ScaleUp, ...]]:
        cluster = self.scheduler.cluster
        allocated = AllocatedDevices(cluster)
        downs = tuple(ScaleDown(c.node, c.pool, node_utilization(
            cluster, cluster.nodes[c.node], allocated, self._utilization).value, now)
            for c in command.candidates)
        ups: tuple[ScaleUp, ...] = ()
        if command.replacement is not None:
            target = groups[command.replacement]
            ups = (ScaleUp(target.name, 1, command.moved, now + target.provisioning_delay,
                           (command.new_node or "",)),)
        return downs, ups
