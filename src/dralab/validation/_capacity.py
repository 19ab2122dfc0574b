"""Consumable-capacity request policies of devices (``capacity[*].requestPolicy``).

Only devices with ``allowMultipleAllocations: true`` may carry a policy. The
arithmetic follows upstream: whole-unit ``Value()`` arithmetic, or milli-unit
arithmetic when DRAFractionalCapacityRange is on and some bound is fractional.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from typing import Any, Final

from dralab.api.features import Gate
from dralab.api.quantity import Quantity
from dralab.validation._context import Ctx, child, index

__all__ = ["check_request_policy"]

_VALID_VALUES_MAX: Final = 10
_INT64_MAX: Final = 2**63 - 1
_MILLI_NANO: Final = 10**6


def check_request_policy(ctx: Ctx, capacity: Quantity | None, value: Any, path: str) -> None:
    policy = ctx.as_map(value, path)
    if policy is None:
        return
    default_path = child(path, "default")
    default = ctx.as_quantity(policy.get("default"), default_path)
    raw_values = policy.get("validValues")
    has_values = isinstance(raw_values, list | tuple) and len(raw_values) > 0
    if not has_values:
        ctx.as_list(raw_values, child(path, "validValues"))  # type check only
    raw_range = policy.get("validRange")
    if has_values and raw_range is not None:
        ctx.forbidden(path, 'exactly one policy can be specified, cannot specify "validValues" '
                            'and "validRange" at the same time')
        return
    if has_values:
        if policy.get("default") is None:
            ctx.required(default_path, "required when validValues is defined")
        elif default is not None:
            _check_valid_values(ctx, default, capacity, raw_values, child(path, "validValues"))
    elif raw_range is not None:
        range_path = child(path, "validRange")
        valid_range = ctx.as_map(raw_range, range_path)
        if valid_range is None:
            return
        if policy.get("default") is None:
            ctx.required(default_path, "required when validRange is defined")
        elif default is not None:
            _check_range(ctx, default, capacity, valid_range, range_path)


def _check_valid_values(ctx: Ctx, default: Quantity, capacity: Quantity | None,
                        raw: Any, path: str) -> None:
    parsed = [(i, ctx.as_quantity(v, index(path, i))) for i, v in enumerate(raw)]
    values = [(i, q) for i, q in parsed if q is not None]
    for (_, left), (j, right) in pairwise(values):
        if left > right:
            ctx.invalid(index(path, j), str(right), "values must be sorted in ascending order")
    found_default = False
    if len(raw) > _VALID_VALUES_MAX:
        ctx.too_many(path, len(raw), _VALID_VALUES_MAX)
    else:
        fractional = ctx.features.is_enabled(Gate.DRA_FRACTIONAL_CAPACITY_RANGE)
        seen: set[int] = set()
        for i, q in values:
            if capacity is not None and q > capacity:
                ctx.invalid(index(path, i), str(q),
                            f"option is larger than capacity value: {capacity}")
            if q == default:
                found_default = True
            # Without fractional ranges, options that round to the same unit collide.
            ident = q.nano if fractional else q.value()
            if ident in seen:
                shown = f"{q.as_decimal().normalize():f}" if fractional else str(ident)
                ctx.duplicate(index(path, i), shown)
            seen.add(ident)
    if not found_default:
        ctx.invalid(path, str(default), "default value is not valid according to the requestPolicy")


def _check_range(ctx: Ctx, default: Quantity, capacity: Quantity | None,
                 valid_range: Mapping[str, Any], path: str) -> None:
    min_path, max_path, step_path = child(path, "min"), child(path, "max"), child(path, "step")
    # Upstream reports the default under validRange, although it is not a field there.
    default_path = child(path, "default")
    if valid_range.get("min") is None:
        ctx.required(min_path, "required when validRange is defined")
        return
    low = ctx.as_quantity(valid_range.get("min"), min_path)
    high = ctx.as_quantity(valid_range.get("max"), max_path)
    step = ctx.as_quantity(valid_range.get("step"), step_path)
    if low is None:
        return
    if capacity is not None and low > capacity:
        ctx.invalid(min_path, str(low), f"min is larger than capacity value: {capacity}")
    if default < low:
        ctx.invalid(default_path, str(default), f"default is less than min: {low}")
    if high is not None:
        if low > high:
            ctx.invalid(max_path, str(low), f"min is larger than max: {high}")
        if capacity is not None and high > capacity:
            ctx.invalid(max_path, str(high), f"max is larger than capacity value: {capacity}")
        if default > high:
            ctx.invalid(default_path, str(default), f"default is more than max: {high}")
    bounds = (("default", default), ("min", low), ("max", high), ("step", step))
    use_milli = False
    if ctx.features.is_enabled(Gate.DRA_FRACTIONAL_CAPACITY_RANGE):
        use_milli = any(q is not None and not q.is_integer() for _, q in bounds)
        if use_milli and not _milli_safe(ctx, bounds, path):
            return
    if step is None:
        return
    if step.sign() <= 0:
        ctx.invalid(step_path, str(step), "must be greater than zero")
        return
    one_step = low + step
    if capacity is not None and one_step > capacity:
        ctx.invalid(step_path, str(step),
                    f"one step {one_step} is larger than capacity value: {capacity}")
    if not use_milli and not _int64_safe(ctx, bounds, path):
        return
    _check_step(ctx, default, low, step, use_milli, step_path)
    if high is not None:
        _check_step(ctx, high, low, step, use_milli, step_path)


def _milli_safe(ctx: Ctx, bounds: tuple[tuple[str, Quantity | None], ...], path: str) -> bool:
    safe = True
    for name, q in bounds:
        if q is not None and (q.nano % _MILLI_NANO or abs(q.milli_value()) > _INT64_MAX):
            ctx.invalid(child(path, name), str(q), "value cannot be represented as a milli value")
            safe = False
    return safe


def _int64_safe(ctx: Ctx, bounds: tuple[tuple[str, Quantity | None], ...], path: str) -> bool:
    safe = True
    for name, q in bounds:
        if q is None:
            continue
        if q.sign() < 0:
            ctx.invalid(child(path, name), str(q), "must be greater than or equal to 0")
            safe = False
        elif q.value() > _INT64_MAX:
            ctx.invalid(child(path, name), str(q), f"must not be larger than {_INT64_MAX}")
            safe = False
    return safe


def _check_step(ctx: Ctx, amount: Quantity, low: Quantity, step: Quantity, use_milli: bool,
                path: str) -> None:
    if use_milli:
        offset, unit = amount.milli_value() - low.milli_value(), step.milli_value()
    else:
        offset, unit = amount.value() - low.value(), step.value()
    if unit != 0 and offset % unit != 0:
        ctx.invalid(path, str(amount),
                    f"value is not a multiple of a given step ({step}) from ({low})")
