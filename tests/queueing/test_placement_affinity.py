"""Admission's placement check runs kube-scheduler's default profile: a pod set whose
template keeps its pods apart (required pod anti-affinity on the hostname) does not fit on
fewer nodes than it has pods, though the nodes have the devices for all of them.

The pods are made as Kueue's Workload pod set describes them (``pod_set_pods``: the
template's labels, spec and the flavor's node selector), as the Job controller would
create them.
"""

from __future__ import annotations

from typing import Any

from dralab.queueing.feasibility import pod_set_pods
from dralab.queueing.placement import GangFailure, GangPlacement, place_pod_sets
from dralab.scheduler.scheduler import Scheduler

from .fleets import NS, h100_cluster

ANTI_AFFINITY = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
    "labelSelector": {"matchLabels": {"app": "gang"}},
    "topologyKey": "kubernetes.io/hostname"}]}}


def _template(anti_affinity: bool) -> dict[str, Any]:
    # Four GPUs per pod: two pods fit on an 8-GPU H100 node by devices alone.
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "trainer",
                        "resources": {"requests": {"cpu": "8"}, "claims": [{"name": "gpus"}]}}],
        "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "gpus-4"}]}
    if anti_affinity:
        spec["affinity"] = ANTI_AFFINITY
    return {"metadata": {"labels": {"app": "gang"}}, "spec": spec}


def _place(pods: int, anti_affinity: bool) -> GangPlacement | GangFailure:
    scheduler = Scheduler.build(h100_cluster(3))
    made = pod_set_pods(NS, "job-gang-main", pods, _template(anti_affinity), {})
    return place_pod_sets(scheduler, made)


def test_pods_of_the_set_carry_the_template_labels() -> None:
    (pod,) = pod_set_pods(NS, "job-gang-main", 1, _template(True), {"zone": "a"})
    assert pod.metadata.labels == {"app": "gang"}
    assert pod.spec.node_selector == {"zone": "a"}


def test_anti_affinity_gang_needs_a_node_per_pod() -> None:
    three = _place(3, anti_affinity=True)
    assert isinstance(three, GangPlacement)
    assert sorted(three.nodes().values()) == ["h100-01", "h100-02", "h100-03"]
    four = _place(4, anti_affinity=True)
    assert isinstance(four, GangFailure)
    assert (four.pod, four.placed) == (f"{NS}/job-gang-main-3", 3)
    assert "didn't match pod anti-affinity rules" in four.message


def test_without_anti_affinity_the_devices_take_two_pods_a_node() -> None:
    six = _place(6, anti_affinity=False)
    assert isinstance(six, GangPlacement)
    assert isinstance(_place(7, anti_affinity=False), GangFailure)
