"""The Cluster Autoscaler model: scale-up from template nodes, DRA-aware scale-down.

``ClusterAutoscaler(scheduler, fleet, options).loop(pending, now)`` is one
RunOnce of CA over the scheduler's cluster, at time ``now`` (seconds, the
caller's clock):

1. Pending pods (those the scheduler could not place) become units (a gang is one
   unit). Nodes already being provisioned (earlier scale-ups not yet Ready) are
   added as template nodes first; units they can take are helped already.
2. Each node group with room gets an ``estimate``; the expander picks one option;
   its nodes are kept (on a fork) and the rest of the units try again, until no
   option helps any more. (CA makes one scale-up per loop, 10 s apart; here a
   loop makes them all, which is what those loops converge to.)
3. Units no group helps are ``pending`` with the reason: a group at its max size
   ("h100: max size 3 reached"), else "no node group fits: " and each group's
   scheduler message.
4. Only when nothing needed a scale-up: scale-down. ``unneeded`` are the nodes
   under the utilisation threshold whose pods can move; ``scale_downs`` those of
   them unneeded for ``scale_down_unneeded_time`` and at least
   ``scale_down_delay_after_add`` after the last scale-up (the clock matters: a
   simulator stage calls ``loop`` each period and removes ``scale_downs``).

The cluster is never changed: decisions are returned; the caller adds the nodes
(after ``ready_at``) and removes the scaled-down ones, and tells the model about
nodes that arrived (``nodes_ready``).
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from dralab.api.gcpause import gc_paused
from dralab.api.workloads import DaemonSet
from dralab.cluster import PodInfo
from dralab.fleet import Fleet
from dralab.scheduler import Scheduler

from .balancing import balance, compute_similar, nodes_similar
from .capacityquota import CapacityQuota
from .decisions import LoopDecisions, PendingPod, ScaleDown, ScaleUp
from .eligibility import Unremovable
from .estimator import MAX_NODES_PER_SCALE_UP, Estimate, as_group, estimate, max_size_reason
from .expanders import choose, expander_error, measures_for
from .groups import (
    NodeExample,
    NodeGroup,
    TemplateNodes,
    claims_of,
    example_of,
    node_groups,
    pool_of,
    pool_sizes,
)
from .limits import ScaleUpBudget
from .scaledown import (
    AtomicSize,
    UnneededNodes,
    crop_to_budget,
    has_pods_to_move,
    unneeded_nodes,
)
from .units import (
    PodUnit,
    has_persistent_volumes,
    is_daemon_pod,
    is_mirror_pod,
    not_for_scale_up,
    pod_units,
    topology_sensitive,
)
from .utilization import GPU_LABELS, PoolCache

__all__ = ["DEFAULT_MAX_CORES_TOTAL", "DEFAULT_MAX_MEMORY_TOTAL", "AutoscalerOptions",
           "ClusterAutoscaler", "pending_reason"]

GIB = 1 << 30
# config: DefaultMaxClusterCores (5000 * 64) and DefaultMaxClusterMemory (5000 * 64 * 20 GiB).
DEFAULT_MAX_CORES_TOTAL = 5000 * 64
DEFAULT_MAX_MEMORY_TOTAL = 5000 * 64 * 20 * GIB


@dataclass(frozen=True, slots=True)
class AutoscalerOptions:
    """CA's flags that the model reads (defaults as CA's)."""

    expander: str = "least-waste"
    scale_down_utilization_threshold: float = 0.5
    scale_down_gpu_utilization_threshold: float = 0.5
    scale_down_unneeded_time: float = 600.0
    scale_down_unready_time: float = 1200.0
    scale_down_delay_after_add: float = 600.0
    scale_down_unready_enabled: bool = True
    ignore_daemonsets_utilization: bool = False
    ignore_mirror_pods_utilization: bool = False
    # --max-nodes-total (0: no limit), --cores-total and --memory-total as (min, max):
    # cores, and bytes (CA's flag is in GiB). Scale-up keeps under the maxima,
    # scale-down above the minima.
    max_nodes_total: int = 0
    cores_total: tuple[int, int] = (0, DEFAULT_MAX_CORES_TOTAL)
    memory_total: tuple[int, int] = (0, DEFAULT_MAX_MEMORY_TOTAL)
    # --enable-dynamic-resource-allocation (CA: "locked to true").
    dynamic_resource_allocation: bool = True
    # The labels that make a node a GPU node (CA asks its cloud provider).
    gpu_labels: tuple[str, ...] = GPU_LABELS
    # The unix time of the loop's clock 0 (deletion taints, terminating pods); None:
    # no wall clock.
    clock_epoch: float | None = None
    # --node-deletion-candidate-ttl: with a wall clock, nodes tainted
    # DeletionCandidateOfClusterAutoscaler less than this ago are unneeded since then
    # from the first loop (0, CA's default: the taints are not read back).
    node_deletion_candidate_ttl: float = 0.0
    # CA's node-delete flags for its drainability rules: pods of kube-system no
    # PodDisruptionBudget covers (until --blocking-system-pod-distruption-timeout), with
    # local storage, or of custom controllers keep their node.
    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    skip_nodes_with_custom_controller_pods: bool = True
    blocking_system_pod_disruption_timeout: float = 3600.0
    # --max-scale-down-parallelism and --max-drain-parallelism: how many nodes a loop
    # deletes at once (empty ones first), of them how many need a drain; the former
    # also bounds how many unneeded nodes a loop looks for.
    max_scale_down_parallelism: int = 10
    max_drain_parallelism: int = 1
    seed: int = 0
    # --max-nodes-per-scaleup: the estimation limiter's cap on one scale-up (0: none).
    max_nodes_per_scale_up: int = MAX_NODES_PER_SCALE_UP
    # --enforce-node-group-min-size: scale groups below their min size up to it.
    enforce_node_group_min_size: bool = False
    # The priority expander's configuration (CA's cluster-autoscaler-priority-expander
    # ConfigMap, "priorities": priority -> regular expressions on group names); None:
    # the pools' autoscaling.priority.
    expander_priorities: Mapping[int, tuple[str, ...]] | None = None
    # --balance-similar-node-groups and --balancing-ignore-label.
    balance_similar_node_groups: bool = False
    balancing_ignore_labels: tuple[str, ...] = ()
    # --expendable-pods-priority-cutoff: pending pods below it never cause a scale-up.
    expendable_pods_priority_cutoff: int = -10
    # NodeGroupAutoscalingOptions.ZeroOrMaxNodeScaling for every group (CA's node group
    # defaults): a group scales up to its max size at once, or not at all.
    zero_or_max_node_scaling: bool = False
    # --fastpath-binpacking-enabled: the estimator packs one equivalence group per
    # estimate by arithmetic after one simulated node (estimator.estimate's fastpath).
    fastpath_binpacking_enabled: bool = False
    # --capacity-quotas-enabled, and the CapacityQuota objects of the input (by name).
    capacity_quotas_enabled: bool = False
    capacity_quotas: tuple[CapacityQuota, ...] = ()

    def __post_init__(self) -> None:
        if self.max_nodes_per_scale_up < 0:
            raise ValueError(f"max_nodes_per_scale_up must be 0 (no limit) or more, not "
                             f"{self.max_nodes_per_scale_up}")
        for name, (low, high) in (("cores_total", self.cores_total),
                                  ("memory_total", self.memory_total)):
            if low < 0 or high < low:
                raise ValueError(f"{name} must be (min, max) with 0 <= min <= max, not "
                                 f"{(low, high)}")
        if self.max_nodes_total < 0:
            raise ValueError(f"max_nodes_total must be 0 (no limit) or more, not "
                             f"{self.max_nodes_total}")
        problem = expander_error(self.expander)
        if problem is not None:
            raise ValueError(problem)


@dataclass(slots=True)
class _InFlight:
    pool: str
    nodes: int
    ready_at: float


def pending_reason(unit: PodUnit, options: Sequence[Estimate],
                   limited: Mapping[str, str] | None = None) -> str:
    """Why no group helps ``unit`` (``options``: every group's estimate; ``limited``:
    groups left out for a cluster-wide limit, with CA's reason)."""
    full = sorted(o.group.name for o in options if unit.name in o.at_max)
    if full:
        by_name = {o.group.name: o.group for o in options}
        return "; ".join(max_size_reason(by_name[n]) for n in full)
    if limited:
        helpable = sorted(o.group.name for o in options if unit.name in {
            u.name for u in o.units} and o.group.name in limited)
        if helpable:
            return "; ".join(f"{n}: {limited[n]}" for n in helpable)
    if not options:
        return "no node group fits: the fleet has no autoscaled pool"
    reasons = [f"{o.group.name}: {o.blocked.get(unit.name, 'does not fit')}"
               for o in sorted(options, key=lambda o: o.group.name)]
    return "no node group fits: " + "; ".join(reasons)


@dataclass(slots=True)
class ClusterAutoscaler:
    """One model instance follows one cluster over time (see the module docstring)."""

    scheduler: Scheduler
    fleet: Fleet
    options: AutoscalerOptions = field(default_factory=AutoscalerOptions)
    fleet_seed: int | None = None  # the Fleet's seed for template nodes (spec.seed)
    # The cluster's DaemonSets: their pods come with a template node built from the
    # Fleet (a template copied from a real node takes that node's DaemonSet pods).
    daemon_sets: tuple[DaemonSet, ...] = ()
    # Per pool, the template the cloud provider would give (CA's TemplateNodeInfo),
    # used when the pool has no node to copy; without one the Fleet makes it.
    provider_templates: Mapping[str, NodeExample] = field(default_factory=dict)
    _templates: TemplateNodes | None = None
    _in_flight: list[_InFlight] = field(default_factory=list)
    # The unneeded nodes across loops (CA's unneeded.Nodes), made by the first scale-down.
    _unneeded: UnneededNodes | None = None
    _last_scale_up: float | None = None
    _rng: random.Random = field(default_factory=random.Random)
    # Pool utilisations across loops: a loop every 10 s re-measures mostly the same pools.
    _utilization: PoolCache = field(default_factory=PoolCache)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.options.seed)

    # --- state the caller reports -----------------------------------------------------
    def nodes_ready(self, pool: str, count: int = 1) -> None:
        """``count`` nodes of ``pool`` from earlier scale-ups joined the cluster."""
        for flight in self._in_flight:
            if flight.pool == pool and count > 0:
                taken = min(count, flight.nodes)
                flight.nodes -= taken
                count -= taken
        self._in_flight = [f for f in self._in_flight if f.nodes > 0]
        self._templates = None  # the pool's next names moved on

    def groups(self) -> dict[str, NodeGroup]:
        """The node groups at their sizes in the cluster (nodes by pool label; nodes in
        flight not counted: ``loop`` adds them). ``zero_or_max_node_scaling`` (CA's
        NodeGroupDefaults; no flag sets it) makes every group atomic, as a pool's
        ``autoscaling.zeroOrMaxNodeScaling`` makes its own."""
        groups = node_groups(self.fleet, self._cluster_sizes())
        if self.options.zero_or_max_node_scaling:
            groups = {name: replace(g, zero_or_max=True) for name, g in groups.items()}
        return groups

    def _cluster_sizes(self) -> dict[str, int]:
        return pool_sizes(self.fleet, (i.node for i in self.scheduler.cluster.nodes.values()))

    def templates(self) -> TemplateNodes:
        if self._templates is None:
            cluster = self.scheduler.cluster
            self._templates = TemplateNodes(self.fleet, self._cluster_sizes(),
                                            cluster.node_names(), self.fleet_seed,
                                            self._examples(), self.daemon_sets)
        return self._templates

    def _examples(self) -> dict[str, NodeExample]:
        """Per autoscaled pool, the real node CA would build its template from, with
        its slices and the DaemonSet and mirror pods on it."""
        cluster = self.scheduler.cluster
        nodes = [cluster.nodes[n].node for n in cluster.node_names()]
        out: dict[str, NodeExample] = {}
        for pool in self.fleet.spec.pools:
            if pool.autoscaling is None:
                continue
            node = example_of(nodes, pool.name)
            if node is None:
                if pool.name in self.provider_templates:
                    out[pool.name] = self.provider_templates[pool.name]
                continue
            name = node.metadata.name or ""
            pods = tuple(p.pod for p in cluster.nodes[name].pods
                         if (is_daemon_pod(p.pod) or is_mirror_pod(p.pod))
                         and not p.pod.metadata.deletion_timestamp)
            claims = tuple(c for p in pods for c in claims_of(cluster, p))
            out[pool.name] = NodeExample(node, cluster.slices_of(name), pods, claims)
        return out

    # --- the loop -----------------------------------------------------------------------
    def loop(self, pending: Sequence[PodInfo], now: float = 0.0) -> LoopDecisions:
        # Forks build and drop many small acyclic objects: the cyclic GC only rescans.
        with gc_paused():
            return self._loop(pending, now)

    def _loop(self, pending: Sequence[PodInfo], now: float) -> LoopDecisions:
        groups = self.groups()
        cutoff = self.options.expendable_pods_priority_cutoff
        dropped = {p.key: why for p in pending if p.assumed_node is None
                   and (why := not_for_scale_up(p, cutoff)) is not None}
        units = pod_units(p for p in pending if p.assumed_node is None and p.key not in dropped)
        scheduler = self.scheduler
        templates = self.templates()
        ups: list[ScaleUp] = []
        blocked: dict[str, str] = {}
        upcoming: list[str] = []
        scheduler.fork()
        try:
            offsets = self._place_on_in_flight(units, groups, upcoming)
            units = [u for u in units if not set(u.keys) & set(upcoming)]
            ordered = sorted(groups.values(), key=lambda g: g.name)
            signatures = self._signatures(units)
            # An estimate stays right while its group took no nodes and none of the
            # units it helps went to another group: the units it cannot help left
            # no trace on its nodes (their tries were undone).
            cache: dict[str, tuple[int, Estimate]] = {}
            stalled: set[str] = set()
            reads = measures_for(self.options.expander)
            limit = self.options.max_nodes_per_scale_up
            budget = self._budget(templates)

            def atomic(group: NodeGroup) -> bool:
                return group.zero_or_max
            while units:
                # Full groups too: their estimate says whether the max size is the reason.
                options = []
                alike: dict[tuple[bytes, int, int], Estimate] = {}
                # Groups the cluster-wide limits leave no node for (CA skips them).
                caps: dict[str, int | None] = {}
                limited: dict[str, str] = {}
                for g in ordered:
                    template = templates.node(g.name, 0)[0]
                    caps[g.name], why = budget.allowed(template)
                    if not why and atomic(g) and g.room - offsets[g.name] > 0:
                        # All of an atomic group's room at once must fit the limits.
                        why = budget.exceeded(template, g.room - offsets[g.name])
                    if why:
                        limited[g.name] = why
                    hit = cache.get(g.name)
                    if hit is None or hit[0] != offsets[g.name]:
                        twin_key = (signatures[g.name], g.room - offsets[g.name],
                                    offsets[g.name]) if signatures.get(g.name) else None
                        twin = alike.get(twin_key) if twin_key is not None else None
                        option = as_group(twin, g) if twin is not None else \
                            estimate(scheduler, templates, g, units, offsets[g.name],
                                     measures=reads, max_nodes=limit,
                                     fastpath=self.options.fastpath_binpacking_enabled)
                        hit = (offsets[g.name], option)
                        cache[g.name] = hit
                        if twin_key is not None:
                            alike.setdefault(twin_key, option)
                    options.append(hit[1])
                for option in options:
                    # ComputeExpansionOption: a zero-or-max group's only node count is
                    # its max size.
                    if atomic(option.group) and option.units:
                        option.forced_count = option.group.max_size
                similar: dict[str, list[str]] = {}
                if self.options.balance_similar_node_groups:
                    similar = self._similar_groups(options, units, templates, limited)
                    options = self._with_similar_room(options, similar, groups, offsets,
                                                      units, reads, limit)
                    cache.clear()
                helpful = [o for o in options if o.units and o.group.name not in stalled
                           and o.group.name not in limited]
                if not helpful:
                    for unit in units:
                        blocked[unit.name] = pending_reason(unit, options, limited)
                    break
                best = choose(self.options.expander, helpful, self._rng,
                              self.options.expander_priorities)
                # The limits cap the chosen option (CA: applyLimits, GetCappedNewNodeCount).
                cap = caps[best.group.name]
                capped = limit if cap is None else (min(limit, cap) if limit else cap)
                if similar.get(best.group.name):
                    count = best.node_count if cap is None else min(best.node_count, cap)
                    made = self._balanced(best.group, similar[best.group.name], count,
                                          groups, offsets, units, budget, now)
                    if made:
                        ups += made
                        helped = {p for up in made for p in up.pods}
                        units = [u for u in units if not set(u.keys) & helped]
                        continue
                kept = estimate(scheduler, templates, best.group, units,
                                offsets[best.group.name], keep=True, measures=(),
                                max_nodes=capped,
                                fastpath=self.options.fastpath_binpacking_enabled)
                if atomic(best.group) and kept.units:
                    # The group grows to its max size (the nodes no pod needs too).
                    kept.forced_count = best.group.room - offsets[best.group.name]
                if not kept.units:
                    # A reused estimate that no longer holds: estimate the group
                    # afresh, and leave it out until something else moves.
                    cache.pop(best.group.name, None)
                    stalled.add(best.group.name)
                    continue
                stalled.clear()
                offsets[best.group.name] += max(len(kept.nodes), kept.forced_count)
                budget.add(templates.node(best.group.name, 0)[0], kept.node_count)
                ups.append(ScaleUp(best.group.name, kept.node_count, tuple(kept.pods),
                                   now + best.group.provisioning_delay, tuple(kept.nodes)))
                helped = {u.name for u in kept.units}
                units = [u for u in units if u.name not in helped]
                for name, (_, option) in list(cache.items()):
                    if any(u.name in helped for u in option.units):
                        del cache[name]
            if self.options.enforce_node_group_min_size:
                ups += self._up_to_min_size(groups, offsets, budget, templates, now)
        finally:
            scheduler.revert()
        pending_pods = tuple(PendingPod(key, reason) for unit in pod_units(
            p for p in pending if p.assumed_node is None) if unit.name in blocked
            for key, reason in ((k, blocked[unit.name]) for k in unit.keys))
        pending_pods += tuple(PendingPod(k, why) for k, why in dropped.items())
        if ups:
            self._last_scale_up = now
            for up in ups:
                self._in_flight.append(_InFlight(up.pool, up.add, up.ready_at))
        unneeded: tuple[ScaleDown, ...] = ()
        scale_downs: tuple[ScaleDown, ...] = ()
        unremovable: tuple[Unremovable, ...] = ()
        # As Cluster Autoscaler's loop: only a scale-up made in this loop skips scale-down;
        # pods that no group can help do not.
        if not ups:
            unneeded, scale_downs, unremovable = self._scale_down(groups, now)
        return LoopDecisions(tuple(ups), pending_pods, unneeded, scale_downs, tuple(upcoming),
                             unremovable)

    def _similar_groups(self, options: Sequence[Estimate], units: Sequence[PodUnit],
                        templates: TemplateNodes, limited: Mapping[str, str]
                        ) -> dict[str, list[str]]:
        """Per group, the similar groups it would balance a scale-up with (CA's
        ComputeSimilarNodeGroups): alike template nodes, able to schedule every pod
        group it can (helped, or fitting a fresh node beyond the max size), and not
        out of the cluster-wide limits."""
        key_of = {u.name: u.key for u in units}
        schedulable = {o.group.name: {u.key for u in o.units} |
                       {key_of[n] for n in o.at_max if n in key_of} for o in options}
        shapes = {o.group.name: (templates.node(o.group.name, 0)[0],
                                 [p for p, _ in templates.pods(o.group.name, 0)])
                  for o in options}
        ignored = self.options.balancing_ignore_labels
        out: dict[str, list[str]] = {}
        for o in options:
            name = o.group.name
            if o.group.zero_or_max:
                # ComputeSimilarNodeGroups returns none for a ZeroOrMaxNodeScaling group:
                # its scale-up is its own max size, never split (a similar group may
                # still be atomic: FindSimilarNodeGroups does not look).
                out[name] = []
                continue
            node, pods = shapes[name]
            candidates = [c for c in shapes if c != name and c not in limited and
                          nodes_similar(node, shapes[c][0], pods, shapes[c][1], ignored)]
            out[name] = compute_similar(name, candidates, schedulable, True)
        return out

    def _with_similar_room(self, options: list[Estimate], similar: Mapping[str, list[str]],
                           groups: Mapping[str, NodeGroup], offsets: Mapping[str, int],
                           units: Sequence[PodUnit], reads: frozenset[str], limit: int
                           ) -> list[Estimate]:
        """The options of groups with similar groups, estimated with the room of those
        too (CA's similar-node-group capacity threshold of the estimation limiter)."""
        out = []
        for option in options:
            name = option.group.name
            extra = sum(max(0, groups[s].room - offsets[s]) for s in similar.get(name, ()))
            if extra:
                group = option.group
                wider = NodeGroup(group.name, group.size, group.min_size,
                                  group.max_size + extra, group.price_per_hour,
                                  group.provisioning_delay, group.priority,
                                  group.zero_or_max)
                option = estimate(self.scheduler, self.templates(), wider, units,
                                  offsets[name], measures=reads, max_nodes=limit,
                                  fastpath=self.options.fastpath_binpacking_enabled)
                option.group = group
            out.append(option)
        return out

    def _balanced(self, best: NodeGroup, similar: Sequence[str], count: int,
                  groups: Mapping[str, NodeGroup], offsets: dict[str, int],
                  units: Sequence[PodUnit], budget: ScaleUpBudget, now: float
                  ) -> list[ScaleUp]:
        """The chosen option's ``count`` nodes split over it and its similar groups
        (smallest first); each group's share takes what pods it can, in turn."""
        names = [best.name, *similar]
        shares = balance([(n, groups[n].size + offsets[n], groups[n].max_size)
                          for n in names], count)
        templates = self.templates()
        left = list(units)
        made: list[ScaleUp] = []
        # CA's capScaleUpsByQuota: each share, smallest group first (as
        # BalanceScaleUpBetweenGroups returns them), capped by what the limits and quotas
        # leave after the shares before it; what a cap takes is not given to another.
        for name in sorted(names, key=lambda n: groups[n].size + offsets[n]):
            add = shares.get(name, 0)
            cap, _ = budget.allowed(templates.node(name, 0)[0])
            if cap is not None:
                add = min(add, cap)
            if add <= 0:
                continue
            group = groups[name]
            kept = estimate(self.scheduler, templates, group, left, offsets[name], keep=True,
                            measures=(), max_nodes=add,
                            fastpath=self.options.fastpath_binpacking_enabled)
            offsets[name] += add
            budget.add(templates.node(name, 0)[0], add)
            taken = {u.name for u in kept.units}
            left = [u for u in left if u.name not in taken]
            made.append(ScaleUp(name, add, tuple(kept.pods), now + group.provisioning_delay,
                                tuple(kept.nodes)))
        return made

    def _budget(self, templates: TemplateNodes) -> ScaleUpBudget:
        """What --max-nodes-total, --cores-total and --memory-total (and the
        CapacityQuotas, when enabled) leave: the cluster's nodes and those being
        provisioned count."""
        opts = self.options
        cluster = self.scheduler.cluster
        budget = ScaleUpBudget(opts.max_nodes_total, opts.cores_total[1], opts.memory_total[1],
                               (i.node for i in cluster.nodes.values()),
                               opts.capacity_quotas if opts.capacity_quotas_enabled else ())
        for flight in self._in_flight:
            budget.add(templates.node(flight.pool, 0)[0], flight.nodes)
        return budget

    def _up_to_min_size(self, groups: dict[str, NodeGroup], offsets: dict[str, int],
                        budget: ScaleUpBudget, templates: TemplateNodes, now: float
                        ) -> list[ScaleUp]:
        """--enforce-node-group-min-size (CA's ScaleUpToNodeGroupMinSize): each group
        whose size, nodes in flight and this loop's scale-ups included, is under its
        min size grows to it, within the limits."""
        ups: list[ScaleUp] = []
        for group in sorted(groups.values(), key=lambda g: g.name):
            target = group.size + offsets[group.name]
            missing = group.min_size - target
            if missing <= 0:
                continue
            template = templates.node(group.name, 0)[0]
            cap, _ = budget.allowed(template)
            add = missing if cap is None else min(missing, cap)
            if add <= 0:
                continue
            budget.add(template, add)
            offsets[group.name] += add
            ups.append(ScaleUp(group.name, add, (), now + group.provisioning_delay))
        return ups

    def _signatures(self, units: Sequence[PodUnit]) -> dict[str, bytes]:
        """Template signatures for sharing estimates between alike groups; none when a
        pending pod looks at topology (then alike groups may differ): its affinity,
        spread or selectors, or a persistent volume that may pin it to a zone."""
        labels = self.fleet.spec.topology_labels
        keys = (labels.zone, labels.block, labels.rack)
        if any(topology_sensitive(p.pod, keys) or has_persistent_volumes(p.pod)
               for u in units for p in u.pods):
            return {}
        return self.templates().signatures()

    def _place_on_in_flight(self, units: list[PodUnit], groups: dict[str, NodeGroup],
                            helped: list[str]) -> dict[str, int]:
        """Place on the nodes being provisioned (as template nodes, on the open fork)
        what fits there; returns the template offset per group (its nodes in flight)."""
        offsets = {name: 0 for name in groups}
        # Fresh nodes of one group are alike: what fits none of them is known once.
        hopeless: dict[str, dict[Hashable, str]] = {}
        for flight in self._in_flight:
            group = groups.get(flight.pool)
            if group is None:
                continue
            offset = offsets[group.name]
            exactly = NodeGroup(group.name, group.max_size - flight.nodes - offset,
                                group.min_size, group.max_size, group.price_per_hour,
                                group.provisioning_delay, group.priority,
                                group.zero_or_max)
            kept = estimate(self.scheduler, self.templates(), exactly, units, offset,
                            keep=True, measures=(),
                            hopeless=hopeless.setdefault(group.name, {}),
                            fastpath=self.options.fastpath_binpacking_enabled)
            offsets[group.name] += flight.nodes
            helped += kept.pods
            taken = {u.name for u in kept.units}
            units[:] = [u for u in units if u.name not in taken]
        return offsets

    def _scale_down(self, groups: dict[str, NodeGroup], now: float
                    ) -> tuple[tuple[ScaleDown, ...], tuple[ScaleDown, ...],
                               tuple[Unremovable, ...]]:
        opts = self.options
        wall = None if opts.clock_epoch is None else opts.clock_epoch + now
        cluster = self.scheduler.cluster
        tracker = self._unneeded
        if tracker is None:
            tracker = self._unneeded = UnneededNodes(
                lambda _, ready: opts.scale_down_unneeded_time if ready
                else opts.scale_down_unready_time,
                lambda node: pool if (pool := pool_of(node)) in groups else None)
            if opts.node_deletion_candidate_ttl and opts.clock_epoch is not None and \
                    wall is not None:
                # CA's planner picks up its DeletionCandidate taints on start, on the
                # wall clock; the loop's clock is that less clock_epoch.
                tracker.load_from_existing_taints(
                    (i.node for i in cluster.nodes.values()), wall,
                    opts.node_deletion_candidate_ttl)
                for item in tracker.as_list():
                    item.since -= opts.clock_epoch
        limit = tracker.limit(now, opts.max_scale_down_parallelism,
                              opts.scale_down_unneeded_time)
        found, kept = unneeded_nodes(self.scheduler, groups, opts, now, self._utilization,
                                     wall, limit)
        tracker.update(((cluster.nodes[d.node].node, not has_pods_to_move(self.scheduler, d.node))
                        for d in found), now, waiting=[d.node for d in found if d.on_completion])
        since = {item.name: item.since for item in tracker.as_list()}
        unneeded = tuple(ScaleDown(d.node, d.pool, d.utilization, since[d.node], d.on_completion)
                         for d in found)
        if self._last_scale_up is not None and \
                now - self._last_scale_up < opts.scale_down_delay_after_add:
            return unneeded, (), tuple(kept)
        # CA (unneeded.Nodes.RemovableAt): a node unneeded for longer than the unneeded
        # time (the unready time for a node that is not Ready; 0: at once), its group
        # above its min size, the cluster above --cores-total/--memory-total's minima.
        # A node not unneeded long enough is only in ``unneeded``.
        sizes = {name: group.size for name, group in groups.items()}
        atomic = {name for name, group in groups.items() if group.zero_or_max}
        empty, drain, waiting = tracker.removable_at(
            now, sizes, {name: group.min_size for name, group in groups.items()},
            minimums={"cores": opts.cores_total[0], "memory": opts.memory_total[0]},
            cluster_nodes=(i.node for i in cluster.nodes.values()), atomic=atomic)
        # CA's budgets: this many deletions at once, empty nodes first; an atomic group
        # whole or not at all.
        empty, drain = crop_to_budget(
            empty, drain, opts.max_scale_down_parallelism, opts.max_drain_parallelism,
            group_of=lambda name: pool_of(cluster.nodes[name].node),
            atomic={name: AtomicSize(sizes[name], sizes[name]) for name in atomic})
        removable = set(empty) | set(drain)
        kept += [u for u in waiting
                 if u.reason not in ("NotUnneededLongEnough", "NotUnreadyLongEnough")]
        return unneeded, tuple(d for d in unneeded if d.node in removable), tuple(kept)

