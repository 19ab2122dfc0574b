"""Plain data <-> typed objects.

``decode`` turns one decoded document (a dict as YAML/JSON gives it) into the
typed object for its kind, or an UnknownObject. Documents in an older API
version that Kubernetes 1.37 still serves are converted to the v1 kind first
(see ``dralab.api.versions``); removed and unknown versions of modelled groups
are refused. ``encode`` turns an object back into plain (v1) data: typed fields
laid over the document the object came from, so nothing dralab does not model
is lost. Both are pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

import msgspec
from msgspec import inspect as mi

from .base import KubeObject, UnknownObject
from .core import Namespace, Node, Pod, PriorityClass
from .errors import LoadError
from .quantity import Quantity, QuantityError, parse_quantity
from .resource import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from .scheduling import PodGroup, Workload
from .service import Service
from .storage import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from .versions import Resolution, Served, missing_api_version, resolve, to_v1
from .workloads import CronJob, DaemonSet, Deployment, Job, ReplicaSet, StatefulSet

__all__ = [
    "HUBS", "KINDS", "DecodeError", "decode", "encode", "fingerprint", "kind_for",
    "nulls_as_unset",
    "resolve_kind",
]

KINDS: tuple[type[KubeObject], ...] = (
    DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate, DeviceTaintRule,
    Pod, Node, PriorityClass, Job, CronJob, Deployment, StatefulSet, ReplicaSet, DaemonSet,
    Namespace, PodGroup, Workload, Service,
    PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, VolumeAttachment,
    CSIDriver,
)
_BY_KIND: dict[tuple[str, str], type[KubeObject]] = {(k.API_VERSION, k.KIND): k for k in KINDS}
# The version each modelled kind is decoded into; older served versions convert to it.
HUBS: dict[str, str] = {k.KIND: k.API_VERSION for k in KINDS}


class DecodeError(LoadError):
    """A document does not fit its kind's types; ``path`` is the field path."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.detail = message


def resolve_kind(api_version: str, kind: str) -> Resolution:
    """How ``kind`` in ``api_version`` is read: as is, converted, refused or not modelled."""
    return resolve(api_version, kind, HUBS)


def kind_for(api_version: str, kind: str) -> type[KubeObject] | None:
    """The class a document of ``api_version``/``kind`` decodes into (None: not modelled)."""
    resolution = resolve_kind(api_version, kind)
    if resolution.served in (Served.HUB, Served.CONVERT):
        return _BY_KIND[(resolution.hub, kind)]
    return None


def _dec_hook(tp: type, obj: Any) -> Any:
    if tp is Quantity:
        if isinstance(obj, bool):
            raise TypeError("quantities must be strings or numbers")
        if isinstance(obj, int):
            return parse_quantity(str(obj))
        if isinstance(obj, float):
            return parse_quantity(repr(obj).replace("inf", "x"))
        if isinstance(obj, str):
            try:
                return parse_quantity(obj)
            except QuantityError as exc:
                raise ValueError(str(exc)) from None
        raise TypeError(f"Expected `quantity`, got `{type(obj).__name__}`")
    raise NotImplementedError(f"cannot decode {tp!r}")


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, Quantity):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj)!r}")


def fingerprint(value: Any) -> bytes:
    """A compact encoding of a typed value (an object or part of one, e.g. a pod's
    spec): equal values give equal bytes, so it can key a cache by content."""
    return msgspec.msgpack.encode(value, enc_hook=_enc_hook)


_PATH_RE = re.compile(r" - at `\$(.*)`$")


def _msgspec_path(err: msgspec.ValidationError) -> tuple[str, str]:
    text = str(err)
    match = _PATH_RE.search(text)
    if match is None:
        return "", text
    path = match.group(1).lstrip(".")
    return path, text[: match.start()]


