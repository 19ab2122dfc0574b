"""Unknown fields as the API server's strict decoding names them (``fieldValidation=Strict``).

kubectl asks for strict field validation by default (``--validate=strict``), so a
field the API does not have rejects the whole request before any validation runs:
``ResourceClaim in version "v1" cannot be handled as a ResourceClaim: strict decoding
error: unknown field "spec.devices.requests[0].exactly.selectors[0].expression"``.
The decoder (sigs.k8s.io/json) names each unknown field by its path, struct fields
and map keys joined with ``.``, list items as ``[i]``; it lists them in document
order, each once, at most 100, quoted as Go's ``%q`` does.

The known fields come from dralab's resource.k8s.io/v1 structs (1.37's fields), plus
the parts of ObjectMeta, metav1.Condition and NetworkDeviceData that dralab keeps as
plain data. resource.k8s.io/v1 and v1beta2 documents are checked (the same fields);
v1beta1 has a layout of its own, which dralab reads by converting it, and is not.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any, Final

import msgspec.inspect as mi

from dralab.api import resource
from dralab.api.errors import go_quote

__all__ = ["STRICT_KINDS", "strict_decoding_message", "unknown_fields"]

# v1beta2 has v1's layout and fields (new fields go into every served version); v1beta1 has
# its own layout (request fields directly on the request, device fields under `basic`).
_SAME_FIELDS: Final = frozenset({"resource.k8s.io/v1", "resource.k8s.io/v1beta2"})
STRICT_KINDS: Final = frozenset({"DeviceClass", "ResourceClaim", "ResourceClaimTemplate",
                                 "ResourceSlice", "DeviceTaintRule"})
_MAX_ERRORS: Final = 100  # the decoder stops collecting there

# A node of the schema: the fields of a struct (name -> node), a list or map of nodes, or
# None for free-form data (opaque parameters, quantities, strings, ...).
_Schema = dict[str, Any] | tuple[str, Any] | None

# Fields dralab keeps as plain data, as the API defines them (apimachinery meta/v1 types.go,
# api/resource/v1 types.go). managedFields entries hold free-form fieldsV1.
_OBJECT_META: Final = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
                       "generation", "creationTimestamp", "deletionTimestamp",
                       "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
                       "finalizers", "managedFields")
_CONDITION: Final[dict[str, Any]] = dict.fromkeys(
    ("type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"))
_NETWORK_DATA: Final[dict[str, Any]] = dict.fromkeys(("interfaceName", "ips", "hardwareAddress"))
# Where the struct says "plain data" but the API has a type: (struct, wire field) -> schema.
_PLAIN: Final[Mapping[tuple[str, str], _Schema]] = {
    ("AllocatedDeviceStatus", "conditions"): ("list", _CONDITION),
    ("AllocatedDeviceStatus", "networkData"): _NETWORK_DATA,
    ("DeviceTaintRuleStatus", "conditions"): ("list", _CONDITION),
}


def _schema_of(info: mi.Type, seen: dict[type, dict[str, Any]]) -> _Schema:
    if isinstance(info, mi.StructType):
        if info.cls in seen:
            return seen[info.cls]
        fields: dict[str, Any] = {}
        seen[info.cls] = fields
        for field in info.fields:
            if field.encode_name == "__raw__":
                continue
            plain = _PLAIN.get((info.cls.__name__, field.encode_name), False)
            fields[field.encode_name] = (plain if plain is not False
                                         else _schema_of(field.type, seen))
        if info.cls.__name__ == "ObjectMeta":
            for name in _OBJECT_META:
                fields.setdefault(name, None)
        return fields
    if isinstance(info, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
        item = _schema_of(info.item_type, seen)
        return None if item is None else ("list", item)
    if isinstance(info, mi.DictType):
        value = _schema_of(info.value_type, seen)
        return None if value is None else ("map", value)
    if isinstance(info, mi.UnionType):
        for option in info.types:
            found = _schema_of(option, seen)
            if found is not None:
                return found
    return None


@functools.cache
def _schema(kind: str) -> _Schema:
    return _schema_of(mi.type_info(getattr(resource, kind)), {})


def _walk(value: Any, schema: _Schema, strict_path: str,
          field_path: str) -> Iterator[tuple[str, str]]:
    if schema is None:
        return
    if isinstance(schema, tuple):
        shape, item = schema
        if shape == "list" and isinstance(value, list):
            for i, entry in enumerate(value):
                yield from _walk(entry, item, f"{strict_path}[{i}]", f"{field_path}[{i}]")
        elif shape == "map" and isinstance(value, Mapping):
            for key, entry in value.items():
                yield from _walk(entry, item, _join(strict_path, str(key)),
                                 f"{field_path}[{key}]")
        return
    if not isinstance(value, Mapping):
        return  # a wrong type is a decoding error of its own, reported elsewhere
    for key, entry in value.items():
        name = str(key)
        strict = _join(strict_path, name)
        path = _join(field_path, name)
        if name not in schema:  # the decoder is case-sensitive
            yield strict, path
        else:
            yield from _walk(entry, schema[name], strict, path)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def unknown_fields(obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(decoder path, field path)`` of each field of a resource.k8s.io/v1(beta2) DRA object that
    the API does not have, in document order, each once, at most 100; [] for other kinds."""
    kind = obj.get("kind")
    if obj.get("apiVersion") not in _SAME_FIELDS or kind not in STRICT_KINDS:
        return []
    out: list[tuple[str, str]] = []
    for found in _walk(obj, _schema(str(kind)), "", ""):
        if found not in out:
            out.append(found)
            if len(out) == _MAX_ERRORS:
                break
    return out


def strict_decoding_message(kind: str, api_version: str, strict_paths: list[str]) -> str:
    """The API server's whole-request answer to unknown fields under strict validation."""
    version = api_version.rpartition("/")[2]
    fields = ", ".join(f"unknown field {go_quote(p)}" for p in strict_paths)
    return (f"{kind} in version {go_quote(version)} cannot be handled as a {kind}: "
            f"strict decoding error: {fields}")
