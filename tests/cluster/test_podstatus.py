"""Pod status as the API server and kube-scheduler write it: the QoS class, the
create defaults, condition updates, and the run's clock.

The QoS table is ported from kubernetes v1.36.2,
pkg/apis/core/v1/helper/qos/qos_test.go, TestComputePodQOS (every case, by name;
pod-level cases run with PodLevelResources on, its default since 1.34).
"""

from __future__ import annotations

from typing import Any

import pytest

from dralab.api.codec import decode
from dralab.api.core import Pod, PodCondition
from dralab.cluster import (
    ClusterState,
    RunClock,
    api_time,
    prepare_for_create,
    qos_class,
    snapshot_moment,
    update_condition,
)
from dralab.cluster.podstatus import BEST_EFFORT, BURSTABLE, GUARANTEED


def _resources(cpu: str = "", memory: str = "", **extra: str) -> dict[str, str]:
    out = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    out.update({k.replace("_", "-"): v for k, v in extra.items()})
    return out


def _container(name: str, requests: dict[str, str], limits: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "resources": {"requests": requests, "limits": limits}}


def _pod(name: str, containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None,
         pod_level: tuple[dict[str, str], dict[str, str]] | None = None) -> Pod:
    spec: dict[str, Any] = {"containers": containers}
    if init:
        spec["initContainers"] = init
    if pod_level is not None:
        spec["resources"] = {"requests": pod_level[0], "limits": pod_level[1]}
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
    pod = decode(doc)
    assert isinstance(pod, Pod)
    return pod


R = _resources
NONE = R()

# (case name in TestComputePodQOS, pod, expected)
QOS_CASES: list[tuple[Pod, str]] = [
    (_pod("guaranteed", [_container("guaranteed", R("100m", "100Mi"), R("100m", "100Mi"))]),
     GUARANTEED),
    (_pod("guaranteed-guaranteed", [
        _container("guaranteed", R("100m", "100Mi"), R("100m", "100Mi")),
        _container("guaranteed", R("100m", "100Mi"), R("100m", "100Mi"))]), GUARANTEED),
    (_pod("best-effort-best-effort", [_container("best-effort", NONE, NONE),
                                      _container("best-effort", NONE, NONE)]), BEST_EFFORT),
    (_pod("best-effort", [_container("best-effort", NONE, NONE)]), BEST_EFFORT),
    (_pod("best-effort-burstable", [_container("best-effort", NONE, NONE),
                                    _container("burstable", R("1"), R("2"))]), BURSTABLE),
    (_pod("best-effort-guaranteed", [
        _container("best-effort", NONE, NONE),
        _container("guaranteed", R("10m", "100Mi"), R("10m", "100Mi"))]), BURSTABLE),
    (_pod("burstable-cpu-guaranteed-memory", [
        _container("burstable", R(memory="100Mi"), R(memory="100Mi"))]), BURSTABLE),
    (_pod("burstable-no-limits", [_container("burstable", R("100m", "100Mi"), NONE)]),
     BURSTABLE),
    (_pod("burstable-guaranteed", [
        _container("burstable", R("1", "100Mi"), R("2", "100Mi")),
        _container("guaranteed", R("100m", "100Mi"), R("100m", "100Mi"))]), BURSTABLE),
    (_pod("burstable-unbounded-but-requests-match-limits", [
        _container("burstable", R("100m", "100Mi"), R("200m", "200Mi")),
        _container("burstable-unbounded", R("100m", "100Mi"), NONE)]), BURSTABLE),
    (_pod("burstable-1", [_container("burstable", R("10m", "100Mi"), R("100m", "200Mi"))]),
     BURSTABLE),
    (_pod("burstable-2", [_container("burstable", R("0", "0"), R("100m", "200Mi"))]),
     BURSTABLE),
    (_pod("best-effort-hugepages", [_container(
        "best-effort", R("0", "0", hugepages_2Mi="1Gi"), R("0", "0", hugepages_2Mi="1Gi"))]),
     BEST_EFFORT),
    (_pod("init-container", [_container("best-effort", NONE, NONE)],
          init=[_container("burstable", R("10m", "100Mi"), R("100m", "200Mi"))]), BURSTABLE),
    (_pod("guaranteed-with-pod-level-resources", [_container("best-effort", NONE, NONE)],
          pod_level=(R("10m", "100Mi"), R("10m", "100Mi"))), GUARANTEED),
    (_pod("guaranteed-with-pod-and-container-level-resources",
          [_container("burstable", R("3m", "10Mi"), R("5m", "20Mi"))],
          pod_level=(R("10m", "100Mi"), R("10m", "100Mi"))), GUARANTEED),
    (_pod("burstable-with-pod-level-resources", [_container("best-effort", NONE, NONE)],
          pod_level=(R("10m", "10Mi"), R("20m", "50Mi"))), BURSTABLE),
    (_pod("burstable-with-pod-and-container-level-resources",
          [_container("burstable", R("5m", "10Mi"), R("5m", "10Mi"))],
          pod_level=(R("10m", "10Mi"), R("20m", "50Mi"))), BURSTABLE),
    (_pod("burstable-with-pod-and-container-level-requests",
          [_container("burstable", R("5m", "10Mi"), NONE)],
          pod_level=(R("10m", "10Mi"), NONE)), BURSTABLE),
    (_pod("burstable-with-pod-and-container-level-resources-2", [
        _container("burstable", R("5m", "10Mi"), NONE),
        _container("guaranteed", R("5m", "10Mi"), R("5m", "10Mi"))],
          pod_level=(R("10m", "10Mi"), R("5m"))), BURSTABLE),
]


