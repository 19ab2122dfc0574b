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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dralab.api.quantity import Quantity
from dralab.api.resource import Device, DeviceTaint, DeviceToleration
from dralab.api.taints import tolerates

from .capacity import consumption
from .constraints import Constraint, DistinctAttribute, MatchAttribute
from .counters import CounterCache, CounterLedger, GroupUndo
from .features import AllocatorFeatures
from .index import DeviceRecord
from .pools import LazyRecords, NodePools
from .prepare import MAX_RESULTS, PreparedClaim, Req
from .selection import SelectorError, matches
from .state import AllocatedState

__all__ = ["Fatal", "Pick", "Search", "StepLimit", "tolerates"]


class Fatal(Exception):
    """Allocation must stop with an error (upstream returns an error)."""


class StepLimit(Exception):
    """The search used up its step budget (upstream: the filter timeout)."""


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
    groups: GroupUndo | None = None  # compatibility-group memberships to leave on undo




def _tolerated(taints: Sequence[DeviceTaint], tolerations: Sequence[DeviceToleration]) -> bool:
    return all(any(tolerates(t, taint) for t in tolerations) for taint in taints)


_NOTHING: Mapping[str, Quantity] = {}


class Search:
    """State of one allocation attempt. Not reusable; not thread-safe."""

    # Whether ``_candidates`` picks the usual device itself (tests switch it off to
    # compare with ``_allocate_device`` and ``_undo``).
    inline_plain = True

    def __init__(self, claims: Sequence[PreparedClaim], pools: NodePools,
                 state: AllocatedState, features: AllocatorFeatures,
                 counter_cache: CounterCache, max_steps: int | None = None) -> None:
        self.claims = claims
        self.max_steps = max_steps if max_steps is not None else -1
        self.pools = pools
        self.state = state
        self.features = features
        self.ledger = CounterLedger(pools, state, counter_cache)
        self.steps = 0
        # The hot loop reads a list or tuple; LazyRecords' list has None where a
        # record is not built yet (``_lazy.at`` builds it).
        cands = pools.candidates
        self._record_at: Callable[[int], DeviceRecord] | None = None
        self._raw: Sequence[Device] = ()  # the devices behind LazyRecords
        self._key_prefix = ""
        self.cands: Sequence[DeviceRecord | None] = cands
        if isinstance(cands, LazyRecords):
            entry = cands.entry
            self._record_at = entry.record_at
            self._raw = entry.slice.spec.devices
            self._key_prefix = f"{entry.driver}/{entry.pool}/"
            self.cands = cands.slots
        self.consumable = features.consumable_capacity
        self.fractional = features.fractional_capacity_range
        self.taint_rules = features.device_taint_rules
        # (read for every device tried: plain attributes)
        self.partitionable = features.partitionable_devices
        self.compatibility_groups = features.compatibility_groups
        self.device_taints = features.device_taints
        # Tentative picks of this attempt.
        self.picked: dict[str, set[int]] = {}  # device key -> claims (not for shares)
        self.sharing: dict[str, int] = {}  # device key -> tentative shares
        self.share_amounts: dict[str, dict[str, int]] = {}  # device key -> fqn -> nano
        self.results: list[list[Pick]] = [[] for _ in claims]
        self.constraints: list[list[Constraint]] = []
        self.selected: dict[tuple[int, int], int] = {}
        self.all_devices: dict[Req, list[DeviceRecord]] = {}
        # Per request: the candidates ``_usual_picks`` chooses from, or None where it
        # does not apply (see there).
        self._usual: dict[Req, list[DeviceRecord] | None] = {}
        self.claim_count = len(claims)
        # What the candidate loop of ``_one`` reads, fixed for the search: one
        # unpacking per step instead of a dozen attribute reads. Without
        # DRAConsumableCapacity the scheduler lists every allocated device as taken,
        # shares of multi-allocatable devices included.
        self._loop = (self.cands, state.exclusive,
                      None if self.consumable else state.shares, self.picked,
                      self.consumable, not features.device_binding_and_status,
                      pools.broken, self._record_at, self._raw, self._key_prefix)

    # --- preparation that needs the node ------------------------------------------
    def prepare(self) -> None:
        """Node-dependent validation in upstream order; raises Fatal."""
        lists = self.features.list_type_attributes
        for prepared in self.claims:
            if prepared.has_all:
                needed: dict[Req, int] = {}
                for req in prepared.flat:
                    if req.all_mode:
                        self._collect_all(prepared, req)
                        needed[req] = len(self.all_devices[req])
                    else:
                        needed[req] = req.count
            if prepared.error is not None:
                raise Fatal(prepared.error)
            # A lower bound: a prioritized list may still pick a smaller alternative.
            minimum = prepared.minimum if not prepared.has_all else sum(
                needed[slot.req] if slot.req is not None
                else min(needed[s] for s in slot.subs) for slot in prepared.slots)
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
        """Capacity check; the amounts a share would consume, or None if it does not fit.
        (For a device that is not shared, the amounts are only checked, never kept.)"""
        if not rec.capacity and not req.capacity:
            return _NOTHING
        key = rec.key
        consumed = self.state.capacity.get(key)
        picking = self.share_amounts.get(key)
        if req.capacity is None and consumed is None and picking is None:
            # Depends on the device alone: computed once per device.
            cache = rec.default_amounts
            if cache is None:
                if not rec.multi:
                    # Each capacity consumed whole fits (``consumption``'s usual case):
                    # nothing to compute for amounts nobody keeps. Remembered for
                    # either setting of the gate: a backtracking search asks again.
                    for cap in rec.device.capacity.values():
                        if cap.request_policy is not None or cap.value.nano < 0:
                            break
                    else:
                        rec.default_amounts = {False: _NOTHING, True: _NOTHING}
                        return _NOTHING
                cache = rec.default_amounts = {}
            elif self.fractional in cache:
                return cache[self.fractional]
            made = consumption(rec, None, None, None, self.fractional)
            cache[self.fractional] = made
            return made
        return consumption(rec, req.capacity, consumed, picking, self.fractional)

    def _allocate_device(self, ci: int, req: Req, rec: DeviceRecord, must: bool,
                         amounts: Mapping[str, Quantity] | None) -> Pick | None:
        """Try to pick ``rec`` for ``req`` of claim ``ci``; the pick, or None if unusable.

        ``rec`` must be selectable and fit capacity-wise (``amounts`` from ``_fit``).
        Unless ``must``, the caller checked already that the device is not taken.
        """
        key = rec.key
        multi = self.consumable and rec.multi
        if must:
            if req.admin:
                if not multi:
                    owners = self.picked.get(key)
                    if owners is not None and ci in owners:
                        return None
            elif key in self.state.exclusive or key in self.picked or \
                    (not self.consumable and key in self.state.shares):
                return None
        took = False
        joined = None
        constraints = self.constraints[ci]
        if rec.uses_counters:
            if not self.partitionable:
                return None
            if constraints and not must and not multi:
                # A constraint that would reject the device rejects it before its
                # counters are booked: the same answer (booking and giving back leave no
                # trace when the device is not a share), without reading the pool's
                # counters. One that would raise is left to its place in the order
                # (after counters and taints).
                base, sub = req.base_name, req.sub_name
                for constraint in constraints:
                    verdict = constraint.rejects(base, sub, rec)
                    if verdict is None:
                        break
                    if verdict:
                        return None
            if not (multi and (key in self.state.shares or key in self.sharing)):
                if not self.ledger.take(rec):
                    return None
                # Upstream never gives a share's counters back on backtracking.
                took = not multi
                if self.compatibility_groups:
                    joined = self.ledger.join_groups(rec)
                    if joined is None:
                        if took:
                            self.ledger.give(rec)
                        return None
        if self.device_taints:
            blocking = rec.blocking_all if self.taint_rules else rec.blocking_own
            if blocking and not _tolerated(blocking, req.tolerations):
                self._reject(rec, took, joined)
                return None
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
        if pick.counters:  # (``_reject`` inlined: this runs on every backtrack)
            self.ledger.give(rec)
        if pick.groups:
            self.ledger.leave_groups(pick.groups)
        self.results[ci].pop()

    def _reject(self, rec: DeviceRecord, took: bool, joined: GroupUndo | None) -> None:
        """Give back what a tentative pick reserved (counters, group memberships)."""
        if took:
            self.ledger.give(rec)
        if joined:
            self.ledger.leave_groups(joined)

    # --- the search -----------------------------------------------------------------
    def run(self) -> bool:
        """True if every claim got devices (see ``results``); raises Fatal or StepLimit."""
        return self._one(0, 0, 0, 0, False, 0)

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int) -> bool:
        steps = self.steps = self.steps + 1
        if steps == self.max_steps:
            raise StepLimit
        if ci >= self.claim_count:
            return True
        slots = self.claims[ci].slots
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

        if not req.all_mode:
            return self._candidates(ci, ri, si, di, in_sub, start, req, req.count)
        devices = self.all_devices[req]
        if not devices:
            return False  # "All" needs at least one device
        count = len(devices)
        if di >= count:
            return self._one(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + count - di > MAX_RESULTS:
            raise _MaxSize
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

    def _candidates(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int,
                    req: Req, count: int) -> bool:
        """The rest of ``_one`` (its step counted) for a request of ``count`` devices
        picked from the candidates. The next device of the same request recurses here
        directly: its ``_one`` would find the same slot and request again."""
        if di >= count:
            return self._one(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + count - di > MAX_RESULTS:
            raise _MaxSize
        admin = req.admin
        plain = self.inline_plain and not admin and not self.constraints[ci] \
            and not self.compatibility_groups
        (cands, exclusive, shares, picked, consumable, no_binding, broken, record_at, raw,
         prefix) = self._loop
        if plain and not di and count > 3 and len(cands) <= count + 1:
            # A request for all or all but one of the candidates: where a search
            # backtracks most, and filtering every candidate first reads at most one
            # more than any search of the request does (below four devices that one
            # costs more than the walk saves, measured).
            done = self._usual_picks(ci, ri, req, count)
            if done is not None:
                return done
        selectors, labels = req.selectors, req.labels
        partitionable = self.partitionable
        take, give = self.ledger.take, self.ledger.give
        results = self.results[ci]
        constraints = self.constraints[ci]
        for idx in range(start, len(cands)):
            found = cands[idx]
            if found is None:
                # Not built yet: a device skipped as taken (the first check below,
                # made from its key, ``DeviceRecord.key``) needs no record.
                if not admin:
                    key = prefix + raw[idx].name
                    if key in exclusive or key in picked or (shares and key in shares):
                        continue
                assert record_at is not None
                found = record_at(idx)
            rec = found
            key = rec.key
            if admin:
                owners = picked.get(key)
                if owners is not None and ci in owners:
                    continue
            elif key in exclusive or key in picked or (shares and key in shares):
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
                # (``_fit``'s first test inlined: most devices have no capacity)
                if rec.device.capacity or req.capacity:
                    amounts = self._fit(rec, req)
                    if amounts is None:
                        continue
                else:
                    amounts = _NOTHING
            if plain and not rec.multi and not rec.blocking_all and (
                    partitionable or not rec.uses_counters):
                # The usual device (no share, no blocking taint) for the usual request
                # (not admin, a claim without constraints, no compatibility groups):
                # ``_allocate_device`` and ``_undo`` inlined, the same bookkeeping. This
                # loop is where a search backtracks.
                took = rec.uses_counters
                if took and not take(rec):
                    continue
                picked[key] = {ci}  # (not taken: checked above)
                pick = Pick(req, rec, False, None, took)
                results.append(pick)
                inlined = True
            else:
                if constraints and not (consumable and rec.multi) and \
                        self._rejected(constraints, req, rec):
                    continue
                general = self._allocate_device(ci, req, rec, False, amounts)
                if general is None:
                    continue
                pick = general
                inlined = False
            # ``_one(ci, ri, si, di + 1, in_sub, idx + 1)``: its step, then its candidates.
            steps = self.steps = self.steps + 1
            if steps == self.max_steps:
                raise StepLimit
            try:
                done = self._candidates(ci, ri, si, di + 1, in_sub, idx + 1, req, count)
            except _MaxSize:
                self._undo(ci, pick)
                raise
            if done:
                return True
            if inlined:
                # Deeper picks were undone: the device is this claim's alone again.
                del picked[key]
                if pick.counters:
                    give(rec)
                results.pop()
            else:
                self._undo(ci, pick)
        return False

    @staticmethod
    def _rejected(constraints: Sequence[Constraint], req: Req, rec: DeviceRecord) -> bool:
        """Whether a claim constraint rejects the device. Asked before
        ``_allocate_device``, which would reject it too, after checks that reject
        without a trace or raise nothing (counters booked and given back, taints): the
        same answer, without that work, for the device a backtracking search offers
        most (one of another PCIe root). A constraint that would raise answers
        False here and raises at its place. Not for shares: their counters stay
        booked even when a constraint rejects them."""
        base, sub = req.base_name, req.sub_name
        for constraint in constraints:
            verdict = constraint.rejects(base, sub, rec)
            if verdict is None:
                return False
            if verdict:
                return True
        return False

    def _usual_candidates(self, req: Req) -> list[DeviceRecord] | None:
        """The record of every candidate the usual request ``req`` could pick
        on this node while this search runs, in order: the candidates that pass the
        candidate loop's checks which do not depend on this search's own picks, all
        of them usual devices. None if some candidate would take the general path
        (a share, a blocking taint, counters without DRAPartitionableDevices) or
        would raise when reached (a broken node selector, a failing selector): the
        candidate loop then meets them in its order."""
        (cands, exclusive, shares, _, consumable, no_binding, broken, record_at, raw,
         prefix) = self._loop
        selectors, labels = req.selectors, req.labels
        partitionable = self.partitionable
        usual: list[DeviceRecord] = []
        for idx in range(len(cands)):
            found = cands[idx]
            # (a record not built yet is judged taken from its key, ``DeviceRecord.key``)
            key = found.key if found is not None else prefix + raw[idx].name
            if key in exclusive or (shares and key in shares):
                continue
            if found is None:
                assert record_at is not None
                found = record_at(idx)
            rec = found
            if no_binding and rec.binding_conditions:
                continue
            try:
                if not matches(rec, selectors, labels):
                    continue
            except SelectorError:
                return None
            if broken and rec in broken:
                return None
            if rec.multi or rec.blocking_all or (rec.uses_counters and not partitionable):
                return None
            if consumable and (rec.device.capacity or req.capacity) and \
                    self._fit(rec, req) is None:
                continue
            usual.append(rec)
        return usual

    def _usual_picks(self, ci: int, ri: int, req: Req, wanted: int) -> bool | None:
        """``_candidates`` for the first device of the usual request (not admin, a
        claim without constraints, no compatibility groups) that wants ``wanted`` > 3
        devices, all or all but one of the candidates: the same picks, steps and
        outcome, searched without recursion. None where it does not apply
        (``_usual_candidates``).

        Within the request nothing but its own picks changes: the devices other
        requests and claims hold stay held (the later ones undo theirs before
        control comes back), and its own picks lie before the position searched.
        So the candidates are filtered once, and choosing ``wanted`` of them is a
        walk over positions in that list that books and gives back counters as
        it goes; every pick counts a step, like the ``_one`` call it stands for.
        Only a complete choice is entered in ``picked`` and ``results``, for the
        requests after this one to see.
        """
        if req in self._usual:
            usual = self._usual[req]
        else:
            usual = self._usual[req] = self._usual_candidates(req)
        if usual is None:
            return None
        picked = self.picked
        todo = [rec for rec in usual if rec.key not in picked]
        end = len(todo)
        ledger = self.ledger
        results = self.results[ci]
        max_steps = self.max_steps  # (-1: unbounded)
        # Per position: the pool's counters left and the device's demand, once the
        # device was first booked (``CounterLedger.take``; False: the pool offers
        # nothing in this search); the Pick, once the device was part of a choice.
        booking: list[tuple[dict[str, int], tuple[tuple[str, int], ...]] | bool | None] = \
            [None] * end
        made: list[Pick | None] = [None] * end
        chosen: list[int] = []  # positions of the picks so far, ascending
        at = level = 0
        while True:
            if level == wanted:
                for p in chosen:
                    rec = todo[p]
                    picked[rec.key] = {ci}
                    pick = made[p]
                    if pick is None:
                        pick = made[p] = Pick(req, rec, False, None, rec.uses_counters)
                    results.append(pick)
                limit: _MaxSize | None = None
                try:
                    if self._one(ci, ri + 1, 0, 0, False, 0):
                        return True
                except _MaxSize as exc:
                    limit = exc
                for p in chosen:
                    del picked[todo[p].key]
                del results[len(results) - wanted:]
                if limit is not None:
                    # (from a later request: this request's counters are given back
                    # too, as each level of the recursive loop gives back its pick)
                    for p in chosen:
                        if booking[p]:
                            ledger.give(todo[p])
                    raise limit
            elif at < end:
                rec = todo[at]
                if rec.uses_counters:
                    booked = booking[at]
                    if booked is None:
                        took = ledger.take(rec)
                        left = ledger.remaining[rec.pool_key]
                        booking[at] = False if left is None else (left, rec.demand)
                        if not took:
                            at += 1
                            continue
                    elif booked is False:
                        at += 1
                        continue
                    else:
                        left, demand = booked  # type: ignore[misc]
                        for flat, nano in demand:
                            if left.get(flat, 0) < nano:
                                break
                        else:
                            for flat, nano in demand:
                                if nano:
                                    left[flat] -= nano
                            booked = None
                        if booked is not None:
                            at += 1
                            continue
                chosen.append(at)
                steps = self.steps = self.steps + 1
                if steps == max_steps:
                    raise StepLimit
                at += 1
                level += 1
                continue
            # Back: give the last pick's counters back and try the positions after it.
            if not level:
                return False
            level -= 1
            at = chosen.pop()
            booked = booking[at]
            if booked:
                left, demand = booked  # type: ignore[misc]
                for flat, nano in demand:
                    if nano:
                        left[flat] += nano
            at += 1
