"""Device selectors: compile once per expression, evaluate once per device.

A selector's verdict depends only on the expression and the device, both
immutable, so results are cached on the ``DeviceRecord`` and shared by every
claim, request and node that looks at the same device. Failures are cached
too: a broken expression or a runtime error is reported again, with the
context of whoever asks, every time the device is reached — never earlier,
because upstream only fails when the search actually reaches such a device.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dralab.api.resource import DeviceAttribute
from dralab.api.semver import SemverError, parse_semver
from dralab.cel import (
    CelCompileError,
    CelError,
    CelRuntimeError,
    CompiledSelector,
    DeviceInput,
    compile_selector,
    device_input,
)
from dralab.cel import Features as CelFeatures
from dralab.cel.fastpath import FastPredicate, qualifies

from .index import DeviceRecord, SelectorFailure

__all__ = ["Selector", "SelectorError", "cel_features", "matches", "selector"]


class SelectorError(Exception):
    """A selector could not be compiled or evaluated; an allocation error."""


@dataclass(frozen=True, eq=False, slots=True)
class Selector:
    """One compiled expression (or the reason it does not compile).

    Instances are interned per (expression, CEL features), so their identity
    is a valid key for the per-device result cache.
    """

    expression: str
    features: CelFeatures
    compiled: CompiledSelector | None
    compile_error: str | None
    # Python evaluation of a recognised shape; None answers defer to CEL.
    fast: FastPredicate | None = None


# A pure memo (expression and features fully determine the value), shared so
# that every allocator hits the same per-device cache entries.
_INTERNED: dict[tuple[str, CelFeatures], Selector] = {}


def cel_features(consumable_capacity: bool, list_type_attributes: bool) -> CelFeatures:
    return CelFeatures(consumable_capacity=consumable_capacity,
                       list_type_attributes=list_type_attributes)


def selector(expression: str, features: CelFeatures) -> Selector:
    """The interned selector for ``expression``; never raises."""
    key = (expression, features)
    found = _INTERNED.get(key)
    if found is not None:
        return found
    try:
        compiled = compile_selector(expression, features)
        made = Selector(expression, features, compiled, None, compiled.fast_predicate())
    except CelCompileError as exc:
        made = Selector(expression, features, None, str(exc))
    _INTERNED[key] = made
    return made


def _attribute_value(attr: DeviceAttribute) -> Any:
    if attr.version is not None:
        return parse_semver(attr.version)
    if attr.versions is not None:
        return [parse_semver(v) for v in attr.versions]
    return attr.value


def _cel_input(rec: DeviceRecord, features: CelFeatures) -> DeviceInput | SelectorFailure:
    """The device as CEL input, built once per device and feature set."""
    inputs = rec.cel_inputs
    if inputs is None:
        inputs = rec.cel_inputs = {}
    found: DeviceInput | SelectorFailure | None = inputs.get(features)
    if found is not None:
        return found
    d = rec.device
    try:
        attributes = {name: _attribute_value(a) for name, a in d.attributes.items()
                      if a.value is not None}
    except SemverError as exc:
        made: DeviceInput | SelectorFailure = SelectorFailure(f"convert Device {rec.key}: {exc}")
    else:
        try:
            made = device_input(
                rec.driver,
                attributes,
                {name: cap.value for name, cap in d.capacity.items()},
                # The field only exists in CEL with DRAConsumableCapacity.
                bool(d.allow_multiple_allocations) if features.consumable_capacity else None,
            )
        except CelError as exc:
            made = SelectorFailure(f"convert Device {rec.key}: {exc}")
    inputs[features] = made
    return made


def _evaluate(rec: DeviceRecord, sel: Selector) -> bool | SelectorFailure:
    if sel.compiled is None:
        return SelectorFailure(f"CEL compile error: {sel.compile_error}")
    if sel.fast is not None:
        ok = rec.fast_ok
        if ok is None:
            ok = rec.fast_ok = qualifies(rec.driver, rec.device)
        if ok:
            verdict = sel.fast(rec.driver, rec.device)
            if verdict is not None:
                return verdict
    data = _cel_input(rec, sel.features)
    if isinstance(data, SelectorFailure):
        return data
    try:
        return bool(sel.compiled.evaluate(data))
    except CelRuntimeError as exc:
        return SelectorFailure(f"CEL runtime error: {exc}")


def matches(rec: DeviceRecord, selectors: Sequence[Selector], labels: Sequence[str]) -> bool:
    """Whether all ``selectors`` accept the device, in order, stopping at the first no.

    ``labels[i]`` names the owner of selector i for error messages
    (``class gpu: selector #0`` ...). Raises SelectorError.
    """
    cache = rec.sel_cache
    for i, sel in enumerate(selectors):
        verdict = cache.get(sel)
        if verdict is None:
            verdict = _evaluate(rec, sel)
            cache[sel] = verdict
        if verdict is True:
            continue
        if verdict is False:
            return False
        if sel.compiled is None:
            raise SelectorError(f"{labels[i]}: {verdict.message}")
        raise SelectorError(f"{labels[i]} on device {rec.key}: {verdict.message}")
    return True


def first_rejecting(rec: DeviceRecord, selectors: Sequence[Selector]) -> int | None:
    """Index of the first selector that rejects (or fails on) the device; None if all accept.

    For explanations only: never raises.
    """
    cache = rec.sel_cache
    for i, sel in enumerate(selectors):
        verdict = cache.get(sel)
        if verdict is None:
            verdict = _evaluate(rec, sel)
            cache[sel] = verdict
        if verdict is not True:
            return i
    return None
