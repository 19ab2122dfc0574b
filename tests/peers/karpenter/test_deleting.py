"""Karpenter's Deleting Nodes tests, ported case by case.

Source: kubernetes-sigs/karpenter at 2266468104f36373ed002241afaee2d3bbc26078,
pkg/controllers/provisioning/scheduling/suite_test.go, Describe("Deleting Nodes")
(test_scheduling.py counts these cases as ported). Upstream provisions a node for a
pod, marks the node for deletion in its cluster state (cluster.MarkForDeletion), maybe
evicts the pod, and provisions again; here the input is that state: the node of the
type upstream's first round launched, tainted karpenter.sh/disrupted:NoSchedule as
Karpenter marks a node it disrupts, with the pod bound to it (an evicted pod has its
deletionTimestamp), and one loop of the Karpenter model.
"""

from __future__ import annotations

from typing import Any

import pytest

from .harness import Doc, defaults, node, pod, run

DEFAULTS = defaults()
SMALL = next(t for t in DEFAULTS if t.name == "small-instance-type"
             and t.zone == "test-zone-1" and t.os == "linux")
POOL_TYPE = {t.pool: t.name for t in DEFAULTS}
POD_LABELS = {"app": "test"}
DISRUPTED = {"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}
DELETED_AT = "2026-01-01T00:00:00Z"


def upstream(path: str) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", [pytest.param(path, id=path)])


def _marked_node() -> Doc:
    return node("node1", SMALL, cpu="2", memory="2Gi", pods="5", taints=[DISRUPTED])


def _pod(owner: str | None = "ReplicaSet", evicted: bool = False) -> Doc:
    doc = pod("p", on="node1", memory="100M", owner=owner, labels=POD_LABELS)
    if evicted:
        # ExpectEvicted: the eviction sets the deletion timestamp; the pod still exists.
        doc["metadata"]["deletionTimestamp"] = DELETED_AT
    return doc


def _launched_types(*objects: Doc) -> list[str]:
    result = run(DEFAULTS, *objects)
    assert result.pending == []
    return sorted(POOL_TYPE[p] for p, n in result.launched for _ in range(n))


@upstream("Deleting Nodes/should re-schedule pods from a deleting node when pods are active")
def test_reschedule_active_pods(case: str) -> None:
    # Another node, of the same size, for the pod once it is re-created.
    assert _launched_types(_marked_node(), _pod()) == ["small-instance-type"]


@upstream("Deleting Nodes/should not re-schedule pods from a deleting node when pods are not "
          "active")
def test_not_active_pods(case: str) -> None:
    assert _launched_types(_marked_node(), _pod(owner=None, evicted=True)) == []


@upstream("Deleting Nodes/should not re-schedule pods from a deleting node when pods are owned "
          "by a DaemonSet")
def test_daemonset_pods(case: str) -> None:
    assert _launched_types(_marked_node(), _pod(owner="DaemonSet", evicted=True)) == []


@upstream("Deleting Nodes/should not reschedule pods from a deleting node when pods are not "
          "active and they are owned by a ReplicaSet")
def test_replicaset_terminating_pods(case: str) -> None:
    assert _launched_types(_marked_node(), _pod(owner="ReplicaSet", evicted=True)) == []


@upstream("Deleting Nodes/should reschedule pods from a deleting node when pods are not active "
          "and they are owned by a StatefulSet")
def test_statefulset_terminating_pods(case: str) -> None:
    assert _launched_types(_marked_node(), _pod(owner="StatefulSet", evicted=True)) == [
        "small-instance-type"]


def _pdb(name: str, **spec: Any) -> Doc:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": POD_LABELS}, **spec}}


BLOCKING = "Deleting Nodes/should not reschedule pods from a deleting node when pods are " \
    "blocked due to fully blocking PDBs/"


@pytest.mark.parametrize("pdbs", [
    pytest.param([_pdb("pdb", maxUnavailable=0)], id=BLOCKING + "0 max unavailable"),
    pytest.param([_pdb("pdb", maxUnavailable="0%")], id=BLOCKING + "0% max unavailable"),
    pytest.param([_pdb("pdb", minAvailable="100%")], id=BLOCKING + "100% min available"),
    pytest.param([_pdb("pdb-1", minAvailable="100%"), _pdb("pdb-2", minAvailable="100%")],
                 id=BLOCKING + "multiple PDBs on the same pod"),
])
def test_fully_blocking_pdbs(pdbs: list[Doc]) -> None:
    assert _launched_types(_marked_node(), _pod(), *pdbs) == []
