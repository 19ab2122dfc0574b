"""A ResourceClaim nobody allocated yet is written with ``status: {}``, as the API server
returns it: Go's encoding/json keeps a non-pointer struct field under ``omitempty``
(k8s.io/api v0.36.2 resource/v1 types.go, ResourceClaim.Status). Seen on kube-apiserver
v1.36.2 in the conformance tier (tests/k8s/test_objects_written.py)."""

from __future__ import annotations

from dralab.api.base import ObjectMeta
from dralab.api.codec import encode
from dralab.api.io import Document, dumps, load_documents
from dralab.api.resource import ResourceClaim

CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "gpu", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
             "deviceClassName": "gpu.example.com"}}]}}}


def test_pending_claim_read_from_a_file_is_written_with_an_empty_status() -> None:
    claim = load_documents([Document("claim.yaml", 1, CLAIM)])[0]
    assert encode(claim)["status"] == {}
    assert dumps(claim).endswith("status: {}\n")


def test_claim_built_in_code_is_written_with_an_empty_status() -> None:
    # No document behind it (raw is None): the claims the scheduler generates from templates.
    built = ResourceClaim(metadata=ObjectMeta(name="gpu", namespace="default"))
    encoded = encode(built)
    assert built.raw is None
    assert list(encoded)[:2] == ["apiVersion", "kind"]
    assert encoded["status"] == {}


def test_allocated_claim_keeps_its_status() -> None:
    allocated = dict(CLAIM, status={"reservedFor": [{"resource": "pods", "name": "p",
                                                     "uid": "u"}]})
    claim = load_documents([Document("claim.yaml", 1, allocated)])[0]
    assert encode(claim)["status"] == allocated["status"]
