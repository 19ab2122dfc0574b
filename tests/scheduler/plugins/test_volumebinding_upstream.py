"""VolumeBinding, ported from upstream's table: one test per upstream case.

kubernetes v1.36.2, pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go,
TestVolumeBinding: the cases that PreFilter and Filter decide, under their upstream names
(PreFilter's status, then Filter's on each node when PreFilter succeeded; upstream's
makePVC/makePV/withBoundPV/withNodeAffinity as documents).

Not ported, with the reason:
* the 9 Score cases ("local volumes with close capacity are preferred" (and multiple pvcs),
  "zonal volumes with close capacity are preferred" (and custom shape), "storage capacity
  score", "storage capacity score with static binds", "dynamic provisioning with multiple
  PVCs of the same StorageClass", "prefer node with least allocatable", "prefer node with
  maximum allocatable"): dralab's VolumeBinding does not score (static bindings'
  utilisation, CSIStorageCapacity objects are not modelled);
* Test_PreBindPreFlight (PreBind: dralab writes no bindings) and the queueing-hint tables
  TestIsSchedulableAfter* (no queueing hints for the volume objects yet).
"""

from __future__ import annotations

from typing import Any

import pytest

from dralab.cluster import PodInfo
from dralab.scheduler.framework import CycleState
from dralab.scheduler.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    VolumeBinding,
)

from .volumeupstream import handle, listers, make_node, pod_with, sc_doc, shape

WAIT_SC = sc_doc("wait-sc", "WaitForFirstConsumer")
IMMEDIATE_SC = sc_doc("immediate-sc", "Immediate")
UNRESOLVABLE = "UnschedulableAndUnresolvable"


def make_pvc(name: str, class_name: str, *, bound_pv: str = "", phase: str = ""
             ) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                           "metadata": {"name": name, "namespace": "default"},
                           "spec": {"storageClassName": class_name}}
    if bound_pv:  # withBoundPV
        doc["spec"]["volumeName"] = bound_pv
        doc["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "true"}
    if phase:
        doc["status"] = {"phase": phase}
    return doc


def make_pv(name: str, class_name: str, *, phase: str = "",
            affinity: dict[str, list[str]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"storageClassName": class_name}
    if affinity:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": k, "operator": "In", "values": v} for k, v in affinity.items()]}]}}
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolume",
                           "metadata": {"name": name}, "spec": spec}
    if phase:
        doc["status"] = {"phase": phase}
    return doc


# (name, claims of the pod, node labels, pvcs, pvs, want PreFilter, want Filter)
CASES: list[Any] = [
    ("pod has not pvcs", [], {}, [], [], ("Skip", ()), None),
    ("all bound", ["pvc-a"], {}, [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
     [make_pv("pv-a", "wait-sc", phase="Available")], None, None),
    ("PVC does not exist", ["pvc-a"], {}, [], [],
     (UNRESOLVABLE, ('persistentvolumeclaim "pvc-a" not found',)), None),
    ("Part of PVCs do not exist", ["pvc-a", "pvc-b"], {},
     [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")], [],
     (UNRESOLVABLE, ('persistentvolumeclaim "pvc-b" not found',)), None),
    ("immediate claims not bound", ["pvc-a"], {}, [make_pvc("pvc-a", "immediate-sc")], [],
     (UNRESOLVABLE, ("pod has unbound immediate PersistentVolumeClaims",)), None),
    ("unbound claims no matches", ["pvc-a"], {}, [make_pvc("pvc-a", "wait-sc")], [],
     None, (UNRESOLVABLE, (ERR_REASON_BIND_CONFLICT,))),
    ("bound and unbound unsatisfied", ["pvc-a", "pvc-b"], {"foo": "barbar"},
     [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a"), make_pvc("pvc-b", "wait-sc")],
     [make_pv("pv-a", "wait-sc", phase="Available", affinity={"foo": ["bar"]})],
     None, (UNRESOLVABLE, (ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT))),
    ("pv not found", ["pvc-a"], {}, [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")], [],
     None, (UNRESOLVABLE, (ERR_REASON_PV_NOT_EXIST,))),
    ("pv not found claim lost", ["pvc-a"], {},
     [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a", phase="Lost")], [],
     (UNRESOLVABLE, ('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume '
                     '"pv-a"',)), None),
]


@pytest.mark.parametrize(("name", "claims", "labels", "pvcs", "pvs", "pre", "want"), CASES,
                         ids=[c[0] for c in CASES])
def test_volume_binding(name: str, claims: list[str], labels: dict[str, str],
                        pvcs: list[dict[str, Any]], pvs: list[dict[str, Any]], pre: Any,
                        want: Any) -> None:
    node = make_node("node-a", {"kubernetes.io/hostname": "node-a", **labels})
    cluster = listers(WAIT_SC, IMMEDIATE_SC, *pvcs, *pvs, nodes=[node])
    plugin = VolumeBinding(handle(cluster))
    state = CycleState()
    info = PodInfo(pod_with("pod-a", claims=claims))
    _, got_pre = plugin.pre_filter(state, info, cluster)
    assert shape(got_pre) == pre
    if got_pre.is_success():
        assert shape(plugin.filter(state, info, cluster.nodes["node-a"])) == want
