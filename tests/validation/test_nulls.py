"""JSON/YAML ``null`` is read as the API server reads it, for every kind.

The API server decodes JSON with Go's encoding/json rules: a field that is ``null`` is
left unset (nil pointer, slice or map; zero value otherwise), so its default applies as if
the field were absent; a ``null`` map value or list item becomes the element type's zero
value (``labels: {a: null}`` stores the label ``a: ""``). Go templates render an unset
value as ``null`` (scheduler_perf's ``{{ .Constraints | JSON }}``), and YAML writes
``key:`` with nothing after it as null, so real manifests carry nulls. dralab used to
refuse them with 'Expected `array`, got `null`'.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec
import pytest

from dralab.api.codec import DecodeError, decode
from dralab.api.core import Node, Pod
from dralab.api.resource import ResourceClaim, ResourceClaimTemplate, ResourceSlice
from dralab.api.versions import to_v1
from dralab.validation import validate_object

from .builders import BUILDERS, DELETE, edit

Doc = dict[str, Any]

# Fields whose value is a map with free keys: setting one of *its* entries to null is a
# null map value (zero value), not an unset field.
_MAP_FIELDS = frozenset({"labels", "annotations", "nodeSelector", "attributes", "capacity",
                         "allocatable", "limits", "requests", "matchLabels", "counters"})
# Parts dralab carries as written without a typed model (opaque `parameters`, conditions,
# workloads' label selectors and pod-template metadata): nothing to compare there.
_OPAQUE_FIELDS = frozenset({"parameters", "conditions", "networkData", "selector"})
_TEMPLATES = frozenset({"template", "jobTemplate"})


def _outcome(doc: Doc) -> tuple[list[str], Any]:
    """What dralab makes of ``doc``: its validation errors and its decoded content."""
    errors = sorted(str(e) for e in validate_object(doc))
    try:
        typed = msgspec.to_builtins(decode(doc), enc_hook=str)
    except DecodeError as exc:
        return errors, f"DecodeError: {exc}"
    typed.pop("__raw__", None)
    return errors, typed


def _field_paths(node: Any, prefix: str = "", parent: str = "") -> list[str]:
    """Paths (builders' notation) of every field of a struct inside ``node``."""
    out: list[str] = []
    if isinstance(node, dict):
        for name, value in node.items():
            path = (f"{prefix}[{name}]" if parent in _MAP_FIELDS
                    else f"{prefix}.{name}" if prefix else name)
            if parent not in _MAP_FIELDS and name not in ("apiVersion", "kind"):
                out.append(path)
            if name not in _OPAQUE_FIELDS and not (name == "metadata" and parent in _TEMPLATES):
                out.extend(_field_paths(value, path, name))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out.extend(_field_paths(value, f"{prefix}[{i}]", ""))
    return out


FIELDS = {kind: _field_paths(build()) for kind, build in sorted(BUILDERS.items())}


@pytest.mark.parametrize("kind", sorted(FIELDS))
def test_a_null_field_is_the_field_left_out(kind: str) -> None:
    # Go: a null field is not set. Same validation errors, same decoded object, for every
    # field of a valid object of each kind (required fields included: null there is
    # "Required value" exactly like a missing field).
    doc = BUILDERS[kind]()
    assert len(FIELDS[kind]) >= 3
    differ = [path for path in FIELDS[kind]
              if _outcome(edit(copy.deepcopy(doc), path, None))
              != _outcome(edit(copy.deepcopy(doc), path, DELETE))]
    assert differ == []


# scheduler_perf's resourceclaimtemplate.yaml rendered with its workloads' defaults
# (`constraints: {{ .Constraints | JSON }}` with no constraints gives `null`).
PERF_TEMPLATE: Doc = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "test-claim-template", "namespace": "test"},
    "spec": {"spec": {"devices": {
        "constraints": None,
        "requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class",
                                                    "selectors": None}}]}}},
}


