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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

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

    @classmethod
    def from_claims(cls, claims: Iterable[ResourceClaim]) -> AllocatedState:
        """State for the allocated claims among ``claims`` (others are ignored)."""
        state = cls()
        for claim in claims:
            if claim.status.allocation is not None:
                state.add_claim(claim)
        return state

    def copy(self) -> AllocatedState:
        """An independent copy (for what-if searches such as preemption)."""
        other = AllocatedState()
        other.exclusive = dict(self.exclusive)
        other.shares = dict(self.shares)
        other.capacity = {k: dict(v) for k, v in self.capacity.items()}
        other._pool_devices = {k: dict(v) for k, v in self._pool_devices.items()}
        other._pool_versions = dict(self._pool_versions)
        other._claims = dict(self._claims)
        other.version = self.version
        # The copy starts its own log: readers of this one must not see its changes.
        return other

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
        entries = self._claims.pop(key, None)
        if entries is None:
            return
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


def _bump(counts: dict[str, int], key: str, sign: int) -> None:
    value = counts.get(key, 0) + sign
    if value > 0:
        counts[key] = value
    else:
        counts.pop(key, None)
