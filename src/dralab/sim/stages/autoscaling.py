"""The autoscaling stage: Cluster Autoscaler's (or Karpenter's) loop every scan interval.

After a scheduling round changed something, a scan is due at the next multiple of
the scan interval (CA's ``--scan-interval``, 10 s). A scan gives the model the pods
the scheduler left pending and acts on its decisions:

* a scale-up's nodes are what ``dralab fleet`` publishes for the pool's next nodes
  (as the run's mode sees them); each joins after the pool's provisioningDelay
  (``NodeLifecycle.join``: the observer follows it, a scheduling round is
  requested) and the model is told (``nodes_ready``);
* a scale-down removes the node as a node ``remove`` event does: its pods are
  evicted and re-created by their controllers.

Bounded: a scan does not call the model again when its answer cannot have
changed: the same pending pods as the last loop, no pod left a node, no node or
slice changed, and (when the last loop found no unneeded node) only placements
happened, which fill nodes and cannot make one unneeded. A scale-down timer
falling due (a node unneeded for the unneeded time, the delay after a scale-up
over) sets a scan at that time. Pools never exceed their max (nodes in flight
count). Deterministic: no clock but the environment's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from dralab.allocator.changelog import ChangeFeed
from dralab.api.core import Node
from dralab.api.resource import ResourceSlice
from dralab.autoscale import (
    ClusterAutoscaler,
    LoopDecisions,
    NodeGroup,
    TemplateNodes,
    node_groups,
)
from dralab.autoscale.groups import pool_of
from dralab.cluster.events import (
    ClusterEvent,
    NodeAdded,
    NodeRemoved,
    NodeUpdated,
    PodAssumed,
    PodBound,
    PodForgotten,
    PodRemoved,
    SlicesChanged,
)
from dralab.fleet import Fleet
from dralab.scheduler import Scheduler

from ..autoscaling import AutoscalingSettings, Model
from ..engine import Environment, Stage
from ..model import NodeChange
from ..results import AutoscalingMetrics, PoolMetrics
from .nodes import NodeLifecycle
from .pods import PodBook

__all__ = ["AutoscalingStage", "PoolLedger"]

_FREEING = (NodeAdded, NodeRemoved, NodeUpdated, SlicesChanged, PodForgotten)

JoinForm = Callable[[Node, tuple[ResourceSlice, ...]], tuple[Node, tuple[ResourceSlice, ...]]]


@dataclass(slots=True)
class _Pool:
    group: NodeGroup
    nodes: int
    timeline: list[tuple[float, int]]
    since: float = 0.0
    node_seconds: float = 0.0
    ups: int = 0
    downs: int = 0


@dataclass(slots=True)
class PoolLedger:
    """Ready nodes per autoscaled pool over time, and what they cost."""

    pools: dict[str, _Pool] = field(default_factory=dict)
    samples: list[tuple[float, float, float]] = field(default_factory=list)
    node_waits: list[float] = field(default_factory=list)

    def start(self, groups: dict[str, NodeGroup]) -> None:
        for name, g in sorted(groups.items()):
            self.pools[name] = _Pool(g, g.size, [(0.0, g.size)])

    def change(self, pool: str, delta: int, now: float) -> None:
        p = self.pools[pool]
        p.node_seconds += p.nodes * (now - p.since)
        p.since = now
        p.nodes += delta
        if p.timeline[-1][0] == now:
            p.timeline[-1] = (now, p.nodes)
        else:
            p.timeline.append((now, p.nodes))
        if delta > 0:
            p.ups += delta
        else:
            p.downs -= delta

    def cost(self, now: float) -> tuple[float, float]:
        """(cumulative cost, cost per hour) at ``now``."""
        total = math.fsum((p.node_seconds + p.nodes * (now - p.since)) / 3600.0
                          * p.group.price_per_hour for p in self.pools.values())
        rate = math.fsum(p.nodes * p.group.price_per_hour for p in self.pools.values())
        return total, rate

    def sample(self, now: float) -> None:
        total, rate = self.cost(now)
        if self.samples and self.samples[-1][0] == now:
            self.samples[-1] = (now, total, rate)
        else:
            self.samples.append((now, total, rate))

    def freeze(self, model: str, now: float, loops: int) -> AutoscalingMetrics:
        pools = {}
        for name, p in self.pools.items():
            hours = (p.node_seconds + p.nodes * (now - p.since)) / 3600.0
            pools[name] = PoolMetrics(
                min=p.group.min_size, max=p.group.max_size,
                price_per_hour=p.group.price_per_hour, nodes=tuple(p.timeline),
                node_hours=hours, cost=hours * p.group.price_per_hour,
                scale_ups=p.ups, scale_downs=p.downs)
        return AutoscalingMetrics(model=model, pools=pools, samples=tuple(self.samples),
                                  node_waits=tuple(self.node_waits), loops=loops)


class AutoscalingStage(Stage):
    """Scans for pending pods and unneeded nodes; adds and removes nodes of autoscaled
    pools (see the module docstring)."""

    name = "autoscaling"
    order = 35

    def __init__(self, env: Environment, settings: AutoscalingSettings, model: Model,
                 scheduler: Scheduler, nodes: NodeLifecycle, book: PodBook, fleet: Fleet,
                 seed: int, join_form: JoinForm) -> None:
        super().__init__(env)
        self.settings = settings
        self.model = model
        self.scheduler = scheduler
        self.nodes = nodes
        self.book = book
        self.fleet = fleet
        self.seed = seed
        self.join_form = join_form
        self.loops = 0
        self.ledger = PoolLedger()
        self._groups = {p.name: p.autoscaling for p in fleet.spec.pools
                        if p.autoscaling is not None}
        self.ledger.start(node_groups(fleet, _pool_sizes(model)))
        self._scan_at: float | None = None
        self._last: tuple[str, ...] | None = None
        self._unneeded = False  # the last loop found unneeded nodes
        self._cursor = 0
        self._due: float | None = None
        self._in_flight: dict[str, int] = {}
        self._covered: set[str] = set()  # pods a launch in flight is for (Karpenter)
        self._names: set[str] = set(scheduler.cluster.node_names())

    # --- triggers -----------------------------------------------------------------------
    def notice(self) -> None:
        """A scheduling round ran: a scan at the next tick of the scan interval."""
        interval = self.settings.scan_interval
        self._request(math.ceil(self.env.now / interval) * interval)

    def _request(self, when: float) -> None:
        when = max(when, self.env.now)
        if self._scan_at is not None and self._scan_at <= when:
            return
        self._scan_at = when
        self.at(when, self._scan_if_due(when))

    def _scan_if_due(self, when: float) -> Callable[[], None]:
        def run() -> None:
            if self._scan_at == when:
                self._scan_at = None
                self.scan()
        return run

    # --- the verb -----------------------------------------------------------------------
    def scan(self) -> None:
        now = self.env.now
        cluster = self.scheduler.cluster
        pending = [p for p in self.scheduler.queue.pending()
                   if p.assumed_node is None and p.key in self.book.pods
                   and p.key not in self._covered]
        keys = tuple(sorted(p.key for p in pending))
        due = self._due is not None and now >= self._due
        if keys == self._last and not due and not self._freed(cluster.events):
            self._rearm()
            return
        self.loops += 1
        decisions = self.model.loop(pending, now)
        self._last = keys
        self._cursor = cluster.events.end  # past the loop's own what-ifs too
        self._act(decisions, now)

    def _freed(self, events: ChangeFeed[ClusterEvent]) -> bool:
        """Whether anything since the last loop may have made a node unneeded or given
        pending pods room: a pod left a node, or nodes or slices changed. Pods arriving
        and binding only fill nodes; the pending pods are compared apart."""
        changes = events.since(self._cursor)
        if changes is None:
            return True
        # With nodes unneeded, any placement may make one needed again (fuller, or its
        # pods no longer fit elsewhere): CA would restart its unneeded time.
        filling = (PodBound, PodAssumed) if self._unneeded else ()
        return any(isinstance(c, _FREEING) or (isinstance(c, PodRemoved) and c.node is not None)
                   or (filling and isinstance(c, filling)) for c in changes)

    def _act(self, decisions: LoopDecisions, now: float) -> None:
        for down in decisions.scale_downs:
            if down.node in self.scheduler.cluster.nodes:
                self.nodes.apply(NodeChange(at=now, action="remove", node=down.node))
                self.ledger.change(down.pool, -1, now)
        sizes = _pool_sizes(self.model)
        for up in decisions.scale_ups:
            spec = self._groups[up.pool]
            room = spec.max - sizes.get(up.pool, 0) - self._in_flight.get(up.pool, 0)
            add = min(up.add, max(0, room))
            if add <= 0:
                continue
            self._launch(up.pool, add, up.ready_at, up.pods, sizes, now)
        self._due = None
        self._unneeded = bool(decisions.unneeded)
        if decisions.unneeded and isinstance(self.model, ClusterAutoscaler):
            opts = self.model.options
            due = min(d.since for d in decisions.unneeded) + opts.scale_down_unneeded_time
            last = self.model._last_scale_up
            if last is not None:
                due = max(due, last + opts.scale_down_delay_after_add)
            self._due = max(due, now + self.settings.scan_interval)
            self._rearm()

    def _rearm(self) -> None:
        """A scan when the scale-down timer falls due (only one scan waits at a time: an
        earlier one that skips the loop sets this again)."""
        if self._due is not None and self._due > self.env.now:
            interval = self.settings.scan_interval
            self._request(math.ceil(self._due / interval) * interval)

    def _launch(self, pool: str, add: int, ready_at: float, pods: tuple[str, ...],
                sizes: dict[str, int], now: float) -> None:
        templates = TemplateNodes(self.fleet, sizes, self._names, self.seed)
        built = [templates.node(pool, i) for i in range(add)]
        self._in_flight[pool] = self._in_flight.get(pool, 0) + add
        for node, _ in built:
            self._names.add(node.metadata.name or "")
        covered = tuple(p for p in pods if p in self.book.pods)
        if not isinstance(self.model, ClusterAutoscaler):
            # Karpenter's model keeps no launches in flight: their pods wait for them.
            self._covered.update(covered)
        for key in covered:
            self.ledger.node_waits.append(ready_at - self.book.pods[key].arrived)
        self.at(ready_at, lambda: self._join(pool, built, covered))

    def _join(self, pool: str, built: list[tuple[Node, tuple[ResourceSlice, ...]]],
              covered: tuple[str, ...]) -> None:
        now = self.env.now
        self._in_flight[pool] -= len(built)
        for node, slices in built:
            self.nodes.join(*self.join_form(node, slices))
            self.ledger.change(pool, 1, now)
        self._covered.difference_update(covered)
        self.model.nodes_ready(pool, len(built))

    def sample(self) -> None:
        self.ledger.sample(self.env.now)

    def metrics(self) -> AutoscalingMetrics:
        return replace(self.ledger.freeze(self.settings.model, self.env.now, self.loops),
                       currency=self.settings.currency)


def _pool_sizes(model: Model) -> dict[str, int]:
    """Ready nodes per pool of the model's fleet (by the nodes' pool label)."""
    sizes: dict[str, int] = {p.name: 0 for p in model.fleet.spec.pools}
    for info in model.scheduler.cluster.nodes.values():
        pool = pool_of(info.node)
        if pool is not None:
            sizes[pool] = sizes.get(pool, 0) + 1
    return sizes
