"""The Karpenter model: one NodePool whose instance types are the autoscaled pools.

Provisioning: the pending units are packed onto new nodes one node at a time;
for each new node every instance type with room is tried, filled from a fresh
template node with the remaining units (largest first, the scheduler's plugins
deciding), and the type with the lowest price per packed pod wins (ties: more
pods, then the type's name). Repeated until no type takes any unit: the cheapest
set of nodes this greedy finds. Units no type can take are pending with the same
reasons as the Cluster Autoscaler model gives.

Consolidation (only when nothing is pending, as CA's scale-down): nodes of the
autoscaled pools, emptiest first, are deleted when their pods fit on the other
nodes, or replaced by one node of a cheaper type that takes all their pods.
A replacement is a scale-down of the old node plus a scale-up of one node of
the new type for the moved pods. Pools' min sizes are respected.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from functools import partial

from dralab.api.core import Node
from dralab.api.gcpause import gc_paused
from dralab.cluster import PodInfo
from dralab.fleet import Fleet
from dralab.scheduler import Scheduler

from .clusterautoscaler import pending_reason
from .decisions import LoopDecisions, PendingPod, ScaleDown, ScaleUp
from .estimator import Estimate, as_group, estimate
from .groups import NodeGroup, TemplateNodes, node_groups, pool_of, pool_sizes, template_signatures
from .scaledown import move_pods
from .units import PodUnit, is_daemon_pod, pod_units, topology_sensitive
from .utilization import AllocatedDevices, PoolCache, node_utilization

__all__ = ["Karpenter"]


def _one_more(group: NodeGroup, offset: int) -> NodeGroup:
    """``group`` with room for exactly one node after ``offset`` new ones."""
    return NodeGroup(group.name, group.max_size - 1 - offset, group.min_size,
                     group.max_size, group.price_per_hour, group.provisioning_delay,
                     group.priority)


def _signatures(fleet: Fleet, units: Sequence[PodUnit]) -> dict[str, bytes]:
    labels = fleet.spec.topology_labels
    keys = (labels.zone, labels.block, labels.rack)
    if any(topology_sensitive(p.pod, keys) for u in units for p in u.pods):
        return {}
    return template_signatures(fleet)


def _cost(option: Estimate) -> tuple[float, int, str]:
    return (round(option.group.price_per_hour / max(1, option.pod_count), 9),
            -option.pod_count, option.group.name)


def _may_hold(node: Node, pods: Sequence[PodInfo]) -> bool:
    """False when the pods' summed requests of a resource, or their number, exceed what
    ``node`` can allocate: they cannot all move there (NodeResourcesFit would refuse)."""
    allocatable = node.status.allocatable or node.status.capacity
    total: Counter[str] = Counter()
    for info in pods:
        total.update(info.requests)
    pods_room = allocatable.get("pods")
    if pods_room is not None and len(pods) * 1000 > pods_room.milli_value():
        return False
    for resource in ("cpu", "memory"):
        have = allocatable.get(resource)
        if have is not None and total[resource] > have.milli_value():
            return False
    return True


@dataclass(slots=True)
class Karpenter:
    scheduler: Scheduler
    fleet: Fleet
    fleet_seed: int | None = None  # the Fleet's seed for template nodes (spec.seed)
    consolidation: bool = True
    _templates: TemplateNodes | None = field(default=None)
    # Pool utilisations across loops (consolidation measures every node each loop).
    _utilization: PoolCache = field(default_factory=PoolCache)

    def _sizes(self) -> dict[str, int]:
        return pool_sizes(self.fleet, (i.node for i in self.scheduler.cluster.nodes.values()))

    def nodes_ready(self, pool: str, count: int = 1) -> None:
        """``count`` nodes of ``pool`` joined: the pool's next template names moved on.
        (Karpenter's model keeps no launches in flight; the caller holds their pods.)"""
        self._templates = None

    def templates(self) -> TemplateNodes:
        if self._templates is None:
            self._templates = TemplateNodes(self.fleet, self._sizes(),
                                            self.scheduler.cluster.node_names(), self.fleet_seed)
        return self._templates

    def loop(self, pending: Sequence[PodInfo], now: float = 0.0) -> LoopDecisions:
        # Forks build and drop many small acyclic objects: the cyclic GC only rescans.
        with gc_paused():
            return self._loop(pending, now)

    def _loop(self, pending: Sequence[PodInfo], now: float) -> LoopDecisions:
        groups = node_groups(self.fleet, self._sizes())
        ordered = sorted(groups.values(), key=lambda g: g.name)
        units = pod_units(p for p in pending if p.assumed_node is None)
        scheduler, templates = self.scheduler, self.templates()
        added: Counter[str] = Counter()
        launched: dict[str, list[str]] = {}
        blocked: dict[str, str] = {}
        scheduler.fork()
        try:
            # One node's estimate per type, reused while every class of pods it packed
            # still has as many pods left: identical pods pack the same way on the
            # type's next node too (the node launched is always packed anew). Alike
            # types share one estimate.
            cache: dict[str, tuple[Counter[Hashable], Estimate]] = {}
            signatures = _signatures(self.fleet, units)
            stalled: set[str] = set()
            while units:
                left = Counter(u.key for u in units)
                options = []
                alike: dict[bytes, Estimate] = {}
                for g in ordered:
                    if g.room - added[g.name] <= 0 or g.name in stalled:
                        continue
                    hit = cache.get(g.name)
                    if hit is None or any(left[k] < n for k, n in hit[0].items()):
                        sig = signatures.get(g.name)
                        twin = alike.get(sig) if sig is not None and not added[g.name] \
                            else None
                        option = as_group(twin, _one_more(g, 0)) if twin is not None else \
                            estimate(scheduler, templates, _one_more(g, added[g.name]),
                                     units, added[g.name], measures=())
                        if sig is not None and not added[g.name]:
                            alike.setdefault(sig, option)
                        hit = (Counter(u.key for u in option.units), option)
                        cache[g.name] = hit
                    options.append(hit[1])
                helpful = [o for o in options if o.units]
                if not helpful:
                    everything = [estimate(scheduler, templates, g, units, added[g.name],
                                           measures=()) for g in ordered]
                    for unit in units:
                        blocked[unit.name] = pending_reason(unit, everything)
                    break
                best = min(helpful, key=_cost)
                name = best.group.name
                kept = estimate(scheduler, templates, _one_more(groups[name], added[name]),
                                units, added[name], keep=True, measures=())
                if not kept.units:
                    # The cached option no longer holds: estimate the type afresh, and
                    # leave it out until something else moves.
                    cache.pop(name, None)
                    stalled.add(name)
                    continue
                stalled.clear()
                added[name] += len(kept.nodes)
                launched.setdefault(name, []).extend(kept.pods)
                taken = {u.name for u in kept.units}
                units = [u for u in units if u.name not in taken]
        finally:
            scheduler.revert()
        ups = tuple(ScaleUp(pool, added[pool], tuple(pods),
                            now + groups[pool].provisioning_delay)
                    for pool, pods in sorted(launched.items()))
        pending_pods = tuple(PendingPod(key, blocked[unit.name])
                             for unit in pod_units(p for p in pending if p.assumed_node is None)
                             if unit.name in blocked for key in unit.keys)
        if ups or pending_pods or not self.consolidation:
            return LoopDecisions(ups, pending_pods)
        removed, replacements = self._consolidate(groups, now)
        return LoopDecisions(replacements, (), removed, removed)

    def _consolidate(self, groups: dict[str, NodeGroup], now: float
                     ) -> tuple[tuple[ScaleDown, ...], tuple[ScaleUp, ...]]:
        scheduler = self.scheduler
        cluster = scheduler.cluster
        allocated = AllocatedDevices(cluster)
        sizes = self._sizes()
        gone: set[str] = set()
        replaced: Counter[str] = Counter()
        downs: list[ScaleDown] = []
        ups: list[ScaleUp] = []

        def others() -> list[str]:
            return [n for n in cluster.node_names() if n not in gone]

        candidates = []
        for name in cluster.node_names():
            info = cluster.nodes[name]
            pool = pool_of(info.node)
            if pool in groups:
                movable = [p for p in info.pods if not is_daemon_pod(p.pod)]
                # Measured before any move is simulated (it is reported, not compared).
                util = node_utilization(cluster, info, allocated, self._utilization).value
                candidates.append((len(movable), name, pool, util))
        scheduler.fork()
        try:
            for _, name, pool, util in sorted(candidates):
                group = groups[pool]
                if sizes[pool] <= group.min_size:
                    continue
                movable = [p for p in cluster.nodes[name].pods if not is_daemon_pod(p.pod)]
                moved = [p.key for p in movable]
                gone.add(name)
                scheduler.fork()
                if move_pods(scheduler, name, others) is None:
                    scheduler.commit()
                    sizes[pool] -= 1
                    downs.append(ScaleDown(name, pool, util, now))
                    continue
                scheduler.revert()
                cheaper = sorted((g for g in groups.values()
                                  if g.price_per_hour < group.price_per_hour
                                  and g.room - replaced[g.name] > 0),
                                 key=lambda g: (g.price_per_hour, g.name))
                for target in cheaper:
                    node, slices = self.templates().node(target.name, replaced[target.name])
                    if not _may_hold(node, movable):
                        continue  # their requests alone exceed the new node's allocatable
                    scheduler.fork()
                    cluster.add_node(node, slices)
                    new = node.metadata.name or ""
                    if move_pods(scheduler, name, partial(tuple, (new,))) is None:
                        scheduler.commit()
                        sizes[pool] -= 1
                        replaced[target.name] += 1
                        downs.append(ScaleDown(name, pool, util, now))
                        ups.append(ScaleUp(target.name, 1, tuple(sorted(moved)),
                                           now + target.provisioning_delay, (new,)))
                        gone.add(new)  # the replacement is not a target for others
                        break
                    scheduler.revert()
                else:
                    gone.discard(name)
        finally:
            scheduler.revert()
        return tuple(downs), tuple(ups)
