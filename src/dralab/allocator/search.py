"""The depth-first search over device slots (pure: no I/O, no clock).

One ``Search`` serves one allocation attempt of one node. Claims are filled
in order, requests in spec order, devices one slot at a time; each tentative
pick records what it changed and ``_undo`` reverts exactly that, so
backtracking is explicit. Within one request the next slot only looks at
candidates after the previous pick (sets, not permutations); a new request
starts from the first candidate. The first complete assignment wins.

``steps`` counts invocations of ``_one``, the same unit as upstream's
``allocateOne`` counter, so the two can be compared directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dralab.api.quantity import Quantity
from dralab.api.resource import DeviceTaint, DeviceToleration

from .capacity import consumption
from .constraints import Constraint, DistinctAttribute, MatchAttribute
from .features import AllocatorFeatures
from .index import DeviceRecord
from .pools import NodePools, Pool
from .prepare import MAX_RESULTS, PreparedClaim, Req
from .selection import matches
from .state import AllocatedState

__all__ = ["CounterCache", "Fatal", "Pick", "Search", "tolerates"]


class Fatal(Exception):
    """Allocation must stop with an error (upstream returns an error)."""


class _MaxSize(Exception):
    """The claim would exceed 32 results on this path; lets callers backtrack harder."""


@dataclass(eq=False, slots=True)
class Pick:
    """One tentatively allocated device, with what is needed to undo it."""

    req: Req
    rec: DeviceRecord
    share: bool  # a share of a multi-allocatable device
    amounts: Mapping[str, Quantity] | None  # consumed capacity of a share (fqn -> amount)
    counters: bool  # counters were taken and must be given back on undo
    # Compatibility-group states replaced by this pick: (key, previous) pairs.
    groups: list[tuple[tuple[tuple[str, str], str], _Groups | None]] | None = None


@dataclass(frozen=True, slots=True)
class _Groups:
    """Running intersection of the compatibility groups on one counter set.

    ``all_empty``: every member so far declared no groups; such members only
    admit further group-less devices (DRADeviceCompatibilityGroups, alpha).
    """

    all_empty: bool
    groups: frozenset[str]

    def admits(self, groups: frozenset[str]) -> bool:
        if not groups:
            return self.all_empty
        return not self.all_empty and bool(self.groups & groups)

    def add(self, groups: frozenset[str]) -> _Groups:
        if self.all_empty or not groups:
            return self
        return _Groups(False, self.groups & groups)


def _first(groups: frozenset[str]) -> _Groups:
    return _Groups(not groups, groups)


def tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    """Same rules as for node taints."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (toleration.value or "") == (taint.value or "")
    return False


def _tolerated(taints: Sequence[DeviceTaint], tolerations: Sequence[DeviceToleration]) -> bool:
    return all(any(tolerates(t, taint) for t in tolerations) for taint in taints)


_NOTHING: Mapping[str, Quantity] = {}

# Available counters per pool, as (state pool version, counters, any negative).
CounterCache = dict[Pool, tuple[int, dict[str, int], bool]]


