"""Whole-object behaviour: the composed examples, accepted variants, order, CEL, dispatch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dralab.api.errors import ErrorType, FieldError
from dralab.api.features import FeatureGates
from dralab.validation import SUPPORTED_KINDS, validate_object

from .builders import BUILDERS, DELETE, edit, get, mig, shared_gpu

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "examples"
SELECTOR = "spec.devices.requests[0].exactly.selectors[0].cel.expression"


def _example_documents() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        with path.open() as f:
            for n, doc in enumerate(yaml.safe_load_all(f), start=1):
                if doc is not None:
                    out.append((f"{path.name}#{n}", doc))
    return out


def test_all_three_examples_are_present() -> None:
    names = {p.name for p in EXAMPLES.glob("*.yaml")}
    assert names == {"a100-dynamic-mig-node.resourceslices.yaml",
                     "h100-8gpu-node.resourceslice.yaml", "l4-4gpu-node.resourceslice.yaml"}


@pytest.mark.parametrize(("where", "doc"), _example_documents(), ids=lambda v: str(v)[:60])
def test_examples_are_valid(where: str, doc: dict[str, Any]) -> None:
    assert validate_object(doc) == [], where


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_builders_are_valid(name: str) -> None:
    assert validate_object(BUILDERS[name]()) == []


ACCEPTED: list[tuple[str, str, list[tuple[str, Any]]]] = [
    ("generate-name-only", "slice", [("metadata.name", DELETE),
                                     ("metadata.generateName", "node-1-gpu.nvidia.com-")]),
    ("quantities-as-numbers", "slice", [("spec.devices[0].capacity.memory.value", 80),
                                        ("spec.devices[1].capacity.memory.value", 0.5)]),
    ("all-nodes", "slice", [("spec.nodeName", DELETE), ("spec.allNodes", True)]),
    ("node-selector-one-term", "slice", [
        ("spec.nodeName", DELETE),
        ("spec.nodeSelector", {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}]})]),
    ("per-device-selection", "slice", [
        ("spec.nodeName", DELETE), ("spec.perDeviceNodeSelection", True),
        ("spec.devices[0].nodeName", "node-1"), ("spec.devices[1].allNodes", True)]),
    ("mig-devices-with-counters", "slice", [("spec.devices", [mig("m-0"), mig("m-1")])]),
    ("shared-device", "slice", [("spec.devices[0]", shared_gpu())]),
    ("valid-values-policy", "slice", [
        ("spec.devices[0]", shared_gpu()),
        ("spec.devices[0].capacity.memory.requestPolicy",
         {"default": "10Gi", "validValues": ["10Gi", "20Gi", "40Gi"]})]),
    ("list-attributes-with-gate", "slice", [
        ("spec.devices[0].attributes.links", {"ints": [0, 1, 2]})]),
    ("driver-upper-case", "slice", [("spec.driver", "GPU.example.com")]),
    ("count-zero-defaults-to-one", "claim", [
        ("spec.devices.requests[0].exactly.count", 0)]),
    ("mode-all-without-count", "claim", [
        ("spec.devices.requests[0].exactly.allocationMode", "All"),
        ("spec.devices.requests[0].exactly.count", DELETE)]),
    ("empty-claim", "claim", [("spec", {})]),
    ("missing-namespace", "claim", [("metadata.namespace", DELETE)]),
    ("toleration-all", "claim", [("spec.devices.requests[0].exactly.tolerations",
                                  [{"operator": "Exists"}])]),
    ("constraint-on-parent", "claim", [("spec.devices.constraints[0].requests", ["gpu", "mig"])]),
    ("admin-access", "claim", [("spec.devices.requests[0].exactly.adminAccess", True)]),
    ("pod-without-status", "pod", [("status", DELETE)]),
    ("pod-claim-by-name", "pod", [("spec.resourceClaims[0]", {"name": "gpu",
                                                               "resourceClaimName": "shared"})]),
    ("cron-descriptor", "cronjob", [("spec.schedule", "@hourly")]),
    ("unknown-fields-kept", "slice", [("spec.devices[0].futureField", {"x": 1})]),
]


@pytest.mark.parametrize(("id_", "base", "edits"), ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_accepted_variants(id_: str, base: str, edits: list[tuple[str, Any]]) -> None:
    doc = BUILDERS[base]()
    for path, value in edits:
        edit(doc, path, value)
    gates = FeatureGates.parse("DRAListTypeAttributes=true")
    assert [str(e) for e in validate_object(doc, features=gates)] == []


def test_errors_come_in_document_order() -> None:
    doc = BUILDERS["slice"]()
    edit(doc, "metadata.name", "Bad Name")
    edit(doc, "spec.pool.resourceSliceCount", -1)
    edit(doc, "spec.devices[1].attributes.type", {})
    edit(doc, "spec.devices[0].name", "GPU")
    paths = [e.path for e in validate_object(doc)]
    assert paths == ["metadata.name", "spec.pool.resourceSliceCount", "spec.devices[0].name",
                     "spec.devices[1].attributes[type]"]


def test_all_problems_are_reported() -> None:
    doc = BUILDERS["claim"]()
    for i in range(2):
        edit(doc, f"spec.devices.requests[{i}].name", "")
    errors = validate_object(doc)
    assert [e.path for e in errors][:2] == ["spec.devices.requests[0].name",
                                            "spec.devices.requests[1].name"]


def test_unknown_kinds_pass_through_and_served_old_versions_are_checked() -> None:
    assert validate_object({"apiVersion": "v1", "kind": "ConfigMap", "data": 5}) == []
    assert validate_object({"kind": "Pod"}) == []
    # v1beta1 is still served by 1.37: checked like v1 (it used to pass unchecked).
    errors = validate_object({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice",
                              "metadata": {"name": "s"}, "spec": "nonsense"})
    assert [(e.path, e.type) for e in errors] == [("spec", ErrorType.TYPE_INVALID)]
    # A version no 1.37 server serves is one error at apiVersion.
    (error,) = validate_object({"apiVersion": "resource.k8s.io/v9", "kind": "ResourceSlice"})
    assert error.path == "apiVersion" and 'no matches for kind "ResourceSlice"' in error.detail
    assert ("resource.k8s.io/v1", "ResourceSlice") in SUPPORTED_KINDS
    assert ("resource.k8s.io/v1beta1", "ResourceSlice") in SUPPORTED_KINDS
    assert ("resource.k8s.io/v1beta1", "DeviceTaintRule") not in SUPPORTED_KINDS


def test_non_mapping_document() -> None:
    errors = validate_object(["not", "an", "object"])  # type: ignore[arg-type]
    assert [(e.path, e.type) for e in errors] == [("", ErrorType.TYPE_INVALID)]


def test_input_is_not_modified() -> None:
    doc = BUILDERS["allocated"]()
    edit(doc, "spec.devices.requests[0].name", "Bad")
    before = yaml.safe_dump(doc)
    validate_object(doc)
    assert yaml.safe_dump(doc) == before


def test_old_taint_rule_versions_are_validated() -> None:
    for version in ("resource.k8s.io/v1alpha3", "resource.k8s.io/v1beta2"):
        doc = BUILDERS["rule"]()
        edit(doc, "apiVersion", version)
        edit(doc, "spec.taint.effect", DELETE)
        assert [(e.path, e.type) for e in validate_object(doc)] == [
            ("spec.taint.effect", ErrorType.REQUIRED)]


# CEL -----------------------------------------------------------------------------------------
def test_cel_compile_error_is_invalid_with_upstream_prefix() -> None:
    doc = BUILDERS["claim"]()
    edit(doc, SELECTOR, 'device.attributes["gpu.nvidia.com"].type ==')
    errors = validate_object(doc)
    assert [(e.path, e.type) for e in errors] == [(SELECTOR, ErrorType.INVALID)]
    assert errors[0].detail.startswith("compilation failed: ")
    assert errors[0].value == 'device.attributes["gpu.nvidia.com"].type =='


def test_cel_non_bool_result_is_invalid() -> None:
    doc = BUILDERS["class"]()
    edit(doc, "spec.selectors[0].cel.expression", "device.driver")
    errors = validate_object(doc)
    assert [(e.path, e.type) for e in errors] == [("spec.selectors[0].cel.expression",
                                                   ErrorType.INVALID)]


def test_cel_cost_over_limit_is_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    import dralab.cel
    from dralab.validation import _cel

    class Expensive:
        estimated_cost = dralab.cel.MAX_COST + 1

    def fake_compile(expression: str, features: Any = None) -> Expensive:
        return Expensive()

    monkeypatch.setattr(dralab.cel, "compile_selector", fake_compile)
    _cel._compile.cache_clear()
    try:
        doc = BUILDERS["class"]()
        edit(doc, "spec.selectors[0].cel.expression", 'device.driver == "expensive.example.com"')
        errors = validate_object(doc)
    finally:
        _cel._compile.cache_clear()
    assert [str(e) for e in errors] == [
        "spec.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit"]


def test_cel_not_compiled_when_too_long(monkeypatch: pytest.MonkeyPatch) -> None:
    import dralab.cel

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("must not compile")

    monkeypatch.setattr(dralab.cel, "compile_selector", fail)
    doc = BUILDERS["class"]()
    edit(doc, "spec.selectors[0].cel.expression", "true || " * 2000 + "true")
    errors = validate_object(doc)
    assert [e.type for e in errors] == [ErrorType.TOO_LONG]
    assert not errors[0].has_value  # upstream never echoes the expression


def test_field_errors_are_field_errors() -> None:
    doc = BUILDERS["pod"]()
    edit(doc, "spec.containers[0].resources.requests.cpu", "lots")
    errors = validate_object(doc)
    assert errors and all(isinstance(e, FieldError) for e in errors)
    assert get(doc, "spec.containers[0].name") == "trainer"
