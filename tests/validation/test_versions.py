"""Validation of older served versions: v1 rules, each version's own field paths.

Every case seeds the same mistake into the v1, v1beta2 and v1beta1 form of one
valid object and names, literally, the path the error must carry in each. The
v1beta1 forms are written out by hand (not produced by the converter) so that
the layout and the path mapping are both checked against the API's shape.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from dralab.api.errors import ErrorType as E
from dralab.api.versions import from_v1
from dralab.validation import validate_object

from .builders import BUILDERS, DELETE, DRIVER, Doc, edit

V1BETA1 = "resource.k8s.io/v1beta1"
V1BETA2 = "resource.k8s.io/v1beta2"


def beta_claim() -> Doc:
    """builders.claim() in the v1beta1 layout."""
    return {
        "apiVersion": V1BETA1,
        "kind": "ResourceClaim",
        "metadata": {"name": "training", "namespace": "team-a"},
        "spec": {"devices": {
            "requests": [
                {"name": "gpu", "deviceClassName": "gpu.nvidia.com",
                 "selectors": [{"cel": {"expression":
                                        'device.attributes["gpu.nvidia.com"].type == "gpu"'}}],
                 "count": 2},
                {"name": "mig", "firstAvailable": [
                    {"name": "big", "deviceClassName": "mig.nvidia.com"},
                    {"name": "small", "deviceClassName": "mig.nvidia.com", "count": 2},
                ]},
            ],
            "constraints": [{"requests": ["gpu"],
                             "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
            "config": [{"requests": ["gpu"], "opaque": {
                "driver": DRIVER,
                "parameters": {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"},
            }}],
        }},
    }


def beta_template() -> Doc:
    return {
        "apiVersion": V1BETA1,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "team-a"},
        "spec": {"metadata": {"labels": {"app": "trainer"}},
                 "spec": {"devices": {"requests": [
                     {"name": "gpu", "deviceClassName": "gpu.nvidia.com"}]}}},
    }


def _beta_gpu(name: str, minor: int) -> Doc:
    return {"name": name, "basic": {
        "attributes": {
            "productName": {"string": "NVIDIA H100 80GB HBM3"},
            "driverVersion": {"version": "580.105.8"},
            "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{minor:02x}"},
            "index": {"int": minor},
            "type": {"string": "gpu"},
        },
        "capacity": {"memory": {"value": "81559Mi"}},
    }}


def beta_slice() -> Doc:
    return {
        "apiVersion": V1BETA1,
        "kind": "ResourceSlice",
        "metadata": {"name": "node-1-gpu.nvidia.com-x7k2p"},
        "spec": {"driver": DRIVER, "nodeName": "node-1",
                 "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                 "devices": [_beta_gpu("gpu-0", 0), _beta_gpu("gpu-1", 1)]},
    }


BETA = {"claim": beta_claim, "template": beta_template, "slice": beta_slice}


def test_hand_written_v1beta1_forms_match_the_builders_and_are_valid() -> None:
    for name, build in BETA.items():
        assert from_v1(BUILDERS[name](), V1BETA1) == build()
        assert validate_object(build()) == []
        assert validate_object({**BUILDERS[name](), "apiVersion": V1BETA2}) == []


@dataclass(frozen=True)
class Case:
    id: str
    base: str
    v1_path: str         # where to seed the mistake in v1 / v1beta2 (and the error path)
    beta_path: str       # the same field in v1beta1
    value: Any
    error: E
    v1_error: str = ""   # error path when it differs from the seeded field
    beta_error: str = ""


R0 = "spec.devices.requests[0]"
CASES = [
    Case("count", "claim", f"{R0}.exactly.count", f"{R0}.count", -1, E.INVALID),
    Case("class-name", "claim", f"{R0}.exactly.deviceClassName", f"{R0}.deviceClassName",
         "GPU_Class", E.INVALID),
    Case("class-required", "claim", f"{R0}.exactly.deviceClassName", f"{R0}.deviceClassName",
         "", E.REQUIRED),
    Case("cel", "claim", f"{R0}.exactly.selectors[0].cel.expression",
         f"{R0}.selectors[0].cel.expression", "device.attributes[", E.INVALID),
    Case("mode", "claim", f"{R0}.exactly.allocationMode", f"{R0}.allocationMode", "Some",
         E.NOT_SUPPORTED),
    Case("toleration", "claim", f"{R0}.exactly.tolerations",
         f"{R0}.tolerations", [{"key": "a", "operator": "Sometimes"}], E.NOT_SUPPORTED,
         f"{R0}.exactly.tolerations[0].operator", f"{R0}.tolerations[0].operator"),
    Case("capacity", "claim", f"{R0}.exactly.capacity", f"{R0}.capacity",
         {"requests": {"memory": "lots"}}, E.INVALID,
         f"{R0}.exactly.capacity.requests[memory]", f"{R0}.capacity.requests[memory]"),
    Case("subrequest", "claim", "spec.devices.requests[1].firstAvailable[1].count",
         "spec.devices.requests[1].firstAvailable[1].count", -3, E.INVALID),
    Case("request-name", "claim", "spec.devices.requests[1].name",
         "spec.devices.requests[1].name", "MIG", E.INVALID),
    Case("constraint", "claim", "spec.devices.constraints[0].requests",
         "spec.devices.constraints[0].requests", ["tpu"], E.INVALID,
         "spec.devices.constraints[0].requests[0]", "spec.devices.constraints[0].requests[0]"),
    Case("template-count", "template", "spec.spec.devices.requests[0].exactly.count",
         "spec.spec.devices.requests[0].count", 0.5, E.TYPE_INVALID),
    Case("attribute", "slice", "spec.devices[1].attributes[index]",
         "spec.devices[1].basic.attributes[index]", {"int": 1, "bool": True}, E.INVALID),
    Case("capacity-value", "slice", "spec.devices[0].capacity[memory].value",
         "spec.devices[0].basic.capacity[memory].value", "forty", E.INVALID),
    Case("device-taint", "slice", "spec.devices[0].taints",
         "spec.devices[0].basic.taints", [{"key": "k", "effect": "Sometimes"}], E.NOT_SUPPORTED,
         "spec.devices[0].taints[0].effect", "spec.devices[0].basic.taints[0].effect"),
    Case("device-name", "slice", "spec.devices[0].name", "spec.devices[0].name", "GPU-0",
         E.INVALID),
    Case("pool", "slice", "spec.pool.resourceSliceCount", "spec.pool.resourceSliceCount", 0,
         E.INVALID),
]


def _seeded(case: Case, version: str) -> list[tuple[str, E]]:
    if version == V1BETA1:
        doc = edit(BETA[case.base](), case.beta_path, case.value)
    else:
        doc = edit({**BUILDERS[case.base](), "apiVersion": version}, case.v1_path, case.value)
    return [(e.path, e.type) for e in validate_object(doc)]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_same_mistake_same_error_in_each_version_own_path(case: Case) -> None:
    v1_error = case.v1_error or case.v1_path
    assert _seeded(case, "resource.k8s.io/v1") == [(v1_error, case.error)]
    assert _seeded(case, V1BETA2) == [(v1_error, case.error)]
    assert _seeded(case, V1BETA1) == [(case.beta_error or case.beta_path, case.error)]


def test_request_without_class_or_alternatives_says_so_in_each_layout() -> None:
    v1 = edit(BUILDERS["claim"](), f"{R0}.exactly", DELETE)
    (error,) = validate_object(v1)
    assert (error.path, error.type) == (R0, E.REQUIRED)
    assert "`exactly` or `firstAvailable`" in error.detail
    beta = beta_claim()
    beta["spec"]["devices"]["requests"][0] = {"name": "gpu"}
    (error,) = validate_object(beta)
    assert (error.path, error.type) == (R0, E.REQUIRED)
    assert "`deviceClassName` or `firstAvailable`" in error.detail


def test_v1beta1_unset_node_name_is_unset_not_empty() -> None:
    # v1: "" is a set, invalid node name. v1beta1: "" is how an unset nodeName reads.
    v1 = edit(BUILDERS["slice"](), "spec.nodeName", "")
    assert [(e.path, e.type) for e in validate_object(v1)] == [
        ("spec.nodeName", E.INVALID), ("spec", E.REQUIRED)]
    beta = edit(beta_slice(), "spec.nodeName", "")
    assert [(e.path, e.type) for e in validate_object(beta)] == [("spec", E.REQUIRED)]
    beta = edit(beta_slice(), "spec.allNodes", False)
    assert validate_object(beta) == []


@pytest.mark.parametrize(("doc", "path"), [
    (edit(beta_claim(), f"{R0}.exactly", {"deviceClassName": "gpu.nvidia.com"}),
     f"{R0}.exactly"),
    (edit(beta_template(), "spec.spec.devices.requests[0].exactly", {"count": 1}),
     "spec.spec.devices.requests[0].exactly"),
    (edit(beta_slice(), "spec.devices[0].attributes", {"a": {"int": 1}}),
     "spec.devices[0].attributes"),
    (edit(beta_slice(), "spec.devices[1].allowMultipleAllocations", True),
     "spec.devices[1].allowMultipleAllocations"),
    (edit(BUILDERS["slice"](), "spec.devices[0].basic", {"attributes": {}}),
     "spec.devices[0].basic"),
    (edit(BUILDERS["claim"](), f"{R0}.count", 1), f"{R0}.count"),
])
def test_fields_of_the_other_layout_are_forbidden(doc: Doc, path: str) -> None:
    errors = validate_object(doc)
    assert [(e.path, e.type) for e in errors] == [(path, E.FORBIDDEN)]
    assert errors[0].detail.startswith(f"not a field of a {doc['apiVersion']} ")


def test_basic_that_is_not_an_object() -> None:
    doc = edit(beta_slice(), "spec.devices[0].basic", ["attributes"])
    assert [(e.path, e.type) for e in validate_object(doc)] == [
        ("spec.devices[0].basic", E.TYPE_INVALID)]


def test_v1beta1_has_no_device_taint_rules() -> None:
    (error,) = validate_object({**BUILDERS["rule"](), "apiVersion": V1BETA1})
    assert (error.path, error.type) == ("apiVersion", E.NOT_SUPPORTED)
    assert "DeviceTaintRule is served as resource.k8s.io/v1" in error.detail


def test_v1beta1_class_is_checked() -> None:
    doc = edit({**BUILDERS["class"](), "apiVersion": V1BETA1}, "spec.selectors[0].cel", {})
    assert [(e.path, e.type) for e in validate_object(doc)] == [
        ("spec.selectors[0].cel.expression", E.REQUIRED)]


# removed fields ---------------------------------------------------------------------------
REMOVED = [
    ("pod", "spec.resourceClaims[0].source", {"resourceClaimTemplateName": "one-gpu"},
     "field removed in Kubernetes 1.31; use resourceClaimName or resourceClaimTemplateName "
     "directly"),
    ("job", "spec.template.spec.resourceClaims[0].source", {"resourceClaimName": "c"},
     "removed in Kubernetes 1.31"),
    ("claim", "spec.resourceClassName", "gpu.nvidia.com",
     "removed in Kubernetes 1.31; request devices in devices.requests"),
    ("template", "spec.spec.parametersRef", {"kind": "GpuClaimParameters", "name": "p"},
     "put vendor parameters in devices.config[].opaque"),
    ("claim", "spec.allocationMode", "WaitForFirstConsumer", "classic DRA"),
    ("claim", "spec.controller", "gpu.nvidia.com", "removed in Kubernetes 1.32"),
    ("class", "driverName", "gpu.nvidia.com", "device.driver =="),
    ("class", "spec.suitableNodes", {"nodeSelectorTerms": []}, "removed in Kubernetes 1.32"),
    ("rule", "spec.deviceSelector.deviceClassName", "gpu.nvidia.com",
     "removed in Kubernetes 1.35; select devices by driver, pool and device"),
    ("rule", "spec.deviceSelector.selectors", [], "removed in Kubernetes 1.35"),
]


@pytest.mark.parametrize(("base", "path", "value", "advice"), REMOVED,
                         ids=[f"{b}:{p}" for b, p, _, _ in REMOVED])
def test_removed_fields_name_their_replacement(base: str, path: str, value: Any,
                                               advice: str) -> None:
    doc = BUILDERS[base]()
    if path.endswith(".source"):  # the pre-1.31 form instead of the current one
        claims = path.removesuffix("[0].source")
        edit(doc, claims, [{"name": "gpu", "source": value}])
        edit(doc, claims.replace("resourceClaims", "containers[0].resources.claims"),
             [{"name": "gpu"}])
    else:
        edit(doc, path, value)
    errors = validate_object(doc)
    assert [(e.path, e.type) for e in errors] == [(path, E.FORBIDDEN)]
    assert advice in errors[0].detail


def test_removed_fields_are_reported_in_v1beta1_paths_too() -> None:
    doc = copy.deepcopy(beta_claim())
    doc["spec"]["resourceClassName"] = "gpu.nvidia.com"
    assert [(e.path, e.type) for e in validate_object(doc)] == [
        ("spec.resourceClassName", E.FORBIDDEN)]


def test_layout_errors_name_the_version_written() -> None:
    doc = edit({**BUILDERS["claim"](), "apiVersion": V1BETA2}, f"{R0}.count", 1)
    (error,) = validate_object(doc)
    assert (error.path, error.type) == (f"{R0}.count", E.FORBIDDEN)
    assert error.detail.startswith("not a field of a resource.k8s.io/v1beta2 DeviceRequest")