@pytest.mark.parametrize(("doc", "check"), [
    pytest.param(PERF_TEMPLATE, lambda o: isinstance(o, ResourceClaimTemplate)
                 and o.spec.spec.devices.constraints == []
                 and o.spec.spec.devices.requests[0].exactly is not None
                 and o.spec.spec.devices.requests[0].exactly.selectors == [],
                 id="scheduler_perf template"),
    pytest.param({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "p", "labels": None, "annotations": None},
                  "spec": {"containers": [{"name": "c", "image": "i",
                                           "resources": {"claims": None, "limits": None}}],
                           "tolerations": None, "nodeSelector": None,
                           "resourceClaims": None, "schedulingGates": None}},
                 lambda o: isinstance(o, Pod) and o.metadata.labels == {}
                 and o.spec.tolerations == [], id="pod"),
    pytest.param({"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": "n", "labels": None}, "spec": {"taints": None},
                  "status": None},
                 lambda o: isinstance(o, Node) and o.spec.taints == [], id="node"),
    pytest.param({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                  "metadata": {"name": "s"},
                  "spec": {"driver": "gpu.example.com", "nodeName": "n", "sharedCounters": None,
                           "pool": {"name": "n", "generation": 0, "resourceSliceCount": 1},
                           "devices": [{"name": "gpu-0", "attributes": None, "capacity": None,
                                        "consumesCounters": None, "taints": None}]}},
                 lambda o: isinstance(o, ResourceSlice)
                 and o.spec.devices[0].attributes == {}, id="slice"),
    pytest.param({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
                  "metadata": {"name": "c"},
                  "spec": {"devices": {"constraints": None, "config": None, "requests": [
                      {"name": "gpu", "deviceClassName": "gpu.example.com",
                       "selectors": None, "allocationMode": None}]}}},
                 lambda o: isinstance(o, ResourceClaim)
                 and o.spec.devices.requests[0].exactly is not None
                 and o.spec.devices.requests[0].exactly.device_class_name == "gpu.example.com",
                 id="v1beta1 claim, flat request"),
    pytest.param({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice",
                  "metadata": {"name": "s"},
                  "spec": {"driver": "gpu.example.com", "nodeName": "n",
                           "pool": {"name": "n", "generation": 0, "resourceSliceCount": 1},
                           "devices": [{"name": "gpu-0", "basic": None},
                                       {"name": "gpu-1", "basic": {"attributes": None}}]}},
                 lambda o: isinstance(o, ResourceSlice) and len(o.spec.devices) == 2,
                 id="v1beta1 slice, basic: null"),
])
def test_null_optional_fields_are_valid_and_decode_as_unset(doc: Doc, check: Any) -> None:
    original = copy.deepcopy(doc)
    assert validate_object(doc) == []
    obj = decode(doc)
    assert check(obj), obj
    assert doc == original  # inputs are never modified
    assert obj.raw == to_v1(original)  # kept as written (older versions: in their v1 form)


@pytest.mark.parametrize(("doc", "path", "value"), [
    # Go: a null map value is the value type's zero value.
    ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": None}},
      "spec": {"containers": [{"name": "c", "image": "i"}]}}, ("metadata", "labels"),
     {"a": ""}),
    ({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
      "status": {"allocatable": {"pods": None, "cpu": "4"}}}, ("status", "allocatable", "pods"),
     "0"),
])
def test_null_map_values_are_zero_values(doc: Doc, path: tuple[str, ...], value: Any) -> None:
    assert validate_object(doc) == []
    node: Any = msgspec.to_builtins(decode(doc), enc_hook=str)
    for step in path:
        node = node[step]
    assert node == value


@pytest.mark.parametrize(("doc", "errors"), [
    # A null list item is a zero-value item, which the API server then validates.
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
      "spec": {"devices": {"requests": [None]}}},
     ["spec.devices.requests[0].name: Required value",
      "spec.devices.requests[0]: Required value: exactly one of `exactly` or "
      "`firstAvailable` is required"]),
    # A null attribute value is an attribute without a value.
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
      "spec": {"driver": "gpu.example.com", "nodeName": "n",
               "pool": {"name": "n", "generation": 0, "resourceSliceCount": 1},
               "devices": [{"name": "gpu-0", "attributes": {"model": None}}]}},
     ['spec.devices[0].attributes[model]: Invalid value: "": exactly one value must be '
      'specified']),
    # A required field that is null is missing (v1beta1 paths kept).
    ({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
      "metadata": {"name": "c"},
      "spec": {"devices": {"requests": [{"name": None, "deviceClassName": "x"}]}}},
     ["spec.devices.requests[0].name: Required value"]),
])
def test_null_items_and_required_fields_are_validated_as_zero_values(
        doc: Doc, errors: list[str]) -> None:
    assert [str(e) for e in validate_object(doc)] == errors
