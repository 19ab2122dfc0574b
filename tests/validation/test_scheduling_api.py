"""Validation of scheduling.k8s.io Workload and PodGroup and of pods' spec.schedulingGroup.

A table of real-shaped objects (the example driver's PodGroup, a Workload as the Job
controller writes it) with one defect each, and the field errors the 1.37 API server gives
for them (upstream's declarative rules: required, minimum, maxItems, unions, DNS names).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from dralab.api.features import FeatureGates
from dralab.validation import validate_object

Doc = dict[str, Any]
ON = FeatureGates.parse("GenericWorkload=true,DRAWorkloadResourceClaims=true")
LABEL = "Invalid value: \"{}\": a lowercase RFC 1123 label must consist of"
SUBDOMAIN = "Invalid value: \"{}\": a lowercase RFC 1123 subdomain must consist of"


def pod_group() -> Doc:
    # The example driver's group-1 (podgroup-resourceclaimtemplate.yaml).
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "group-1", "namespace": "podgroup-resourceclaimtemplate"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}},
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}}


def workload() -> Doc:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": "trainer", "namespace": "default"},
            "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "trainer"},
                     "podGroupTemplates": [
                         {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}},
                          "resourceClaims": [{"name": "gpu",
                                              "resourceClaimTemplateName": "one-gpu"}]}]}}


def pod() -> Doc:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "worker-0", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "ubuntu:22.04"}],
                     "schedulingGroup": {"podGroupName": "group-1"}}}


def edit(build: Callable[[], Doc], change: Callable[[Doc], None]) -> Callable[[], Doc]:
    def make() -> Doc:
        doc = copy.deepcopy(build())
        change(doc)
        return doc
    return make


def _spec(**fields: Any) -> Callable[[Doc], None]:
    return lambda d: d["spec"].update(fields)


POLICY = "spec.schedulingPolicy"
CLAIMS = "spec.resourceClaims"
TEMPLATES = "spec.podGroupTemplates"

CASES: list[tuple[str, Callable[[], Doc], list[str]]] = [
    ("pod-group-valid", pod_group, []),
    ("workload-valid", workload, []),
    ("pod-valid", pod, []),
    ("pod-group-v1alpha2-valid", edit(pod_group, lambda d: d.update(
        apiVersion="scheduling.k8s.io/v1alpha2")), []),
    ("no-policy", edit(pod_group, lambda d: d["spec"].pop("schedulingPolicy")),
     [f"{POLICY}: Required value"]),
    ("both-policies", edit(pod_group, _spec(schedulingPolicy={"basic": {},
                                                              "gang": {"minCount": 1}})),
     [f'{POLICY}: Invalid value: "{{basic, gang}}": must specify exactly one of: '
      "`basic`, `gang`"]),
    ("empty-policy", edit(pod_group, _spec(schedulingPolicy={})),
     [f'{POLICY}: Invalid value: "null": must specify one of: `basic`, `gang`']),
    ("min-count-0", edit(pod_group, _spec(schedulingPolicy={"gang": {"minCount": 0}})),
     [f"{POLICY}.gang.minCount: Invalid value: 0: must be greater than or equal to 1"]),
    ("min-count-missing", edit(pod_group, _spec(schedulingPolicy={"gang": {}})),
     [f"{POLICY}.gang.minCount: Required value"]),
    ("v1alpha3-min-count-0", edit(pod_group, lambda d: d.update(
        apiVersion="scheduling.k8s.io/v1alpha3", spec={"schedulingPolicy": {
            "gang": {"minCount": 0}}})),
     [f"{POLICY}.gang.minCount: Invalid value: 0: must be greater than or equal to 1"]),
    ("five-claims", edit(pod_group, _spec(resourceClaims=[
        {"name": f"gpu-{i}", "resourceClaimTemplateName": "one-gpu"} for i in range(5)])),
     [f"{CLAIMS}: Too many: 5: must have at most 4 items"]),
    ("claim-both-sources", edit(pod_group, _spec(resourceClaims=[
        {"name": "gpu", "resourceClaimName": "shared", "resourceClaimTemplateName": "one-gpu"}])),
     [f'{CLAIMS}[0]: Invalid value: "{{resourceClaimName, resourceClaimTemplateName}}": '
      "must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`"]),
    ("claim-no-source", edit(pod_group, _spec(resourceClaims=[{"name": "gpu"}])),
     [f'{CLAIMS}[0]: Invalid value: "null": must specify one of: `resourceClaimName`, '
      "`resourceClaimTemplateName`"]),
    ("claim-names", edit(pod_group, _spec(resourceClaims=[
        {"name": "GPU", "resourceClaimTemplateName": "One_GPU"},
        {"resourceClaimName": "shared"}])),
     [f"{CLAIMS}[0].name: {LABEL.format('GPU')}",
      f"{CLAIMS}[0].resourceClaimTemplateName: {SUBDOMAIN.format('One_GPU')}",
      f"{CLAIMS}[1].name: Required value"]),
    ("claim-duplicate", edit(pod_group, _spec(resourceClaims=[
        {"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
        {"name": "gpu", "resourceClaimName": "shared"}])),
     [f'{CLAIMS}[1].name: Duplicate value: "gpu"']),
    ("priority", edit(pod_group, _spec(priority=2_000_000_000)),
     ["spec.priority: Invalid value: 2000000000: must be less than or equal to 1000000000"]),
    ("no-spec", edit(pod_group, lambda d: d.pop("spec")), ["spec: Required value"]),
    ("no-name", edit(pod_group, lambda d: d["metadata"].pop("name")),
     ["metadata.name: Required value: name or generateName is required"]),
    ("workload-no-templates", edit(workload, _spec(podGroupTemplates=[])),
     [f"{TEMPLATES}: Required value: must have at least one item"]),
    ("workload-nine-templates", edit(workload, _spec(podGroupTemplates=[
        {"name": f"t{i}", "schedulingPolicy": {"basic": {}}} for i in range(9)])),
     [f"{TEMPLATES}: Too many: 9: must have at most 8 items"]),
    ("workload-templates", edit(workload, _spec(
        controllerRef={"kind": "Job"},
        podGroupTemplates=[{"name": "w", "schedulingPolicy": {"gang": {"minCount": -1}}},
                           {"name": "w"}])),
     ["spec.controllerRef.name: Required value",
      f"{TEMPLATES}[0].schedulingPolicy.gang.minCount: Invalid value: -1: must be greater "
      "than or equal to 1",
      f'{TEMPLATES}[1].name: Duplicate value: "w"',
      f"{TEMPLATES}[1].schedulingPolicy: Required value"]),
    ("pod-group-name-missing", edit(pod, lambda d: d["spec"].update(schedulingGroup={})),
     ["spec.schedulingGroup.podGroupName: Required value"]),
    ("pod-group-name-invalid", edit(pod, lambda d: d["spec"].update(
        schedulingGroup={"podGroupName": "Group_1"})),
     [f"spec.schedulingGroup.podGroupName: {SUBDOMAIN.format('Group_1')}"]),
]


@pytest.mark.parametrize(("build", "expect"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validation(build: Callable[[], Doc], expect: list[str]) -> None:
    doc = build()
    before = copy.deepcopy(doc)
    found = [str(e) for e in validate_object(doc, features=ON)]
    assert doc == before
    assert len(found) == len(expect), found
    for got, want in zip(found, expect, strict=True):
        assert got.startswith(want), (got, want)


@pytest.mark.parametrize(("gates", "expect"), [
    # The kind is not served without GenericWorkload.
    ("", ["kind: Forbidden: requires feature gate GenericWorkload"]),
    ("DRAWorkloadResourceClaims=true", ["kind: Forbidden: requires feature gate GenericWorkload"]),
    # resourceClaims is dropped without DRAWorkloadResourceClaims: reported.
    ("GenericWorkload=true", ["spec.resourceClaims: Forbidden: requires feature gate "
                              "DRAWorkloadResourceClaims"]),
])
def test_pod_group_under_gates(gates: str, expect: list[str]) -> None:
    doc = edit(pod_group, _spec(schedulingPolicy={"gang": {"minCount": 0}}))()
    found = [str(e) for e in validate_object(doc, features=FeatureGates.parse(gates))]
    if gates == "GenericWorkload=true":
        expect = [f"{POLICY}.gang.minCount: Invalid value: 0: must be greater than or equal "
                  "to 1", *expect]
    assert found == expect
