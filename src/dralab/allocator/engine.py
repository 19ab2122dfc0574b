"""The allocator: a reusable engine and the one-shot ``allocate`` function."""

from __future__ import annotations

import gc
import operator
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dralab.api.base import KubeObject
from dralab.api.core import Node
from dralab.api.features import FeatureGates
from dralab.api.resource import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice

from .capacity import CapacityError
from .constraints import ConstraintError
from .counters import CounterCache
from .explain import explain
from .features import AllocatorFeatures
from .index import SliceIndex
from .nodes import NodeView
from .outcome import Allocated, AllocationError, AllocationOutcome, Unschedulable
from .pools import NodePools, PoolGatherError, gather_pools
from .prepare import PreparedClaim, prepare_claim
from .results import build_claim, build_claim_at
from .search import Fatal, Pick, Search, StepLimit
from .selection import SelectorError, cel_features, matches
from .state import AllocatedState
from .twins import Probe, Twin, TwinMemo, positions

__all__ = ["Allocator", "allocate"]

_NAME = operator.attrgetter("name")
_CONSUMES = operator.attrgetter("consumes_counters")

_PREPARED_LIMIT = 4096
# Passed where no share ID is drawn (no pick is a share); never used.
_NO_DRAWS = random.Random(0)
_CANNOT_ALLOCATE = "cannot allocate all claims"
_INVALID_POOLS = "invalid resource pools were encountered"
_TIMED_OUT = "timed out trying to allocate devices"
# The twin lookup judges itself by windows of probes: a window where fewer than one
# probe in _TWIN_HIT_SHARE found a twin (a fleet whose nodes do not repeat) pauses it
# for the next _TWIN_PAUSE nodes it would have probed. Only speed depends on this: a
# twin's answer is the answer a search gives.
_TWIN_WINDOW = 32
_TWIN_HIT_SHARE = 4
_TWIN_PAUSE = 512


