"""Kueue's resource checks of a Workload's pod templates: LimitRanges and limits.

Kueue (ff69552e, ``pkg/workload/resources.go``, ``pkg/util/limitrange``) reads the
pod sets through ``AdjustResources`` -- the namespace's LimitRange defaults fill the
containers' missing limits (``default``) and requests (``defaultRequest``), then a
limit stands in for a missing request -- and, when it nominates a head,
``ValidateAdmissibility`` refuses it (QuotaReserved=False, reason Misconfigured, the
workload requeued) when

* a container (or the pod-level resources) requests more than its limit:
  ``resources validation failed: <field errors>``;
* else a container, or the pod as a whole, is outside the namespace's LimitRanges:
  ``resources didn't satisfy LimitRange constraints: <field errors>``.

Several LimitRanges of a namespace are summarised per type (``Container``, ``Pod``):
the lowest ``max``, the highest ``min``, the first ``default``/``defaultRequest``.
LimitRanges are read from the input (core ``v1``); a live read does not list them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dralab.api.base import KubeObject
from dralab.api.core import Container, PodSpec, ResourceRequirements
from dralab.api.errors import InputError
from dralab.api.quantity import Quantity, QuantityError, parse_quantity

from .requests import pod_requests

__all__ = [
    "ERR_INVALID_RESOURCES",
    "ERR_LIMIT_RANGE",
    "LimitRangeSummary",
    "adjusted",
    "limit_range_summaries",
    "validation_errors",
    "validation_message",
]

LIMIT_RANGE_KIND = "LimitRange"
ERR_INVALID_RESOURCES = "resources validation failed"
ERR_LIMIT_RANGE = "resources didn't satisfy LimitRange constraints"
_EXCEEDS_LIMITS = "requests must not exceed its limits"
_ABOVE_MAX = "requests must not be above the limitRange max"
_BELOW_MIN = "requests must not be below the limitRange min"

Amounts = dict[str, int]  # milli-units


@dataclass(slots=True)
class _Item:
    max: Amounts = field(default_factory=dict)
    min: Amounts = field(default_factory=dict)
    default: Amounts = field(default_factory=dict)
    default_request: Amounts = field(default_factory=dict)


@dataclass(slots=True)
class LimitRangeSummary:
    """One namespace's LimitRanges summarised per type (Kueue's limitrange.Summarize)."""

    container: _Item | None = None
    pod: _Item | None = None


def _amounts(raw: Any, where: str) -> Amounts:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: must be a map of resource quantities")
    out: Amounts = {}
    for name, value in raw.items():
        try:
            quantity = value if isinstance(value, Quantity) else parse_quantity(str(value))
        except QuantityError as exc:
            raise InputError(f"{where}.{name}: {exc}") from None
        out[str(name)] = quantity.milli_value()
    return out


def _keep(into: Amounts, other: Amounts, pick: Any) -> Amounts:
    out = dict(into)
    for name, value in other.items():
        out[name] = pick(out[name], value) if name in out else value
    return out


def _first(into: Amounts, other: Amounts) -> Amounts:
    return {**other, **into}


def limit_range_summaries(objects: Iterable[KubeObject]) -> dict[str, LimitRangeSummary]:
    """Per namespace the summary of its ``v1`` LimitRanges (in input order); a bad
    quantity is an InputError naming the field."""
    out: dict[str, LimitRangeSummary] = {}
    for obj in objects:
        if (obj.kind or type(obj).KIND) != LIMIT_RANGE_KIND or obj.api_version != "v1":
            continue
        spec = (obj.raw or {}).get("spec") or {}
        limits = spec.get("limits") if isinstance(spec, Mapping) else None
        summary = out.setdefault(obj.namespace, LimitRangeSummary())
        for index, item in enumerate(limits if isinstance(limits, list) else []):
            if not isinstance(item, Mapping):
                continue
            where = f"LimitRange {obj.ref}: spec.limits[{index}]"
            kind = item.get("type")
            if kind not in ("Container", "Pod"):
                continue  # PersistentVolumeClaim limits say nothing of pods
            own = _Item(_amounts(item.get("max"), f"{where}.max"),
                        _amounts(item.get("min"), f"{where}.min"),
                        _amounts(item.get("default"), f"{where}.default"),
                        _amounts(item.get("defaultRequest"), f"{where}.defaultRequest"))
            current = summary.container if kind == "Container" else summary.pod
            if current is None:
                merged = own
            else:
                merged = _Item(_keep(current.max, own.max, min), _keep(current.min, own.min, max),
                               _first(current.default, own.default),
                               _first(current.default_request, own.default_request))
            if kind == "Container":
                summary.container = merged
            else:
                summary.pod = merged
    return out


# -- AdjustResources ----------------------------------------------------------------------

def _milli(amounts: Mapping[str, Quantity]) -> Amounts:
    return {name: q.milli_value() for name, q in amounts.items()}


def _quantities(amounts: Mapping[str, int]) -> dict[str, Quantity]:
    return {name: parse_quantity(f"{value}m") for name, value in amounts.items()}


def _with_defaults(res: ResourceRequirements, item: _Item | None) -> ResourceRequirements:
    """The LimitRange defaults where the requirements leave a resource out."""
    if item is None or not (item.default or item.default_request):
        return res
    limits = {**_quantities(item.default), **res.limits}
    requests = {**_quantities(item.default_request), **res.requests}
    return msgspec.structs.replace(res, limits=limits, requests=requests)


def adjusted(spec: PodSpec, summary: LimitRangeSummary | None) -> PodSpec:
    """The pod spec with its namespace's LimitRange defaults filled in (Kueue's
    handlePodLimitRange; a limit standing in for a missing request is left to the
    request totals, as ``requests.container_requests`` does)."""
    if summary is None:
        return spec
    item = summary.container

    def fill(containers: Sequence[Container]) -> list[Container]:
        return [msgspec.structs.replace(c, resources=_with_defaults(c.resources, item))
                for c in containers]

    pod_resources = spec.resources
    if pod_resources is not None:
        pod_resources = _with_defaults(pod_resources, summary.pod)
    return msgspec.structs.replace(spec, containers=fill(spec.containers),
                                   init_containers=fill(spec.init_containers),
                                   resources=pod_resources)


# -- ValidateResources, ValidateLimitRange -------------------------------------------------

def _value(name: str, milli: int) -> int:
    """Kueue's ResourceValue: cpu in milli-units, any other resource in units (rounded
    up, as Quantity.Value)."""
    return milli if name == "cpu" else -(-milli // 1000)


def _greater_keys(amounts: Mapping[str, int], other: Mapping[str, int]) -> list[str]:
    """Kueue's GreaterKeys: the resources of both where ``amounts`` is greater, sorted."""
    if not amounts or not other:
        return []
    return sorted(n for n, v in amounts.items()
                  if n in other and _value(n, v) > _value(n, other[n]))


