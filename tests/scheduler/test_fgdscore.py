"""The paper policies as Score plugins: FGD's node choice through dralab.scheduler.schedule."""

from __future__ import annotations

from typing import Any

import pytest

from dralab.api.base import KubeObject
from dralab.replay.trace import (
    TraceNode,
    TracePod,
    device_class,
    node_object,
    pod_objects,
    resource_slice,
)
from dralab.scheduler import ConfigError, schedule


def cluster_and_pods(shares: list[int]) -> list[KubeObject]:
    """Two identical nodes with one GPU each; pods each sharing part of a GPU."""
    objects: list[KubeObject] = [device_class()]
    for name in ("a", "b"):
        rec = TraceNode(name, 32000, 65536, 1, "T4")
        objects.append(node_object(rec))
        s = resource_slice(rec)
        assert s is not None
        objects.append(s)
    for i, share in enumerate(shares):
        pod, claim = pod_objects(TracePod(f"p{i}", 1000, 1024, 1, share, frozenset(), ""))
        objects.append(pod)
        assert claim is not None
        objects.append(claim)
    return objects


def only(plugin: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    profile: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "plugins": {"score": {"disabled": [{"name": "*"}],
                              "enabled": [{"name": plugin, "weight": 1}]}}}
    if args is not None:
        profile["pluginConfig"] = [{"name": plugin, "args": args}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


def nodes(result: Any) -> dict[str, str]:
    return {p.pod.metadata.name: p.node for p in result.placed}


# M: every pod wants 800 milli of one GPU, so a GPU left half free is pure fragment.
M800 = {"shapes": [{"cpu": "1", "gpus": 1, "share": 800, "weight": 1}]}


def test_fgd_packs_where_least_allocated_spreads() -> None:
    objects = cluster_and_pods([500, 500])
    spread = nodes(schedule(objects))
    assert spread["p0"] != spread["p1"]     # LeastAllocated: the emptier node
    fgd = nodes(schedule(objects, config=only("FGD", M800)))
    # FGD: filling the half-used GPU removes a 500-milli fragment (score 62); opening
    # the other GPU creates one (score 37).
    assert fgd["p0"] == fgd["p1"]


def test_fgd_learns_m_from_the_pods_without_shapes() -> None:
    # M observed = {1 core, 500}: after p0, a half-free GPU fits the next 500 exactly.
    fgd = nodes(schedule(cluster_and_pods([500, 500, 500]), config=only("FGD")))
    assert len(fgd) == 3 and len(set(fgd.values())) == 2


@pytest.mark.parametrize("name", ["Random", "DotProd", "GpuClustering", "GpuPacking",
                                  "BestFit", "FGD-FS"])
def test_every_policy_places_the_pods(name: str) -> None:
    result = schedule(cluster_and_pods([300, 500, 700, 200]), config=only(name, M800))
    assert len(result.placed) == 4 and not result.unplaced


def test_packing_policies_fill_the_used_gpu_first() -> None:
    for name in ("BestFit", "GpuPacking"):
        placed = nodes(schedule(cluster_and_pods([500, 500]), config=only(name)))
        assert placed["p0"] == placed["p1"], name


def test_bad_args_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="share"):
        schedule(cluster_and_pods([500]),
                 config=only("FGD", {"shapes": [{"cpu": "1", "gpus": 1, "share": 5000}]}))
    with pytest.raises(ConfigError, match="unknown"):
        schedule(cluster_and_pods([500]), config=only("FGD", {"bogus": 1}))