def decode(data: Mapping[str, Any]) -> KubeObject:
    """Decode one document into its v1 (hub) kind, converting older served versions.

    Raise DecodeError with the field path on type mismatches, and without one for
    a document that has no apiVersion or kind or whose version Kubernetes 1.37
    does not serve (kubectl's ``no matches for kind`` wording and a hint).
    """
    if not isinstance(data, Mapping):
        raise DecodeError("", f"a document must be a mapping, not {type(data).__name__}")
    api_version = data.get("apiVersion")
    kind = data.get("kind")
    if not isinstance(api_version, str) or not api_version:
        raise DecodeError("", missing_api_version(kind, HUBS))
    if not isinstance(kind, str) or not kind:
        raise DecodeError("", "has no kind")
    resolution = resolve_kind(api_version, kind)
    if resolution.served is Served.NOT_SERVED:
        raise DecodeError("", resolution.message)
    if resolution.served is Served.CONVERT:
        data = to_v1(data)
        api_version = resolution.hub
    cls = _BY_KIND.get((api_version, kind), UnknownObject)
    if cls is UnknownObject:
        payload: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "__raw__": data}
        if "metadata" in data:
            payload["metadata"] = data["metadata"]
    else:
        payload = dict(data)
        payload["__raw__"] = data
    try:
        return msgspec.convert(payload, cls, dec_hook=_dec_hook)
    except msgspec.ValidationError as err:
        first = err
    # JSON null is "unset" to the API server; the typed model only takes it where a field is
    # optional. Rewriting nulls costs a walk of the document, so only inputs that failed pay.
    unset = _unset_nulls(payload, _struct_type(cls))
    if unset is not payload:
        try:
            return msgspec.convert(unset, cls, dec_hook=_dec_hook)
        except msgspec.ValidationError as err:
            first = err
    path, message = _msgspec_path(first)
    raise DecodeError(path, message) from None


# --- JSON null ---------------------------------------------------------------------

