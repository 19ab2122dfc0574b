"""Kueue's resource transformations: what a pod set asks of quota.

A Kueue Configuration's ``resources.transformations`` turns a resource a pod asks for
(``input``) into other resources quota is kept in (``outputs``, an amount per unit of
input), keeping the input (``strategy: Retain``, the default) or dropping it
(``Replace``); ``multiplyBy`` names a second requested resource whose amount scales the
outputs (not the retained input). Kueue applies them when it reads a Workload
(workload.go's applyResourceTransformations): the pod set's quota requests change,
while TAS keeps placing pods by the pod template's own requests -- so a transformed
pod set keeps those in ``PodSetRequest.spec_requests``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from .model import Amounts, PodSetRequest
from .objects import KueueConfiguration

__all__ = ["ResourceTransformation", "apply_transformations", "from_config", "transform_pod_set"]

CPU = "cpu"
MILLI = 1000


@dataclass(frozen=True, slots=True)
class ResourceTransformation:
    """One ``resources.transformations`` entry; ``outputs`` in milli-units per unit."""

    input: str
    outputs: Mapping[str, int]
    strategy: Literal["Retain", "Replace"] = "Retain"
    multiply_by: str = ""


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _output(name: str, amount: int, factor: int) -> int:
    """``amount`` (milli) times ``factor`` (milli per unit), as Kueue charges it: cpu in
    milli-units, any other resource in whole units, rounded up (ResourceValue's
    MilliValue / Value)."""
    product = _ceil_div(amount * factor, MILLI)
    return product if name == CPU else _ceil_div(product, MILLI) * MILLI


def apply_transformations(requests: Amounts,
                          transformations: Iterable[ResourceTransformation]) -> dict[str, int]:
    """One pod's quota requests from its own ``requests`` (milli-units)."""
    by_input = {t.input: t for t in transformations}
    if not any(name in by_input for name in requests):
        return dict(requests)
    retained: dict[str, int] = {}
    generated: dict[str, int] = {}
    for name, amount in requests.items():
        mapping = by_input.get(name)
        if mapping is None:
            retained[name] = retained.get(name, 0) + amount
            continue
        base = amount
        if mapping.multiply_by and mapping.multiply_by in requests:
            base = _ceil_div(amount * requests[mapping.multiply_by], MILLI)
        for output, factor in mapping.outputs.items():
            # summed, so that two inputs feeding one output both count
            generated[output] = generated.get(output, 0) + _output(output, base, factor)
        if mapping.strategy == "Retain":
            retained[name] = retained.get(name, 0) + amount
    # a negative factor is an allowance: it can cancel other outputs but not go
    # below zero, nor reduce a request of the same name that was not generated
    for output, amount in generated.items():
        retained[output] = retained.get(output, 0) + max(amount, 0)
    return {name: max(amount, 0) for name, amount in retained.items()}


def transform_pod_set(pod_set: PodSetRequest,
                      transformations: Sequence[ResourceTransformation]) -> PodSetRequest:
    """The pod set with its quota requests transformed; unchanged when no
    transformation applies (its template's requests are its quota requests)."""
    if not transformations:
        return pod_set
    per_pod = apply_transformations(pod_set.per_pod, transformations)
    if per_pod == dict(pod_set.per_pod):
        return pod_set
    spec = pod_set.spec_requests if pod_set.spec_requests is not None else pod_set.per_pod
    return replace(pod_set, per_pod=per_pod, spec_requests=dict(spec))


def from_config(config: KueueConfiguration | None) -> tuple[ResourceTransformation, ...]:
    """The Configuration's ``resources.transformations`` (none without one)."""
    if config is None:
        return ()
    return tuple(ResourceTransformation(
        t.input, {name: q.milli_value() for name, q in t.outputs.items()},
        t.strategy or "Retain", t.multiply_by) for t in config.resources.transformations)
