"""The volume plugins: dralab against kube-scheduler v1.36.2 on the same objects.

Small clusters whose outcome is determined (where a choice is left, the nodes differ in
allocatable CPU so the real scheduler's pick is no coin toss):

* a pod whose PersistentVolumeClaim does not exist (rejected in PreFilter);
* VolumeBinding: a claim bound to a local PersistentVolume with node affinity to one node;
  the pod lands there, and a pod whose node selector excludes that node stays pending;
* VolumeZone: a volume labelled with one node's zone; the pod lands there, and one kept to
  the other zone stays pending;
* VolumeRestrictions: two pods using one ReadWriteOncePod claim, the second pending;
* NodeVolumeLimits: two nodes whose CSINodes allow one attached volume of a driver, three
  pods each with its own volume of it, the third pending; and inline awsElasticBlockStore
  volumes counted as the ebs.csi.aws.com volumes they migrated to, next to VolumeAttachments
  that fill one node's limit.

There is no kubelet and nothing provisions; each claim is written bound to its volume
(``spec.volumeName`` with the bind-completed annotation), volumes before claims, and the PV
controller of the control plane's kube-controller-manager completes the binding before the
pods come. Compared: per pod its node or its
PodScheduled=False message and FailedScheduling event, dralab reading what the server stored
and the manifests as written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from dralab.api.features import FeatureGates

from .api import Client
from .runs import run_scenario, scheduling_differences
from .scenario import observe
from .scenarios import node, pod

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
DRIVER = "csi.dralab.test"
EBS = "ebs.csi.aws.com"


def _two_nodes(p: str, labels: Sequence[Mapping[str, str]] = ({}, {})) -> list[Obj]:
    # n0 has more CPU: left to the scores, a pod goes there.
    return [node(f"{p}-n0", cpu="16", labels=labels[0]), node(f"{p}-n1", cpu="8",
                                                               labels=labels[1])]


def _volume(name: str, *, source: Obj, modes: Sequence[str] = ("ReadWriteOnce",),
            labels: Mapping[str, str] | None = None, on_node: str = "") -> Obj:
    """A PersistentVolume for a claim written bound to it. No claimRef: one without the
    claim's uid (unknown before the claim is created) makes the PV controller mark the claim
    Lost ("ClaimMisbound"); without one it completes the binding (claimRef, phases) on its
    own, and the scheduler reads only the claim's volumeName and the volume."""
    spec: Obj = {"capacity": {"storage": "1Gi"}, "accessModes": list(modes),
                 "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "", **source}
    if on_node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [on_node]}]}]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": dict(labels or {})}, "spec": spec}


def _claim(name: str, volume: str, modes: Sequence[str] = ("ReadWriteOnce",)) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name,
                         "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"accessModes": list(modes), "storageClassName": "", "volumeName": volume,
                     "resources": {"requests": {"storage": "1Gi"}}}}


def _pod_with(name: str, *claims: str, node_selector: Mapping[str, str] | None = None) -> Obj:
    made = pod(name, cpu="100m")
    made["spec"]["volumes"] = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                               for i, c in enumerate(claims)]
    if node_selector:
        made["spec"]["nodeSelector"] = dict(node_selector)
    return made


def _host_path(p: str, name: str) -> Obj:
    return {"hostPath": {"path": f"/tmp/{p}/{name}"}}


def missing_claim(p: str) -> list[Obj]:
    return [node(f"{p}-n0"), _pod_with("orphan", "missing")]


def volume_node_affinity(p: str) -> list[Obj]:
    n1 = f"{p}-n1"
    local = {"local": {"path": "/mnt/disks/a"}}
    return [*_two_nodes(p),
            _volume(f"{p}-pv-a", source=local, on_node=n1),
            _volume(f"{p}-pv-b", source=local, on_node=n1),
            _claim("data-a", f"{p}-pv-a"), _claim("data-b", f"{p}-pv-b"),
            _pod_with("pinned", "data-a"),
            _pod_with("excluded", "data-b",
                      node_selector={"kubernetes.io/hostname": f"{p}-n0"})]


