"""A scenario's ``spec.autoscaling`` Cluster Autoscaler options (CA's flags by their
names in camelCase, CA's defaults) and a pool's ``zeroOrMaxNodeScaling`` through whole
runs; bad values name their field. Timings hand-computed as in
test_autoscaling_scenario.py (nodes Ready 5 min after a scale-up, 30-min pods)."""

from __future__ import annotations

from typing import Any

import pytest

import dralab
from dralab.autoscale import AutoscalerOptions
from dralab.fleet import parse_fleet
from dralab.sim.autoscaling import parse_autoscaling
from dralab.sim.spec import AutoscalingRef

from .test_autoscaling_scenario import _pool, _run, _scenario, _starts


def test_max_nodes_total_caps_scale_up() -> None:
    mode = _run(_scenario([_pool("h100")], ["0s", "0s"], maxNodesTotal=1))
    # One node in the whole cluster: the second pod waits for the first to end (35 min).
    assert _starts(mode) == [(0.0, 300.0, "h100-01"), (0.0, 2100.0, "h100-01")]
    auto = mode.autoscaling
    assert auto is not None and auto.pools["h100"].peak == 1


def test_zero_or_max_pool_scales_whole() -> None:
    mode = _run(_scenario([_pool("h100", zeroOrMaxNodeScaling=True)], ["0s"]))
    auto = mode.autoscaling
    assert auto is not None
    # One pod: the atomic group grows from 0 to its max (3) at once; the pod ends at
    # 35 min and the three nodes, unneeded for longer than 10 min, go together.
    nodes = auto.pools["h100"].nodes
    assert nodes[:2] == ((0.0, 0), (300.0, 3))
    assert nodes[-1][1] == 0 and len(nodes) == 3


def test_every_ca_option_reaches_the_model() -> None:
    fleet = parse_fleet({"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
                         "metadata": {"name": "f"}, "spec": {"pools": [_pool("h100")]}},
                        "fleet.yaml")
    ref = AutoscalingRef(
        expander="priority, least-waste", scale_down_gpu_utilization_threshold=0.7,
        scale_down_unready_time="5m", scale_down_unready_enabled=False,
        ignore_daemonsets_utilization=True, ignore_mirror_pods_utilization=True,
        skip_nodes_with_system_pods=False, skip_nodes_with_local_storage=False,
        skip_nodes_with_custom_controller_pods=False,
        blocking_system_pod_distruption_timeout="2h", max_scale_down_parallelism=3,
        max_drain_parallelism=2, max_nodes_per_scaleup=7, max_nodes_total=9,
        cores_total="4:100", memory_total="1:200", enforce_node_group_min_size=True,
        balance_similar_node_groups=True, balancing_ignore_label=["team"],
        expendable_pods_priority_cutoff=0)
    settings = parse_autoscaling(ref, fleet, "s.yaml")
    assert settings is not None and settings.options is not None
    want = AutoscalerOptions(
        expander="priority,least-waste", scale_down_gpu_utilization_threshold=0.7,
        scale_down_unready_time=300.0, scale_down_unready_enabled=False,
        ignore_daemonsets_utilization=True, ignore_mirror_pods_utilization=True,
        skip_nodes_with_system_pods=False, skip_nodes_with_local_storage=False,
        skip_nodes_with_custom_controller_pods=False,
        blocking_system_pod_disruption_timeout=7200.0, max_scale_down_parallelism=3,
        max_drain_parallelism=2, max_nodes_per_scale_up=7, max_nodes_total=9,
        cores_total=(4, 100), memory_total=(1 << 30, 200 << 30),
        enforce_node_group_min_size=True, balance_similar_node_groups=True,
        balancing_ignore_labels=("team",), expendable_pods_priority_cutoff=0)
    assert settings.options == want


@pytest.mark.parametrize(("autoscaling", "field"), [
    ({"expander": "priority,cheapest"}, r"spec\.autoscaling\.expander: unknown expander "
                                        r"'cheapest'"),
    ({"coresTotal": "8"}, r"spec\.autoscaling\.coresTotal: wrong configuration"),
    ({"memoryTotal": "9:1"}, r"spec\.autoscaling\.memoryTotal: .*max greater or equal"),
    ({"maxDrainParallelism": -1}, r"spec\.autoscaling\.maxDrainParallelism: must be 0"),
    ({"maxNodesTotal": -2}, r"spec\.autoscaling\.maxNodesTotal: must be 0"),
    ({"scaleDownUnreadyTime": "soon"}, r"spec\.autoscaling\.scaleDownUnreadyTime: not a"),
    ({"blockingSystemPodDistruptionTimeout": "x"},
     r"spec\.autoscaling\.blockingSystemPodDistruptionTimeout: not a"),
    ({"scaleDownGpuUtilizationThreshold": 1.5},
     r"spec\.autoscaling\.scaleDownGpuUtilizationThreshold: must be between 0 and 1"),
    ({"balanceSimilarNodeGroups": "yes"}, r"spec\.autoscaling\.balanceSimilarNodeGroups"),
    ({"balancingIgnoreLabel": "team"}, r"spec\.autoscaling\.balancingIgnoreLabel"),
    ({"model": "karpenter", "maxNodesTotal": 3},
     r"spec\.autoscaling\.maxNodesTotal: only with model: cluster-autoscaler"),
    ({"model": "karpenter", "balancingIgnoreLabel": ["team"]},
     r"spec\.autoscaling\.balancingIgnoreLabel: only with model: cluster-autoscaler"),
])
def test_ca_option_errors_name_the_field(autoscaling: dict[str, Any], field: str) -> None:
    with pytest.raises(dralab.DralabError, match=field) as err:
        _scenario([_pool("h100")], ["0s"], **autoscaling)
    assert "\n" not in str(err.value)


def test_zero_or_max_node_scaling_error_names_the_field() -> None:
    with pytest.raises(dralab.DralabError, match=r"zeroOrMaxNodeScaling"):
        _scenario([_pool("h100", zeroOrMaxNodeScaling="yes")], ["0s"])
