"""Quota of ClusterQueues and cohorts as one tree, with usage kept incrementally.

Every ClusterQueue and every cohort is a node; a ClusterQueue's parent is its
cohort, a cohort's parent its ``CohortSpec.parent``. For each (flavor, resource)
a node has:

* ``subtree``: its own nominal quota plus what its children lend to it (a child
  lends its subtree minus what it keeps, see ``guaranteed``);
* ``guaranteed``: the part it never lends, ``subtree - lendingLimit`` (0 without
  a lending limit);
* ``usage``: for a ClusterQueue, the sum of its admitted workloads; for a cohort,
  what its children use beyond their guaranteed part.

What a ClusterQueue can still take (``available``) is its unused guaranteed part
plus what its parent can still give, the latter capped by the borrowing limit;
this is Kueue's hierarchical quota rule (``cluster_queue.md``: borrowing, lending
limits; ``cohort.md``: cohorts with their own quota). Usage changes walk up the
tree once (O(depth)); nothing is rescanned.

Every walk is a loop, never recursion: a chain of cohorts thousands deep is valid
input. A cohort with a parent cycle (``hierarchy.cycle_cohorts``) is cut from its
parent, so the tree stays a forest; the ClusterQueues under it are in
``cycle_queues`` and admit nothing (Kueue skips them, reason ``HasCycle``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from dralab.queueing.hierarchy import cycle_cohorts
from dralab.queueing.model import ClusterQueueSpec, CohortSpec, ResourceGroup

__all__ = ["SHARE_INFINITE", "DominantShare", "FlavorResource", "QuotaNode", "QuotaTree"]

FlavorResource = tuple[str, str]  # (flavor, resource)

# The share of a ClusterQueue with fair-sharing weight 0 that borrows: it always
# loses (Kueue returns MaxInt for it).
SHARE_INFINITE = float("inf")

# Bound on ``QuotaTree.assess``'s kept answers (each well under a hundred bytes).
_ASSESSED_KEPT = 100_000


@dataclass(frozen=True, slots=True)
class DominantShare:
    """Kueue's DRS value: whether the node borrows, its unweighted ratio (per mille
    of what the parent can lend) and its fair-sharing weight."""

    borrowing: bool
    ratio: float
    weight: float

    def weighted(self) -> float:
        if self.ratio == 0:
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / self.weight

    def key(self) -> tuple[int, float]:
        """Sort key of Kueue's CompareDRS."""
        if self.weight == 0 and self.ratio != 0:
            return (1, self.ratio)
        return (0, self.weighted())


@dataclass(slots=True, eq=False)
class QuotaNode:
    name: str
    is_cohort: bool
    parent: QuotaNode | None = None
    children: list[QuotaNode] = field(default_factory=list)
    nominal: dict[FlavorResource, int] = field(default_factory=dict)
    borrowing_limit: dict[FlavorResource, int] = field(default_factory=dict)
    lending_limit: dict[FlavorResource, int] = field(default_factory=dict)
    subtree: dict[FlavorResource, int] = field(default_factory=dict)
    guaranteed: dict[FlavorResource, int] = field(default_factory=dict)
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    weight_milli: int = 1000
    # ``QuotaTree.share`` of this node at its current usage (None: not known). The
    # share depends only on the node's usage (the rest is fixed), so ``add_usage``
    # forgets it exactly where usage changes; most share questions (every cohort
    # member's, for every preemption search) are then answered without recomputing.
    share_memo: float | None = None
    # Per resource, what it borrows over all flavors at its current usage (None: not
    # known); a share with extra usage adjusts only the (flavor, resource)s it names.
    borrowed_memo: dict[str, int] | None = None
    # ``preemption_fair.dominant_share`` of this node at its current usage (None: not
    # known), forgotten by ``add_usage`` with the others: fair-sharing preemption
    # searches ask for the shares of every cohort member again and again, while only
    # the preemptor's and its victims' paths change.
    drs_memo: DominantShare | None = None

    def root(self) -> QuotaNode:
        node = self
        while node.parent is not None:
            node = node.parent
        return node


