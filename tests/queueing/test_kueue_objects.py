"""Kueue's objects: both API versions decode, round-trip unchanged, and the
essentials of Kueue's validation name the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from dralab.api.base import KubeObject
from dralab.api.codec import DecodeError, encode
from dralab.api.io import read_documents
from dralab.queueing.checks import kueue_problems
from dralab.queueing.objects import (
    ClusterQueue,
    Cohort,
    KueueConfiguration,
    KueueTopology,
    KueueWorkload,
    LocalQueue,
    ResourceFlavor,
    WorkloadPriorityClass,
    decode_kueue,
    is_kueue_document,
)

DATA = Path(__file__).parent.parent / "data" / "kueue"


def _typed(obj: KubeObject) -> KubeObject:
    return msgspec.structs.replace(obj, raw=None)


def _shape(value: Any) -> Any:
    """The keys of a document, all the way down (values aside: quantities are written
    back canonical, ``9`` as ``"9"``, ``"0.5"`` as ``"500m"``)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return None


def assert_round_trip(obj: KubeObject, data: dict[str, Any]) -> None:
    """Written back, the object keeps every field of its document and reads the same."""
    written = encode(obj)
    assert _shape(written) == _shape(data)
    assert _typed(decode_kueue(written)) == _typed(obj)
    assert encode(decode_kueue(written)) == written


def _cq(version: str, **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"namespaceSelector": {}, "resourceGroups": [{
        "coveredResources": ["cpu", "nvidia.com/gpu"],
        "flavors": [{"name": "h100", "resources": [
            {"name": "cpu", "nominalQuota": 9},
            {"name": "nvidia.com/gpu", "nominalQuota": "8", "borrowingLimit": 4,
             "lendingLimit": 2}]}]}]}
    return {"apiVersion": f"kueue.x-k8s.io/{version}", "kind": "ClusterQueue",
            "metadata": {"name": "cq"}, "spec": base | spec}


def test_every_documentation_sample_round_trips_unchanged() -> None:
    docs = [d for d in read_documents([DATA]) if is_kueue_document(d.data)]
    assert len(docs) >= 10
    for doc in docs:
        obj = decode_kueue(doc.data)
        assert_round_trip(obj, doc.data)
        assert kueue_problems(obj) == [], doc.where


@pytest.mark.parametrize(("version", "field"), [("v1beta1", "cohort"),
                                                ("v1beta2", "cohortName")])
def test_cohort_field_of_each_version(version: str, field: str) -> None:
    cq = decode_kueue(_cq(version, **{field: "research"}))
    assert isinstance(cq, ClusterQueue)
    assert cq.cohort_ref == "research"
    assert cq.api_version == f"kueue.x-k8s.io/{version}"
    quota = cq.spec.resource_groups[0].flavors[0].resources[1]
    assert [q.milli_value() for q in (quota.nominal_quota, quota.borrowing_limit,
                                      quota.lending_limit) if q is not None] == [8000, 4000, 2000]
    assert encode(cq)["spec"][field] == "research"
    assert kueue_problems(cq) == []


@pytest.mark.parametrize(("version", "field"), [("v1beta1", "cohortName"),
                                                ("v1beta2", "cohort")])
def test_the_other_versions_cohort_field_is_refused(version: str, field: str) -> None:
    problems = kueue_problems(decode_kueue(_cq(version, **{field: "research"})))
    assert [p for p, _ in problems] == [f"spec.{field}"]


def test_every_kind_of_both_versions() -> None:
    for version in ("v1beta1", "v1beta2"):
        api = f"kueue.x-k8s.io/{version}"
        objs = [
            decode_kueue({"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": "f"},
                          "spec": {"nodeLabels": {"a": "b"}, "topologyName": "t",
                                   "nodeTaints": [{"key": "k", "value": "v",
                                                   "effect": "NoSchedule"}]}}),
            decode_kueue({"apiVersion": api, "kind": "LocalQueue",
                          "metadata": {"name": "q", "namespace": "ns"},
                          "spec": {"clusterQueue": "cq"}}),
            decode_kueue({"apiVersion": api, "kind": "Cohort", "metadata": {"name": "c"},
                          "spec": {"parentName": "root", "fairSharing": {"weight": "0.5"}}}),
            decode_kueue({"apiVersion": api, "kind": "WorkloadPriorityClass",
                          "metadata": {"name": "p"}, "value": 1000}),
            decode_kueue({"apiVersion": api, "kind": "Topology", "metadata": {"name": "t"},
                          "spec": {"levels": [{"nodeLabel": "block"},
                                              {"nodeLabel": "kubernetes.io/hostname"}]}}),
            decode_kueue({"apiVersion": api, "kind": "Workload",
                          "metadata": {"name": "w", "namespace": "ns"},
                          "spec": {"queueName": "q", "podSets": [{"name": "main", "count": 2}]},
                          "status": {"admission": {"clusterQueue": "cq", "podSetAssignments": [
                              {"name": "main", "flavors": {"cpu": "f"},
                               "resourceUsage": {"cpu": "2"}, "count": 2}]}}}),
        ]
        kinds = [ResourceFlavor, LocalQueue, Cohort, WorkloadPriorityClass, KueueTopology,
                 KueueWorkload]
        assert [type(o) for o in objs] == kinds
        for obj in objs:
            assert kueue_problems(obj) == []
            assert obj.raw is not None
            assert_round_trip(obj, obj.raw)
        flavor, _, cohort, wpc, topology, workload = objs
        assert isinstance(flavor, ResourceFlavor) and flavor.spec.node_taints[0].key == "k"
        assert isinstance(cohort, Cohort) and cohort.spec.parent_name == "root"
        assert isinstance(wpc, WorkloadPriorityClass) and wpc.value == 1000
        assert isinstance(topology, KueueTopology) and len(topology.spec.levels) == 2
        assert isinstance(workload, KueueWorkload)
        assert workload.status.admission is not None
        assert workload.status.admission.pod_set_assignments[0].count == 2


