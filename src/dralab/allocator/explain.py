"""Explanations for an unschedulable outcome, one short line per (sub)request.

Computed only on the failure path. Each request is looked at on its own
against the node's devices, ignoring the other requests of the pod: for every
device of the request's class it records the first check the device fails
(request selector, binding conditions, in use, capacity, counters, taints).
If enough devices pass every check, the request failed only in combination
(constraints, or other requests and claims taking the devices), which the
line says instead. The "nearest miss" is the device that got furthest.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .capacity import CapacityError, consumption
from .prepare import PreparedClaim, Req
from .search import _tolerated
from .selection import first_rejecting

if TYPE_CHECKING:
    from .index import DeviceRecord
    from .search import Search

__all__ = ["explain"]

# Reasons in check order; a later reason means the device got further. A device
# stored with a field of a gate that is now off is unusable: the two "... off"
# reasons name the gate, so the user sees why, not just "lack counters".
_ORDER = ("selector", "binding conditions", "in use", "capacity", "counters", "tainted")
_BINDING_OFF = "binding conditions"
_COUNTERS_OFF = "counters, DRAPartitionableDevices off"


def _reason(search: Search, req: Req, rec: DeviceRecord) -> str | None:
    """The first check ``rec`` fails for ``req`` on its own, or None if usable."""
    features = search.features
    rejecting = first_rejecting(rec, req.selectors[req.request_selectors_from:])
    if rejecting is not None:
        return f"selector[{rejecting}]"
    if rec.binding_conditions and not features.device_binding_and_status:
        return _BINDING_OFF
    if not req.admin and (rec.key in search.state.exclusive or (
            not features.consumable_capacity and rec.key in search.state.shares)):
        return "in use"
    if features.consumable_capacity:
        try:
            fits = consumption(rec, req.capacity, search.state.capacity.get(rec.key), None,
                               features.fractional_capacity_range)
        except CapacityError:
            fits = None
        if fits is None:
            return "capacity"
    if rec.consumes:
        if not features.partitionable_devices:
            return _COUNTERS_OFF
        pool = search.pools.by_key.get((rec.driver, rec.pool))
        if pool is not None:
            avail, negative = search.ledger.left(pool)
            short = negative or any(nano > avail.get(flat, 0) for flat, nano in rec.demand)
            if short and not (rec.multi and rec.key in search.state.shares):
                return "counters"
    if features.device_taints:
        blocking = rec.blocking_all if features.device_taint_rules else rec.blocking_own
        if blocking and not _tolerated(blocking, req.tolerations):
            return "tainted"
    return None


def _kind(reason: str) -> str:
    if reason.startswith("selector"):
        return "selector"
    return "counters" if reason == _COUNTERS_OFF else reason


def _phrase(reason: str, n: int) -> str:
    if reason.startswith("selector"):
        return f"{n} rejected by {reason}"
    return {
        _BINDING_OFF: f"{n} have binding conditions (DRADeviceBindingConditions off)",
        _COUNTERS_OFF: f"{n} consume shared counters (DRAPartitionableDevices off)",
        "in use": f"{n} in use",
        "capacity": f"{n} lack capacity",
        "counters": f"{n} lack shared counters",
        "tainted": f"{n} tainted",
    }[reason]


def _line(search: Search, prepared: PreparedClaim, req: Req) -> str:
    node = search.pools.node.name
    class_selectors = req.selectors[:req.request_selectors_from]
    of_class = [rec for rec in search.pools.candidates
                if first_rejecting(rec, class_selectors) is None]
    reasons: Counter[str] = Counter()
    usable = 0
    nearest: tuple[int, str, str] | None = None
    for rec in of_class:
        reason = _reason(search, req, rec)
        if reason is None:
            usable += 1
            continue
        reasons[reason] += 1
        rank = _ORDER.index(_kind(reason))
        if nearest is None or rank > nearest[0]:
            nearest = (rank, rec.key, reason)
    need = f"need all {usable}" if req.all_mode else f"need {req.count}"
    parts = [f"request {req.full_name}: {len(of_class)} devices of class {req.cls.name} "
             f"on node {node}"]
    parts += [_phrase(reason, n) for reason, n in reasons.items()]
    if req.all_mode:
        if not of_class:
            parts.append("need at least 1")
        elif reasons:
            parts.append(f"need all {len(of_class)}")
        else:
            parts.append(f"{usable} usable, but not together with the other requests")
        return "; ".join(parts)
    parts.append(need)
    if usable >= req.count:
        constrained = [c.describe() for c in search.constraints[search.claims.index(prepared)]
                       if c.covers(req.base_name, req.sub_name)] \
            if search.constraints else []
        if constrained:
            parts.append(f"{usable} usable, blocked by {', '.join(constrained)} "
                         "or by the pod's other requests")
        else:
            parts.append(f"{usable} usable, but taken by the pod's other requests")
    elif nearest is not None:
        parts.append(f"nearest miss: {nearest[1]} ({nearest[2]})")
    return "; ".join(parts)


def explain(search: Search) -> tuple[str, ...]:
    """One line per (sub)request of the failed attempt, plus one per unusable pool."""
    lines: list[str] = []
    for pool in search.pools.pools:
        if pool.incomplete:
            lines.append(f"pool {pool.id} is incomplete (being updated): not used")
        elif pool.invalid:
            lines.append(f"pool {pool.id} is invalid ({pool.invalid_reason}): not used")
    for prepared in search.claims:
        for req in prepared.flat:
            try:
                lines.append(_line(search, prepared, req))
            except Exception as exc:  # explanations must never turn a result into a crash
                lines.append(f"request {req.full_name}: no explanation ({exc})")
    return tuple(lines)
