"""The DRA plugin's long-lived view of the cluster: one allocator, reused.

Upstream builds a fresh allocator in every PreFilter from all slices, classes
and allocated claims. Here the expensive parts live across pods:

* the ``SliceIndex`` follows the store's events: when a node's slices change
  (``SlicesChanged``, e.g. the node joined or left) only those slices are
  re-indexed and only the nodes that see their pools lose their gathered pools
  and remembered outcomes; a change of classes rebuilds the allocator over the
  same index; only taint rules or feature gates rebuild the index;
* the ``Allocator`` shares ``ClusterState.allocated``, which Reserve and the
  claim lifecycle keep current, so nothing is re-gathered per pod;
* per node, the outcome of allocating a given claim spec is remembered with
  the versions of the node's pools in the allocated state; while none of those
  pools changes, the next pod with the same spec (claims from one template
  share their spec object) gets the same answer without a search. Outcomes
  with shared devices (consumable capacity) are remembered too: a hit draws
  fresh share IDs from the random generator, exactly the draws (in number and
  order) the search would have made, so runs stay reproducible and identical
  to searching every time. Such outcomes never enter the ``feasible`` masks:
  Filter must be called on their node for the draws to happen.

Only the allocator over the cluster's own state uses the outcome cache; what-if
states (preemption) get their own allocator and always search.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TypeAlias, overload

import numpy as np
import numpy.typing as npt
from msgspec.structs import replace

from dralab.allocator import (
    Allocated,
    AllocatedState,
    AllocationError,
    AllocationOutcome,
    Allocator,
    AllocatorFeatures,
    NodeView,
    SliceIndex,
    Unschedulable,
)
from dralab.allocator.changelog import ChangeLog
from dralab.allocator.pools import NodePools, PoolGatherError
from dralab.api.features import FeatureGates
from dralab.api.keys import uid_text
from dralab.api.resource import (
    AllocationResult,
    DeviceClass,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceSlice,
)
from dralab.cluster import (
    ClassChanged,
    ClusterEvent,
    ClusterState,
    NodeInfo,
    SliceOwner,
    SlicesChanged,
    TaintRulesChanged,
    slice_owner,
)
from dralab.scheduler.framework import Status

from .devicepolicy import DevicePolicy, FirstFit, OrderedAllocator
from .extended import ExtendedClaimSpec

__all__ = ["AllocatorCache", "NodeOutcome", "NodeResult", "SpecKey", "Visit"]

# (namespace, spec object) per claim to allocate; specs are compared by identity.
SpecKey = tuple[tuple[str, int], ...]
_OUTCOME_LIMIT = 200_000
# Outcome tables keeping per-node arrays (two bools per node each, plus the nodes known).
_KNOWN_TABLES = 64
_BITS_128 = (1 << 128) - 1
_CANNOT_ALLOCATE = "cannot allocate all claims"  # the allocator's Unschedulable reason
# What-if outcomes remembered per node (preemption), dropped all at once past this.
_WHAT_IF_LIMIT = 512

Mask: TypeAlias = npt.NDArray[np.bool_]
Positions: TypeAlias = npt.NDArray[np.int64]


@dataclass(slots=True, eq=False)
class NodeOutcome:
    """The result of allocating one pod's pending claims on one node.

    ``allocations`` (one per claim, in order) when it fits; otherwise ``reason``
    (and ``error`` when it is an Error rather than Unschedulable) with the
    allocator's ``details`` if they were asked for. ``status`` is free for the
    caller to memoise the framework Status it derives (outcomes are shared
    through the cache, so deriving it once saves work on every hit).
    """

    allocations: Sequence[AllocationResult] | None
    reason: str = ""
    error: bool = False
    details: tuple[str, ...] = ()
    steps: int = 0
    status: Status | None = None
    score: int | None = None  # the device policy's score, memoised by the caller
    # Some result has a share ID (a device shared by consumable capacity): a
    # remembered outcome needs fresh IDs on every use (``OutcomeTable.lookup``).
    shares: bool = False
    # For such a copy: the remembered outcome it was made from (which keeps ``score``).
    origin: NodeOutcome | None = None
    share_count: int = -1  # how many results hold a share ID (-1: not counted yet)


# Filter's answer for a feasible node: one allocation per pending claim (in order,
# then the special claim's); the special claim with its spec when the node serves
# extended resources through DRA; the cached outcome it came from (None for
# what-if searches), on which Score memoises the policy's opinion. A plain tuple:
# one is made per feasible node and pod. Defined here, where the table keeps them;
# ``state.DRAState`` holds them per node name.
NodeResult: TypeAlias = tuple[Sequence[AllocationResult],
                              tuple[ResourceClaim, ExtendedClaimSpec] | None,
                              NodeOutcome | None]


@dataclass(slots=True, eq=False)
class _Node:
    """The cache's entry for one node: its view and gathered pools. Outcomes are
    remembered against the entry; ``alive`` turns False when it is replaced or
    dropped (the node's slices changed), which invalidates them all at once."""

    view: NodeView
    pools: NodePools | None
    pool_keys: tuple[tuple[str, str], ...]
    alive: bool = True
    # Outcomes of what-if searches (preemption) by (token, what the node's pools hold).
    what_if: dict[tuple[int, tuple[object, ...]], NodeOutcome] | None = None
    # Per token: the failure found by a search when the claims cannot fit in the node's
    # pools whatever is allocated (``Allocator.unsatisfiable``), or None when they may.
    hopeless: dict[int, NodeOutcome | None] | None = None


class OutcomeTable:
    """Remembered outcomes of one claim-spec token, per node.

    An entry is (the cache's node entry, the node's pool keys, sum of their
    versions when computed, outcome). It is valid while that node entry is
    alive and has the node's current view (the same NodeInfo, the same slices)
    and none of its pools changed; versions only grow, so an unchanged sum means
    unchanged pools.

    ``feasible`` keeps the same knowledge as two arrays over the cluster's node
    positions: where a valid entry says the claims fit, and where it says they
    do not. They are seeded from the entries, updated as outcomes are stored,
    and cleared for the nodes of every pool the allocated state's log reports
    as changed, so a pod needs no per-node lookup for nodes whose devices did
    not change. ``forget_known`` drops them (``AllocatorCache`` keeps them for a
    bounded number of tables).
    """

    __slots__ = ("_cluster", "_cursor", "_failed", "_index", "_mask", "_outcomes", "_results",
                 "_share_counts", "_shared", "_shared_outcomes", "_version", "asked", "entries",
                 "hits", "pool_version", "rng")

    def __init__(self, pool_version: Callable[[tuple[str, str]], int],
                 rng: random.Random | None = None) -> None:
        self.entries: dict[str, tuple[_Node, tuple[tuple[str, str], ...], int,
                                      NodeOutcome]] = {}
        self.pool_version = pool_version
        # Draws the share IDs of remembered outcomes with shared devices.
        self.rng = rng if rng is not None else random.Random(0)
        self.hits = 0
        self.asked = 0  # cycles that asked for ``feasible`` (see AllocatorCache.feasible_mask)
        self._cluster: ClusterState | None = None
        self._version = -1  # the cluster's node_version the arrays were built for
        self._cursor = 0  # the allocated-state log position the arrays reflect
        self._index: dict[str, int] = {}
        self._mask: Mask | None = None  # valid entry, claims fit
        self._failed: Mask | None = None  # valid entry, claims do not fit
        # Valid entry, claims fit with shared devices: a hit must draw share IDs.
        self._shared: Mask | None = None
        self._share_counts: Positions | None = None  # share IDs per outcome, where _shared
        # By position: Filter's record where _mask, the outcome where _failed. Dicts,
        # not lists: memory follows the nodes known, not the fleet.
        self._results: dict[int, NodeResult] = {}
        self._outcomes: dict[int, NodeOutcome] = {}
        self._shared_outcomes: dict[int, NodeOutcome] = {}  # by position, where _shared

    def lookup(self, view: NodeView) -> NodeOutcome | None:
        """The outcome for the node of ``view`` (``NodeInfo.view``) if still valid.
        Filter's hot path: one dict lookup and one version read per pool. An
        outcome with shared devices comes back as a copy with fresh share IDs
        (drawn as the search would have drawn them)."""
        found = self._valid(view)
        if found is not None:
            self.hits += 1
            if found.shares:
                return _redrawn(found, self.rng)
        return found

    def _valid(self, view: NodeView) -> NodeOutcome | None:
        found = self.entries.get(view.name)
        if found is None:
            return None
        node = found[0]
        if node.view is not view or not node.alive:
            return None
        keys = found[1]
        pool_version = self.pool_version
        if len(keys) == 1:
            version = pool_version(keys[0])
        else:
            version = 0
            for key in keys:
                version += pool_version(key)
        if found[2] != version:
            return None
        return found[3]

    def store(self, node: _Node, pool_keys: tuple[tuple[str, str], ...], version: int,
              outcome: NodeOutcome) -> None:
        """Remember ``outcome`` (computed at pool-version sum ``version``)."""
        view = node.view
        self.entries[view.name] = (node, pool_keys, version, outcome)
        cluster = self._cluster
        if self._mask is None or self._failed is None or cluster is None \
                or cluster.node_version != self._version:
            return
        position = self._index.get(view.name)
        if position is None or cluster.node_infos()[position].view is not view:
            return
        self._set(position, outcome)

    def drop(self, name: str) -> None:
        """Forget what the ``feasible`` arrays say about node ``name`` (its entries
        are already invalid: their node entry is dead)."""
        if self._mask is None or self._failed is None:
            return
        position = self._index.get(name)
        if position is not None:
            self._clear(position)

    def _clear(self, position: int) -> None:
        assert self._mask is not None and self._failed is not None \
            and self._shared is not None
        self._mask[position] = self._failed[position] = self._shared[position] = False
        self._results.pop(position, None)
        self._outcomes.pop(position, None)
        self._shared_outcomes.pop(position, None)

    def _set(self, position: int, outcome: NodeOutcome) -> None:
        assert self._mask is not None and self._failed is not None \
            and self._shared is not None
        self._clear(position)
        if outcome.shares:
            # Known, but not vouched for: a visit must draw share IDs (``visit``).
            assert self._share_counts is not None
            self._shared[position] = True
            self._shared_outcomes[position] = outcome
            self._share_counts[position] = _share_count(outcome)
        elif outcome.allocations is not None:
            self._mask[position] = True
            self._results[position] = (outcome.allocations, None, outcome)
        else:
            self._failed[position] = True
            self._outcomes[position] = outcome

    def knows(self) -> bool:
        """Whether the arrays of ``feasible`` exist (cheap to bring up to date)."""
        return self._mask is not None

    def forget_known(self) -> None:
        """Drop the arrays of ``feasible`` (rebuilt from the entries when asked again)."""
        self._cluster = None
        self._mask = self._failed = self._shared = self._share_counts = None
        self._results = {}
        self._outcomes = {}
        self._shared_outcomes = {}

    def feasible(self, cluster: ClusterState, log: ChangeLog[tuple[str, str]],
                 pool_nodes: Mapping[tuple[str, str], set[str]]) -> tuple[Mask, Mask, Mask]:
        """(fits, does not fit, fits with shared devices): nodes by position with a
        valid entry saying so; see the class docstring. The arrays are the table's:
        copy them before the next Filter call."""
        mask, failed, shared = self._mask, self._failed, self._shared
        if mask is None or failed is None or shared is None \
                or cluster is not self._cluster or cluster.node_version != self._version:
            return self._seed(cluster, log)
        changed = log.since(self._cursor)
        if changed is None:
            return self._seed(cluster, log)
        self._cursor = log.end
        if changed:
            index = self._index
            for pool in set(changed):
                for name in pool_nodes.get(pool, ()):
                    position = index.get(name)
                    if position is not None:
                        self._clear(position)
        return mask, failed, shared

    def _seed(self, cluster: ClusterState, log: ChangeLog[tuple[str, str]]
              ) -> tuple[Mask, Mask, Mask]:
        nodes = cluster.node_infos()
        self._cluster = cluster
        self._version = cluster.node_version
        self._cursor = log.end
        self._index = index = cluster.node_index()
        mask = self._mask = np.zeros(len(nodes), np.bool_)
        failed = self._failed = np.zeros(len(nodes), np.bool_)
        shared = self._shared = np.zeros(len(nodes), np.bool_)
        self._share_counts = np.zeros(len(nodes), np.int64)
        self._results = {}
        self._outcomes = {}
        self._shared_outcomes = {}
        for name in self.entries:
            position = index.get(name)
            if position is None:
                continue
            outcome = self._valid(nodes[position].view)
            if outcome is not None:
                self._set(position, outcome)
        return mask, failed, shared

    def failed_outcomes(self, positions: list[int]) -> list[NodeOutcome]:
        """The outcomes of nodes ``feasible`` reported as not fitting."""
        outcomes = self._outcomes
        try:
            found = [outcomes[p] for p in positions]
        except KeyError:
            raise AssertionError("outcome asked for a node not known to be rejected") from None
        self.hits += len(found)
        return found

    def visit(self, positions: Positions) -> Visit:
        """What ``lookup`` draws, in this order, at the nodes ``feasible`` reported as
        fitting with shared devices: the share IDs, drawn exactly as that many
        lookups would draw them (one call for all, the same bits). The outcome
        ``lookup`` would have answered at one of them is built only when asked for
        (``Visit.outcome``)."""
        assert self._share_counts is not None
        listed = positions.tolist()
        try:
            found = itemgetter(*listed)(self._shared_outcomes) if len(listed) > 1 else \
                (self._shared_outcomes[listed[0]],)
        except KeyError:
            raise AssertionError("visit asked for a node not known to share devices") from None
        self.hits += len(listed)
        counts = self._share_counts[positions]
        total = int(counts.sum())
        # getrandbits(128 * n) takes the generator's words in the order n calls of
        # getrandbits(128) take them, lowest 128 bits first.
        bits = self.rng.getrandbits(128 * total) if total else 0
        return Visit(positions, found, np.cumsum(counts) - counts, counts, bits)

    def result_at(self, position: int) -> NodeResult:
        """What Filter records for the node at ``position`` (True in ``feasible``)."""
        result = self._results.get(position)
        if result is None:
            raise AssertionError("result asked for a node the mask did not vouch for")
        return result


def _holdings(state: AllocatedState, pool_keys: tuple[tuple[str, str], ...]
              ) -> tuple[object, ...]:
    """What ``state`` holds in the pools ``pool_keys``, in the state's own order: per
    allocated device its references, exclusive and shared use and consumed capacity.
    A search on a node reads nothing else of the state (its candidates, counters and
    capacity all come from the node's pools), so equal holdings give equal outcomes."""
    out: list[object] = []
    exclusive, shares, capacity = state.exclusive, state.shares, state.capacity
    for pool in pool_keys:
        names = state.allocated_in_pool(pool)
        if not names:
            out.append(())
            continue
        prefix = f"{pool[0]}/{pool[1]}/"
        held = []
        for name, references in names.items():
            device = prefix + name
            consumed = capacity.get(device)
            held.append((name, references, exclusive.get(device, 0), shares.get(device, 0),
                         tuple(consumed.items()) if consumed else ()))
        out.append(tuple(held))
    return tuple(out)


def _outcome(result: AllocationOutcome) -> NodeOutcome:
    if isinstance(result, Allocated):
        allocations = result.allocations
        return NodeOutcome(allocations, steps=result.steps, shares=_shares(allocations))
    if isinstance(result, Unschedulable):
        return NodeOutcome(None, result.reason, False, result.explanations, result.steps)
    assert isinstance(result, AllocationError)
    return NodeOutcome(None, result.message, True, (), result.steps)


def _shares(allocations: Sequence[AllocationResult]) -> bool:
    return any(r.share_id is not None for a in allocations for r in a.devices.results)


def _redrawn(outcome: NodeOutcome, rng: random.Random) -> NodeOutcome:
    """``outcome`` (with shared devices) with new share IDs, drawn in the order the
    allocator draws them when it builds the results (claim by claim, result by
    result); everything else is shared with ``outcome``. The IDs are drawn now, so
    the run's RNG advances exactly as the search's would; the results holding them
    are built only if someone reads them (most Filter hits never are)."""
    count = _share_count(outcome)
    return _copy_with(outcome, [rng.getrandbits(128) for _ in range(count)])


def _share_count(outcome: NodeOutcome) -> int:
    """How many results of ``outcome`` hold a share ID (counted once per outcome)."""
    assert outcome.allocations is not None
    count = outcome.share_count
    if count < 0:
        count = outcome.share_count = sum(
            1 for a in outcome.allocations for r in a.devices.results if r.share_id is not None)
    return count


def _copy_with(outcome: NodeOutcome, bits: list[int]) -> NodeOutcome:
    assert outcome.allocations is not None
    return NodeOutcome(RedrawnAllocations(outcome.allocations, bits), outcome.reason,
                       outcome.error, outcome.details, outcome.steps, outcome.status,
                       outcome.score, True, outcome)


@dataclass(slots=True, eq=False)
class Visit:
    """One ``OutcomeTable.visit``: the nodes (positions, in visiting order), their
    remembered outcomes, where each one's share IDs start in ``bits`` (all the
    visit's draws as one integer, first draw lowest) and how many it has."""

    positions: Positions
    origins: tuple[NodeOutcome, ...]
    starts: Positions
    counts: Positions
    bits: int

    def outcome(self, position: int) -> NodeOutcome | None:
        """What ``lookup`` would have answered at ``position`` (None: not visited)."""
        at = np.flatnonzero(self.positions == position)
        if not len(at):
            return None
        i = int(at[0])
        bits = self.bits >> (128 * int(self.starts[i]))
        return _copy_with(self.origins[i], [bits >> (128 * j) & _BITS_128
                                            for j in range(int(self.counts[i]))])


class RedrawnAllocations(Sequence[AllocationResult]):
    """A remembered outcome's allocations with fresh share IDs (drawn as ``bits``),
    built on first access."""

    __slots__ = ("_bits", "_built", "_source")

    def __init__(self, source: Sequence[AllocationResult], bits: list[int]) -> None:
        self._source = source
        self._bits = bits
        self._built: tuple[AllocationResult, ...] | None = None

    def _build(self) -> tuple[AllocationResult, ...]:
        built = self._built
        if built is None:
            ids = iter(self._bits)
            out = []
            for allocation in self._source:
                devices = allocation.devices
                if any(r.share_id is not None for r in devices.results):
                    results = [r if r.share_id is None else replace(r, share_id=uid_text(next(ids)))
                               for r in devices.results]
                    allocation = replace(allocation, devices=replace(devices, results=results))
                out.append(allocation)
            built = self._built = tuple(out)
        return built

    @overload
    def __getitem__(self, index: int) -> AllocationResult: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[AllocationResult, ...]: ...

    def __getitem__(self, index: int | slice) -> AllocationResult | tuple[AllocationResult, ...]:
        return self._build()[index]

    def __len__(self) -> int:
        return len(self._source)

    def __iter__(self) -> Iterator[AllocationResult]:
        return iter(self._build())


class AllocatorCache:
    """Allocators and per-node outcomes for one cluster; see the module docstring.

    Not thread-safe. ``refresh`` must be called (once per pod is enough) before
    ``allocate`` so that changed slices or classes are picked up.
    """

    def __init__(self, rng: random.Random, max_steps: int | None = None) -> None:
        self.rng = rng
        self.max_steps = max_steps
        self._cluster: ClusterState | None = None
        self._cursor = 0  # position in the cluster's event feed this cache has seen
        self._allocated: AllocatedState | None = None
        self._gates: FeatureGates | None = None
        # The slices the index holds, per owner (node name or shared pool).
        self._owned: dict[SliceOwner, tuple[ResourceSlice, ...]] = {}
        self._pool_version: Callable[[tuple[str, str]], int] = AllocatedState().pool_version
        self.allocator: Allocator | None = None
        self._ordered: OrderedAllocator | None = None
        self.classes: dict[str, DeviceClass] = {}
        self.features = AllocatorFeatures()
        self._nodes: dict[str, _Node] = {}
        # Pool key -> names of the nodes whose gathered pools include it, so a
        # changed pool can be traced to the nodes whose outcomes it invalidates.
        self._pool_nodes: dict[tuple[str, str], set[str]] = {}
        # Claim specs -> small int token; the specs are kept alive with it.
        self._tokens: dict[SpecKey, tuple[int, tuple[ResourceClaimSpec, ...]]] = {}
        self._tables: dict[int, OutcomeTable] = {}
        # Tables whose ``feasible`` arrays are kept, least recently asked first.
        self._known: OrderedDict[int, OutcomeTable] = OrderedDict()
        self._outcome_count = 0
        self._next_token = 0
        self.hits = 0
        self.misses = 0
        self.rebuilds = 0  # times the slice index was built from scratch
        # Moves on whenever every node's entry is forgotten (``_pool_nodes`` restarts).
        self.epoch = 0

    # --- keeping up with the cluster ---------------------------------------------
    def refresh(self, cluster: ClusterState) -> Allocator:
        """The allocator for ``cluster`` as it is now.

        Reads the cluster's events since the last call: changed slices are
        re-indexed owner by owner (``SliceIndex.update``) and only the nodes
        that see the changed pools are forgotten; changed classes give a new
        allocator over the same index. The index is built from scratch only the
        first time, for another cluster or allocated-state object, changed
        feature gates or taint rules, or when the feed was trimmed past this
        cache's cursor.
        """
        allocator = self.allocator
        if (allocator is None or cluster is not self._cluster
                or cluster.allocated is not self._allocated
                or cluster.features != self._gates):
            self._rebuild(cluster)
        else:
            feed = cluster.events
            if feed.end != self._cursor:
                changes = feed.since(self._cursor)
                self._cursor = feed.end
                if changes is None:
                    self._rebuild(cluster)
                else:
                    self._catch_up(cluster, changes)
        assert self.allocator is not None
        return self.allocator

    def _catch_up(self, cluster: ClusterState, changes: Sequence[ClusterEvent]) -> None:
        owners: dict[SliceOwner, None] = {}  # in the order they changed
        classes = rules = False
        for event in changes:
            if isinstance(event, SlicesChanged):
                owners[event.owner] = None
            elif isinstance(event, ClassChanged):
                classes = True
            elif isinstance(event, TaintRulesChanged):
                rules = True
        if rules and self.features.device_taint_rules:
            self._rebuild(cluster)
            return
        if owners:
            self._update_slices(cluster, owners)
        if classes:
            self.classes = dict(cluster.classes)
            self._new_allocator(self._index())
            self._forget()

    def _index(self) -> SliceIndex:
        assert self.allocator is not None
        return self.allocator.index

    def _rebuild(self, cluster: ClusterState) -> None:
        self.rebuilds += 1
        self._cluster = cluster
        self._cursor = cluster.events.end
        self._allocated = cluster.allocated
        self._gates = cluster.features
        self.features = AllocatorFeatures.from_gates(cluster.features)
        rules = cluster.taint_rules if self.features.device_taint_rules else ()
        slices = cluster.slices
        index = SliceIndex(slices, rules, [cluster.slice_position(s.name) for s in slices])
        owned: dict[SliceOwner, list[ResourceSlice]] = {}
        for s in slices:
            owned.setdefault(slice_owner(s), []).append(s)
        self._owned = {owner: tuple(found) for owner, found in owned.items()}
        self.classes = dict(cluster.classes)
        self._new_allocator(index)
        self._pool_version = cluster.allocated.pool_version
        self._forget_nodes()

    def _forget_nodes(self) -> None:
        """Forget every node's pools and remembered outcomes."""
        self.epoch += 1
        for entry in self._nodes.values():
            entry.alive = False
        self._nodes = {}
        self._pool_nodes = {}
        self._forget()

    def _new_allocator(self, index: SliceIndex) -> None:
        assert self._allocated is not None
        self.allocator = Allocator(index, self.classes, self._allocated, self.features,
                                   rng=self.rng, max_steps=self.max_steps)
        self._ordered = None

    def _update_slices(self, cluster: ClusterState, owners: Iterable[SliceOwner]) -> None:
        """Re-index the slices of ``owners`` and forget the nodes that may see them."""
        allocator = self.allocator
        assert allocator is not None
        index = allocator.index
        affected: set[str] | None = set()
        for owner in owners:
            old = self._owned.get(owner, ())
            new = cluster.slices_of(owner)
            # A slice counts as unchanged only if it is the same object at the same place.
            kept = {id(s) for s in new if index.order_of(s) == cluster.slice_position(s.name)}
            removed = [s for s in old if id(s) not in kept]
            added = [(cluster.slice_position(s.name), s) for s in new if id(s) not in kept]
            if new:
                self._owned[owner] = new
            else:
                self._owned.pop(owner, None)
            nodes = index.update(removed, added)
            if nodes is None:
                affected = None
            elif affected is not None:
                affected |= nodes
        if affected is None:
            self._forget_nodes()
        else:
            for name in affected:
                self._drop_node(name)
        allocator.forget_pools()
        self._ordered = None

    def _drop_node(self, name: str) -> None:
        """Forget the node's gathered pools and every outcome remembered for it."""
        entry = self._nodes.pop(name, None)
        if entry is None:
            return
        entry.alive = False
        for key in entry.pool_keys:
            names = self._pool_nodes.get(key)
            if names is not None:
                names.discard(name)
                if not names:
                    del self._pool_nodes[key]
        for table in self._known.values():
            table.drop(name)

    def nodes_seeing(self, pools: Iterable[tuple[str, str]]) -> set[str]:
        """The nodes whose gathered pools include any of ``pools`` (nodes not gathered
        since the last ``epoch`` are not known here)."""
        out: set[str] = set()
        pool_nodes = self._pool_nodes
        for key in pools:
            names = pool_nodes.get(key)
            if names:
                out |= names
        return out

    def what_if(self, state: AllocatedState) -> Allocator:
        """An allocator over another allocated state (preemption), sharing the index."""
        assert self.allocator is not None
        return Allocator(self.allocator.index, self.classes, state, self.features,
                         rng=self.rng, max_steps=self.max_steps)

    # --- nodes ------------------------------------------------------------------------
    def node(self, node: NodeInfo) -> tuple[NodeView, NodePools | None]:
        """The node's view and its pools (None if gathering failed)."""
        entry = self._node(node)
        return entry.view, entry.pools

    def _node(self, node: NodeInfo) -> _Node:
        view = node.view
        entry = self._nodes.get(view.name)
        if entry is None or entry.view is not view:
            if entry is not None:
                entry.alive = False
            entry = _Node(view, None, ())
            self._nodes[view.name] = entry
        if entry.pools is None and self.allocator is not None:
            try:
                pools = self.allocator.pools(view)
            except PoolGatherError:
                return entry
            entry.pools = pools
            entry.pool_keys = tuple(p.key for p in pools.pools)
            for key in entry.pool_keys:
                self._pool_nodes.setdefault(key, set()).add(view.name)
        return entry

    # --- allocating -------------------------------------------------------------------
    def token(self, claims: Sequence[ResourceClaim]) -> int:
        """A small int naming the specs (and namespaces) of ``claims``: pods whose
        pending claims share their spec objects share a token and thus cached
        outcomes. Valid until the next rebuild."""
        key: SpecKey = tuple((c.metadata.namespace or "", id(c.spec)) for c in claims)
        found = self._tokens.get(key)
        if found is None:
            if len(self._tokens) >= _OUTCOME_LIMIT:
                self._forget()
            # Never reuse a number: cycles in flight may still hold old tokens.
            self._next_token += 1
            found = self._tokens[key] = (self._next_token, tuple(c.spec for c in claims))
        return found[0]

    def _forget(self) -> None:
        self.hits += sum(t.hits for t in self._tables.values())
        self._tokens.clear()
        self._tables.clear()
        self._known.clear()
        self._outcome_count = 0

    def table(self, token: int) -> OutcomeTable:
        """The remembered outcomes of ``token`` (empty for a token from before the
        last rebuild; it then stays empty)."""
        found = self._tables.get(token)
        if found is None:
            found = self._tables[token] = OutcomeTable(self._pool_version, self.rng)
        return found

    def feasible_mask(self, table: OutcomeTable, cluster: ClusterState
                      ) -> tuple[Mask, Mask, Mask] | None:
        """``table.feasible`` for ``cluster`` (whose allocated state this cache must
        be following: ``refresh`` first); None if it is not, and the first time a
        table is asked in a cycle: a token used by one pod only (its own claim)
        would pay for arrays over the fleet it never reuses. At most
        ``_KNOWN_TABLES`` tables keep their arrays, the most recently asked."""
        allocated = self._allocated
        if allocated is None or allocated is not cluster.allocated:
            return None
        known = self._known
        if table.knows():
            known.move_to_end(id(table))
        else:
            table.asked += 1
            if table.asked < 2:
                return None
            known[id(table)] = table
            if len(known) > _KNOWN_TABLES:
                known.popitem(last=False)[1].forget_known()
        return table.feasible(cluster, allocated.log, self._pool_nodes)

    @property
    def total_hits(self) -> int:
        return self.hits + sum(t.hits for t in self._tables.values())

    def allocate(self, claims: Sequence[ResourceClaim], node: NodeInfo, policy: DevicePolicy,
                 *, token: int | None = None, explain: bool = False,
                 allocator: Allocator | None = None) -> NodeOutcome:
        """Allocate ``claims`` on ``node`` with ``policy``'s candidate order.

        With ``token`` (from ``token(claims)``) the outcome is looked up and
        remembered per node: it stays valid while the version of every pool the
        node sees is unchanged (versions only grow, so their sum is a faithful
        change marker). With ``allocator`` (a ``what_if`` allocator) and a token
        the outcome is remembered per node against what the what-if state holds
        in the node's pools (``_holdings``: all the search reads of it), for the
        first-fit policy; with ``explain`` the search always runs and nothing is
        remembered.
        """
        base = self.allocator
        assert base is not None, "refresh() first"
        view = node.view
        entry = self._nodes.get(view.name)
        if entry is None or entry.view is not view or entry.pools is None:
            entry = self._node(node)
        engine = base if allocator is None else allocator
        if engine is not base:
            if token is not None and not explain and entry.pools is not None \
                    and isinstance(policy, FirstFit):
                return self._what_if_outcome(engine, claims, entry, policy, token)
            token = None
        cacheable = (token is not None and engine is base and not explain
                     and entry.pools is not None)
        table = None
        version = 0
        if cacheable:
            table = self.table(token)  # type: ignore[arg-type]
            found = table.lookup(view)
            if found is not None:
                return found
            pool_version = self._pool_version
            for key in entry.pool_keys:
                version += pool_version(key)
        hopeless = entry.hopeless if table is not None else None
        known = hopeless.get(token) if hopeless is not None else None  # type: ignore[arg-type]
        if known is not None:
            # No allocated state lets these claims fit here: the search would fail
            # the same way again (only its step count could differ).
            self.hits += 1
            outcome = known
        else:
            self.misses += 1
            outcome = _outcome(self._search(engine, claims, entry, policy, explain))
            if table is not None and outcome.allocations is None and not outcome.error \
                    and outcome.reason == _CANNOT_ALLOCATE and engine.max_steps is None:
                self._remember_hopeless(engine, claims, entry, token, outcome)  # type: ignore[arg-type]
        if table is not None and not outcome.error:
            if self._outcome_count >= _OUTCOME_LIMIT:
                self._forget()
                return outcome  # its token is gone with the rest
            self._outcome_count += 1
            table.store(entry, entry.pool_keys, version, outcome)
        return outcome

    def _remember_hopeless(self, engine: Allocator, claims: Sequence[ResourceClaim],
                           entry: _Node, token: int, outcome: NodeOutcome) -> None:
        """After a failed search: find out once per token and node whether the claims
        can never fit there, and if so keep the failure for later misses."""
        hopeless = entry.hopeless
        if hopeless is None:
            hopeless = entry.hopeless = {}
        if token in hopeless or entry.pools is None:
            return
        hopeless[token] = outcome if engine.unsatisfiable(claims, entry.pools) else None

    def hopeless(self, claims: Sequence[ResourceClaim], node: NodeInfo, token: int
                 ) -> NodeOutcome | None:
        """The failure of ``claims`` on ``node`` when no allocated state at all lets them
        fit there, so a what-if search (preemption freeing devices) would fail the
        same way; else None. Worked out once per token and node, without a search
        (nothing drawn from the RNG)."""
        if self.allocator is None or self.max_steps is not None:
            return None
        entry = self._nodes.get(node.view.name)
        if entry is None or entry.view is not node.view or entry.pools is None:
            entry = self._node(node)
        if entry.pools is None:
            return None
        known = entry.hopeless
        if known is None:
            known = entry.hopeless = {}
        if token not in known:
            never = self.allocator.unsatisfiable(claims, entry.pools)
            known[token] = NodeOutcome(None, _CANNOT_ALLOCATE) if never else None
        return known[token]

    def _what_if_outcome(self, engine: Allocator, claims: Sequence[ResourceClaim],
                         entry: _Node, policy: DevicePolicy, token: int) -> NodeOutcome:
        """``allocate`` on a what-if allocator, remembered per node and holdings."""
        key = (token, _holdings(engine.state, entry.pool_keys))
        remembered = entry.what_if
        if remembered is None:
            remembered = entry.what_if = {}
        found = remembered.get(key)
        if found is not None:
            self.hits += 1
            # Shared devices: fresh share IDs, drawn as the search would draw them.
            return _redrawn(found, self.rng) if found.shares else found
        self.misses += 1
        outcome = _outcome(self._search(engine, claims, entry, policy, False))
        if not outcome.error:
            if len(remembered) >= _WHAT_IF_LIMIT:
                remembered.clear()
            remembered[key] = outcome
        return outcome

    def _search(self, engine: Allocator, claims: Sequence[ResourceClaim], entry: _Node,
                policy: DevicePolicy, explain: bool) -> AllocationOutcome:
        order = None
        if entry.pools is not None:
            order = policy.order(entry.pools, engine.state)
        if order is None or entry.pools is None:
            return engine.allocate(claims, entry.view, explain_failure=explain)
        if engine is self.allocator:
            if self._ordered is None:
                self._ordered = OrderedAllocator(engine)
            ordered = self._ordered
        else:
            ordered = OrderedAllocator(engine)
        return ordered.allocate(claims, entry.view, entry.pools, order, explain_failure=explain)
