"""The volume plugins in whole scheduling runs: the default profile, claims, volumes,
classes and CSINodes as a cluster stores them, upstream's messages."""

from __future__ import annotations

from typing import Any

from dralab.scheduler import schedule

from ..builders import node, placements
from .volumes import ZONE, csi_node, pv, pvc, storage_class, volume_pod


def _run(objects: list[Any]) -> tuple[dict[str, str | None], dict[str, str]]:
    result = schedule(objects)
    return placements(result), {u.pod.metadata.name: u.message for u in result.unplaced}


def test_a_bound_claim_follows_its_volume_node_affinity() -> None:
    got, _ = _run([node("a"), node("b"), pvc("data", volume="pv1"),
                   pv("pv1", claim="data", nodes=("b",)), volume_pod("p", "data")])
    assert got == {"p": "b"}
    got, why = _run([node("a"), pvc("data", volume="pv1"),
                     pv("pv1", claim="data", nodes=("b",)), volume_pod("p", "data")])
    assert got == {"p": None}
    assert why["p"].startswith("0/1 nodes are available: 1 node(s) didn't match "
                               "PersistentVolume's node affinity.")


def test_missing_claim_and_unbound_immediate_claim_fail_prefilter() -> None:
    _, why = _run([node("a"), volume_pod("p", "missing")])
    # VolumeBinding's PreFilter rejects before DynamicResources' PreFilter writes its
    # state, so DynamicResources' PostFilter (first of the PostFilter plugins) fails to
    # read it: Error "not found" (fwk.ErrNotFound), which ends PostFilter and is appended
    # as FitError.Error appends a PostFilter message (v1.36.2 pkg/scheduler/framework/
    # types.go FitError.Error; dynamicresources.go PostFilter, getStateData).
    assert why["p"] == ('0/1 nodes are available: persistentvolumeclaim "missing" not found.'
                        " not found")
    _, why = _run([node("a"), storage_class("std", mode="Immediate"), pvc("d", sc="std"),
                   volume_pod("p", "d")])
    assert why["p"].startswith(
        "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims.")


def test_wait_for_first_consumer_binds_a_local_volume_or_provisions_in_allowed_zones() -> None:
    got, _ = _run([node("a"), node("b"),
                   storage_class("local", provisioner="kubernetes.io/no-provisioner"),
                   pv("lv-b", sc="local", nodes=("b",)), pvc("d", sc="local"),
                   volume_pod("p", "d")])
    assert got == {"p": "b"}
    got, why = _run([node("a"), storage_class("local", provisioner="kubernetes.io/no-provisioner"),
                     pv("lv-b", sc="local", nodes=("b",)), pvc("d", sc="local"),
                     volume_pod("p", "d")])
    assert why["p"].startswith("0/1 nodes are available: 1 node(s) didn't find available "
                               "persistent volumes to bind.")
    got, _ = _run([node("a", labels={ZONE: "z1"}), node("b", labels={ZONE: "z2"}),
                   storage_class("ebs", zones=("z2",)), pvc("d", sc="ebs"), volume_pod("p", "d")])
    assert got == {"p": "b"}


def test_volume_zone_labels_of_a_bound_volume() -> None:
    objects = [pvc("d", volume="pv1"), pv("pv1", claim="d", labels={ZONE: "z2"}),
               volume_pod("p", "d")]
    got, _ = _run([node("a", labels={ZONE: "z1"}), node("b", labels={ZONE: "z2"}), *objects])
    assert got == {"p": "b"}
    _, why = _run([node("a", labels={ZONE: "z1"}), *objects])
    assert why["p"] == (
        "0/1 nodes are available: 1 node(s) had no available volume zone. no new claims to "
        "deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
        "scheduling.")
    got, _ = _run([node("a"), *objects])  # no zone label on the node: a single-zone cluster
    assert got == {"p": "a"}


def test_read_write_once_pod_claim_in_use_and_inline_disk_conflict() -> None:
    rwop = ("ReadWriteOncePod",)
    _, why = _run([node("a"), node("b"), pvc("d", volume="pv1", modes=rwop),
                   pv("pv1", claim="d", modes=rwop), volume_pod("user", "d", node_name="a"),
                   volume_pod("p", "d")])
    assert why["p"].startswith(
        "0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with "
        "ReadWriteOncePod access mode already in-use by another pod.")
    disk = [{"name": "disk", "gcePersistentDisk": {"pdName": "pd1"}}]
    got, _ = _run([node("a"), node("b"), volume_pod("user", node_name="a", volumes=disk),
                   volume_pod("p", volumes=disk)])
    assert got == {"p": "b"}


def test_csi_node_attach_limit() -> None:
    got, why = _run([node("a"), csi_node("a", "ebs.csi.aws.com", 2), storage_class("ebs"),
                     *(pvc(f"d{i}", sc="ebs") for i in range(3)),
                     *(volume_pod(f"p{i}", f"d{i}") for i in range(3))])
    assert sorted(n for n in got.values() if n) == ["a", "a"]
    (left,) = why.values()
    assert left.startswith("0/1 nodes are available: 1 node(s) exceed max volume count.")


def test_generic_ephemeral_volume_gets_its_claim_from_the_template() -> None:
    """A pod written with a generic ephemeral volume gets the claim the ephemeral volume
    controller would create (<pod>-<volume>, unbound, the template's class); a claim of
    that name the pod does not control is refused as upstream's VolumeIsForPod does."""
    ephemeral = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "ebs",
        "resources": {"requests": {"storage": "1Gi"}}}}}}]
    zones = [node("a", labels={ZONE: "z1"}), node("b", labels={ZONE: "z2"})]
    got, _ = _run([*zones, storage_class("ebs", zones=("z2",)),
                   volume_pod("p", volumes=ephemeral)])
    assert got == {"p": "b"}
    _, why = _run([*zones, storage_class("ebs", zones=("z2",)), pvc("p-scratch", sc="ebs"),
                   volume_pod("p", volumes=ephemeral)])
    assert why["p"].startswith("0/2 nodes are available: PVC default/p-scratch was not created "
                               "for pod default/p (pod is not owner).")