def nulls_as_unset(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A v1 document of a modelled kind as the API server reads its JSON nulls.

    Go's decoder leaves a null field unset and a null map value or list item at its
    zero value (``labels: {a: null}`` is the label ``a: ""``, ``requests: [null]`` an
    empty request). Validators see the document this way so that they judge what the
    API server would store. Documents of other kinds come back unchanged.
    """
    api_version, kind = data.get("apiVersion"), data.get("kind")
    cls = _BY_KIND.get((api_version, kind)) if isinstance(api_version, str) \
        and isinstance(kind, str) else None
    if cls is None or not isinstance(data, dict) or not _may_hold_null(data):
        return data
    out: Mapping[str, Any] = _unset_nulls(data, _struct_type(cls))
    return out


def _may_hold_null(data: Mapping[str, Any]) -> bool:
    """False only if ``data`` surely holds no null: its JSON (written in C, 5x faster than
    walking the document in Python) has no ``null`` token. A string containing "null", or
    data JSON cannot hold, answers True."""
    try:
        return b"null" in msgspec.json.encode(data)
    except (TypeError, ValueError, OverflowError):
        return True


def _accepts_none(t: mi.Type) -> bool:
    return isinstance(t, mi.NoneType | mi.AnyType) or (
        isinstance(t, mi.UnionType) and any(isinstance(m, mi.NoneType) for m in t.types))


def _shaped(t: mi.Type, value: Any) -> mi.Type:
    """The member of a union that ``value`` would decode as (maps and lists only)."""
    if not isinstance(t, mi.UnionType):
        return t
    for member in t.types:
        if isinstance(value, dict) and isinstance(member, mi.StructType | mi.DictType):
            return member
        if isinstance(value, list) and isinstance(member, mi.ListType):
            return member
    return t


def _zero(t: mi.Type) -> Any:
    """What Go's JSON decoder leaves in a map entry or list item that is null: the element
    type's zero value (a nil pointer for optional types; quantities are 0)."""
    if _accepts_none(t):
        return None
    if isinstance(t, mi.StructType | mi.DictType):
        return {}
    if isinstance(t, mi.ListType):
        return []
    if isinstance(t, mi.StrType):
        return ""
    if isinstance(t, mi.BoolType):
        return False
    if isinstance(t, mi.IntType | mi.FloatType) or (
            isinstance(t, mi.CustomType) and t.cls is Quantity):
        return 0
    return None  # no zero value dralab models (enums, literals): left for decoding to report


def _unset_nulls(value: Any, t: mi.Type) -> Any:
    """``value`` with JSON nulls read as the API server reads them (Go's encoding/json):
    a null field is unset (dropped, so that its default applies), a null map value or list
    item is its type's zero value. Parts dralab does not model (``Any``) are left as
    written. Returns ``value`` itself when nothing changed, a copy of the changed parts
    otherwise."""
    t = _shaped(t, value)
    if isinstance(t, mi.StructType) and isinstance(value, dict):
        fields = _fields_of(t.cls)
        out: dict[str, Any] = {}
        changed = False
        for name, item in value.items():
            field_type = fields.get(name)
            if field_type is None:
                out[name] = item  # unknown to the model: decoding ignores it
            elif item is None:
                changed = True  # unset: every optional field of the model defaults to None
            else:
                new = _unset_nulls(item, field_type)
                changed = changed or new is not item
                out[name] = new
        return out if changed else value
    if isinstance(t, mi.DictType) and isinstance(value, dict) \
            and not isinstance(t.value_type, mi.AnyType):
        items = {k: _zero(t.value_type) if v is None else _unset_nulls(v, t.value_type)
                 for k, v in value.items()}
        return items if any(items[k] is not v for k, v in value.items()) else value
    if isinstance(t, mi.ListType) and isinstance(value, list):
        elems = [_zero(t.item_type) if v is None else _unset_nulls(v, t.item_type)
                 for v in value]
        return elems if any(a is not b for a, b in zip(elems, value, strict=True)) else value
    return value


# --- encoding ------------------------------------------------------------------

@cache
def _struct_type(cls: type) -> mi.StructType:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    return info


@cache
def _fields_of(cls: type) -> dict[str, mi.Type]:
    """Wire name -> declared type of every field of a Struct class."""
    return {f.encode_name: f.type for f in _struct_type(cls).fields}


def _unwrap(t: mi.Type) -> mi.Type:
    if isinstance(t, mi.UnionType):
        for member in t.types:
            if not isinstance(member, mi.NoneType):
                return member
    return t


def _is_empty(value: Any) -> bool:
    return value is None or value is False or value in ([], {}, "", 0)


def _merge(typed: Any, raw: Any, declared: mi.Type) -> Any:
    t = _unwrap(declared)
    if isinstance(t, mi.StructType) and isinstance(typed, dict) and isinstance(raw, dict):
        fields = _fields_of(t.cls)
        out: dict[str, Any] = {}
        for key, raw_value in raw.items():
            if key in typed:
                field_type = fields.get(key)
                out[key] = typed[key] if field_type is None else _merge(
                    typed[key], raw_value, field_type)
            elif key not in fields or _is_empty(raw_value):
                # Unknown to dralab, or a known field left at its default: keep as written.
                out[key] = raw_value
            # else: a known field the typed object cleared -> dropped.
        for key, typed_value in typed.items():
            if key not in out:
                out[key] = typed_value
        return out
    if isinstance(t, mi.ListType) and isinstance(typed, list) and isinstance(raw, list) \
            and len(typed) == len(raw):
        return [_merge(a, b, t.item_type) for a, b in zip(typed, raw, strict=True)]
    if isinstance(t, mi.DictType) and isinstance(typed, dict) and isinstance(raw, dict):
        return {k: (_merge(v, raw[k], t.value_type) if k in raw else v)
                for k, v in typed.items()}
    return typed


def encode(obj: KubeObject) -> dict[str, Any]:
    """Plain data for ``obj`` (camelCase keys, canonical quantities), raw document preserved."""
    if isinstance(obj, UnknownObject) and obj.raw is not None:
        return dict(obj.raw)
    typed: dict[str, Any] = msgspec.to_builtins(obj, enc_hook=_enc_hook)
    typed.pop("__raw__", None)
    typed["apiVersion"] = obj.api_version or type(obj).API_VERSION
    typed["kind"] = obj.kind or type(obj).KIND
    if isinstance(obj, ResourceClaim):
        # Go encodes the claim's status struct even when empty: the API server returns a
        # claim nobody allocated yet with ``status: {}`` (k8s.io/api resource/v1 types.go,
        # ``Status ResourceClaimStatus `json:"status,omitempty"```; omitempty keeps structs).
        typed.setdefault("status", {})
    if obj.raw is None:
        head = {"apiVersion": typed.pop("apiVersion"), "kind": typed.pop("kind")}
        return head | typed
    merged: dict[str, Any] = _merge(typed, obj.raw, _struct_type(type(obj)))
    return merged
