"""Devices in use by already-allocated claims, maintained incrementally.

Upstream collects this afresh for every scheduling cycle. The simulator
instead adds and removes one claim's allocation at a time, so every update is
proportional to that claim's results, never to the cluster.

Bookkeeping follows the scheduler: results with ``adminAccess`` are ignored;
a result with a ``shareID`` is one share of a multi-allocatable device (its
``consumedCapacity`` is added to the device's total); any other result makes
the device exclusively used. Reference counts keep inconsistent inputs (the
same device in two claims) removable in any order.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from dralab.api.resource import AllocationResult, ResourceClaim

from .changelog import ChangeLog
from .index import capacity_fqn

__all__ = ["AllocatedState", "claim_identity"]


def claim_identity(claim: ResourceClaim) -> str:
    """Identity of a claim in the state: its UID, else namespace/name."""
    return claim.metadata.uid or claim.ref


@dataclass(frozen=True, slots=True)
class _Entry:
    key: str  # "driver/pool/device"
    pool: tuple[str, str]
    device: str
    shared: bool
    consumed: tuple[tuple[str, int], ...]  # fully-qualified capacity -> nano


class AllocatedState:
    """Mutable record of allocated devices; cheap to update, cheap to query.

    Only ``add_*``/``remove_*`` mutate it. ``version`` changes on every
    update and ``pool_version(pool)`` whenever a device of that pool changes,
    so derived caches (available counters) can tell when they are stale;
    ``log`` lists the pools in the order they changed, so a cache over many
    pools can find the stale ones without checking every pool.
    """

    def __init__(self) -> None:
        self.exclusive: dict[str, int] = {}
        self.shares: dict[str, int] = {}
        self.capacity: dict[str, dict[str, int]] = {}
        self._pool_devices: dict[tuple[str, str], dict[str, int]] = {}
        self._pool_versions: dict[tuple[str, str], int] = {}
        self._claims: dict[str, tuple[_Entry, ...]] = {}
        self.version = 0
        self.log: ChangeLog[tuple[str, str]] = ChangeLog()
        # Copies still layered over this state (``copy``): made independent before
        # this state changes. None until the first copy.
        self._layered: weakref.WeakSet[_Copy] | None = None

    @classmethod
    def from_claims(cls, claims: Iterable[ResourceClaim]) -> AllocatedState:
        """State for the allocated claims among ``claims`` (others are ignored)."""
        state = cls()
        for claim in claims:
            if claim.status.allocation is not None:
                state.add_claim(claim)
        return state

    def copy(self) -> AllocatedState:
        """An independent copy (for what-if searches such as preemption).

        Made in time proportional to the changes it sees, not to the state: the
        copy records its own changes over this state, which stays untouched;
        should this state change while the copy lives, the copy first takes a
        full copy of everything (see ``_Copy``)."""
        return _Copy(self)

    def _detach_copies(self) -> None:
        """Give every copy layered over this state its own dicts (before a change)."""
        layered = self._layered
        if layered:
            for other in list(layered):
                other._materialize()
            layered.clear()

    # --- queries ---------------------------------------------------------------
    def in_use(self, key: str) -> bool:
        """Exclusively allocated (what non-admin requests must avoid)."""
        return key in self.exclusive

    def is_allocated(self, key: str) -> bool:
        """Allocated in any way (exclusive or a share): consumes its counters."""
        return key in self.exclusive or key in self.shares

    def consumed(self, key: str) -> Mapping[str, int] | None:
        """Capacity consumed by shares of the device (fully-qualified name -> nano)."""
        return self.capacity.get(key)

    def allocated_in_pool(self, pool: tuple[str, str]) -> Mapping[str, int]:
        """Names of the pool's allocated devices (with reference counts)."""
        return self._pool_devices.get(pool, {})

    def pools_in_use(self) -> tuple[tuple[str, str], ...]:
        """The pools with an allocated device."""
        return tuple(self._pool_devices)

    def pool_version(self, pool: tuple[str, str]) -> int:
        return self._pool_versions.get(pool, 0)

    def claims(self) -> tuple[str, ...]:
        return tuple(self._claims)

    def __contains__(self, claim: object) -> bool:
        if isinstance(claim, ResourceClaim):
            return claim_identity(claim) in self._claims
        return claim in self._claims

    # --- updates ---------------------------------------------------------------
    def add_claim(self, claim: ResourceClaim) -> None:
        """Record ``claim``'s allocation (replacing an earlier one of the same claim)."""
        allocation = claim.status.allocation
        if allocation is None:
            raise ValueError(f"claim {claim.ref} is not allocated")
        self.add_allocation(claim_identity(claim), allocation)

    def add_allocation(self, key: str, allocation: AllocationResult) -> None:
        """Record an allocation under claim identity ``key``."""
        if self._layered:
            self._detach_copies()
        if key in self._claims:
            self.remove(key)
        entries = []
        for r in allocation.devices.results:
            if r.admin_access:
                continue
            entries.append(_Entry(
                key=f"{r.driver}/{r.pool}/{r.device}",
                pool=(r.driver, r.pool),
                device=r.device,
                shared=r.share_id is not None,
                consumed=tuple((capacity_fqn(n, r.driver), q.nano)
                               for n, q in r.consumed_capacity.items()),
            ))
        for e in entries:
            self._apply(e, +1)
        self._claims[key] = tuple(entries)
        self.version += 1

    def remove_claim(self, claim: ResourceClaim) -> None:
        """Forget ``claim``'s allocation; a no-op if it is not recorded (idempotent)."""
        self.remove(claim_identity(claim))

    def remove(self, key: str) -> None:
        if key not in self._claims:
            return
        if self._layered:
            self._detach_copies()
        entries = self._claims.pop(key)
        for e in entries:
            self._apply(e, -1)
        self.version += 1

    def _apply(self, e: _Entry, sign: int) -> None:
        counts = self.shares if e.shared else self.exclusive
        _bump(counts, e.key, sign)
        if e.shared:
            totals = self.capacity.setdefault(e.key, {})
            for name, nano in e.consumed:
                totals[name] = totals.get(name, 0) + sign * nano
            if e.key not in self.shares:
                self.capacity.pop(e.key, None)
        devices = self._pool_devices.setdefault(e.pool, {})
        _bump(devices, e.device, sign)
        if not devices:
            del self._pool_devices[e.pool]
        self._pool_versions[e.pool] = self._pool_versions.get(e.pool, 0) + 1
        self.log.append(e.pool)


