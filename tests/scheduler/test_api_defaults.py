"""Claims dralab writes carry the defaults kube-apiserver fills into device requests on create.

Upstream: kubernetes v1.36.2 pkg/apis/resource/v1/defaults.go (SetDefaults_ExactDeviceRequest,
SetDefaults_DeviceSubRequest) and zz_generated.defaults.go (DeviceToleration operator "Equal").
Found by the conformance tier (tests/k8s): a claim the resourceclaim controller made from a
hand-written template reads ``allocationMode: ExactCount``, ``count: 1`` on the server.
"""

from __future__ import annotations

from typing import Any

from dralab.api.codec import encode
from dralab.api.io import Document, load_documents
from dralab.api.resource import ResourceClaimSpec
from dralab.api.resourcedefaults import default_claim_spec
from dralab.scheduler import schedule

DRIVER = "gpu.example.com"


def _objects() -> list[Any]:
    docs = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1"},
         "spec": {"driver": DRIVER, "nodeName": "n1",
                  "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": f"gpu-{i}"} for i in range(3)]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "flex", "namespace": "default"},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
             {"name": "big", "deviceClassName": "gpu", "count": 2},
             {"name": "small", "deviceClassName": "gpu",
              "tolerations": [{"key": "example.com/t", "value": "x"}]}]}]}}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "one", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
             "deviceClassName": "gpu"}}]}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "i"}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "flex"},
                                     {"name": "one", "resourceClaimName": "one"}]}},
    ]
    return load_documents([Document("test", n, d) for n, d in enumerate(docs, 1)])


def test_claims_written_from_templates_and_files_carry_the_api_defaults() -> None:
    result = schedule(_objects())
    assert result.all_placed
    claims = {encode(o)["metadata"].get("annotations", {}).get(
        "resource.kubernetes.io/pod-claim-name", encode(o)["metadata"]["name"]): encode(o)
        for o in result.objects() if o.kind == "ResourceClaim"}
    generated = claims["gpu"]["spec"]["devices"]["requests"][0]["firstAvailable"]
    assert generated[0]["allocationMode"] == "ExactCount" and generated[0]["count"] == 2
    assert generated[1]["allocationMode"] == "ExactCount" and generated[1]["count"] == 1
    assert generated[1]["tolerations"] == [{"key": "example.com/t", "operator": "Equal",
                                            "value": "x"}]
    written = claims["one"]["spec"]["devices"]["requests"][0]["exactly"]
    assert written == {"allocationMode": "ExactCount", "count": 1, "deviceClassName": "gpu"}


def _spec(exactly: dict[str, Any]) -> ResourceClaimSpec:
    claim = load_documents([Document("t", 1, {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}})])[0]
    spec: ResourceClaimSpec = claim.spec  # type: ignore[attr-defined]
    return spec


def test_all_mode_gets_no_count_and_zero_count_becomes_one() -> None:
    # SetDefaults_ExactDeviceRequest: count is defaulted only for ExactCount, and Go cannot
    # tell an explicit 0 from an unset count.
    all_mode = default_claim_spec(_spec({"deviceClassName": "g", "allocationMode": "All"}))
    assert all_mode.devices.requests[0].exactly is not None
    assert all_mode.devices.requests[0].exactly.count is None
    zero = default_claim_spec(_spec({"deviceClassName": "g", "count": 0}))
    assert zero.devices.requests[0].exactly is not None
    assert zero.devices.requests[0].exactly.count == 1


def test_a_defaulted_spec_is_returned_unchanged() -> None:
    spec = _spec({"deviceClassName": "g", "allocationMode": "ExactCount", "count": 3,
                  "tolerations": [{"key": "k", "operator": "Exists"}]})
    assert default_claim_spec(spec) is spec
