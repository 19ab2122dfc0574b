"""Checks across objects: admin access against Namespace labels, unmodelled workload gates.

Tables over real-shaped inputs: the example driver's admin-access and PodGroup
demos (tests/data/gates/upstream) and the validation builders, with the
expected problems as `path: message` per object, in input order.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dralab.api.errors import ErrorType
from dralab.api.features import FeatureGates
from dralab.api.io import Document, read_documents
from dralab.validation import validate_across
from dralab.validation.check import validate_documents

from .builders import allocated_claim, claim, claim_template, cron_job, namespace, pod

DATA = Path(__file__).parent.parent / "data" / "gates" / "upstream"
ADMIN = ("Forbidden: admin access to devices requires the "
         "`resource.kubernetes.io/admin-access: true` label on the containing namespace")
LABEL = "resource.kubernetes.io/admin-access"
Doc = dict[str, Any]


def unlabelled(name: str = "team-a", **labels: str) -> Doc:
    ns = namespace()
    ns["metadata"] = {"name": name, "labels": labels}
    return ns


def admin_claim(ns: str | None = "team-a") -> Doc:
    doc = claim()
    doc["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    if ns is None:
        del doc["metadata"]["namespace"]
    else:
        doc["metadata"]["namespace"] = ns
    return doc


def admin_template() -> Doc:
    doc = claim_template()
    doc["spec"]["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    return doc


def admin_result() -> Doc:
    doc = allocated_claim()
    doc["status"]["allocation"]["devices"]["results"][1]["adminAccess"] = True
    return doc


def two_admin_requests() -> Doc:
    doc = admin_claim()
    doc["spec"]["devices"]["requests"].append(
        {"name": "also", "exactly": {"deviceClassName": "gpu.nvidia.com", "adminAccess": True}})
    return doc


def v1beta1_admin_claim() -> Doc:
    return {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
            "metadata": {"name": "old", "namespace": "team-a"},
            "spec": {"devices": {"requests": [
                {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "adminAccess": True}]}}}


@dataclass(frozen=True)
class AdminCase:
    id: str
    objects: Callable[[], list[Doc]]
    # (object index, path, message) in input order
    expect: tuple[tuple[int, str, str], ...] = ()


ADMIN_CASES = [
    AdminCase("labelled-namespace-accepts", lambda: [namespace(), admin_claim()]),
    AdminCase("unlabelled-namespace-refuses-claim", lambda: [unlabelled(), admin_claim()],
              ((1, "spec.devices.requests[0].exactly.adminAccess", ADMIN),)),
    AdminCase("unlabelled-namespace-refuses-template", lambda: [admin_template(), unlabelled()],
              ((0, "spec.spec.devices.requests[0].exactly.adminAccess", ADMIN),)),
    AdminCase("label-value-is-case-sensitive",
              lambda: [unlabelled(**{LABEL: "True"}), admin_claim()],
              ((1, "spec.devices.requests[0].exactly.adminAccess", ADMIN),)),
    AdminCase("claim-without-namespace-is-in-default",
              lambda: [unlabelled("default"), admin_claim(ns=None)],
              ((1, "spec.devices.requests[0].exactly.adminAccess", ADMIN),)),
    AdminCase("no-namespace-objects-no-check", lambda: [admin_claim(), admin_template()]),
    AdminCase("only-other-namespaces-no-check", lambda: [unlabelled("team-b"), admin_claim()]),
    AdminCase("admin-access-false-is-fine",
              lambda: [unlabelled(), _set(admin_claim(), False)]),
    AdminCase("only-the-first-admin-request-is-reported",
              lambda: [unlabelled(), two_admin_requests()],
              ((1, "spec.devices.requests[0].exactly.adminAccess", ADMIN),)),
    AdminCase("allocation-result-with-admin-access", lambda: [admin_result(), unlabelled()],
              ((0, "status.allocation.devices.results[1].adminAccess", ADMIN),)),
    AdminCase("v1beta1-request-field", lambda: [unlabelled(), v1beta1_admin_claim()],
              ((1, "spec.devices.requests[0].adminAccess", ADMIN),)),
    AdminCase("pods-and-other-kinds-ignored", lambda: [unlabelled(), pod(), cron_job()]),
]


def _set(doc: Doc, value: bool) -> Doc:
    doc["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = value
    return doc


@pytest.mark.parametrize("c", ADMIN_CASES, ids=lambda c: c.id)
def test_admin_access_against_namespace_labels(c: AdminCase) -> None:
    objects = c.objects()
    before = copy.deepcopy(objects)
    found = [(n, e.path, e.body()) for n, e in validate_across(objects)]
    assert found == list(c.expect)
    assert objects == before  # pure


def test_admin_access_demo_as_published_and_without_the_label() -> None:
    docs = read_documents([str(DATA / "admin-access.yaml")])
    assert validate_documents(docs) == []
    stripped = [Document(d.source, d.index, copy.deepcopy(d.data)) for d in docs]
    del stripped[0].data["metadata"]["labels"][LABEL]
    problems = [str(p) for p in validate_documents(stripped)]
    assert problems == [
        f"{DATA / 'admin-access.yaml'}:2 ResourceClaimTemplate admin-access/multiple-gpus-admin: "
        f"spec.spec.devices.requests[0].exactly.adminAccess: {ADMIN}"]


# --- the workload API gates ---------------------------------------------------------------

PODGROUP = str(DATA / "podgroup-resourceclaimtemplate.yaml")
NOT_MODELLED = "Forbidden: feature gate {} is not modelled by dralab yet"
COMPOSITE = NOT_MODELLED.format("CompositePodGroup")
TOPOLOGY = NOT_MODELLED.format("TopologyAwareWorkloadScheduling")
GATED = "Forbidden: requires feature gate GenericWorkload"
CLAIMS_GATED = "Forbidden: requires feature gate DRAWorkloadResourceClaims"
TPL = "spec.template.spec"


@dataclass(frozen=True)
class GateCase:
    id: str
    gates: str
    stored: bool
    # (document number, path, message) in input order
    expect: tuple[tuple[int, str, str], ...]


# The demo: PodGroups at documents 3 and 5, their Deployments at 4 and 6. With
# GenericWorkload off the PodGroup kind is not served and the pods' schedulingGroup is
# dropped (both reported, except for stored state); with it on the demo is valid, but
# the PodGroups' claims need DRAWorkloadResourceClaims too.
OFF = ((3, "kind", GATED), (4, f"{TPL}.schedulingGroup", GATED),
       (5, "kind", GATED), (6, f"{TPL}.schedulingGroup", GATED))
GATE_CASES = [
    GateCase("gates-off-podgroups-are-gated", "", False, OFF),
    GateCase("gates-off-stored-state-is-accepted", "", True, ()),
    GateCase("workload-claims-on-without-generic-workload", "DRAWorkloadResourceClaims=true",
             False, OFF),
    GateCase("workload-claims-on-stored", "DRAWorkloadResourceClaims=true", True, ()),
    GateCase("generic-workload-on-claims-gated", "GenericWorkload=true", False, (
        (3, "spec.resourceClaims", CLAIMS_GATED), (5, "spec.resourceClaims", CLAIMS_GATED))),
    GateCase("generic-workload-on-stored", "GenericWorkload=true", True, ()),
    GateCase("both-on-valid", "GenericWorkload=true,DRAWorkloadResourceClaims=true", False, ()),
]


@pytest.mark.parametrize("c", GATE_CASES, ids=lambda c: c.id)
def test_podgroup_demo_under_gates(c: GateCase) -> None:
    docs = read_documents([PODGROUP])
    problems = validate_documents(docs, FeatureGates.parse(c.gates), stored=c.stored)
    found = [(int(p.where.split(":")[1].split()[0]), p.error.path, p.error.body())
             for p in problems]
    assert found == list(c.expect)
    assert all(p.error.type is ErrorType.FORBIDDEN for p in problems)


def _workload() -> Doc:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": "my-workload", "namespace": "default"},
            "spec": {"podGroupTemplates": [
                {"name": "leader", "schedulingPolicy": {"basic": {}}},
                {"name": "group", "schedulingPolicy": {"basic": {}},
                 "resourceClaims": [{"name": "pg-claim",
                                     "resourceClaimTemplateName": "pg-claim-template"}]}]}}


def _composite_workload() -> Doc:
    doc = _workload()
    doc["apiVersion"] = "scheduling.k8s.io/v1alpha3"
    doc["spec"] = {"compositePodGroupTemplates": [
        {"name": "replica", "schedulingPolicy": {"gang": {"minGroupCount": 2}},
         "podGroupTemplates": [{"name": "worker", "schedulingPolicy": {"gang": {"minCount": 4}}}]}]}
    return doc


def _topology_workload() -> Doc:
    doc = _workload()
    doc["spec"]["podGroupTemplates"][1]["schedulingConstraints"] = {
        "topology": [{"key": "topology.kubernetes.io/rack"}]}
    return doc


def _pod_group(**spec: Any) -> Doc:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "workers", "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, **spec}}


def _composite() -> Doc:
    return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
            "metadata": {"name": "replica", "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 2}}}}


def _cron(*, group: bool, claims: bool) -> Doc:
    doc = cron_job()
    spec = doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    if group:
        spec["schedulingGroup"] = {"podGroupName": "nightly"}
    if claims:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
        spec["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return doc


def _claim_of_group() -> Doc:
    doc = allocated_claim()
    doc["status"]["reservedFor"] = [
        {"resource": "pods", "name": "trainer", "uid": "7f0c2a4e-0000-4000-8000-000000000001"},
        {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "group-1",
         "uid": "7f0c2a4e-0000-4000-8000-000000000002"}]
    return doc


BOTH = "GenericWorkload=true,DRAWorkloadResourceClaims=true"
# What is modelled (Workloads, PodGroups, grouped pods, group claims) is never refused;
# CompositePodGroups and topology constraints are, while GenericWorkload is on.
SHAPES = [
    ("workload-template-claims", _workload, "DRAWorkloadResourceClaims=true", []),
    ("workload-both-gates", _workload, BOTH, []),
    ("workload-gate-off", _workload, "", []),
    ("cronjob-pod-template", lambda: _cron(group=True, claims=True), BOTH, []),
    ("group-member-without-claims", lambda: _cron(group=True, claims=False), BOTH, []),
    ("claims-without-group", lambda: _cron(group=False, claims=True), BOTH, []),
    ("claim-reserved-for-a-podgroup", _claim_of_group, "DRAWorkloadResourceClaims=true", []),
    ("claim-reserved-for-a-podgroup-gate-off", _claim_of_group, "", []),
    ("composite-pod-group-kind", _composite, "GenericWorkload=true", [("kind", COMPOSITE)]),
    ("composite-pod-group-kind-gate-off", _composite, "", []),
    ("composite-workload-templates", _composite_workload, "GenericWorkload=true",
     [("spec.compositePodGroupTemplates", COMPOSITE)]),
    ("pod-group-with-parent", lambda: _pod_group(parentCompositePodGroupName="replica"),
     "GenericWorkload=true", [("spec.parentCompositePodGroupName", COMPOSITE)]),
    ("pod-group-topology", lambda: _pod_group(
        schedulingConstraints={"topology": [{"key": "topology.kubernetes.io/rack"}]}),
     BOTH, [("spec.schedulingConstraints", TOPOLOGY)]),
    ("workload-template-topology", _topology_workload, "GenericWorkload=true",
     [("spec.podGroupTemplates[1].schedulingConstraints", TOPOLOGY)]),
    ("workload-template-topology-gate-off", _topology_workload, "", []),
]


@pytest.mark.parametrize(("build", "gates", "expect"), [s[1:] for s in SHAPES],
                         ids=[s[0] for s in SHAPES])
def test_unmodelled_gate_uses(build: Callable[[], Doc], gates: str,
                              expect: list[tuple[str, str]]) -> None:
    found = validate_across([build()], FeatureGates.parse(gates))
    assert [(e.path, e.body()) for _, e in found] == expect
