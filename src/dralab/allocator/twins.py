"""Twin nodes: one search's answer reused on nodes that must give the same answer.

A fleet is mostly nodes of a few kinds, each publishing one slice of identical
devices; a pod's node search (kube-scheduler tries hundreds of nodes per pod)
asks the same claims of many such nodes in the same allocated state. When a
node's pools are exactly one plain slice of its own (``SliceIndex.sole_slice``
with distinct device names and no counters), nothing the search reads depends
on the node beyond:

- the slice's driver and its devices (CEL sees driver, attributes, capacity;
  taints, binding conditions and node fields are device fields too),
- the allocated state of the slice's device keys (exclusive, shares, consumed
  capacity),

and the claims, classes and features, which belong to the allocator and the
call. The pool name and the node name only appear in the results (pool,
node selector), which are rebuilt for the node from the same device positions.
So a node whose devices equal a twin's (``==``, field by field) in the same
per-position state takes the same devices by position with the same number of
search steps and the same subrequest choices, or fails the same way.

Not reused: explanations (they name devices), errors (their messages may name
pools), picks of shares (share IDs are drawn at random), slices with taint
rules (rules select by pool and device name).

A node is looked up from its raw slice (``SliceIndex.sole_raw``): a node a twin
answers is never indexed, so a pod's search over hundreds of such nodes builds
no entries for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dralab.api.resource import Device, ResourceClaim, ResourceSlice

from .index import distinct_and_counterless
from .outcome import AllocationOutcome
from .prepare import Req
from .search import Pick
from .state import AllocatedState

__all__ = ["Probe", "Twin", "TwinMemo", "positions", "state_key"]

_CLAIM_KEYS = 4096  # claim sets remembered
_PER_CLAIMS = 8  # kinds of node (devices, state) per claim set

# Per device position: allocated exclusively, as shares, and the consumed capacity.
StateKey = tuple[tuple[int, ...], tuple[tuple[int, tuple[tuple[str, int], ...]], ...]]


@dataclass(frozen=True, slots=True)
class Twin:
    """What the claims got on one node: ``outcome`` for a failure, else the picks
    by device position with the search's steps and choices."""

    driver: str
    devices: Sequence[Device]
    state: StateKey
    outcome: AllocationOutcome | None
    picks: tuple[tuple[tuple[int, Req], ...], ...] = ()
    selected: tuple[Mapping[int, int], ...] = ()
    steps: int = 0
    choices: tuple[Mapping[str, int], ...] = ()


@dataclass(slots=True)
class Probe:
    """A node looked up in the memo: its slice, state key, the twins its claims met
    (None: none yet) and the one that answers it (if any)."""

    slice: ResourceSlice
    state: StateKey
    key: tuple[int, ...]
    claims: tuple[ResourceClaim, ...]
    bucket: list[Twin] | None
    twin: Twin | None


def state_key(s: ResourceSlice, state: AllocatedState) -> StateKey:
    """The allocated state of the slice's devices, by position (what the search reads)."""
    spec = s.spec
    devices = spec.devices
    shares = state.shares
    if not shares:
        # Every allocated device is allocated exclusively: the pool's allocated
        # names say which, without building the devices' keys.
        used = state.allocated_in_pool((spec.driver, spec.pool.name))
        if not used:
            return (), ()
        return tuple([i for i, d in enumerate(devices) if d.name in used]), ()
    prefix = f"{spec.driver}/{spec.pool.name}/"
    keys = [prefix + d.name for d in devices]
    exclusive = state.exclusive
    taken = tuple([i for i, k in enumerate(keys) if k in exclusive]) if exclusive else ()
    capacity = state.capacity
    shared = tuple([(i, tuple(sorted((capacity.get(k) or {}).items())))
                    for i, k in enumerate(keys) if k in shares])
    return taken, shared


class TwinMemo:
    """Per allocator: claim set -> the twins seen for it (bounded on both levels)."""

    def __init__(self) -> None:
        self._by_claims: dict[tuple[int, ...], tuple[tuple[ResourceClaim, ...], list[Twin]]] = {}

    def probe(self, s: ResourceSlice, state: AllocatedState,
              claims: Sequence[ResourceClaim]) -> Probe:
        """Look up the node whose pools are the one plain slice ``s`` (of an index
        without taint rules)."""
        sig = state_key(s, state)
        key = tuple(map(id, claims))
        held = tuple(claims)
        found = self._by_claims.get(key)
        if found is None or any(a is not b for a, b in zip(found[0], held, strict=True)):
            return Probe(s, sig, key, held, None, None)
        spec = s.spec
        devices = spec.devices
        driver = spec.driver
        for t in found[1]:
            if t.state == sig and t.driver == driver and (
                    t.devices is devices or t.devices == devices):
                return Probe(s, sig, key, held, found[1], t)
        return Probe(s, sig, key, held, found[1], None)

    def remember(self, probe: Probe, outcome: AllocationOutcome | None = None,
                 picks: tuple[tuple[tuple[int, Req], ...], ...] = (),
                 selected: tuple[Mapping[int, int], ...] = (), steps: int = 0,
                 choices: tuple[Mapping[str, int], ...] = ()) -> None:
        """Keep what the claims got on ``probe``'s node (a failure's ``outcome``, else
        the picks) for nodes like it. Only a plain slice's answer is kept (distinct
        names, no counters), so devices equal to its devices are plain too."""
        spec = probe.slice.spec
        if not distinct_and_counterless(spec.devices):
            return
        bucket = probe.bucket
        if bucket is None:
            if len(self._by_claims) >= _CLAIM_KEYS:
                self._by_claims.clear()
            bucket = probe.bucket = []
            self._by_claims[probe.key] = (probe.claims, bucket)
        if len(bucket) < _PER_CLAIMS:
            bucket.append(Twin(spec.driver, spec.devices, probe.state, outcome,
                               picks, selected, steps, choices))

    def clear(self) -> None:
        self._by_claims.clear()


def positions(devices: Sequence[Device], picks: Sequence[Pick]
              ) -> tuple[tuple[int, Req], ...] | None:
    """The picks as (position in ``devices``, request); None if one is a share or not
    one of ``devices`` (then the answer is not reusable)."""
    out = []
    for pick in picks:
        if pick.share or pick.counters or pick.groups is not None:
            return None
        target = pick.rec.device
        at = next((i for i, d in enumerate(devices) if d is target), None)
        if at is None:
            return None
        out.append((at, pick.req))
    return tuple(out)


