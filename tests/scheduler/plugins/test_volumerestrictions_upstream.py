"""VolumeRestrictions, ported from upstream's tables: one test per upstream case.

kubernetes v1.36.2, pkg/scheduler/framework/plugins/volumerestrictions/
volume_restrictions_test.go: TestGCEDiskConflicts, TestAWSDiskConflicts,
TestRBDDiskConflicts, TestISCSIDiskConflicts and TestAccessModeConflicts, every case under
its upstream name: PreFilter, then (when it succeeds) Filter on the same cycle state. A
NodeInfo holding pods is node "node-1" in a ClusterState with those pods placed on it.

Not ported: Test_isSchedulableAfterPodDeleted and
Test_isSchedulableAfterPersistentVolumeClaimChange (queueing hints: dralab's volume plugins
register none yet).
"""

from __future__ import annotations

from typing import Any

import pytest

from dralab.cluster import PodInfo
from dralab.scheduler.framework import CycleState
from dralab.scheduler.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
    VolumeRestrictions,
)

from .volumeupstream import handle, listers, make_node, pod_with, pvc_doc, shape

DISK = ("Unschedulable", (ERR_REASON_DISK_CONFLICT,))
RWOP = ("Unschedulable", (ERR_REASON_RWOP_CONFLICT,))
SKIP = ("Skip", ())

GCE = ({"name": "a", "gcePersistentDisk": {"pdName": "foo"}},
       {"name": "a", "gcePersistentDisk": {"pdName": "bar"}})
AWS = ({"name": "a", "awsElasticBlockStore": {"volumeID": "foo"}},
       {"name": "a", "awsElasticBlockStore": {"volumeID": "bar"}})
RBD = ({"name": "a", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar",
                             "fsType": "ext4"}},
       {"name": "a", "rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar",
                             "fsType": "ext4"}})
ISCSI = ({"name": "a", "iscsi": {"targetPortal": "127.0.0.1:3260",
                                 "iqn": "iqn.2016-12.server:storage.target01",
                                 "fsType": "ext4", "lun": 0}},
         {"name": "a", "iscsi": {"targetPortal": "127.0.0.1:3260",
                                 "iqn": "iqn.2017-12.server:storage.target01",
                                 "fsType": "ext4", "lun": 0}})
NO_RESTRICTION = {"name": "volume with no restriction", "emptyDir": {}}


def _disk_cases(states: tuple[dict[str, Any], dict[str, Any]], gce: bool = False) -> list[Any]:
    state, state2 = states
    cases: list[Any] = [
        ("nothing", [], [], SKIP, None),
        ("one state", [], [[state]], SKIP, None),
        ("same state", [state], [[state]], None, DISK),
        ("different state", [state2], [[state]], None, None),
    ]
    if gce:
        cases.append(("pod with a volume that doesn't have restrictions", [NO_RESTRICTION], [],
                      SKIP, None))
    return cases


DISK_TABLES = {
    "TestGCEDiskConflicts": _disk_cases(GCE, gce=True),
    "TestAWSDiskConflicts": _disk_cases(AWS),
    "TestRBDDiskConflicts": _disk_cases(RBD),
    "TestISCSIDiskConflicts": _disk_cases(ISCSI),
}


def _run(cluster: Any, pod: Any, node_name: str = "node-1") -> tuple[Any, Any]:
    plugin = VolumeRestrictions(handle(cluster))
    state = CycleState()
    info = PodInfo(pod)
    _, pre = plugin.pre_filter(state, info, cluster)
    if shape(pre) is not None:
        return shape(pre), None  # PreFilter failed or skipped: Filter does not run
    return None, shape(plugin.filter(state, info, cluster.nodes[node_name]))


@pytest.mark.parametrize(("table", "name", "volumes", "placed", "pre", "want"), [
    (table, *case) for table, cases in DISK_TABLES.items() for case in cases],
    ids=[f"{t}-{c[0]}" for t, cases in DISK_TABLES.items() for c in cases])
