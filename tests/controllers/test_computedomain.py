"""ComputeDomain (NVIDIA's k8s-dra-driver-gpu, 22407113785e78c7763b4637689a201eb39c6199):
reading and CRD checks, and the controller's objects, node label and status (issue 36).

Inputs are the driver's demo specs (tests/data/nvlink, see NOTICE); expectations are
quoted from the driver's CRD, templates, controller code and bats tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dralab.api.codec import DecodeError, encode
from dralab.api.computedomain import (
    ComputeDomain,
    ComputeDomainClique,
    compute_domain_problems,
    compute_domain_uid,
    decode_compute_domain,
    is_compute_domain_document,
)
from dralab.controllers.computedomain import (
    CD_LABEL,
    LabelConflict,
    daemon_claim_template,
    daemon_set,
    label_node,
    run_compute_domain,
    workload_claim_template,
)

DATA = Path(__file__).parent.parent / "data" / "nvlink"


def _cd(file: str) -> ComputeDomain:
    docs = [d for d in yaml.safe_load_all((DATA / file).read_text()) if d]
    found = [decode_compute_domain(d) for d in docs if is_compute_domain_document(d)]
    assert len(found) == 1
    cd = found[0]
    assert isinstance(cd, ComputeDomain)
    return cd


def _problems(doc: dict[str, Any]) -> list[str]:
    return [str(p) for p in compute_domain_problems(decode_compute_domain(doc))]


def _doc(spec: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
            "metadata": {"name": "cd"}, "spec": spec}


# --- reading and the CRD's schema ------------------------------------------------------

def test_demo_specs_read_with_crd_defaults() -> None:
    cd = _cd("channel-injection.yaml")
    assert (cd.name, cd.num_nodes, cd.template_name) == (
        "imex-channel-injection", 1, "imex-channel-0")
    # CRD: allocationMode "default: Single".
    assert cd.allocation_mode == "Single"
    assert compute_domain_problems(cd) == []
    assert _cd("channel-injection-all.yaml").allocation_mode == "All"
    assert _cd("nvbandwidth-test-job-1.yaml").num_nodes == 2


def test_num_nodes_defaults_to_zero() -> None:
    cd = decode_compute_domain(_doc({"channel": {"resourceClaimTemplate": {"name": "t"}}}))
    assert isinstance(cd, ComputeDomain) and cd.num_nodes == 0
    assert compute_domain_problems(cd) == []


@pytest.mark.parametrize(("spec", "expected"), [
    ({}, ["spec.channel: Required value"]),
    ({"channel": {}}, ["spec.channel.resourceClaimTemplate: Required value"]),
    ({"channel": {"resourceClaimTemplate": {}}},
     ["spec.channel.resourceClaimTemplate.name: Required value"]),
    ({"numNodes": -1, "channel": {"resourceClaimTemplate": {"name": "t"}}},
     ["spec.numNodes: Invalid value: -1: should be greater than or equal to 0"]),
    ({"channel": {"allocationMode": "Some", "resourceClaimTemplate": {"name": "t"}}},
     ['spec.channel.allocationMode: Unsupported value: "Some": supported values: '
      '"All", "Single"']),
])
def test_crd_schema_refusals(spec: dict[str, Any], expected: list[str]) -> None:
    assert _problems(_doc(spec)) == expected


def test_missing_spec_and_type_mismatch() -> None:
    doc = _doc(None)
    del doc["spec"]
    assert _problems(doc) == ["spec: Required value"]
    with pytest.raises(DecodeError) as info:
        decode_compute_domain(_doc({"numNodes": "two"}))
    assert "spec.numNodes" in str(info.value)


def test_unserved_version_and_unknown_kind() -> None:
    with pytest.raises(DecodeError, match=r"serve resource\.nvidia\.com/v1beta1"):
        decode_compute_domain({"apiVersion": "resource.nvidia.com/v1", "kind": "ComputeDomain"})
    with pytest.raises(DecodeError, match="not modelled"):
        decode_compute_domain({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "Foo"})


def test_clique_daemons_list_map() -> None:
    doc = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomainClique",
           "metadata": {"name": "u.1", "namespace": "ns"},
           "daemons": [{"nodeName": "a", "ipAddress": "10.0.0.1", "cliqueID": "c.1",
                        "index": 0},
                       {"nodeName": "a", "ipAddress": "10.0.0.2", "cliqueID": "c.1",
                        "index": 1, "status": "Up"}]}
    clique = decode_compute_domain(doc)
    assert isinstance(clique, ComputeDomainClique)
    assert clique.daemons[0].status == "NotReady"  # CRD default
    assert [str(p) for p in compute_domain_problems(clique)] == [
        'daemons[1].status: Unsupported value: "Up": supported values: "Ready", "NotReady"',
        'daemons[1]: Duplicate value: {"nodeName": "a"}',
    ]


# --- the controller's objects -----------------------------------------------------------

def test_workload_claim_template_as_the_template_writes_it() -> None:
    cd = _cd("channel-injection-all.yaml")
    uid = compute_domain_uid(cd)
    doc = encode(workload_claim_template(cd))
    assert doc["metadata"] == {
        "name": "tpl-imex-channels", "namespace": "default",
        "labels": {"resource.nvidia.com/computeDomain": uid,
                   "resource.nvidia.com/computeDomainTarget": "Workload"},
        "finalizers": ["resource.nvidia.com/computeDomain"]}
    devices = doc["spec"]["spec"]["devices"]
    assert devices["requests"] == [{"name": "channel", "exactly": {
        "deviceClassName": "compute-domain-default-channel.nvidia.com"}}]
    assert devices["config"] == [{"requests": ["channel"], "opaque": {
        "driver": "compute-domain.nvidia.com",
        "parameters": {"apiVersion": "resource.nvidia.com/v1beta1",
                       "kind": "ComputeDomainChannelConfig", "domainID": uid,
                       "allocationMode": "All"}}}]


def test_uid_is_metadata_uid_when_given_else_stable() -> None:
    cd = _cd("channel-injection.yaml")
    assert compute_domain_uid(cd) == compute_domain_uid(_cd("channel-injection.yaml"))
    doc = _doc({"channel": {"resourceClaimTemplate": {"name": "t"}}})
    doc["metadata"]["uid"] = "1234"
    given = decode_compute_domain(doc)
    assert isinstance(given, ComputeDomain) and compute_domain_uid(given) == "1234"


def test_daemon_claim_template_and_daemon_set() -> None:
    cd = _cd("channel-injection.yaml")
    uid = compute_domain_uid(cd)
    rct = encode(daemon_claim_template(cd, "dra-driver-nvidia-gpu"))
    assert rct["metadata"]["name"] == f"computedomain-daemon-{uid}"
    assert rct["metadata"]["namespace"] == "dra-driver-nvidia-gpu"
    assert rct["metadata"]["labels"]["resource.nvidia.com/computeDomainTarget"] == "Daemon"
    devices = rct["spec"]["spec"]["devices"]
    assert devices["requests"][0]["name"] == "daemon"
    assert devices["requests"][0]["exactly"]["deviceClassName"] == \
        "compute-domain-daemon.nvidia.com"
    assert devices["config"][0]["opaque"]["parameters"] == {
        "apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomainDaemonConfig",
        "domainID": uid}
    ds = encode(daemon_set(cd))
    # tests/bats/helpers.sh: CD_LABEL_KV="resource.nvidia.com/computeDomain=${CD_UID}"
    assert ds["spec"]["template"]["spec"]["nodeSelector"] == {CD_LABEL: uid}
    assert ds["spec"]["selector"] == {"matchLabels": {CD_LABEL: uid}}
    assert ds["spec"]["template"]["spec"]["resourceClaims"] == [
        {"name": "compute-domain-daemon",
         "resourceClaimTemplateName": f"computedomain-daemon-{uid}"}]


# --- node label at prepare, daemons and status -----------------------------------------

def test_label_node_refuses_another_domain() -> None:
    assert label_node({"a": "b"}, "u1") == {"a": "b", CD_LABEL: "u1"}
    assert label_node({CD_LABEL: "u1"}, "u1") == {CD_LABEL: "u1"}
    with pytest.raises(LabelConflict, match="label already exists for a different"):
        label_node({CD_LABEL: "u2"}, "u1")


CLIQUE = "nvidia.com/gpu.clique"


def test_channel_injection_one_node_ready() -> None:
    # bats: kubectl wait --for=condition=READY pods imex-channel-injection (numNodes 1).
    cd = _cd("channel-injection.yaml")
    run = run_compute_domain(cd, {"n1": {CLIQUE: "uuid.1"}, "n2": {CLIQUE: "uuid.1"}},
                             placed=["n1"])
    assert run.daemon_nodes == ["n1"]
    assert run.node_labels["n1"][CD_LABEL] == run.uid and CD_LABEL not in run.node_labels["n2"]
    assert run.status.status == "Ready"
    assert [(n.name, n.clique_id, n.index) for n in run.status.nodes] == [("n1", "uuid.1", 0)]


def test_two_nodes_not_ready_until_both_daemons_run() -> None:
    cd = _cd("nvbandwidth-test-job-1.yaml")  # numNodes: 2
    nodes = {"n1": {CLIQUE: "uuid.1"}, "n2": {CLIQUE: "uuid.1"}}
    assert run_compute_domain(cd, nodes, placed=["n1"]).status.status == "NotReady"
    run = run_compute_domain(cd, nodes, placed=["n2", "n1"])
    assert run.status.status == "Ready"
    assert [(n.name, n.index) for n in run.status.nodes] == [("n2", 0), ("n1", 1)]
    assert run_compute_domain(cd, nodes, placed=["n1", "n2"], ready=False
                              ).status.status == "NotReady"


def test_nothing_keeps_the_workload_in_one_nvlink_domain() -> None:
    # Upstream: the channel claim has no node constraint; pods placed on two cliques
    # get a daemon on each and the domain spans both (cliqueID per node).
    cd = _cd("nvbandwidth-test-job-1.yaml")
    nodes = {"a1": {CLIQUE: "uuid.1"}, "b1": {CLIQUE: "uuid.2"}, "x": {}}
    run = run_compute_domain(cd, nodes, placed=["a1", "b1"])
    assert run.status.status == "Ready"
    assert run.cliques == ["uuid.1", "uuid.2"]
    assert [n.index for n in run.status.nodes] == [0, 0]
    plain = run_compute_domain(cd, nodes, placed=["x"])
    assert [(n.clique_id, n.index) for n in plain.status.nodes] == [("", -1)]


def test_node_of_another_domain_is_refused() -> None:
    cd = _cd("channel-injection.yaml")
    run = run_compute_domain(cd, {"n1": {CLIQUE: "u.1", CD_LABEL: "other"}}, placed=["n1"])
    assert run.refused == {"n1": "label already exists for a different ComputeDomain"}
    assert run.daemon_nodes == [] and run.status.status == "NotReady"