def volume_zone(p: str) -> list[Obj]:
    zone_a, zone_b = f"{p}-zone-a", f"{p}-zone-b"
    return [*_two_nodes(p, ({ZONE: zone_a}, {ZONE: zone_b})),
            _volume(f"{p}-pv-a", source=_host_path(p, "a"),
                    labels={ZONE: zone_b}),
            _volume(f"{p}-pv-b", source=_host_path(p, "b"),
                    labels={ZONE: zone_b}),
            _claim("data-a", f"{p}-pv-a"), _claim("data-b", f"{p}-pv-b"),
            _pod_with("zoned", "data-a"),
            _pod_with("wrong-zone", "data-b", node_selector={ZONE: zone_a})]


def read_write_once_pod(p: str) -> list[Obj]:
    rwop = ("ReadWriteOncePod",)
    return [*_two_nodes(p),
            _volume(f"{p}-pv", source=_host_path(p, "data"), modes=rwop),
            _claim("data", f"{p}-pv", rwop),
            _pod_with("first", "data"), _pod_with("second", "data")]


def _csi_node(name: str, limit: int) -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
            "spec": {"drivers": [{"name": DRIVER, "nodeID": name,
                                  "allocatable": {"count": limit}}]}}


def csi_attach_limit(p: str) -> list[Obj]:
    names = ("a", "b", "c")
    return [*_two_nodes(p), _csi_node(f"{p}-n0", 1), _csi_node(f"{p}-n1", 1),
            *(_volume(f"{p}-pv-{n}", source={"csi": {"driver": DRIVER,
                                                      "volumeHandle": f"{p}-{n}"}})
              for n in names),
            *(_claim(f"data-{n}", f"{p}-pv-{n}") for n in names),
            *(_pod_with(f"pod-{n}", f"data-{n}") for n in names)]


def _attachment(name: str, node_name: str, volume: str) -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
            "metadata": {"name": name},
            "spec": {"attacher": EBS, "nodeName": node_name,
                     "source": {"persistentVolumeName": volume}}}


def migrated_inline_and_attachments(p: str) -> list[Obj]:
    """Inline awsElasticBlockStore volumes count as ebs.csi.aws.com volumes (CSI migration);
    two VolumeAttachments fill n0's limit of 2 though no pod there uses them."""
    n0, n1 = f"{p}-n0", f"{p}-n1"
    limits = [{"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": n},
               "spec": {"drivers": [{"name": EBS, "nodeID": n, "allocatable": {"count": 2}}]}}
              for n in (n0, n1)]
    attached = [_volume(f"{p}-pv-{x}", source={"csi": {"driver": EBS,
                                                       "volumeHandle": f"vol-{p}-{x}"}})
                for x in ("x", "y")]
    pods = []
    for i in (1, 2, 3):
        made = pod(f"inline-{i}", cpu="100m")
        made["spec"]["volumes"] = [{"name": "disk", "awsElasticBlockStore": {
            "volumeID": f"vol-{p}-{i}"}}]
        pods.append(made)
    return [*_two_nodes(p), *limits, *attached,
            _attachment(f"{p}-va-x", n0, f"{p}-pv-x"), _attachment(f"{p}-va-y", n0, f"{p}-pv-y"),
            *pods]


SCENARIOS: dict[str, Callable[[str], list[Obj]]] = {
    "missing_claim": missing_claim,
    "volume_node_affinity": volume_node_affinity,
    "volume_zone": volume_zone,
    "read_write_once_pod": read_write_once_pod,
    "csi_attach_limit": csi_attach_limit,
    "migrated_inline_and_attachments": migrated_inline_and_attachments,
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_volume_plugins_agree_with_kube_scheduler(kube: Client, dralab_gates: FeatureGates,
                                                  name: str) -> None:
    run = run_scenario(kube, dralab_gates, name, SCENARIOS[name])
    assert not run.server_error and not run.dralab_error, (run.server_error, run.dralab_error)
    server, ours = observe(run.server), observe(run.dralab)
    print(f"\n{name}: kube-scheduler {dict(server.nodes)} {dict(server.events)}"
          f"\n{name}: dralab         {dict(ours.nodes)} {dict(ours.messages)}")
    assert scheduling_differences(run) == []
    assert scheduling_differences(run.as_written()) == []
    # Each scenario leaves a pod pending, and all but the missing claim place one.
    assert server.events
    assert name == "missing_claim" or any(server.nodes.values())