class Allocator:
    """Allocates devices for a pod's claims on one node at a time.

    Built once per view of the cluster (slices, classes, allocated state,
    features) and then asked about any number of nodes and claims. The
    ``state`` is shared, not copied: update it (``add_claim``/``remove_claim``)
    as claims get allocated or released and later calls see the change.
    Everything else the allocator derives (pools per node, selector results,
    prepared claims, available counters) is cached and reused.

    ``allocate`` is pure with respect to its arguments: it never mutates the
    claims, slices or state it is given. Share IDs come from ``rng`` (seeded
    with ``seed``), so runs are reproducible. The search is exhaustive; upstream
    bounds it with a filter timeout, here ``max_steps`` (None = unbounded) turns
    a search that needs more steps into ``Unschedulable`` "timed out ...".
    """

    def __init__(self, slices: SliceIndex | Iterable[ResourceSlice],
                 classes: Mapping[str, DeviceClass] | Iterable[DeviceClass],
                 state: AllocatedState | None = None,
                 features: AllocatorFeatures | FeatureGates | None = None,
                 *, seed: int = 0, rng: random.Random | None = None,
                 max_steps: int | None = None) -> None:
        self.max_steps = max_steps
        self.index = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
        if isinstance(classes, Mapping):
            self.classes: Mapping[str, DeviceClass] = dict(classes)
        else:
            self.classes = {c.name: c for c in classes}
        self.state = state if state is not None else AllocatedState()
        if isinstance(features, AllocatorFeatures):
            self.features = features
        else:
            self.features = AllocatorFeatures.from_gates(features)
        self._rng = rng
        self._seed = seed
        self._cel = cel_features(self.features.consumable_capacity,
                                 self.features.list_type_attributes)
        self._prepared: dict[int, PreparedClaim] = {}
        self._counters: CounterCache = {}
        # Claim ids -> (the claims, the outcome on a node whose every device is taken).
        self._taken_outcomes: dict[tuple[int, ...], tuple[tuple[ResourceClaim, ...],
                                                          AllocationOutcome]] = {}
        self._twins = TwinMemo()
        self._twin_seen: set[str] = set()  # nodes asked about once already
        self._twin_probes = 0  # in the current window
        self._twin_hits = 0
        self._twin_pause = 0  # nodes left to search without probing

    @property
    def rng(self) -> random.Random:
        """The share-ID generator; seeded on first use (seeding costs more than
        a cold allocation's other setup, and most allocations draw nothing)."""
        if self._rng is None:
            self._rng = random.Random(self._seed)
        return self._rng

    def _prepare(self, claim: ResourceClaim) -> PreparedClaim:
        # Claims are immutable, so the preparation of the very same object
        # can be reused on every node; the cache keeps the object alive, so
        # its id cannot be recycled while the entry exists.
        found = self._prepared.get(id(claim))
        if found is not None and found.claim is claim:
            return found
        if len(self._prepared) >= _PREPARED_LIMIT:
            self._prepared.clear()
        made = prepare_claim(claim, self.classes, self.features, self._cel)
        self._prepared[id(claim)] = made
        return made

    def forget_pools(self) -> None:
        """Drop what was derived from gathered pools (available counters); call it
        after the index was updated, so pools that left it are not kept alive."""
        self._counters.clear()
        self._twins.clear()
        self._twin_seen.clear()
        self._twin_probes = self._twin_hits = self._twin_pause = 0

    def pools(self, node: Node | NodeView | str) -> NodePools:
        """The pools usable from ``node`` (raises PoolGatherError for malformed selectors)."""
        return gather_pools(self.index, NodeView.of(node), self.features.partitionable_devices)

    def _plain_node(self, view: NodeView) -> ResourceSlice | None:
        """``SliceIndex.sole_raw`` of a node whose pools are not memoised: the shape
        the shortcuts below need. A warm allocator's memo is cheaper than them."""
        if view.name in self.index.node_pools:
            return None
        return self.index.sole_raw(view.name)

    def _taken_node(self, view: NodeView, claims: Sequence[ResourceClaim],
                    sole: ResourceSlice | None = None) -> NodePools | None:
        """Empty pools for a node whose every device is taken, when that gives the
        same outcome as its real pools; None otherwise (gather as usual).

        A necessary-condition prefilter, decided from the raw slice before any
        entry or record is built. The node must have ``SliceIndex.sole_slice``'s
        shape (its pools: one complete, valid pool; so no gather error, no
        invalid-pool reason once its device names are distinct and no device
        consumes counters) and every one of its devices must be exclusively
        allocated (also shared, without DRAConsumableCapacity). The search skips
        such devices for a request that is neither admin nor "All" before any
        other check or side effect, so searching no candidates takes the same
        steps and ends the same way. "All" requests look at the devices before
        the search and admin requests may take allocated devices: those claims
        gather. Explanations look at the devices too, so only
        ``explain_failure=False`` calls come here. ``sole``: the node's
        ``_plain_node``, looked up if not given.
        """
        if sole is None:
            sole = self._plain_node(view)
            if sole is None:
                return None
        spec = sole.spec
        devices = spec.devices
        state = self.state
        if self.features.consumable_capacity and state.shares:
            # Shares leave a device free then: only exclusive use counts, per key.
            exclusive = state.exclusive
            prefix = f"{spec.driver}/{spec.pool.name}/"
            for d in devices:
                if prefix + d.name not in exclusive:
                    return None
            names = set(map(_NAME, devices))
        else:
            # Every allocated device of the pool is taken (exclusive, or a share
            # without consumable capacity); distinct names need as many of them.
            used = state.allocated_in_pool((spec.driver, spec.pool.name))
            if len(used) < len(devices):
                return None
            names = set(map(_NAME, devices))
            if not used.keys() >= names:
                return None
        # A repeated name (an invalid pool) or counters (the pool might be invalid:
        # unknown counters): gather.
        if len(names) != len(devices) or any(map(_CONSUMES, devices)):
            return None
        for claim in claims:
            for req in self._prepare(claim).flat:
                if req.admin or req.all_mode:
                    return None
        return NodePools(node=view, pools=(), by_key={}, candidates=(), pool_candidates={},
                         broken={}, first_bad=None, any_invalid=False)

    def unsatisfiable(self, claims: Sequence[ResourceClaim], pools: NodePools) -> bool:
        """Whether no allocated state at all lets ``claims`` fit in ``pools``: some plain
        request (not a firstAvailable alternative, not allocationMode All) asks for
        more devices than the pools have devices its selectors accept. False when
        that cannot be told without searching (an invalid claim or pool, a selector
        that fails on some device)."""
        if pools.any_invalid:
            return False
        try:
            prepared = [self._prepare(c) for c in claims]
        except (SelectorError, ConstraintError, CapacityError):
            return False
        if any(p.error is not None or p.constraint_error is not None for p in prepared):
            return False
        candidates = pools.candidates
        for p in prepared:
            for req in p.flat:
                if req.parent or req.all_mode or req.count < 1:
                    continue
                found = 0
                try:
                    for rec in candidates:
                        if matches(rec, req.selectors, req.labels):
                            found += 1
                            if found >= req.count:
                                break
                except SelectorError:
                    return False
                if found < req.count:
                    return True
        return False

    def allocate(self, claims: Sequence[ResourceClaim], node: Node | NodeView | str,
                 *, explain_failure: bool = True) -> AllocationOutcome:
        """Try to allocate all ``claims`` (none may be allocated already) on ``node``.

        Returns ``Allocated`` (new claim objects with ``status.allocation``),
        ``Unschedulable`` (with one explanation line per request unless
        ``explain_failure`` is false) or ``AllocationError``. Raises only for
        misuse (an already allocated claim, a wrong argument type).

        The cyclic collector is paused for the call (bounded work). A cold call
        builds thousands of records, pools and search entries that live at
        least as long as the call; each collection during the call would scan
        them again and promote them towards the old generation, and the young
        and middle collections it triggers would rescan them there. Paused,
        the collector runs once after the call over what survived it: the same
        objects are reclaimed (nothing it builds is cyclic; any cycle is only
        collected later), with far fewer passes over them.
        """
        if not gc.isenabled():
            return self._allocate(claims, node, explain_failure)
        gc.disable()
        try:
            return self._allocate(claims, node, explain_failure)
        finally:
            gc.enable()

    def _allocate(self, claims: Sequence[ResourceClaim], node: Node | NodeView | str,
                  explain_failure: bool) -> AllocationOutcome:
        view = NodeView.of(node)
        for claim in claims:
            if not isinstance(claim, ResourceClaim):
                raise TypeError(f"expected ResourceClaim, got {type(claim).__name__}")
            if claim.status.allocation is not None:
                raise ValueError(f"claim {claim.ref} is already allocated")
        if not explain_failure:
            sole = self._plain_node(view)
            if sole is not None:
                taken = self._taken_node(view, claims, sole)
                if taken is not None:
                    # Searching no candidates ends the same way on every such node (the
                    # claims alone decide: no state, no node is read), and a pod's
                    # search meets many: answered once per set of claims.
                    key = tuple(map(id, claims))
                    known = self._taken_outcomes.get(key)
                    if known is not None and all(
                            a is b for a, b in zip(known[0], claims, strict=True)):
                        return known[1]
                    outcome = self._search(view, claims, taken, explain_failure)
                    if not isinstance(outcome, Allocated):
                        if len(self._taken_outcomes) >= _PREPARED_LIMIT:
                            self._taken_outcomes.clear()
                        self._taken_outcomes[key] = (tuple(claims), outcome)
                    return outcome
                probe = self._twin_probe(view, claims, sole)
                if probe is not None:
                    twin = probe.twin
                    if twin is not None:
                        if twin.outcome is not None:
                            return twin.outcome
                        return self._replay(view, probe, twin)
                    return self._search(view, claims, None, explain_failure, probe)
        return self._search(view, claims, None, explain_failure)

    def _twin_probe(self, view: NodeView, claims: Sequence[ResourceClaim],
                    sole: ResourceSlice) -> Probe | None:
        """The node (``sole``: its ``SliceIndex.sole_raw``) looked up among the twins its
        claims met (``twins``), or None when its answer cannot be reused. A node this
        allocator met before searches: a long-lived allocator memoises its pools and
        selector results then, and searching with them is cheaper than the comparison."""
        name = view.name
        if name in self._twin_seen or self.index.rules:
            return None
        if self._twin_pause:
            self._twin_pause -= 1
            return None
        self._twin_seen.add(name)
        probe = self._twins.probe(sole, self.state, claims)
        if probe.twin is not None:
            self._twin_hits += 1
        self._twin_probes += 1
        if self._twin_probes == _TWIN_WINDOW:
            if self._twin_hits * _TWIN_HIT_SHARE < _TWIN_WINDOW:
                self._twin_pause = _TWIN_PAUSE
            self._twin_probes = self._twin_hits = 0
        return probe

    def _replay(self, view: NodeView, probe: Probe, twin: Twin) -> AllocationOutcome:
        """The twin's allocation on this node's devices: same positions, steps and
        choices. The claims were prepared, and their configs built, for the twin."""
        spec = probe.slice.spec
        driver, pool, devices = spec.driver, spec.pool.name, spec.devices
        binding = self.features.device_binding_and_status
        node = view.name
        prepared = [self._prepare(c) for c in probe.claims]
        picks, chosen = twin.picks, twin.selected

        # Built when asked for: of the many nodes a pod's search answers, one is kept.
        # It reads nothing that changes: prepared claims, the slice's devices, positions.
        def build() -> tuple[ResourceClaim, ...]:
            return tuple([build_claim_at(p, driver, pool, devices, at, selected, binding, node)
                          for p, at, selected in zip(prepared, picks, chosen, strict=True)])

        return Allocated.deferred(build, twin.steps, twin.choices)

    def _keep_allocation(self, probe: Probe, search: Search,
                         selected: Sequence[Mapping[int, int]], done: Allocated) -> None:
        """Remember a successful search for the node's twins, unless a pick is a share."""
        picks = []
        for claim_picks in search.results:
            at = positions(probe.slice.spec.devices, claim_picks)
            if at is None:
                return
            picks.append(at)
        self._twins.remember(probe, None, tuple(picks), tuple(selected), search.steps,
                             done.subrequests)

    def _allocated(self, view: NodeView, prepared: Sequence[PreparedClaim],
                   picks: Sequence[Sequence[Pick]], selected: Sequence[Mapping[int, int]],
                   steps: int) -> Allocated:
        """The new claims from per-claim picks and firstAvailable choices. Raises Fatal."""
        binding = self.features.device_binding_and_status
        new_claims = []
        choices: list[dict[str, int]] = []
        for p, claim_picks, chosen in zip(prepared, picks, selected, strict=True):
            # Only shares draw IDs: don't seed the generator for nothing.
            rng = self.rng if any(pick.share for pick in claim_picks) else _NO_DRAWS
            new_claims.append(build_claim(p, claim_picks, chosen, view.name, binding, rng))
            choices.append({p.slots[ri].name: s for ri, s in chosen.items()})
        return Allocated(tuple(new_claims), steps, tuple(choices))

    def _search(self, view: NodeView, claims: Sequence[ResourceClaim], pools: NodePools | None,
                explain_failure: bool, probe: Probe | None = None) -> AllocationOutcome:
        """Gather the node's pools (unless given) and search them; the answer is
        kept for the node's twins when ``probe`` is given and it can be reused."""
        search: Search | None = None
        try:
            if pools is None:
                pools = gather_pools(self.index, view, self.features.partitionable_devices)
            prepared = [self._prepare(c) for c in claims]
            search = Search(prepared, pools, self.state, self.features, self._counters,
                            self.max_steps)
            search.prepare()
            try:
                found = search.run()
            except StepLimit:
                outcome: AllocationOutcome = Unschedulable(_TIMED_OUT, (), search.steps)
                if probe is not None:
                    self._twins.remember(probe, outcome)
                return outcome
            if not found:
                reason = _INVALID_POOLS if pools.any_invalid else _CANNOT_ALLOCATE
                lines = explain(search) if explain_failure else ()
                outcome = Unschedulable(reason, lines, search.steps)
                if probe is not None:
                    self._twins.remember(probe, outcome)
                return outcome
            selected: list[dict[int, int]] = [{} for _ in prepared]
            for (ci, ri), s in search.selected.items():
                selected[ci][ri] = s
            done = self._allocated(view, prepared, search.results, selected, search.steps)
            if probe is not None:
                self._keep_allocation(probe, search, selected, done)
            return done
        except (Fatal, SelectorError, ConstraintError, CapacityError, PoolGatherError) as exc:
            return AllocationError(str(exc), search.steps if search is not None else 0)