class Search:
    """State of one allocation attempt. Not reusable; not thread-safe."""

    def __init__(self, claims: Sequence[PreparedClaim], pools: NodePools,
                 state: AllocatedState, features: AllocatorFeatures,
                 counter_cache: CounterCache) -> None:
        self.claims = claims
        self.pools = pools
        self.state = state
        self.features = features
        self.counter_cache = counter_cache
        self.steps = 0
        self.cands = pools.candidates
        self.consumable = features.consumable_capacity
        self.fractional = features.fractional_capacity_range
        self.taint_rules = features.device_taint_rules
        # Tentative picks of this attempt.
        self.picked: dict[str, set[int]] = {}  # device key -> claims (not for shares)
        self.sharing: dict[str, int] = {}  # device key -> tentative shares
        self.share_amounts: dict[str, dict[str, int]] = {}  # device key -> fqn -> nano
        self.used_counters: dict[tuple[str, str], dict[str, int]] = {}
        self.results: list[list[Pick]] = [[] for _ in claims]
        self.constraints: list[list[Constraint]] = []
        self.selected: dict[tuple[int, int], int] = {}
        self.all_devices: dict[Req, list[DeviceRecord]] = {}
        # Compatibility groups per (pool key, counter set): allocated devices, then picks.
        self.group_states: dict[tuple[tuple[str, str], str], _Groups | None] = {}
        self.group_baselines: set[tuple[str, str]] = set()
        # Available counters per pool key; the state does not change during a search.
        self.available: dict[tuple[str, str], tuple[dict[str, int], bool]] = {}

    # --- preparation that needs the node ------------------------------------------
    def prepare(self) -> None:
        """Node-dependent validation in upstream order; raises Fatal."""
        lists = self.features.list_type_attributes
        for prepared in self.claims:
            minimum = 0
            per_slot: dict[int, int] = {}
            for req in prepared.flat:
                if req.all_mode:
                    self._collect_all(prepared, req)
                    req_count = len(self.all_devices[req])
                else:
                    req_count = req.count
                per_slot[id(req)] = req_count
            if prepared.error is not None:
                raise Fatal(prepared.error)
            for slot in prepared.slots:
                if slot.req is not None:
                    minimum += per_slot[id(slot.req)]
                else:
                    minimum += min(per_slot[id(s)] for s in slot.subs)
            if minimum > MAX_RESULTS:
                raise Fatal(f"claim {prepared.label}: number of requested devices {minimum} "
                            f"exceeds the claim limit of {MAX_RESULTS}")
            if prepared.constraint_error is not None:
                raise Fatal(prepared.constraint_error)
            made: list[Constraint] = []
            for kind, attribute, names in prepared.constraints:
                cls = MatchAttribute if kind == "match" else DistinctAttribute
                made.append(cls(attribute, names, lists))
            self.constraints.append(made)

    def _collect_all(self, prepared: PreparedClaim, req: Req) -> None:
        found: list[DeviceRecord] = []
        for pool in self.pools.pools:
            if pool.incomplete:
                raise Fatal(f"claim {prepared.label}, request {req.name}: asks for all devices, "
                            f"but resource pool {pool.id} is currently being updated")
            if pool.invalid:
                raise Fatal(f"claim {prepared.label}, request {req.name}: asks for all devices, "
                            f"but resource pool {pool.id} is currently invalid")
            for rec in self.pools.pool_candidates.get(pool, ()):
                if not self._selectable(rec, req):
                    continue
                if self.consumable and self._fit(rec, req) is None:
                    continue
                found.append(rec)
        self.all_devices[req] = found

    # --- per-device checks ----------------------------------------------------------
    def _selectable(self, rec: DeviceRecord, req: Req) -> bool:
        if rec.binding_conditions and not self.features.device_binding_and_status:
            return False
        if not matches(rec, req.selectors, req.labels):
            return False
        broken = self.pools.broken
        if broken and rec in broken:
            raise Fatal(f"failed to perform node selection for device {rec.key}: {broken[rec]}")
        return True

    def _fit(self, rec: DeviceRecord, req: Req) -> Mapping[str, Quantity] | None:
        """Capacity check; the amounts a share would consume, or None if it does not fit."""
        if not rec.capacity and not req.capacity:
            return _NOTHING
        key = rec.key
        consumed = self.state.capacity.get(key)
        picking = self.share_amounts.get(key)
        if req.capacity is None and consumed is None and picking is None:
            # Depends on the device alone: computed once per device.
            cache = rec.default_amounts
            if self.fractional in cache:
                return cache[self.fractional]
            made = consumption(rec, None, None, None, self.fractional)
            cache[self.fractional] = made
            return made
        return consumption(rec, req.capacity, consumed, picking, self.fractional)

    def _available(self, pool: Pool) -> tuple[dict[str, int], bool]:
        """Counters of ``pool`` left by allocated claims ("set\0counter" -> nano).

        Cached across searches until the state changes a device of the pool.
        """
        version = self.state.pool_version(pool.key)
        cached = self.counter_cache.get(pool)
        if cached is not None and cached[0] == version:
            return cached[1], cached[2]
        avail = {f"{set_name}\0{counter}": nano
                 for set_name, counters in pool.counter_sets.items()
                 for counter, nano in counters.items()}
        for name in self.state.allocated_in_pool(pool.key):
            rec = pool.all_devices.get(name)
            if rec is None:
                continue
            for flat, nano in rec.demand:
                if flat in avail:
                    avail[flat] -= nano
        negative = any(v < 0 for v in avail.values())
        self.counter_cache[pool] = (version, avail, negative)
        return avail, negative

    def _take_counters(self, rec: DeviceRecord) -> bool:
        """Reserve the device's counters if the pool still has them all."""
        found = self.available.get(rec.pool_key)
        if found is None:
            found = self.available[rec.pool_key] = self._available(
                self.pools.by_key[rec.pool_key])
        avail, negative = found
        if negative:
            # An over-committed pool offers nothing (upstream compares every counter).
            return False
        used = self.used_counters.get(rec.pool_key)
        if used is None:
            used = self.used_counters[rec.pool_key] = {}
        for flat, nano in rec.demand:
            if used.get(flat, 0) + nano > avail.get(flat, 0):
                return False
        for flat, nano in rec.demand:
            used[flat] = used.get(flat, 0) + nano
        return True

    def _give_counters(self, rec: DeviceRecord) -> None:
        used = self.used_counters[rec.pool_key]
        for flat, nano in rec.demand:
            used[flat] -= nano

    def _group_baseline(self, pool_key: tuple[str, str]) -> None:
        """Fold the groups of the pool's allocated devices into ``group_states``."""
        self.group_baselines.add(pool_key)
        pool = self.pools.by_key[pool_key]
        for name in self.state.allocated_in_pool(pool_key):
            other = pool.all_devices.get(name)
            if other is None:
                continue
            for set_name, groups in other.groups:
                k = (pool_key, set_name)
                current = self.group_states.get(k)
                self.group_states[k] = _first(groups) if current is None else current.add(groups)

    def _join_groups(self, rec: DeviceRecord
                     ) -> list[tuple[tuple[tuple[str, str], str], _Groups | None]] | None:
        """Admit ``rec`` into the groups of every counter set it uses; undo info or None."""
        if rec.pool_key not in self.group_baselines:
            self._group_baseline(rec.pool_key)
        changes: list[tuple[tuple[tuple[str, str], str], _Groups | None]] = []
        for set_name, groups in rec.groups:
            k = (rec.pool_key, set_name)
            current = self.group_states.get(k)
            if current is not None and not current.admits(groups):
                self._leave_groups(changes)
                return None
            changes.append((k, current))
            self.group_states[k] = _first(groups) if current is None else current.add(groups)
        return changes

    def _leave_groups(self, changes: list[tuple[tuple[tuple[str, str], str], _Groups | None]]
                      ) -> None:
        for k, previous in reversed(changes):
            self.group_states[k] = previous

    def _allocate_device(self, ci: int, req: Req, rec: DeviceRecord, must: bool,
                         amounts: Mapping[str, Quantity] | None) -> Pick | None:
        """Try to pick ``rec`` for ``req`` of claim ``ci``; the pick, or None if unusable.

        ``rec`` must be selectable and fit capacity-wise (``amounts`` from ``_fit``).
        """
        key = rec.key
        multi = self.consumable and rec.multi
        if req.admin:
            if not multi:
                owners = self.picked.get(key)
                if owners is not None and ci in owners:
                    return None
        elif key in self.state.exclusive or key in self.picked:
            return None
        took = False
        joined = None
        if rec.consumes:
            if not self.features.partitionable_devices:
                return None
            if not (multi and (key in self.state.shares or key in self.sharing)):
                if not self._take_counters(rec):
                    return None
                # Upstream never gives a share's counters back on backtracking.
                took = not multi
                if self.features.compatibility_groups:
                    joined = self._join_groups(rec)
                    if joined is None:
                        if took:
                            self._give_counters(rec)
                        return None
        if self.features.device_taints:
            blocking = rec.blocking_all if self.taint_rules else rec.blocking_own
            if blocking and not _tolerated(blocking, req.tolerations):
                self._reject(rec, took, joined)
                return None
        constraints = self.constraints[ci]
        if constraints:
            base, sub = req.base_name, req.sub_name
            for i, constraint in enumerate(constraints):
                if constraint.add(base, sub, rec):
                    continue
                if must:
                    raise Fatal(f"claim {self.claims[ci].label}, request {req.name}: cannot add "
                                f"device {key} because a claim constraint would not be satisfied")
                for earlier in constraints[:i]:
                    earlier.remove(base, sub, rec)
                self._reject(rec, took, joined)
                return None
        if multi:
            self.sharing[key] = self.sharing.get(key, 0) + 1
            totals = self.share_amounts.setdefault(key, {})
            for fqn, q in (amounts or {}).items():
                totals[fqn] = totals.get(fqn, 0) + q.nano
        else:
            owners = self.picked.get(key)
            if owners is None:
                self.picked[key] = {ci}
            else:
                owners.add(ci)
        pick = Pick(req, rec, multi, amounts if multi else None, took, joined)
        self.results[ci].append(pick)
        return pick

    def _undo(self, ci: int, pick: Pick) -> None:
        rec, req = pick.rec, pick.req
        key = rec.key
        constraints = self.constraints[ci]
        if constraints:
            base, sub = req.base_name, req.sub_name
            for constraint in constraints:
                constraint.remove(base, sub, rec)
        if pick.share:
            left = self.sharing[key] - 1
            if left:
                self.sharing[key] = left
            else:
                del self.sharing[key]
            totals = self.share_amounts[key]
            for fqn, q in (pick.amounts or {}).items():
                totals[fqn] -= q.nano
            if not left:
                del self.share_amounts[key]
        else:
            owners = self.picked[key]
            owners.discard(ci)
            if not owners:
                del self.picked[key]
        self._reject(rec, pick.counters, pick.groups)
        self.results[ci].pop()

    def _reject(self, rec: DeviceRecord, took: bool,
                joined: list[tuple[tuple[tuple[str, str], str], _Groups | None]] | None) -> None:
        """Give back what a tentative pick reserved (counters, group memberships)."""
        if took:
            self._give_counters(rec)
        if joined:
            self._leave_groups(joined)

    # --- the search -----------------------------------------------------------------
    def run(self) -> bool:
        """True if every claim got devices (see ``results``); raises Fatal."""
        return self._one(0, 0, 0, 0, False, 0)

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int) -> bool:
        self.steps += 1
        claims = self.claims
        if ci >= len(claims):
            return True
        slots = claims[ci].slots
        if ri >= len(slots):
            try:
                return self._one(ci + 1, 0, 0, 0, False, 0)
            except _MaxSize:
                # Another choice in an earlier claim may let a later
                # subrequest with fewer devices fit: not fatal.
                return False
        slot = slots[ri]
        if slot.req is None:
            if not in_sub:
                all_exceeded = True
                for s in range(len(slot.subs)):
                    try:
                        done = self._one(ci, ri, s, 0, True, 0)
                    except _MaxSize:
                        continue
                    all_exceeded = False
                    if done:
                        self.selected[(ci, ri)] = s
                        return True
                if all_exceeded:
                    raise _MaxSize
                return False
            req = slot.subs[si]
        else:
            req = slot.req

        if req.all_mode:
            devices = self.all_devices[req]
            if not devices:
                return False  # "All" needs at least one device
            count = len(devices)
        else:
            count = req.count
        if di >= count:
            return self._one(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + count - di > MAX_RESULTS:
            raise _MaxSize

        if req.all_mode:
            rec = self.all_devices[req][di]
            amounts = self._fit(rec, req) if self.consumable else None
            if self.consumable and amounts is None:
                return False
            pick = self._allocate_device(ci, req, rec, True, amounts)
            if pick is None:
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, 0)
            except _MaxSize:
                self._undo(ci, pick)
                raise
            if not done:
                self._undo(ci, pick)
            return done

        cands = self.cands
        exclusive = self.state.exclusive
        picked = self.picked
        admin = req.admin
        consumable = self.consumable
        selectors, labels = req.selectors, req.labels
        no_binding = not self.features.device_binding_and_status
        broken = self.pools.broken
        for idx in range(start, len(cands)):
            rec = cands[idx]
            key = rec.key
            if admin:
                owners = picked.get(key)
                if owners is not None and ci in owners:
                    continue
            elif key in exclusive or key in picked:
                continue
            # Selectable? (inlined: this is the hot path)
            if no_binding and rec.binding_conditions:
                continue
            verdicts = rec.sel_cache
            for sel in selectors:
                verdict = verdicts.get(sel)
                if verdict is True:
                    continue
                if verdict is False or not matches(rec, selectors, labels):
                    break
            else:
                verdict = True
            if verdict is not True:
                continue
            if broken and rec in broken:
                raise Fatal(f"failed to perform node selection for device {key}: {broken[rec]}")
            amounts = None
            if consumable:
                amounts = self._fit(rec, req)
                if amounts is None:
                    continue
            pick = self._allocate_device(ci, req, rec, False, amounts)
            if pick is None:
                continue
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, idx + 1)
            except _MaxSize:
                self._undo(ci, pick)
                raise
            if done:
                return True
            self._undo(ci, pick)
        return False
