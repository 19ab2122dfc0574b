"""Consumable capacity (DRAConsumableCapacity): what one request takes from one device.

Amounts are exact integers in nano-units. For every capacity of the device the
request consumes: the requested amount rounded up by the device's request
policy; if not requested, the policy default, else the *whole* capacity. The
device fits if every amount obeys its policy and, added to what is already
consumed (allocated claims plus earlier picks of this search), stays within
the capacity. Ordinary devices only use this as a filter; shares of
multi-allocatable devices record the amounts.
"""

from __future__ import annotations

from collections.abc import Mapping

from dralab.api.quantity import Quantity
from dralab.api.resource import CapacityRequestPolicy, CapacityRequestPolicyRange, DeviceCapacity

from .index import DeviceRecord, capacity_fqn

__all__ = ["CapacityError", "consumption", "resolve_requests"]

_NANO = 10**9
_MILLI = 10**6
_MAX_INT64 = 2**63 - 1


class CapacityError(Exception):
    """A request the range arithmetic cannot represent, or a negative amount: fatal."""


def resolve_requests(rec: DeviceRecord, requests: Mapping[str, Quantity]
                     ) -> dict[str, Quantity] | None:
    """Map request names to the device's fully-qualified capacity names.

    ``name`` and ``<driver>/name`` are the same capacity. None if the device
    lacks one of them (skip the device); CapacityError if both spellings are
    requested.
    """
    published = rec.device.capacity
    driver = rec.driver
    resolved: dict[str, Quantity] = {}
    for name, amount in requests.items():
        if name in published:
            key = capacity_fqn(name, driver)
        else:
            domain, sep, ident = name.partition("/")
            if sep:
                if domain != driver or ident not in published:
                    return None
                key = name
            elif f"{driver}/{name}" in published:
                key = f"{driver}/{name}"
            else:
                return None
        if key in resolved:
            raise CapacityError(f"capacity {key!r} requested both qualified and unqualified")
        resolved[key] = amount
    return resolved


def _ceil_units(nano: int, unit: int) -> int:
    return -((-nano) // unit)


def _milli_exact(q: Quantity) -> int | None:
    return q.nano // _MILLI if q.nano % _MILLI == 0 else None


def _use_milli(r: CapacityRequestPolicyRange, fractional: bool) -> bool:
    if not fractional:
        return False
    for q in (r.min, r.max, r.step):
        if q is not None and (_milli_exact(q) is None or abs(q.nano // _MILLI) > _MAX_INT64):
            return False
    return not (r.step is not None and r.step.nano < _MILLI)


def _round_up_range(amount: Quantity, r: CapacityRequestPolicyRange,
                    fractional: bool) -> Quantity:
    minimum = r.min if r.min is not None else Quantity(0)
    if amount.nano < minimum.nano:
        return minimum
    if r.step is None:
        return amount
    if _use_milli(r, fractional):
        requested = _milli_exact(amount)
        if requested is None:
            raise CapacityError(f"request {amount} is not a representable milli value")
        step, low = r.step.nano // _MILLI, minimum.nano // _MILLI
        n = _ceil_units(requested - low, step)
        value = low + step * n
        if value > _MAX_INT64:
            raise CapacityError(f"rounding request {amount} up to the next step passes the "
                                "milli-value range")
        return Quantity(value * _MILLI, r.step.format)
    if amount.nano > _MAX_INT64 * _NANO:
        raise CapacityError(f"request {amount} exceeds MaxInt64")
    requested = _ceil_units(amount.nano, _NANO)
    step, low = _ceil_units(r.step.nano, _NANO), _ceil_units(minimum.nano, _NANO)
    if step <= 0:
        return amount
    n = _ceil_units(requested - low, step)
    value = low + step * n
    if value > _MAX_INT64:
        raise CapacityError(f"rounding request {amount} up to the next step passes MaxInt64")
    return Quantity(value * _NANO, r.step.format)


def _amount(requested: Quantity | None, cap: DeviceCapacity, fractional: bool) -> Quantity:
    policy = cap.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return cap.value
    if policy is None:
        return requested
    if policy.valid_range is not None and policy.valid_range.min is not None:
        return _round_up_range(requested, policy.valid_range, fractional)
    if policy.valid_values:
        for valid in policy.valid_values:
            if requested.nano <= valid.nano:
                return valid
    return requested


def _violates(amount: Quantity, policy: CapacityRequestPolicy | None, fractional: bool) -> bool:
    if policy is None:
        return False
    if policy.default is not None and amount.nano == policy.default.nano:
        return False
    r = policy.valid_range
    if r is not None:
        if r.max is not None and amount.nano > r.max.nano:
            return True
        if r.step is not None:
            minimum = r.min if r.min is not None else Quantity(0)
            if _use_milli(r, fractional):
                requested = _milli_exact(amount)
                if requested is None:
                    return True
                step, low = r.step.nano // _MILLI, minimum.nano // _MILLI
            else:
                requested = _ceil_units(amount.nano, _NANO)
                step, low = _ceil_units(r.step.nano, _NANO), _ceil_units(minimum.nano, _NANO)
            if step and (requested - low) % step != 0:
                return True
        return False
    if policy.valid_values:
        return all(amount.nano != v.nano for v in policy.valid_values)
    return False


def consumption(rec: DeviceRecord, requests: Mapping[str, Quantity] | None,
                consumed: Mapping[str, int] | None, picking: Mapping[str, int] | None,
                fractional: bool) -> dict[str, Quantity] | None:
    """What the request would consume from the device, or None if it does not fit.

    ``consumed`` and ``picking`` are the amounts already taken by allocated
    claims and by earlier picks of the running search (fully-qualified names
    -> nano). Raises CapacityError for unrepresentable or negative amounts.
    """
    if not requests and not consumed and not picking:
        # The usual case (nothing asked, nothing taken): without request policies
        # every capacity is consumed whole and fits; the first negative one is an error.
        whole: dict[str, Quantity] = {}
        for fqn, (_, cap) in rec.capacity.items():
            if cap.request_policy is not None:
                break
            if cap.value.nano < 0:
                raise CapacityError(f"capacity {fqn!r}: capacity value is negative")
            whole[fqn] = cap.value
        else:
            return whole
    resolved: Mapping[str, Quantity] = {}
    if requests:
        found = resolve_requests(rec, requests)
        if found is None:
            return None
        resolved = found
    amounts: dict[str, Quantity] = {}
    for fqn, (_, cap) in rec.capacity.items():
        amount = _amount(resolved.get(fqn), cap, fractional)
        if amount.nano < 0:
            raise CapacityError(f"capacity {fqn!r}: capacity value is negative")
        amounts[fqn] = amount
    for fqn, (_, cap) in rec.capacity.items():
        amount = amounts[fqn]
        if _violates(amount, cap.request_policy, fractional):
            return None
        total = amount.nano
        if consumed:
            total += consumed.get(fqn, 0)
        if picking:
            total += picking.get(fqn, 0)
        if total > cap.value.nano:
            return None
    return amounts
