"""Conversion of resource.k8s.io documents between the served versions and v1.

Works on plain documents (what YAML/JSON gives), like the validators, so that
a document of any version can be checked and decoded as v1 and written back
in its own version. The shapes differ only where the API server's conversion
code (pkg/apis/resource/v1beta1/conversion.go) says they do:

* v1beta1 DeviceRequest has the ExactDeviceRequest fields directly on the
  request; v1 nests them under ``exactly``.
* v1beta1 Device wraps every field but ``name`` in ``basic``; v1 is flat.
* v1beta1 ResourceSliceSpec has a plain ``nodeName`` string and ``allNodes``
  bool, where "" and false mean unset; v1 uses optional values.

v1beta2 and the v1alpha3 DeviceTaintRule have exactly the v1 layout; so do the
scheduling.k8s.io/v1alpha3 and v1alpha2 Workload and PodGroup for their hub,
scheduling.k8s.io/v1beta1 (``HUB_OF``).

Round trips: a document of an older version converted to v1 and back is the
same document, with two exceptions the API server shares: a v1beta1 slice's
``nodeName: ""`` / ``allNodes: false`` (which mean "unset") and an empty
``basic: {}`` are dropped. Fields dralab does not know travel with their
neighbours, so they survive as well. Every function is pure: inputs are never
modified; unchanged sub-documents are shared with the input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ._served import CONVERTIBLE, HUB_OF

__all__ = [
    "from_v1",
    "legacy_slice_to_v1",
    "to_v1",
]

_V1: Final = "resource.k8s.io/v1"
_V1BETA1: Final = "resource.k8s.io/v1beta1"
_V1ALPHA3: Final = "resource.k8s.io/v1alpha3"

# A v1beta1 DeviceRequest keeps these; every other field belongs to v1's `exactly`.
_REQUEST_OWN: Final = frozenset({"name", "firstAvailable"})

Doc = dict[str, Any]
Step = Callable[[Any], Any]


def _request_up(request: Any) -> Any:
    if not isinstance(request, Mapping):
        return request
    out = {k: v for k, v in request.items() if k in _REQUEST_OWN}
    exactly = {k: v for k, v in request.items() if k not in _REQUEST_OWN}
    if exactly:
        out["exactly"] = exactly
    return out


def _request_down(request: Any) -> Any:
    if not isinstance(request, Mapping):
        return request
    out = {k: v for k, v in request.items() if k != "exactly"}
    exactly = request.get("exactly")
    if isinstance(exactly, Mapping):
        out.update(exactly)
    elif exactly is not None:
        out["exactly"] = exactly  # not convertible; left for validation to report
    return out


def _device_up(device: Any) -> Any:
    if not isinstance(device, Mapping):
        return device
    out = {k: v for k, v in device.items() if k != "basic"}
    basic = device.get("basic")
    if isinstance(basic, Mapping):
        out.update(basic)
    # A `basic` that is not an object cannot be decoded at all: validation reports it.
    return out


def _device_down(device: Any) -> Any:
    if not isinstance(device, Mapping):
        return device
    out = {k: v for k, v in device.items() if k == "name"}
    basic = {k: v for k, v in device.items() if k != "name"}
    if basic:
        out["basic"] = basic
    return out


def _each(step: Step) -> Step:
    def apply(items: Any) -> Any:
        return [step(item) for item in items] if isinstance(items, list) else items
    return apply


def _at(key: str, step: Step) -> Step:
    """Apply ``step`` to ``doc[key]`` of a mapping, copying only what changes."""
    def apply(doc: Any) -> Any:
        if not isinstance(doc, Mapping) or key not in doc:
            return doc
        return {**doc, key: step(doc[key])}
    return apply


def _chain(*steps: Step) -> Step:
    def apply(doc: Any) -> Any:
        for step in steps:
            doc = step(doc)
        return doc
    return apply


def _claim_spec(request_step: Step) -> Step:
    return _at("devices", _at("requests", _each(request_step)))


def _slice_node_fields_up(spec: Any) -> Any:
    # v1beta1 spells "unset" as "" and false; v1 would read them as set (and invalid).
    if not isinstance(spec, Mapping):
        return spec
    return {k: v for k, v in spec.items()
            if not (k == "nodeName" and v == "") and not (k == "allNodes" and v is False)}


def _slice_node_fields_down(spec: Any) -> Any:
    # The v1beta1 fields are not pointers: "" and false are not written.
    return _slice_node_fields_up(spec)


_CLAIM_UP: Final = _at("spec", _claim_spec(_request_up))
_CLAIM_DOWN: Final = _at("spec", _claim_spec(_request_down))
_TEMPLATE_UP: Final = _at("spec", _at("spec", _claim_spec(_request_up)))
_TEMPLATE_DOWN: Final = _at("spec", _at("spec", _claim_spec(_request_down)))
_SLICE_UP: Final = _at("spec", _chain(_slice_node_fields_up, _at("devices", _each(_device_up))))
_SLICE_DOWN: Final = _at("spec", _chain(_slice_node_fields_down,
                                        _at("devices", _each(_device_down))))


def _same(doc: Any) -> Any:
    return doc


# (version, kind) -> (to v1, from v1), for every pair in CONVERTIBLE.
_STEPS: Final[Mapping[tuple[str, str], tuple[Step, Step]]] = {
    **{(version, kind): (_same, _same)
       for kind, versions in CONVERTIBLE.items() for version in versions},
    (_V1BETA1, "ResourceClaim"): (_CLAIM_UP, _CLAIM_DOWN),
    (_V1BETA1, "ResourceClaimTemplate"): (_TEMPLATE_UP, _TEMPLATE_DOWN),
    (_V1BETA1, "ResourceSlice"): (_SLICE_UP, _SLICE_DOWN),
}


def _steps(api_version: object, kind: object) -> tuple[Step, Step] | None:
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None  # e.g. an apiVersion that is a list: nothing to convert
    return _STEPS.get((api_version, kind))


def _hub(kind: object) -> str:
    return HUB_OF.get(kind, _V1) if isinstance(kind, str) else _V1


def _with_version(doc: Any, api_version: str) -> Doc:
    out = dict(doc)
    out["apiVersion"] = api_version
    return out


def to_v1(doc: Mapping[str, Any]) -> Doc:
    """``doc`` (a served older resource.k8s.io version) as a resource.k8s.io/v1 document.

    Documents of other versions and kinds come back as a shallow copy. Never
    raises: parts that do not have the expected types are carried over as they are.
    """
    steps = _steps(doc.get("apiVersion"), doc.get("kind"))
    if steps is None:
        return dict(doc)
    return _with_version(steps[0](doc), _hub(doc.get("kind")))


def from_v1(doc: Mapping[str, Any], api_version: str) -> Doc:
    """The resource.k8s.io/v1 document ``doc`` in ``api_version`` (a served older version).

    ``api_version`` equal to the document's own version gives a shallow copy.
    Raise ValueError for a version the kind cannot be written in.
    """
    kind = doc.get("kind")
    if api_version == doc.get("apiVersion"):
        return dict(doc)
    steps = _steps(api_version, kind)
    if steps is None or doc.get("apiVersion") != _hub(kind):
        raise ValueError(f"cannot write {doc.get('apiVersion')} {kind} as {api_version}")
    return _with_version(steps[1](doc), api_version)


def _bare_capacity_up(device: Any) -> Any:
    # v1alpha3 gave capacities as bare quantities; later versions as {value: q}.
    def wrap(capacity: Any) -> Any:
        if not isinstance(capacity, Mapping):
            return capacity
        return {k: v if isinstance(v, Mapping) else {"value": v} for k, v in capacity.items()}
    return _at("basic", _at("capacity", wrap))(device)


_LEGACY_SLICE_UP: Final = _at("spec", _at("devices", _each(_bare_capacity_up)))


def legacy_slice_to_v1(doc: Mapping[str, Any]) -> Doc:
    """A ResourceSlice of the resource.k8s.io/v1alpha3 API of Kubernetes 1.31-1.33, as v1.

    That version is no longer served (removed in 1.34), so ordinary loading
    refuses it; importing a dump of an older cluster needs it. Its slices have
    the v1beta1 layout with bare capacity quantities. Other documents come
    back as a shallow copy.
    """
    if doc.get("apiVersion") != _V1ALPHA3 or doc.get("kind") != "ResourceSlice":
        return dict(doc)
    as_beta = _with_version(_LEGACY_SLICE_UP(doc), _V1BETA1)
    return to_v1(as_beta)