K = TypeVar("K")
V = TypeVar("V")
_MISSING: object = object()


class _Layer(MutableMapping[K, V], Generic[K, V]):
    """A dict seen through a copy: ``base`` (never changed while the layer lives)
    plus the copy's changes. Iterates in the order a ``dict(base)`` changed the
    same way would: base keys in place (with overridden values), deleted ones
    left out, keys added afresh (or deleted and added again) at the end."""

    __slots__ = ("_base", "_gone", "_new", "_over")

    def __init__(self, base: Mapping[K, V]) -> None:
        self._base = base
        self._over: dict[K, V] = {}  # base keys with a new value
        self._new: dict[K, V] = {}   # keys added after the copy, in order
        self._gone: set[K] = set()   # base keys deleted

    def fork(self) -> _Layer[K, V]:
        """An independent layer over the same base with the same changes."""
        other: _Layer[K, V] = _Layer(self._base)
        other._over = dict(self._over)
        other._new = dict(self._new)
        other._gone = set(self._gone)
        return other

    def __contains__(self, key: object) -> bool:
        if key in self._new or key in self._over:
            return True
        return key in self._base and key not in self._gone

    def __getitem__(self, key: K) -> V:
        found = self.get(key, _MISSING)  # type: ignore[arg-type]
        if found is _MISSING:
            raise KeyError(key)
        return cast(V, found)

    def get(self, key: K, default: V | None = None) -> V | None:  # type: ignore[override]
        new = self._new
        if key in new:
            return new[key]
        over = self._over
        if key in over:
            return over[key]
        if key in self._gone:
            return default
        return self._base.get(key, default)

    def __setitem__(self, key: K, value: V) -> None:
        if key in self._new:
            self._new[key] = value
        elif key in self._base and key not in self._gone:
            self._over[key] = value
        else:  # new, or deleted and added again (then it stays gone from the base)
            self._new[key] = value

    def __delitem__(self, key: K) -> None:
        if key in self._new:
            del self._new[key]
        elif key in self._base and key not in self._gone:
            self._gone.add(key)
            self._over.pop(key, None)
        else:
            raise KeyError(key)

    def __iter__(self) -> Iterator[K]:
        gone = self._gone
        for key in self._base:
            if key not in gone:
                yield key
        yield from self._new

    def __len__(self) -> int:
        return len(self._base) - len(self._gone) + len(self._new)

    def to_dict(self) -> dict[K, V]:
        over = self._over
        gone = self._gone
        out = {k: over.get(k, v) for k, v in self._base.items() if k not in gone}
        out.update(self._new)
        return out


