"""A ComputeDomain in a snapshot: checked by validation as its CRD checks it, and the
workload channel template its controller creates is in the cluster a run starts from
(NVIDIA k8s-dra-driver-gpu 22407113785e78c7763b4637689a201eb39c6199, issue 36)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dralab.api.codec import decode
from dralab.api.io import Document
from dralab.controllers.computedomain import CD_LABEL, TARGET_LABEL
from dralab.controllers.snapshotbuild import build_cluster
from dralab.validation.check import not_checked, validate_documents

DATA = Path(__file__).parent.parent / "data" / "nvlink"


def _docs(file: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DATA / file).read_text()) if d]


def test_demo_template_created_for_the_pod() -> None:
    # channel-injection.yaml: the Pod names resourceClaimTemplateName imex-channel-0,
    # which only the ComputeDomain's controller writes.
    cluster, pending = build_cluster([decode(d) for d in _docs("channel-injection.yaml")])
    template = cluster.template("default", "imex-channel-0")
    assert template is not None
    assert template.metadata.labels[TARGET_LABEL] == "Workload"
    assert CD_LABEL in template.metadata.labels
    assert [p.pod.name for p in pending] == ["imex-channel-injection"]


def test_template_in_snapshot_is_kept() -> None:
    docs = _docs("channel-injection.yaml")
    mine = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "imex-channel-0", "namespace": "default",
                         "labels": {"mine": "yes"}},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "channel", "exactly": {"deviceClassName": "x"}}]}}}}
    cluster, _ = build_cluster([decode(d) for d in [*docs, mine]])
    template = cluster.template("default", "imex-channel-0")
    assert template is not None and template.metadata.labels == {"mine": "yes"}


def test_invalid_compute_domain_creates_nothing_and_is_reported() -> None:
    bad = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
           "metadata": {"name": "bad"},
           "spec": {"numNodes": -1, "channel": {"resourceClaimTemplate": {"name": "t"}}}}
    cluster, _ = build_cluster([decode(bad)])
    assert cluster.template("default", "t") is None
    doc = Document("cd.yaml", 1, bad)
    assert [str(p) for p in validate_documents([doc])] == [
        "cd.yaml:1 ComputeDomain bad: spec.numNodes: Invalid value: -1: "
        "should be greater than or equal to 0"]
    # Checked, so not listed among the kinds dralab does not check.
    assert not_checked([doc]) == []


def test_unserved_version_is_a_problem() -> None:
    doc = Document("cd.yaml", 1, {"apiVersion": "resource.nvidia.com/v1", "kind":
                                  "ComputeDomain", "metadata": {"name": "x"}})
    (problem,) = validate_documents([doc])
    assert "the driver's CRDs serve resource.nvidia.com/v1beta1" in str(problem)


def test_other_kinds_of_the_group_stay_not_checked() -> None:
    doc = Document("x.yaml", 1, {"apiVersion": "resource.nvidia.com/v1beta1",
                                 "kind": "ComputeDomainList", "metadata": {"name": "x"}})
    assert validate_documents([doc]) == [] and not_checked([doc]) == [doc]


def _node_docs(name: str, clique: str) -> list[dict[str, Any]]:
    # One channel device per node, as the compute-domain kubelet plugin publishes it
    # (deviceinfo.go: "channel-0", attributes type and id).
    return [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": {"nvidia.com/gpu.clique": clique}},
         "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": f"{name}-cd"},
         "spec": {"driver": "compute-domain.nvidia.com", "nodeName": name,
                  "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "channel-0", "attributes": {
                      "type": {"string": "channel"}, "id": {"int": 0}}}]}},
    ]


CHANNEL_CLASS = {
    "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
    "metadata": {"name": "compute-domain-default-channel.nvidia.com"},
    "spec": {"selectors": [{"cel": {"expression":
        "device.driver == 'compute-domain.nvidia.com' && "
        "device.attributes['compute-domain.nvidia.com'].type == 'channel'"}}]}}


def _worker(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "x",
                                     "resources": {"claims": [{"name": "ch"}]}}],
                     "resourceClaims": [{"name": "ch", "resourceClaimTemplateName":
                                         "nvbandwidth-test-compute-domain-1-channel"}]}}


def test_scheduled_workers_label_nodes_and_may_span_two_nvlink_domains() -> None:
    # Upstream's default: the channel request carries no node constraint, so two workers
    # with one channel each land on one node per clique when each clique's node has
    # one channel; the CD (numNodes 2) gets a daemon on both and becomes Ready.
    from dralab.controllers.computedomain import compute_domains, run_in_cluster
    from dralab.scheduler import schedule

    cd_doc = _docs("nvbandwidth-test-job-1.yaml")[0]
    docs = [*_node_docs("a1", "uuid.1"), *_node_docs("b1", "uuid.2"), CHANNEL_CLASS,
            cd_doc, _worker("w0"), _worker("w1")]
    objects = [decode(d) for d in docs]
    result = schedule(objects)
    assert not result.unplaced
    (cd,) = compute_domains(objects)
    run = run_in_cluster(result.cluster, cd)
    assert run.daemon_nodes == ["a1", "b1"]
    assert run.cliques == ["uuid.1", "uuid.2"]
    assert run.status.status == "Ready"