def test_disk_conflicts(table: str, name: str, volumes: list[dict[str, Any]],
                        placed: list[list[dict[str, Any]]], pre: Any, want: Any) -> None:
    cluster = listers(nodes=[make_node("node-1")])
    for i, placed_volumes in enumerate(placed):
        cluster.add_pod(pod_with(f"existing-{i}", volumes=placed_volumes, node_name="node-1"))
    assert _run(cluster, pod_with("pod", volumes=volumes)) == (pre, want)


RWOP_1 = pvc_doc("claim-with-rwop-1", accessModes=["ReadWriteOncePod"])
RWOP_2 = pvc_doc("claim-with-rwop-2", accessModes=["ReadWriteOncePod"])
RWX = pvc_doc("claim-with-rwx", accessModes=["ReadWriteMany"])
_ONE = ("pod-with-one-pvc", ["claim-with-rwop-1"])
_TWO = ("pod-with-two-pvcs", ["claim-with-rwop-1", "claim-with-rwop-2"])
_ONE_CONFLICT = ("pod-with-one-conflict", ["claim-with-rwop-1"])
_TWO_CONFLICTS = ("pod-with-two-conflicts", ["claim-with-rwop-1", "claim-with-rwop-2"])
_RWX_POD = ("pod-with-rwx", ["claim-with-rwx"])
_NOT_FOUND = ("UnschedulableAndUnresolvable",
              ('persistentvolumeclaim "claim-with-rwop-1" not found',))

# (name, pod (name, claims) or None, placed pods on node-1, claims, want PreFilter, want Filter)
ACCESS_MODES: list[Any] = [
    ("nothing", None, [], [], SKIP, None),
    ("failed to get PVC", _ONE, [], [], _NOT_FOUND, None),
    ("no access mode conflict", _ONE, [_RWX_POD], [RWOP_1, RWX], SKIP, None),
    ("access mode conflict, unschedulable", _ONE_CONFLICT, [_ONE, _RWX_POD], [RWOP_1, RWX],
     None, RWOP),
    ("two conflicts, unschedulable", _TWO_CONFLICTS, [_TWO, _RWX_POD], [RWOP_1, RWOP_2, RWX],
     None, RWOP),
]


@pytest.mark.parametrize(("name", "pod", "placed", "claims", "pre", "want"), ACCESS_MODES,
                         ids=[c[0] for c in ACCESS_MODES])
def test_access_mode_conflicts(name: str, pod: Any, placed: list[Any],
                               claims: list[dict[str, Any]], pre: Any, want: Any) -> None:
    cluster = listers(*claims, nodes=[make_node("node-1")])
    for placed_name, placed_claims in placed:
        cluster.add_pod(pod_with(placed_name, claims=placed_claims, node_name="node-1"))
    incoming = pod_with(pod[0], claims=pod[1]) if pod else pod_with("empty")
    assert _run(cluster, incoming) == (pre, want)


def test_access_mode_conflict_goes_when_preemption_removes_the_user() -> None:
    """Not upstream's table: RemovePod (preemption's dry run evicting the pod that uses the
    claim) clears the conflict, AddPod brings it back."""
    cluster = listers(RWOP_1, nodes=[make_node("node-1")])
    user = pod_with("user", claims=["claim-with-rwop-1"], node_name="node-1")
    cluster.add_pod(user)
    plugin = VolumeRestrictions(handle(cluster))
    state = CycleState()
    info = PodInfo(pod_with("p", claims=["claim-with-rwop-1"]))
    plugin.pre_filter(state, info, cluster)
    node = cluster.nodes["node-1"]
    assert shape(plugin.filter(state, info, node)) == RWOP
    (placed,) = [p for p in node.pods if p.pod.metadata.name == "user"]
    plugin.remove_pod(state, info, placed, node)
    assert shape(plugin.filter(state, info, node)) is None
    plugin.add_pod(state, info, placed, node)
    assert shape(plugin.filter(state, info, node)) == RWOP