@pytest.mark.parametrize(("pod", "expected"), QOS_CASES, ids=[p.name for p, _ in QOS_CASES])
def test_qos_class_as_compute_pod_qos(pod: Pod, expected: str) -> None:
    assert qos_class(pod) == expected


def test_qos_class_after_defaulting_limits_into_requests() -> None:
    # v1.36.2 pkg/apis/core/v1/defaults.go SetDefaults_Pod runs before PrepareForCreate:
    # a container with limits only gets them as requests, so the pod is Guaranteed.
    limits_only = _pod("limits-only", [_container("main", NONE, R("1", "1Gi"))])
    assert qos_class(limits_only) == GUARANTEED
    # Pod-level limits only (defaultPodRequests): the pod-level requests default to
    # the containers' requests where they have some, else to the pod-level limits.
    from_containers = _pod("pod-limits", [_container("main", R("500m"), NONE)],
                           pod_level=(NONE, R("1", "1Gi")))
    assert qos_class(from_containers) == BURSTABLE
    from_limits = _pod("pod-limits", [_container("main", NONE, NONE)],
                       pod_level=(NONE, R("1", "1Gi")))
    assert qos_class(from_limits) == GUARANTEED


def test_prepare_for_create_sets_what_the_api_server_sets() -> None:
    # v1.36.2 pkg/registry/core/pod/strategy.go podStrategy.PrepareForCreate.
    pod = _pod("train", [_container("main", R("8", "64Gi"), NONE)])
    created = prepare_for_create(pod, "2026-11-20T08:05:00Z")
    assert created.metadata.generation == 1
    assert (created.status.phase, created.status.qos_class) == ("Pending", BURSTABLE)
    assert created.status.conditions == []


def test_prepare_for_create_gated_pod_gets_scheduling_gated() -> None:
    # strategy.go applySchedulingGatedCondition: stamped at create, no observedGeneration.
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gated"},
           "spec": {"containers": [{"name": "c"}], "schedulingGates": [{"name": "wait"}]}}
    pod = decode(doc)
    assert isinstance(pod, Pod)
    created = prepare_for_create(pod, "2026-11-20T08:05:00Z")
    assert created.status.qos_class == BEST_EFFORT
    assert created.status.conditions == [PodCondition(
        type="PodScheduled", status="False", reason="SchedulingGated",
        message="Scheduling is blocked due to non-empty scheduling gates",
        last_transition_time="2026-11-20T08:05:00Z")]


def test_update_condition_keeps_the_transition_time_while_the_status_holds() -> None:
    # pkg/api/v1/pod/util.go UpdatePodCondition: a new status is stamped now, the same
    # status keeps the old time; the condition is replaced whole (reason, message).
    pod = _pod("p", [_container("main", NONE, NONE)])
    failed = update_condition(pod, PodCondition(
        type="PodScheduled", status="False", reason="Unschedulable", message="first",
        observed_generation=1), "2026-11-20T08:00:00Z")
    again = update_condition(failed, PodCondition(
        type="PodScheduled", status="False", reason="Unschedulable", message="second",
        observed_generation=1), "2026-11-20T09:00:00Z")
    assert [(c.message, c.last_transition_time) for c in again.status.conditions] == [
        ("second", "2026-11-20T08:00:00Z")]
    bound = update_condition(again, PodCondition(type="PodScheduled", status="True"),
                             "2026-11-20T10:00:00Z")
    assert bound.status.conditions == [PodCondition(
        type="PodScheduled", status="True", last_transition_time="2026-11-20T10:00:00Z")]


def test_api_time_is_rfc3339_seconds_in_utc() -> None:
    assert api_time(0.0) == "1970-01-01T00:00:00Z"
    # metav1.Time marshals whole seconds: the fraction is cut, never rounded up.
    assert api_time(1_795_680_000.999) == "2026-11-26T08:00:00Z"


def test_snapshot_moment_is_the_newest_creation_timestamp() -> None:
    def pod(stamp: str | None) -> Pod:
        meta: dict[str, Any] = {"name": "p"}
        if stamp is not None:
            meta["creationTimestamp"] = stamp
        obj = decode({"apiVersion": "v1", "kind": "Pod", "metadata": meta})
        assert isinstance(obj, Pod)
        return obj

    objects = [pod("2026-11-20T08:00:00Z"), pod(None), pod("2026-11-20T08:05:00+00:00"),
               pod("not a time")]
    assert api_time(snapshot_moment(objects)) == "2026-11-20T08:05:00Z"
    assert snapshot_moment([pod(None)]) == 0.0


def test_the_store_stamps_the_binding_with_its_clock() -> None:
    cluster = ClusterState(moment=snapshot_moment([]) + 100.0)
    elapsed = [0.0]
    cluster.clock.elapsed = lambda: elapsed[0]
    node = decode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                   "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}})
    cluster.add_node(node)  # type: ignore[arg-type]
    pod = prepare_for_create(_pod("p", [_container("c", R("1"), NONE)]), cluster.clock.now())
    info = cluster.add_pod(pod)
    elapsed[0] = 30.5
    bound = cluster.bind_pod(info, "n1")
    assert bound.status.conditions == [PodCondition(
        type="PodScheduled", status="True", last_transition_time="1970-01-01T00:02:10Z")]
    assert bound.status.phase == "Pending" and bound.status.nominated_node_name is None
    assert isinstance(cluster.clock, RunClock)