def _split(objects: Iterable[KubeObject | Any]) -> tuple[
        list[ResourceSlice], list[DeviceClass], list[DeviceTaintRule], list[ResourceClaim],
        dict[str, Node]]:
    slices, classes, rules, claims, nodes = [], [], [], [], {}
    for obj in objects:
        if isinstance(obj, ResourceSlice):
            slices.append(obj)
        elif isinstance(obj, DeviceClass):
            classes.append(obj)
        elif isinstance(obj, DeviceTaintRule):
            rules.append(obj)
        elif isinstance(obj, ResourceClaim):
            claims.append(obj)
        elif isinstance(obj, Node):
            nodes[obj.name] = obj
    return slices, classes, rules, claims, nodes


def allocate(claims: Sequence[ResourceClaim], node: Node | str,
             objects: Iterable[KubeObject], features: FeatureGates | None = None,
             *, seed: int = 0) -> AllocationOutcome:
    """One-shot allocation of ``claims`` on ``node``.

    ``objects`` supplies the cluster: ResourceSlices, DeviceClasses,
    DeviceTaintRules and already-allocated ResourceClaims (their devices are
    in use); a Node named like ``node`` lends its labels when ``node`` is a
    name; anything else is ignored. ``features`` defaults to the Kubernetes
    1.37 gates. Pure: builds a fresh ``Allocator`` and returns its outcome.
    """
    slices, classes, rules, allocated, nodes = _split(objects)
    if isinstance(node, str) and node in nodes:
        node = nodes[node]
    gates = AllocatorFeatures.from_gates(features)
    index = SliceIndex(slices, rules if gates.device_taint_rules else ())
    engine = Allocator(index, classes, AllocatedState.from_claims(allocated), gates, seed=seed)
    return engine.allocate(claims, node)
