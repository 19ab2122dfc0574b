"""The fake API server answers in the shapes the real one does (tests/live/fakeapi.py
against the bodies captured from kube-apiserver v1.36.2), and dralab reads it so."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import parse_qs

from dralab.live import load_cluster_config, read_cluster
from live.fakeapi import CAPTURED, FakeCluster, example_cluster, kubeconfig, serve


def _token_fields(token: str) -> set[str]:
    return set(json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))))


def test_list_pages_and_errors_have_the_real_shapes() -> None:
    fake = FakeCluster(example_cluster(), tokens={"good": set(), "limited": {"resourceslices"}})
    real = CAPTURED["/api/v1/nodes?limit=1"]
    code, page = fake.answer("/api/v1/nodes", parse_qs("limit=1"), "good")
    assert code == 200 and isinstance(page, dict)
    assert page.keys() == real.keys() and page["metadata"].keys() == real["metadata"].keys()
    assert (page["kind"], page["apiVersion"]) == (real["kind"], real["apiVersion"])
    assert page["items"][0].keys() == real["items"][0].keys()  # no apiVersion, no kind
    assert _token_fields(page["metadata"]["continue"]) == \
        _token_fields(real["metadata"]["continue"]) == {"v", "rv", "start"}
    real_403 = CAPTURED["403 /apis/resource.k8s.io/v1/resourceslices?limit=1"]
    code, body = fake.answer("/apis/resource.k8s.io/v1/resourceslices", {}, "limited")
    assert code == 403 and isinstance(body, dict)
    assert {k: v for k, v in body.items() if k != "message"} == \
        {k: v for k, v in real_403.items() if k != "message"}
    assert body["message"] == real_403["message"].replace(":default:default", ":default:limited")
    assert fake.answer("/api/v1/pods", {}, "stolen") == (401, CAPTURED["401 /api/v1/pods?limit=1"])
    assert fake.answer("/apis/kueue.x-k8s.io/v1beta1/workloads", {}, "good") == \
        (404, "404 page not found\n")


def test_read_picks_served_versions_and_skips_what_is_not_served(tmp_path: Path) -> None:
    fake = FakeCluster(example_cluster(), crds=set())
    with serve(fake) as url:
        read = read_cluster(load_cluster_config(str(kubeconfig(tmp_path / "config", url))))
    # v1 preferred over the v1beta2 and v1beta1 the server also serves; DeviceTaintRule
    # only in v1beta2 there; scheduling.k8s.io's Workload and PodGroup, Kueue and
    # storage.k8s.io (not in the captured discovery) not at all
    assert read.versions == {
        "core/namespaces": "v1", "core/nodes": "v1", "core/pods": "v1", "core/services": "v1",
        "core/persistentvolumeclaims": "v1", "core/persistentvolumes": "v1",
        "scheduling.k8s.io/priorityclasses": "v1", "resource.k8s.io/deviceclasses": "v1",
        "resource.k8s.io/resourceslices": "v1", "resource.k8s.io/resourceclaims": "v1",
        "resource.k8s.io/resourceclaimtemplates": "v1",
        "resource.k8s.io/devicetaintrules": "v1beta2", "apps/deployments": "v1",
        "apps/replicasets": "v1", "apps/statefulsets": "v1", "apps/daemonsets": "v1",
        "batch/jobs": "v1", "batch/cronjobs": "v1"}
    assert {d.data["kind"] for d in read.documents} == {
        "Namespace", "Node", "Pod", "DeviceClass", "ResourceSlice", "ResourceClaim",
        "ResourceClaimTemplate", "Job"}
    assert {method for method, _ in fake.requests} == {"GET"}
