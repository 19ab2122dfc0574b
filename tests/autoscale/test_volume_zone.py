"""Cluster Autoscaler scale-up for a pod whose volume pins a zone.

Three groups alike but for their zone: a pod whose PersistentVolumeClaim is bound to a
PersistentVolume with zone-3 node affinity fits only a zone-3 node (kube-scheduler's
VolumeBinding node affinity check, which CA's binpacking estimator runs on its template
nodes), so only the zone-3 group helps it. The shortcut that lets groups alike but for
their zone share one estimate must not apply to such a pod (it did: the pod was
estimated on zone-1's template and scaled the wrong group, or none).
"""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import fleet, pod, run

ZONE = "topology.kubernetes.io/zone"


def _zonal_fleet() -> dict[str, Any]:
    base = {"count": 0, "cpu": "8", "memory": "32Gi",
            "autoscaling": {"min": 0, "max": 3, "pricePerHour": 1.0,
                            "provisioningDelay": "1m", "priority": 0}}
    doc = fleet("cpu")
    doc["spec"]["pools"] = [{**base, "name": f"z{i}", "topology": {"zone": f"zone-{i}"}}
                            for i in (1, 2, 3)]
    return doc


def _volume(zone: str, bound: bool = True) -> list[dict[str, Any]]:
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "data"},
          "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                   "storageClassName": "zonal", "csi": {"driver": "pd.csi.example.com",
                                                        "volumeHandle": "vol-1"},
                   "nodeAffinity": {"required": {"nodeSelectorTerms": [{
                       "matchExpressions": [{"key": ZONE, "operator": "In",
                                             "values": [zone]}]}]}}}}
    pvc: dict[str, Any] = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "zonal",
                 "resources": {"requests": {"storage": "10Gi"}}}}
    if bound:
        pv["spec"]["claimRef"] = {"namespace": "default", "name": "data"}
        pvc["spec"]["volumeName"] = "data"
        pvc["status"] = {"phase": "Bound"}
        pv["status"] = {"phase": "Bound"}
    return [pv, pvc]


def _pod() -> dict[str, Any]:
    doc = pod("db", cpu="1", memory="1Gi")
    doc["spec"]["volumes"] = [{"name": "data",
                               "persistentVolumeClaim": {"claimName": "data"}}]
    doc["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/d"}]
    return doc


@pytest.mark.parametrize("zone", ["zone-3", "zone-2", "zone-1"])
def test_pod_bound_to_a_zonal_pv_scales_up_that_zone(zone: str) -> None:
    decisions = run(_zonal_fleet(), *_volume(zone), _pod()).to_dict()
    assert [(u["pool"], u["add"]) for u in decisions["scaleUp"]] == \
        [(f"z{zone[-1]}", 1)]
    assert decisions["pending"] == []


def test_pod_without_volumes_still_shares_one_estimate() -> None:
    # Nothing pins a zone: any group helps, least-waste's tie goes to the first name.
    decisions = run(_zonal_fleet(), pod("web", cpu="1", memory="1Gi")).to_dict()
    assert [(u["pool"], u["add"]) for u in decisions["scaleUp"]] == [("z1", 1)]