def test_unknown_fields_survive_a_round_trip() -> None:
    data = _cq("v1beta2", admissionChecks=["prov"], futureField={"x": 1})
    obj = decode_kueue(data)
    assert_round_trip(obj, data)
    assert encode(obj)["spec"]["futureField"] == {"x": 1}


@pytest.mark.parametrize(("config", "enabled"), [
    ({"apiVersion": "config.kueue.x-k8s.io/v1beta1", "fairSharing": {"enable": True}}, True),
    ({"apiVersion": "config.kueue.x-k8s.io/v1beta1", "fairSharing": {"enable": False}}, False),
    ({"apiVersion": "config.kueue.x-k8s.io/v1beta2", "fairSharing": {}}, True),
    ({"apiVersion": "config.kueue.x-k8s.io/v1beta2"}, False),
])
def test_configuration_fair_sharing(config: dict[str, Any], enabled: bool) -> None:
    obj = decode_kueue(config | {"kind": "Configuration"})
    assert isinstance(obj, KueueConfiguration)
    assert obj.fair_sharing_enabled is enabled


def test_configuration_device_class_mappings() -> None:
    obj = decode_kueue({
        "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
        "resources": {"deviceClassMappings": [
            {"name": "gpu.memory", "deviceClassNames": ["gpu.example.com"],
             "sources": [{"counter": {"name": "memory", "driver": "gpu.example.com",
                                      "deviceSelector": {"cel": {"expression": "true"}}}}]}]}})
    assert isinstance(obj, KueueConfiguration)
    mapping = obj.resources.device_class_mappings[0]
    assert mapping.name == "gpu.memory"
    assert mapping.sources[0].counter is not None
    assert mapping.sources[0].counter.name == "memory"


@pytest.mark.parametrize(("data", "message"), [
    ({"apiVersion": "kueue.x-k8s.io/v1alpha1", "kind": "ClusterQueue"},
     'no matches for kind "ClusterQueue" in version "kueue.x-k8s.io/v1alpha1"'),
    ({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck"}, "not modelled"),
    ({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
      "spec": {"resourceGroups": [{"flavors": [{"resources": [{"nominalQuota": "x"}]}]}]}},
     "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"),
])
def test_decode_errors_name_the_field(data: dict[str, Any], message: str) -> None:
    with pytest.raises(DecodeError) as err:
        decode_kueue(data)
    assert message in str(err.value)


@pytest.mark.parametrize(("spec", "path", "message"), [
    ({"queueingStrategy": "LIFO"}, "spec.queueingStrategy", 'Unsupported value: "LIFO"'),
    ({"stopPolicy": "Pause"}, "spec.stopPolicy", "Unsupported value"),
    ({"preemption": {"withinClusterQueue": "Always"}}, "spec.preemption.withinClusterQueue",
     "Unsupported value"),
    ({"preemption": {"borrowWithinCohort": {"policy": "LowerPriority"}}}, "spec.preemption",
     "reclaimWithinCohort=Never"),
    ({"flavorFungibility": {"whenCanBorrow": "Borrow"}}, "spec.flavorFungibility.whenCanBorrow",
     "Unsupported value"),
    ({"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
        {"name": "f", "resources": [{"name": "memory", "nominalQuota": 1}]}]}]},
     "spec.resourceGroups[0].flavors[0].resources", "same resources"),
    ({"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
        {"name": "f", "resources": [{"name": "cpu"}]}]}]},
     "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "Required value"),
    ({"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
        {"name": "f", "resources": [{"name": "cpu", "nominalQuota": 1, "borrowingLimit": 1}]}]}]},
     "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit", "cohort is empty"),
])
def test_cluster_queue_problems(spec: dict[str, Any], path: str, message: str) -> None:
    data = _cq("v1beta2")
    data["spec"] = data["spec"] | spec
    problems = kueue_problems(decode_kueue(data))
    assert any(p == path and message in m for p, m in problems), problems


def test_other_kinds_problems() -> None:
    lq = decode_kueue({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                       "metadata": {"name": "q"}, "spec": {}})
    assert [p for p, _ in kueue_problems(lq)] == ["metadata.namespace", "spec.clusterQueue"]
    topo = decode_kueue({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Topology",
                         "metadata": {"name": "t"},
                         "spec": {"levels": [{"nodeLabel": "rack"}, {"nodeLabel": "rack"}]}})
    assert kueue_problems(topo) == [("spec.levels[1].nodeLabel", 'Duplicate value: "rack"')]
    config = decode_kueue({"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration",
                           "resources": {"deviceClassMappings": [
                               {"name": "a", "deviceClassNames": ["gpu"]},
                               {"name": "b", "deviceClassNames": ["gpu"]}]}})
    assert [p for p, _ in kueue_problems(config)] == \
        ["resources.deviceClassMappings[1].deviceClassNames[0]"]