def _requests(res: ResourceRequirements) -> Amounts:
    """Requests after AdjustResources: a limit stands in for a missing request."""
    return {**_milli(res.limits), **_milli(res.requests)}


def _invalid(path: str, names: list[str], detail: str) -> str:
    # field.Invalid(path, []ResourceName, detail).Error(): the value as JSON
    return f"{path}: Invalid value: {json.dumps(names, separators=(',', ':'))}: {detail}"


def _container_lists(spec: PodSpec) -> list[tuple[str, Sequence[Container]]]:
    return [("initContainers", spec.init_containers), ("containers", spec.containers)]


def validation_errors(spec: PodSpec, index: int, summary: LimitRangeSummary | None,
                      raw_spec: Mapping[str, Any] | None = None
                      ) -> tuple[list[str], list[str]]:
    """The field errors of pod set ``index`` (its adjusted spec): requests above
    limits (ValidateResources), and outside the LimitRanges (ValidateLimitRange)."""
    path = f"spec.podSets[{index}].template.spec"
    resource_errors: list[str] = []
    for field_name, containers in _container_lists(spec):
        for i, container in enumerate(containers):
            names = _greater_keys(_requests(container.resources),
                                  _milli(container.resources.limits))
            if names:
                resource_errors.append(_invalid(f"{path}.{field_name}[{i}]", names,
                                                _EXCEEDS_LIMITS))
    if spec.resources is not None:
        names = _greater_keys(_requests(spec.resources), _milli(spec.resources.limits))
        if names:
            resource_errors.append(_invalid(f"{path}.resources", names, _EXCEEDS_LIMITS))
    range_errors: list[str] = []
    if summary is not None and summary.container is not None:
        item = summary.container
        for field_name, containers in _container_lists(spec):
            for i, container in enumerate(containers):
                requests, limits = _requests(container.resources), \
                    _milli(container.resources.limits)
                low, high = _keep(requests, limits, min), _keep(requests, limits, max)
                where = f"{path}.{field_name}[{i}]"
                if names := _greater_keys(high, item.max):
                    range_errors.append(_invalid(where, names, _ABOVE_MAX))
                if names := _greater_keys(item.min, low):
                    range_errors.append(_invalid(where, names, _BELOW_MIN))
    if summary is not None and summary.pod is not None:
        total = pod_requests(spec, raw_spec)
        if names := _greater_keys(total, summary.pod.max):
            range_errors.append(_invalid(path, names, _ABOVE_MAX))
        if names := _greater_keys(summary.pod.min, total):
            range_errors.append(_invalid(path, names, _BELOW_MIN))
    return resource_errors, range_errors


def _aggregate(errors: list[str]) -> str:
    """k8s utilerrors.Aggregate's text: one error as is, several (each once) in [a, b]."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"


def validation_message(per_pod_set: Sequence[tuple[list[str], list[str]]]) -> str:
    """Kueue's ValidateAdmissibility text for a workload's pod sets ("" if valid):
    requests above limits first, then the LimitRanges."""
    resource_errors = [e for own, _ in per_pod_set for e in own]
    if resource_errors:
        return f"{ERR_INVALID_RESOURCES}: {_aggregate(resource_errors)}"
    range_errors = [e for _, own in per_pod_set for e in own]
    if range_errors:
        return f"{ERR_LIMIT_RANGE}: {_aggregate(range_errors)}"
    return ""
