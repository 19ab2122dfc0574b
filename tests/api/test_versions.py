"""API versions: what 1.37 serves, and lossless conversion v1beta1 <-> v1beta2 <-> v1."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralab.api.codec import decode, encode, kind_for, resolve_kind
from dralab.api.resource import DeviceTaintRule, ResourceClaim, ResourceSlice
from dralab.api.versions import Served, from_v1, legacy_slice_to_v1, path_in_version, to_v1
from dralab.validation import validate_object

from .version_docs import ALL_GATES, V1, V1BETA1, V1BETA2, any_pair

Doc = dict[str, Any]
PROPERTY = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# --- what is served -----------------------------------------------------------------------
@pytest.mark.parametrize(("api_version", "kind", "served"), [
    (V1, "ResourceClaim", Served.HUB),
    (V1BETA2, "ResourceClaim", Served.CONVERT),
    (V1BETA1, "ResourceClaim", Served.CONVERT),
    (V1BETA1, "ResourceClaimTemplate", Served.CONVERT),
    (V1BETA1, "ResourceSlice", Served.CONVERT),
    (V1BETA1, "DeviceClass", Served.CONVERT),
    (V1BETA2, "DeviceTaintRule", Served.CONVERT),
    ("resource.k8s.io/v1alpha3", "DeviceTaintRule", Served.CONVERT),
    ("resource.k8s.io/v1alpha3", "ResourcePoolStatusRequest", Served.UNMODELLED),
    ("v1", "Pod", Served.HUB),
    ("apps/v1", "Deployment", Served.HUB),
    ("v1", "ConfigMap", Served.UNMODELLED),
    ("apps/v1", "ControllerRevision", Served.UNMODELLED),
    ("kueue.x-k8s.io/v1beta1", "ClusterQueue", Served.UNMODELLED),
    ("batch.volcano.sh/v1alpha1", "Job", Served.UNMODELLED),  # a CRD that shares a name
    # The workload-aware scheduling API: v1beta1 is 1.37's hub; v1alpha3 (1.37's alpha)
    # and v1alpha2 (1.36, still read for the drivers' demos) convert to it.
    ("scheduling.k8s.io/v1beta1", "Workload", Served.HUB),
    ("scheduling.k8s.io/v1beta1", "PodGroup", Served.HUB),
    ("scheduling.k8s.io/v1alpha3", "PodGroup", Served.CONVERT),
    ("scheduling.k8s.io/v1alpha2", "PodGroup", Served.CONVERT),
    ("scheduling.k8s.io/v1alpha2", "Workload", Served.CONVERT),
    ("scheduling.k8s.io/v1alpha3", "CompositePodGroup", Served.UNMODELLED),
    ("kueue.x-k8s.io/v1beta1", "Workload", Served.UNMODELLED),  # Kueue's kind of that name
    ("scheduling.volcano.sh/v1beta1", "PodGroup", Served.UNMODELLED),
])
def test_served_versions(api_version: str, kind: str, served: Served) -> None:
    assert resolve_kind(api_version, kind).served is served


@pytest.mark.parametrize(("api_version", "kind", "hint"), [
    ("resource.k8s.io/v1alpha2", "ResourceClaim",
     "resource.k8s.io/v1alpha2 was removed in Kubernetes 1.31, use resource.k8s.io/v1"),
    ("resource.k8s.io/v1alpha2", "ResourceClass",
     "ResourceClass was removed in Kubernetes 1.31; use a DeviceClass (resource.k8s.io/v1)"),
    ("resource.k8s.io/v1alpha2", "ResourceClaimParameters",
     "ResourceClaimParameters was removed in Kubernetes 1.31"),
    ("resource.k8s.io/v1alpha1", "ResourceClaim", "resource.k8s.io/v1alpha1 was removed in "
                                                  "Kubernetes 1.27, use resource.k8s.io/v1"),
    ("resource.k8s.io/v1alpha3", "ResourceClaim", "resource.k8s.io/v1alpha3 ResourceClaim was "
                                                  "removed in Kubernetes 1.34, use "
                                                  "resource.k8s.io/v1"),
    ("resource.k8s.io/v1alpha3", "PodSchedulingContext", "removed in Kubernetes 1.32"),
    ("resource.k8s.io/v9", "ResourceClaim", "ResourceClaim is served as resource.k8s.io/v1, "
                                            "resource.k8s.io/v1beta2 and resource.k8s.io/v1beta1"),
    ("resource.k8s.io/v9", "Whatever", "Kubernetes 1.37 serves resource.k8s.io/v1, "),
    (V1BETA1, "DeviceTaintRule", "DeviceTaintRule is served as resource.k8s.io/v1, "
                                 "resource.k8s.io/v1beta2 and resource.k8s.io/v1alpha3"),
    ("apps/v1beta1", "Deployment", "apps/v1beta1 was removed in Kubernetes 1.16, use apps/v1"),
    ("apps/v1beta2", "StatefulSet", "apps/v1beta2 was removed in Kubernetes 1.16, use apps/v1"),
    ("extensions/v1beta1", "DaemonSet", "extensions/v1beta1 DaemonSet was removed in "
                                        "Kubernetes 1.16, use apps/v1"),
    ("extensions/v1beta1", "Ingress", "extensions/v1beta1 was removed in Kubernetes 1.22"),
    ("batch/v1beta1", "CronJob", "batch/v1beta1 was removed in Kubernetes 1.25, use batch/v1"),
    ("scheduling.k8s.io/v1beta1", "PriorityClass", "scheduling.k8s.io/v1beta1 PriorityClass "
                                                   "was removed in Kubernetes 1.22, use "
                                                   "scheduling.k8s.io/v1"),
    ("scheduling.k8s.io/v1alpha1", "Workload", "scheduling.k8s.io/v1alpha1 Workload was removed "
                                               "in Kubernetes 1.36, use scheduling.k8s.io/v1beta1"),
    ("scheduling.k8s.io/v1", "PodGroup", "PodGroup is served as scheduling.k8s.io/v1beta1, "
                                         "scheduling.k8s.io/v1alpha3 and "
                                         "scheduling.k8s.io/v1alpha2"),
    ("v1", "Job", "Job is served as batch/v1"),
    ("v2", "Pod", "Pod is served as v1"),
    ("apps/v9", "ConfigMap", "Kubernetes 1.37 serves apps/v1"),
])
def test_not_served_versions_name_the_replacement(api_version: str, kind: str,
                                                   hint: str) -> None:
    resolution = resolve_kind(api_version, kind)
    assert resolution.served is Served.NOT_SERVED
    assert resolution.message.startswith(
        f'no matches for kind "{kind}" in version "{api_version}"; ')
    assert hint in resolution.message


def test_kind_for_gives_the_v1_class_of_served_versions() -> None:
    assert kind_for(V1BETA1, "ResourceClaim") is ResourceClaim
    assert kind_for("resource.k8s.io/v1alpha3", "DeviceTaintRule") is DeviceTaintRule
    assert kind_for("resource.k8s.io/v1alpha2", "ResourceClaim") is None
    assert kind_for("v1", "ConfigMap") is None


# --- conversion, field by field ------------------------------------------------------------
EXACT_V1BETA1_FIELDS: Doc = {
    "deviceClassName": "gpu.example.com",
    "selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
    "allocationMode": "ExactCount",
    "count": 2,
    "adminAccess": True,
    "tolerations": [{"key": "gpu.example.com/unhealthy", "operator": "Exists",
                     "effect": "NoExecute", "tolerationSeconds": 60}],
    "capacity": {"requests": {"memory": "10Gi"}},
    "derivedAttributes": [{"name": "gpu.example.com/rack", "expression": "'r1'"}],
}
BASIC_FIELDS: Doc = {
    "attributes": {"model": {"string": "LATEST-GPU-MODEL"}, "index": {"int": 0}},
    "capacity": {"memory": {"value": "80Gi", "requestPolicy": {"default": "1Gi",
                                                               "validValues": ["1Gi"]}}},
    "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}],
    "nodeName": "worker-1",
    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["worker-1"]}]}]},
    "allNodes": True,
    "taints": [{"key": "gpu.example.com/unhealthy", "effect": "NoSchedule"}],
    "bindsToNode": True,
    "bindingConditions": ["gpu.example.com/ready"],
    "bindingFailureConditions": ["gpu.example.com/failed"],
    "allowMultipleAllocations": True,
    "nodeAllocatableResources": {"memory": {"overhead": {"perPod": "1Gi"}}},
}
SUB = {"name": "small", "deviceClassName": "gpu.example.com", "count": 1}


def _claim(version: str, requests: list[Doc]) -> Doc:
    return {"apiVersion": version, "kind": "ResourceClaim", "metadata": {"name": "c"},
            "spec": {"devices": {"requests": requests}}}


def _slice(version: str, devices: list[Doc], **spec: Any) -> Doc:
    return {"apiVersion": version, "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "gpu.example.com", **spec, "devices": devices}}


CONVERSIONS: list[tuple[str, Doc, Doc]] = [
    ("every ExactDeviceRequest field moves under exactly",
     _claim(V1BETA1, [{"name": "gpu", **EXACT_V1BETA1_FIELDS}]),
     _claim(V1, [{"name": "gpu", "exactly": EXACT_V1BETA1_FIELDS}])),
    ("firstAvailable stays on the request",
     _claim(V1BETA1, [{"name": "gpu", "firstAvailable": [SUB]}]),
     _claim(V1, [{"name": "gpu", "firstAvailable": [SUB]}])),
    ("a request field dralab does not know travels with the others",
     _claim(V1BETA1, [{"name": "gpu", "deviceClassName": "c", "futureField": 1}]),
     _claim(V1, [{"name": "gpu", "exactly": {"deviceClassName": "c", "futureField": 1}}])),
    ("a request with no field at all stays without exactly",
     _claim(V1BETA1, [{"name": "gpu"}]), _claim(V1, [{"name": "gpu"}])),
    ("every Device field leaves basic",
     _slice(V1BETA1, [{"name": "gpu-0", "basic": BASIC_FIELDS}], nodeName="worker-1"),
     _slice(V1, [{"name": "gpu-0", **BASIC_FIELDS}], nodeName="worker-1")),
    ("a device field dralab does not know travels with the others",
     _slice(V1BETA1, [{"name": "gpu-0", "basic": {"futureField": {"a": 1}}}], allNodes=True),
     _slice(V1, [{"name": "gpu-0", "futureField": {"a": 1}}], allNodes=True)),
    ("a device with nothing but a name",
     _slice(V1BETA1, [{"name": "gpu-0"}], allNodes=True),
     _slice(V1, [{"name": "gpu-0"}], allNodes=True)),
]


@pytest.mark.parametrize(("beta", "v1"), [(b, v) for _, b, v in CONVERSIONS],
                         ids=[name for name, _, _ in CONVERSIONS])
def test_v1beta1_conversion_table(beta: Doc, v1: Doc) -> None:
    frozen = copy.deepcopy(beta)
    assert to_v1(beta) == v1
    assert beta == frozen  # inputs are never modified
    assert from_v1(v1, V1BETA1) == beta


def test_template_requests_convert_under_spec_spec() -> None:
    beta = {"apiVersion": V1BETA1, "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
            "spec": {"metadata": {"labels": {"a": "b"}},
                     "spec": {"devices": {"requests": [{"name": "g", "count": 2}]}}}}
    v1 = to_v1(beta)
    assert v1["spec"]["spec"]["devices"]["requests"] == [{"name": "g", "exactly": {"count": 2}}]
    assert v1["spec"]["metadata"] == {"labels": {"a": "b"}}
    assert from_v1(v1, V1BETA1) == beta


def test_v1beta1_unset_node_fields_are_dropped_as_the_api_server_does() -> None:
    # v1beta1 nodeName/allNodes are plain values where "" and false mean unset; in v1 they
    # would be set (and invalid). The round trip therefore forgets them, like upstream's.
    beta = _slice(V1BETA1, [], nodeName="", allNodes=False, perDeviceNodeSelection=True)
    assert to_v1(beta)["spec"] == {"driver": "gpu.example.com", "perDeviceNodeSelection": True,
                                   "devices": []}
    assert validate_object({**beta, "spec": {**beta["spec"], "pool": {
        "name": "p", "resourceSliceCount": 1}}}) == []


@pytest.mark.parametrize(("version", "kind"), [
    (V1BETA2, "ResourceClaim"), (V1BETA2, "ResourceSlice"), (V1BETA2, "DeviceClass"),
    (V1BETA2, "DeviceTaintRule"), ("resource.k8s.io/v1alpha3", "DeviceTaintRule"),
    (V1BETA1, "DeviceClass"),
])
def test_versions_with_the_v1_layout_only_change_apiversion(version: str, kind: str) -> None:
    doc = {"apiVersion": version, "kind": kind, "metadata": {"name": "x"},
           "spec": {"devices": {"requests": [{"name": "g", "exactly": {"count": 1}}]},
                    "deviceSelector": {"driver": "d"}}}
    assert to_v1(doc) == {**doc, "apiVersion": V1}
    assert from_v1(to_v1(doc), version) == doc


def test_other_documents_pass_and_unwritable_versions_raise() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    assert to_v1(pod) == pod and to_v1(pod) is not pod
    assert from_v1(pod, "v1") == pod
    with pytest.raises(ValueError, match="cannot write"):
        from_v1({"apiVersion": V1, "kind": "DeviceTaintRule"}, V1BETA1)
    with pytest.raises(ValueError, match="cannot write"):
        from_v1({"apiVersion": V1, "kind": "ResourceClaim"}, "resource.k8s.io/v1alpha2")


def test_malformed_parts_are_carried_over_not_raised() -> None:
    odd = [{"apiVersion": V1BETA1, "kind": "ResourceClaim", "spec": "text"},
           {"apiVersion": V1BETA1, "kind": "ResourceClaim", "spec": {"devices": {"requests": 3}}},
           {"apiVersion": V1BETA1, "kind": "ResourceClaim", "spec": {"devices": {
               "requests": ["x", None]}}},
           {"apiVersion": V1BETA1, "kind": "ResourceSlice", "spec": {"devices": [7]}}]
    for doc in odd:
        assert to_v1(doc) == {**doc, "apiVersion": V1}


def test_legacy_v1alpha3_slices_get_value_wrapped_capacities() -> None:
    alpha = {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceSlice",
             "metadata": {"name": "s"},
             "spec": {"driver": "gpu.example.com", "nodeName": "n",
                      "devices": [{"name": "gpu-0", "basic": {
                          "attributes": {"index": {"int": 0}},
                          "capacity": {"memory": "40Gi", "cores": {"value": 8}}}}]}}
    v1 = legacy_slice_to_v1(alpha)
    assert v1["apiVersion"] == V1
    assert v1["spec"]["devices"] == [{"name": "gpu-0", "attributes": {"index": {"int": 0}},
                                      "capacity": {"memory": {"value": "40Gi"},
                                                   "cores": {"value": 8}}}]
    assert legacy_slice_to_v1({"apiVersion": V1BETA1, "kind": "ResourceSlice"}) == {
        "apiVersion": V1BETA1, "kind": "ResourceSlice"}


@pytest.mark.parametrize(("kind", "v1_path", "beta_path"), [
    ("ResourceClaim", "spec.devices.requests[3].exactly.selectors[0].cel.expression",
     "spec.devices.requests[3].selectors[0].cel.expression"),
    ("ResourceClaim", "spec.devices.requests[0].exactly", "spec.devices.requests[0]"),
    ("ResourceClaim", "spec.devices.requests[0].firstAvailable[1].count",
     "spec.devices.requests[0].firstAvailable[1].count"),
    ("ResourceClaimTemplate", "spec.spec.devices.requests[12].exactly.count",
     "spec.spec.devices.requests[12].count"),
    ("ResourceSlice", "spec.devices[2].attributes[gpu.example.com/index].int",
     "spec.devices[2].basic.attributes[gpu.example.com/index].int"),
    ("ResourceSlice", "spec.devices[2].name", "spec.devices[2].name"),
    ("ResourceSlice", "spec.devices[2].nameless", "spec.devices[2].basic.nameless"),
    ("ResourceSlice", "spec.devices[2]", "spec.devices[2]"),
    ("ResourceSlice", "spec.sharedCounters[0].name", "spec.sharedCounters[0].name"),
    ("DeviceClass", "spec.selectors[0]", "spec.selectors[0]"),
])
def test_error_paths_in_v1beta1(kind: str, v1_path: str, beta_path: str) -> None:
    assert path_in_version(v1_path, V1BETA1, kind) == beta_path
    assert path_in_version(v1_path, V1BETA2, kind) == v1_path


# --- properties over every field ------------------------------------------------------------
@PROPERTY
@given(any_pair())
def test_v1beta1_and_v1_convert_into_each_other_losslessly(pair: tuple[Doc, Doc]) -> None:
    v1, beta = pair
    assert to_v1(beta) == v1
    assert from_v1(v1, V1BETA1) == beta
    assert from_v1(to_v1(beta), V1BETA1) == beta


@PROPERTY
@given(any_pair())
def test_round_trip_through_every_version(pair: tuple[Doc, Doc]) -> None:
    v1, beta = pair
    beta2 = from_v1(to_v1(beta), V1BETA2)
    assert beta2 == {**v1, "apiVersion": V1BETA2}
    assert from_v1(to_v1(beta2), V1BETA1) == beta
    assert to_v1(from_v1(v1, V1BETA2)) == v1


@PROPERTY
@given(any_pair(), st.sampled_from([V1BETA2, V1BETA1]))
def test_every_layout_decodes_to_the_same_object(pair: tuple[Doc, Doc], version: str) -> None:
    v1, beta = pair
    older = beta if version == V1BETA1 else {**v1, "apiVersion": V1BETA2}
    assert encode(decode(older)) == encode(decode(v1))


@PROPERTY
@given(any_pair())
def test_valid_in_v1_is_valid_in_v1beta1(pair: tuple[Doc, Doc]) -> None:
    v1, beta = pair
    assert validate_object(v1, features=ALL_GATES) == []
    assert validate_object(beta, features=ALL_GATES) == []
    assert validate_object({**v1, "apiVersion": V1BETA2}, features=ALL_GATES) == []


def test_decoded_slice_keeps_unknown_fields_in_v1_form() -> None:
    beta = _slice(V1BETA1, [{"name": "gpu-0", "basic": {"futureField": 1,
                                                        "attributes": {"a": {"int": 1}}}}],
                  nodeName="n", pool={"name": "n", "resourceSliceCount": 1})
    obj = decode(beta)
    assert isinstance(obj, ResourceSlice) and obj.api_version == V1
    out = encode(obj)
    assert out["spec"]["devices"] == [{"name": "gpu-0", "futureField": 1,
                                       "attributes": {"a": {"int": 1}}}]
    assert from_v1(out, V1BETA1) == beta


@PROPERTY
@given(st.dictionaries(st.sampled_from(["apiVersion", "kind", "spec", "basic", "devices"]),
                       st.recursive(st.none() | st.integers() | st.text(max_size=3),
                                    lambda inner: st.lists(inner, max_size=3)
                                    | st.dictionaries(st.sampled_from(
                                        ["spec", "devices", "requests", "basic", "exactly",
                                         "name", "nodeName", "allNodes"]), inner, max_size=4),
                                    max_leaves=16)),
       st.sampled_from([V1BETA1, V1BETA2, V1, None]), st.sampled_from(
           ["ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", None]))
def test_conversion_never_raises_on_garbage(doc: Doc, version: str | None,
                                            kind: str | None) -> None:
    if version is not None:
        doc["apiVersion"] = version
    if kind is not None:
        doc["kind"] = kind
    converted = to_v1(doc)
    if version == V1BETA1 and kind is not None:
        from_v1(converted, V1BETA1)
    validate_object(doc)