def _read_groups(node: QuotaNode, groups: tuple[ResourceGroup, ...]) -> None:
    for group in groups:
        for flavor in group.flavors:
            for resource, quota in flavor.resources.items():
                fr = (flavor.flavor, resource)
                node.nominal[fr] = quota.nominal
                if quota.borrowing_limit is not None:
                    node.borrowing_limit[fr] = quota.borrowing_limit
                if quota.lending_limit is not None:
                    node.lending_limit[fr] = quota.lending_limit


class QuotaTree:
    """The quota tree of every ClusterQueue and cohort of one ``QueueingState``."""

    def __init__(self, cluster_queues: dict[str, ClusterQueueSpec],
                 cohorts: dict[str, CohortSpec]) -> None:
        self.cluster_queues: dict[str, QuotaNode] = {}
        self.cohorts: dict[str, QuotaNode] = {}
        cyclic = cycle_cohorts(cohorts)
        # The ClusterQueues whose cohort has a parent cycle: Kueue's HasCycle.
        self.cycle_queues: frozenset[str] = frozenset(
            name for name, spec in cluster_queues.items() if spec.cohort in cyclic)
        for name in sorted(cluster_queues):
            spec = cluster_queues[name]
            node = QuotaNode(name, is_cohort=False,
                             weight_milli=round(spec.fair_weight * 1000))
            _read_groups(node, spec.resource_groups)
            self.cluster_queues[name] = node
            if spec.cohort:
                node.parent = self._cohort(spec.cohort, cohorts, cyclic)
                node.parent.children.append(node)
        # Cohorts without ClusterQueues count too: their quota (lent up the tree)
        # reaches every queue below their common ancestors, as in Kueue.
        for name in sorted(cohorts):
            self._cohort(name, cohorts, cyclic)
        for node in [*self.cluster_queues.values(), *self.cohorts.values()]:
            if node.parent is None:
                self._fill(node)
        # Keyed by the node's identity: a cohort and a ClusterQueue may share a name.
        self._potential: dict[tuple[int, FlavorResource], int] = {}
        self._paths: dict[int, tuple[QuotaNode, ...]] = {}
        self._lendable: dict[str, dict[str, int]] = {}
        self._members: dict[str, list[str]] = {}
        self._heights: dict[str, int] = {}
        self._root_names: dict[str, str] = {}
        # Per cohort tree and (flavor, resource): the ClusterQueues that borrow it now
        # (``borrowing``), kept by ``add_usage``; preemption looks for its cohort
        # candidates there instead of asking every member of the tree.
        self._borrowers: dict[tuple[str, FlavorResource], set[str]] = {}
        # ``assess``'s answers, keyed by the node, (flavor, resource), the amount and the
        # usage of that (flavor, resource) on the node's path -- all it reads. The heads
        # of a busy cohort ask the same few amounts again and again, while most
        # admissions and evictions there touch other (flavor, resource)s; keyed by the
        # usage itself, an answer stays right through trial evictions and their undo.
        self._assessed: dict[tuple[object, ...], tuple[int, int, bool, int]] = {}

    def _cohort(self, name: str, specs: dict[str, CohortSpec],
                cyclic: frozenset[str]) -> QuotaNode:
        """The node of cohort ``name``, made with its missing ancestors (a loop up the
        parents). A cohort with a parent cycle gets no parent: the cycle is cut
        everywhere, and its ClusterQueues are in ``cycle_queues``."""
        first = self.cohorts.get(name)
        if first is not None:
            return first
        current: str | None = name
        below: QuotaNode | None = None
        while current is not None:
            known = self.cohorts.get(current)
            node = known if known is not None else QuotaNode(current, is_cohort=True)
            if below is not None:
                below.parent = node
                node.children.append(below)
            if known is not None:
                break
            self.cohorts[current] = node
            spec = specs.get(current)
            if spec is None:
                break
            node.weight_milli = round(spec.fair_weight * 1000)
            _read_groups(node, spec.resource_groups)
            if current in cyclic:
                break
            below, current = node, spec.parent or None
        return self.cohorts[name]

    def _fill(self, root: QuotaNode) -> None:
        """Subtree and guaranteed quota, bottom up (children before their parent)."""
        order: list[QuotaNode] = []
        stack = [root]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(node.children)
        for node in reversed(order):
            subtree = dict(node.nominal)
            for child in node.children:
                for fr, amount in child.subtree.items():
                    lent = amount - child.guaranteed.get(fr, 0)
                    subtree[fr] = subtree.get(fr, 0) + lent
            node.subtree = subtree
            node.guaranteed = {fr: max(0, subtree.get(fr, 0) - limit)
                               for fr, limit in node.lending_limit.items()}

    # usage --------------------------------------------------------------------
    def add_usage(self, cluster_queue: str, usage: dict[FlavorResource, int], sign: int) -> None:
        """Add (sign 1) or remove (sign -1) one workload's usage, up the tree."""
        queue = self.cluster_queues[cluster_queue]
        for fr, amount in usage.items():
            node: QuotaNode | None = queue
            delta = amount * sign
            quota = queue.subtree.get(fr, 0)
            used = queue.usage.get(fr, 0)
            if (used > quota) != (used + delta > quota):
                borrowers = self._borrowers.setdefault((self.root_name(cluster_queue), fr), set())
                if used + delta > quota:
                    borrowers.add(cluster_queue)
                else:
                    borrowers.discard(cluster_queue)
            while node is not None and delta:
                before = node.usage.get(fr, 0)
                after = before + delta
                node.usage[fr] = after
                node.share_memo = None
                node.borrowed_memo = None
                node.drs_memo = None
                if node.parent is None:
                    break
                kept = node.guaranteed.get(fr, 0)
                delta = max(0, after - kept) - max(0, before - kept)
                node = node.parent

    # queries ------------------------------------------------------------------
    def _path(self, node: QuotaNode) -> tuple[QuotaNode, ...]:
        """``node`` and its ancestors, ``node`` first; kept per node (the tree's shape
        never changes, and every quota question of the admission cycle walks it)."""
        path = self._paths.get(id(node))
        if path is None:
            chain = [node]
            while chain[-1].parent is not None:
                parent = chain[-1].parent
                assert parent is not None
                chain.append(parent)
            path = self._paths[id(node)] = tuple(chain)
        return path

    def available(self, node: QuotaNode, fr: FlavorResource) -> int:
        """What ``node`` can still take of ``fr``, borrowing within its limits: the
        root's free quota, passed down the path to ``node`` (a loop, O(depth))."""
        path = self._path(node)
        root = path[-1]
        value = root.subtree.get(fr, 0) - root.usage.get(fr, 0)
        for position in range(len(path) - 2, -1, -1):
            step = path[position]
            kept = step.guaranteed.get(fr, 0)
            used = step.usage.get(fr, 0)
            limit = step.borrowing_limit.get(fr)
            if limit is not None:
                stored = step.subtree.get(fr, 0) - kept
                value = min(stored - max(0, used - kept) + limit, value)
            value = max(0, kept - used) + value
        return value

    def potential(self, node: QuotaNode, fr: FlavorResource) -> int:
        """What ``node`` could take of ``fr`` if nothing were used (its maximum capacity);
        cached per node, computed down from the nearest cached ancestor (a loop)."""
        cache = self._potential
        known = cache.get((id(node), fr))
        if known is not None:
            return known
        path = self._path(node)
        value = 0
        start = len(path) - 1
        for position, step in enumerate(path):
            cached = cache.get((id(step), fr))
            if cached is not None:
                value, start = cached, position - 1
                break
        else:
            root = path[-1]
            value = cache[(id(root), fr)] = root.subtree.get(fr, 0)
            start = len(path) - 2
        for position in range(start, -1, -1):
            step = path[position]
            kept = step.guaranteed.get(fr, 0)
            limit = step.borrowing_limit.get(fr)
            if limit is not None:
                value = min(step.subtree.get(fr, 0) - kept + limit, value)
            value = kept + value
            cache[(id(step), fr)] = value
        return value

    def assess(self, node: QuotaNode, fr: FlavorResource, value: int
               ) -> tuple[int, int, bool, int]:
        """The flavor assigner's four questions about ``value`` of ``fr`` in ClusterQueue
        ``node``, answered together: its potential, the borrowing level and whether
        reclaiming may make room (``lowest_fitting_subtree``; not borrowing: 0, and
        True below a cohort), and what is available now. Kept until the usage of
        ``fr`` changes on the node's path."""
        path = self._path(node)
        if len(path) == 2:  # a ClusterQueue right under a root cohort: the common shape
            key: tuple[object, ...] = (node, fr, value, node.usage.get(fr, 0),
                                       path[1].usage.get(fr, 0))
        else:
            key = (node, fr, value, *(step.usage.get(fr, 0) for step in path))
        known = self._assessed.get(key)
        if known is not None:
            return known
        answer = self._assess(node, fr, value)
        if len(self._assessed) >= _ASSESSED_KEPT:
            self._assessed.clear()  # mostly answers of past usage
        self._assessed[key] = answer
        return answer

    def _assess(self, node: QuotaNode, fr: FlavorResource, value: int
                ) -> tuple[int, int, bool, int]:
        capacity = self.potential(node, fr)
        if node.parent is None:
            return capacity, 0, False, node.subtree.get(fr, 0) - node.usage.get(fr, 0)
        borrow, may_reclaim = self.lowest_fitting_subtree(node, fr, value)
        return capacity, borrow, may_reclaim, self.available(node, fr)

    def fits(self, node: QuotaNode, usage: dict[FlavorResource, int],
             allow_borrowing: bool = True) -> bool:
        """Whether ``usage`` fits in ``node`` now (without borrowing, if not allowed)."""
        for fr, amount in usage.items():
            if amount > self.available(node, fr):
                return False
            if not allow_borrowing and self.borrowing(node, fr, amount):
                return False
        return True

    def borrowing(self, node: QuotaNode, fr: FlavorResource, extra: int = 0) -> bool:
        """Whether ``node`` uses (with ``extra`` more) beyond its own subtree quota."""
        return node.usage.get(fr, 0) + extra > node.subtree.get(fr, 0)

    @staticmethod
    def local_available(node: QuotaNode, fr: FlavorResource) -> int:
        """What ``node`` still has of the part it never lends (0 without a lending limit)."""
        return max(0, node.guaranteed.get(fr, 0) - node.usage.get(fr, 0))

    def height(self, cohort: QuotaNode) -> int:
        """Kueue's height of a cohort: 1 for one with only ClusterQueues (0 for an
        empty one), else one more than its highest child cohort. A loop, cached."""
        cached = self._heights.get(cohort.name)
        if cached is not None:
            return cached
        order: list[QuotaNode] = []
        stack = [cohort]
        while stack:
            current = stack.pop()
            order.append(current)
            stack.extend(c for c in current.children if c.is_cohort)
        for current in reversed(order):
            value = min(len(current.children), 1)
            for child in current.children:
                if child.is_cohort:
                    value = max(value, self._heights[child.name] + 1)
            self._heights[current.name] = value
        return self._heights[cohort.name]

    def lowest_fitting_subtree(self, node: QuotaNode, fr: FlavorResource,
                               amount: int) -> tuple[int, bool]:
        """Kueue's borrowing level of ``amount`` more of ``fr`` in ClusterQueue ``node``:
        0 if it stays within its own quota, else the height of the lowest cohort whose
        subtree quota holds it (the root's if none); and whether that cohort is below
        the root (so reclaiming inside it may make room)."""
        if node.parent is None:
            return 0, False
        used = node.usage.get(fr, 0)
        if used + amount <= node.subtree.get(fr, 0):
            return 0, True
        remaining = amount - max(0, node.guaranteed.get(fr, 0) - used)
        path = self._path(node)
        for position in range(1, len(path)):
            current = path[position]
            used = current.usage.get(fr, 0)
            if used + remaining <= current.subtree.get(fr, 0):
                return self.height(current), current.parent is not None
            remaining -= max(0, current.guaranteed.get(fr, 0) - used)
        return self.height(path[-1]), False

    # fair sharing --------------------------------------------------------------
    def lendable(self, cohort: QuotaNode) -> dict[str, int]:
        """Per resource, what the cohort could give at most, over all flavors."""
        key = cohort.name
        cached = self._lendable.get(key)
        if cached is None:
            cached = {}
            for fr in cohort.root().subtree:
                cached[fr[1]] = cached.get(fr[1], 0) + self.potential(cohort, fr)
            self._lendable[key] = cached
        return cached

    def share(self, node: QuotaNode, extra: Mapping[FlavorResource, int] | None = None,
              sign: int = 1) -> float:
        """Kueue's weighted dominant resource share of ``node``: the largest, over
        resources, of what it borrows beyond its subtree quota per 1000 of what the
        parent cohort can lend, times 1000 divided by the weight (milli). 0 when it
        does not borrow; ``SHARE_INFINITE`` for weight 0 when it borrows. Unrounded
        (as Kueue's newer float ratios): with whole-number rounding, two workloads
        too small to move the share could preempt each other forever."""
        if node.parent is None:
            return 0
        if not extra:
            memo = node.share_memo
            if memo is None:
                memo = node.share_memo = self._share(node, {}, 1)
            return memo
        return self._share(node, extra, sign)

    def _share(self, node: QuotaNode, extra: Mapping[FlavorResource, int], sign: int) -> float:
        assert node.parent is not None
        borrowed = node.borrowed_memo
        if borrowed is None:
            borrowed = {}
            for fr, quota in node.subtree.items():
                over = node.usage.get(fr, 0) - quota
                if over > 0:
                    borrowed[fr[1]] = borrowed.get(fr[1], 0) + over
            node.borrowed_memo = borrowed
        if extra:
            borrowed = dict(borrowed)
            for fr, amount in extra.items():
                own = node.subtree.get(fr)
                if own is None:
                    continue  # not a (flavor, resource) of its quota: never borrowed
                used = node.usage.get(fr, 0)
                change = max(0, used + sign * amount - own) - max(0, used - own)
                if change:
                    borrowed[fr[1]] = borrowed.get(fr[1], 0) + change
        if not any(amount > 0 for amount in borrowed.values()):
            return 0
        if node.weight_milli <= 0:
            return SHARE_INFINITE
        return self._dominant(node, borrowed) * 1000 / node.weight_milli

    def _dominant(self, node: QuotaNode, borrowed: Mapping[str, int]) -> float:
        assert node.parent is not None
        lendable = self.lendable(node.parent)
        dominant = 0.0
        for resource, amount in borrowed.items():
            total = lendable.get(resource, 0)
            if amount > 0 and total > 0:
                dominant = max(dominant, amount * 1000 / total)
        return dominant

    def share_order(self, node: QuotaNode) -> tuple[int, float]:
        """Kueue's CompareDRS as a sort key, at the node's current usage: the weighted
        share, except that a weight-0 node that borrows comes after every other and,
        among such nodes, by its unweighted share."""
        share = self.share(node)
        if share != SHARE_INFINITE:
            return 0, share
        borrowed: dict[str, int] = {}
        for fr, quota in node.subtree.items():
            over = node.usage.get(fr, 0) - quota
            if over > 0:
                borrowed[fr[1]] = borrowed.get(fr[1], 0) + over
        return 1, self._dominant(node, borrowed)

    def members(self, cluster_queue: str) -> list[str]:
        """The ClusterQueues of the cohort tree ``cluster_queue`` is in (itself included)."""
        cached = self._members.get(cluster_queue)
        if cached is not None:
            return cached
        node = self.cluster_queues[cluster_queue]
        root = node.root()
        if root is node:
            self._members[cluster_queue] = [cluster_queue]
            return self._members[cluster_queue]
        out: list[str] = []
        stack = [root]
        while stack:
            current = stack.pop()
            if current.is_cohort:
                stack.extend(current.children)
            else:
                out.append(current.name)
        out.sort()
        for name in out:
            self._members[name] = out
        return out

    def borrowers(self, cluster_queue: str, needed: Iterable[FlavorResource]) -> list[str]:
        """The other ClusterQueues of ``cluster_queue``'s cohort tree that borrow one of
        ``needed`` now, by name."""
        root = self.root_name(cluster_queue)
        found: set[str] = set()
        for fr in needed:
            found |= self._borrowers.get((root, fr), set())
        found.discard(cluster_queue)
        return sorted(found)

    def root_name(self, cluster_queue: str) -> str:
        cached = self._root_names.get(cluster_queue)
        if cached is None:
            root = self.cluster_queues[cluster_queue].root()
            cached = self._root_names[cluster_queue] = \
                ("cohort:" if root.is_cohort else "cq:") + root.name
        return cached
