"""Per-pod resource requests as Kueue totals them for a pod set.

Kueue charges a pod what the kubelet reserves for it: the sum over the regular
containers, or the largest init container if that is bigger (init containers run
one at a time, before the others), resource by resource, plus the pod overhead.
A container's limit stands in for a request it leaves out (the API server's
defaulting, which Kueue applies to templates too). Sidecars (init containers with
``restartPolicy: Always``) keep running: they add to everything after them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dralab.api.core import Container, PodSpec
from dralab.api.quantity import Quantity, parse_quantity

__all__ = ["container_requests", "pod_requests"]


def container_requests(container: Container) -> dict[str, int]:
    """Milli-unit requests of one container, limits standing in for missing requests."""
    out = {name: q.milli_value() for name, q in container.resources.limits.items()}
    out.update({name: q.milli_value() for name, q in container.resources.requests.items()})
    return out


def _add(into: dict[str, int], amounts: Mapping[str, int]) -> None:
    for name, value in amounts.items():
        into[name] = into.get(name, 0) + value


def _max(into: dict[str, int], amounts: Mapping[str, int]) -> None:
    for name, value in amounts.items():
        if value > into.get(name, 0):
            into[name] = value


def _is_sidecar(raw: Mapping[str, Any] | None) -> bool:
    return isinstance(raw, Mapping) and raw.get("restartPolicy") == "Always"


def _overhead(raw_spec: Mapping[str, Any] | None) -> dict[str, int]:
    found = raw_spec.get("overhead") if isinstance(raw_spec, Mapping) else None
    if not isinstance(found, Mapping):
        return {}
    out: dict[str, int] = {}
    for name, value in found.items():
        quantity = value if isinstance(value, Quantity) else parse_quantity(str(value))
        out[str(name)] = quantity.milli_value()
    return out


def pod_requests(spec: PodSpec, raw_spec: Mapping[str, Any] | None = None) -> dict[str, int]:
    """What one pod of ``spec`` asks for (milli-units), as Kueue totals it.

    ``raw_spec``: the plain pod spec, for the fields dralab's PodSpec does not model
    (init containers' ``restartPolicy``, ``overhead``)."""
    raw_inits: list[Any] = []
    if isinstance(raw_spec, Mapping) and isinstance(raw_spec.get("initContainers"), list):
        raw_inits = raw_spec["initContainers"]
    regular: dict[str, int] = {}
    for container in spec.containers:
        _add(regular, container_requests(container))
    # Walk init containers in order: each one runs alongside the sidecars started before it.
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for index, container in enumerate(spec.init_containers):
        own = container_requests(container)
        raw = raw_inits[index] if index < len(raw_inits) else None
        if _is_sidecar(raw):
            _add(sidecars, own)
            _max(init_peak, sidecars)
        else:
            step = dict(sidecars)
            _add(step, own)
            _max(init_peak, step)
    total = dict(regular)
    _add(total, sidecars)
    _max(total, init_peak)
    _add(total, _overhead(raw_spec))
    return {name: value for name, value in total.items() if value}


def summed(amounts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for one in amounts:
        _add(out, one)
    return out