class _Copy(AllocatedState):
    """``AllocatedState.copy``: layered over the original until either changes.

    Its own changes go to ``_Layer`` views (nested dicts are replaced, never
    changed in place, so the original's stay intact); before the original
    changes, it calls ``_materialize`` and the copy gets dicts of its own, equal
    (in content and order) to what a full copy changed the same way would hold.
    """

    def __init__(self, source: AllocatedState) -> None:
        super().__init__()
        self.version = source.version
        self._layers = True
        if isinstance(source, _Copy) and source._layers:
            # Layer over the same original, with the source's changes copied.
            root: AllocatedState = source._root
            self.exclusive = source.exclusive.fork()  # type: ignore[attr-defined]
            self.shares = source.shares.fork()  # type: ignore[attr-defined]
            self.capacity = source.capacity.fork()  # type: ignore[attr-defined]
            self._pool_devices = source._pool_devices.fork()  # type: ignore[attr-defined]
            self._pool_versions = source._pool_versions.fork()  # type: ignore[attr-defined]
            self._claims = source._claims.fork()  # type: ignore[attr-defined]
        else:
            root = source
            self.exclusive = _Layer(source.exclusive)  # type: ignore[assignment]
            self.shares = _Layer(source.shares)  # type: ignore[assignment]
            self.capacity = _Layer(source.capacity)  # type: ignore[assignment]
            self._pool_devices = _Layer(source._pool_devices)  # type: ignore[assignment]
            self._pool_versions = _Layer(source._pool_versions)  # type: ignore[assignment]
            self._claims = _Layer(source._claims)  # type: ignore[assignment]
        self._root: AllocatedState = root
        if root._layered is None:
            root._layered = weakref.WeakSet()
        root._layered.add(self)

    def _materialize(self) -> None:
        """Own dicts instead of layers (the original is about to change)."""
        if not self._layers:
            return
        self._layers = False
        self.exclusive = _plain(self.exclusive)
        self.shares = _plain(self.shares)
        self.capacity = {k: dict(v) for k, v in _plain(self.capacity).items()}
        self._pool_devices = {k: dict(v) for k, v in _plain(self._pool_devices).items()}
        self._pool_versions = _plain(self._pool_versions)
        self._claims = _plain(self._claims)

    def _apply(self, e: _Entry, sign: int) -> None:
        if not self._layers:
            super()._apply(e, sign)
            return
        # As AllocatedState._apply, replacing nested dicts instead of changing them.
        counts = self.shares if e.shared else self.exclusive
        _bump(counts, e.key, sign)
        if e.shared:
            totals = dict(self.capacity.get(e.key) or {})
            for name, nano in e.consumed:
                totals[name] = totals.get(name, 0) + sign * nano
            self.capacity[e.key] = totals
            if e.key not in self.shares:
                self.capacity.pop(e.key, None)
        devices = dict(self._pool_devices.get(e.pool) or {})
        _bump(devices, e.device, sign)
        if devices:
            self._pool_devices[e.pool] = devices
        else:
            self._pool_devices.pop(e.pool, None)
        self._pool_versions[e.pool] = self._pool_versions.get(e.pool, 0) + 1
        self.log.append(e.pool)


def _plain(mapping: Mapping[K, V]) -> dict[K, V]:
    return mapping.to_dict() if isinstance(mapping, _Layer) else dict(mapping)


def _bump(counts: MutableMapping[str, int], key: str, sign: int) -> None:
    value = counts.get(key, 0) + sign
    if value > 0:
        counts[key] = value
    else:
        counts.pop(key, None)
