"""Node autoscaling in a scenario (fleet pools with ``autoscaling``, ``spec.autoscaling``).

Expected timings follow Cluster Autoscaler's documented behaviour (FAQ: "How does
scale-down work?": a node unneeded for --scale-down-unneeded-time (10 min) goes,
not within --scale-down-delay-after-add (10 min) of a scale-up, never below the
group's min size; scale-up for pods the scheduler marked unschedulable, nodes
Ready after the provider's provisioning time). Every case is hand-computed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import dralab
from dralab.report import write_report
from dralab.sim.results import SimulationResult
from dralab.sim.scenario import load_scenario

EXAMPLES = Path(__file__).parent.parent.parent / "examples" / "scenarios"

_FULL_NODE: dict[str, Any] = {"cpu": "8", "memory": "32Gi",
                              "devices": {"type": "gpu", "count": 8}}


def _pool(name: str, count: int = 0, **autoscaling: Any) -> dict[str, Any]:
    spec = {"min": 0, "max": 3, "pricePerHour": 10, "provisioningDelay": "5m", **autoscaling}
    return {"name": name, "count": count, "namePrefix": f"{name}-",
            "gpu": {"model": "h100-80gb", "count": 8}, "autoscaling": spec}


def _scenario(pools: list[dict[str, Any]], arrivals: list[str], run: str = "30m",
              mode: str = "dra", duration: str = "2h", **autoscaling: Any) -> dralab.Scenario:
    spec: dict[str, Any] = {
        "duration": duration, "compare": [mode], "sampleInterval": "1m",
        "fleet": {"spec": {"pools": pools}},
        "workload": [{"name": "train", "arrivals": arrivals,
                      "duration": {"distribution": "fixed", "mean": run}, **_FULL_NODE}]}
    if autoscaling:
        spec["autoscaling"] = autoscaling
    return dralab.scenario(spec)


def _run(scenario: dralab.Scenario) -> dralab.ModeResult:
    [mode] = dralab.simulate(scenario).modes
    return mode


def _starts(mode: dralab.ModeResult) -> list[tuple[float, float | None, str | None]]:
    return sorted((p.arrival, p.start, p.node) for p in mode.pods)


@pytest.mark.parametrize("mode_name", ["dra", "device-plugin"])
def test_scale_from_zero_then_down_after_unneeded_time(mode_name: str) -> None:
    mode = _run(_scenario([_pool("h100")], ["0s", "0s"], mode=mode_name))
    # Two pending 8-GPU pods at 0: two nodes, Ready at 5 min; the pods start there.
    assert _starts(mode) == [(0.0, 300.0, "h100-01"), (0.0, 300.0, "h100-02")]
    auto = mode.autoscaling
    assert auto is not None
    pool = auto.pools["h100"]
    # They end at 35 min; unneeded for longer than 10 min (CA's RemovableAt), the nodes
    # go at the first scan after 45 min.
    assert pool.nodes == ((0.0, 0), (300.0, 2), (2710.0, 0))
    assert (pool.scale_ups, pool.scale_downs) == (2, 2)
    assert auto.node_waits == (300.0, 300.0)


def test_cost_is_price_times_node_hours() -> None:
    mode = _run(_scenario([_pool("h100", pricePerHour=10)], ["0s", "0s"]))
    auto = mode.autoscaling
    assert auto is not None
    # Two nodes from 5 min to 45 min 10 s (the first scan after they were unneeded for
    # longer than 10 min): 2 x 2410 s node-hours at 10 per hour.
    assert auto.pools["h100"].node_hours == pytest.approx(2 * 2410 / 3600, abs=1e-12)
    assert auto.cost == pytest.approx(2 * 2410 / 3600 * 10, abs=1e-9)
    by_time = {t: (total, rate) for t, total, rate in auto.samples}
    assert by_time[600.0] == pytest.approx((2 * 300 / 3600 * 10, 20.0))
    assert by_time[7200.0] == pytest.approx((2 * 2410 / 3600 * 10, 0.0))


def test_never_below_min() -> None:
    mode = _run(_scenario([_pool("h100", count=1, min=1)], ["0s", "0s"]))
    auto = mode.autoscaling
    assert auto is not None
    # One pod starts on the existing node at 0 (ends 30 min), the other on a new node at
    # 5 min (ends 35 min); only one node may go: the first unneeded, at the first scan
    # after 40 min.
    assert _starts(mode) == [(0.0, 0.0, "h100-01"), (0.0, 300.0, "h100-02")]
    assert auto.pools["h100"].nodes == ((0.0, 1), (300.0, 2), (2410.0, 1))


def test_delay_after_add_holds_scale_down() -> None:
    mode = _run(_scenario([_pool("h100")], ["0s"], run="5m", scaleDownDelayAfterAdd="1h"))
    auto = mode.autoscaling
    assert auto is not None
    # The pod ends at 10 min, the node is unneeded at 20 min, but the scale-up at 0 holds
    # scale-down for an hour.
    assert auto.pools["h100"].nodes == ((0.0, 0), (300.0, 1), (3600.0, 0))


def test_max_reached_keeps_pods_pending() -> None:
    mode = _run(_scenario([_pool("h100", max=1)], ["0s", "0s"]))
    # One node only: the second pod waits for the first to end (35 min).
    assert _starts(mode) == [(0.0, 300.0, "h100-01"), (0.0, 2100.0, "h100-01")]
    auto = mode.autoscaling
    assert auto is not None and auto.pools["h100"].peak == 1


def test_karpenter_picks_the_cheapest_pool() -> None:
    pools = [_pool("dear", pricePerHour=20), _pool("cheap", pricePerHour=5)]
    # DRA-aware launches: Karpenter's --ignore-dra-requests=false.
    mode = _run(_scenario(pools, ["0s", "0s"], model="karpenter", ignoreDRARequests=False))
    auto = mode.autoscaling
    assert auto is not None and auto.model == "karpenter"
    assert auto.pools["cheap"].peak == 2 and auto.pools["dear"].peak == 0
    assert {p.node for p in mode.pods} == {"cheap-01", "cheap-02"}
    # Consolidation removes the empty nodes once nothing is pending.
    assert auto.pools["cheap"].nodes[-1][1] == 0


def test_fixed_pools_stay_and_runs_are_deterministic(tmp_path: Path) -> None:
    fixed = {"name": "fixed", "count": 1, "namePrefix": "fixed-",
             "gpu": {"model": "h100-80gb", "count": 8}}
    scenario = _scenario([fixed, _pool("h100")], ["0s", "0s", "0s", "10m"])
    first, second = dralab.simulate(scenario), dralab.simulate(scenario)
    assert first.to_json() == second.to_json()
    auto = first.modes[0].autoscaling
    assert auto is not None and set(auto.pools) == {"h100"}
    assert any(p.node == "fixed-01" for p in first.modes[0].pods)
    # metrics.json round-trips; the report has the pools table, both plots and pools.csv.
    again = SimulationResult.from_json(json.loads(json.dumps(first.to_json())))
    assert again.to_json() == first.to_json()
    index = write_report(first, tmp_path)
    page = index.read_text()
    for anchor in ('id="pool-table"', 'id="plot-pool-nodes"', 'id="plot-cost"'):
        assert anchor in page
    assert (tmp_path / "pools.csv").read_text().startswith("mode,pool,t,nodes,price_per_hour")


@pytest.mark.parametrize(("autoscaling", "field"), [
    ({"model": "kubernetes"}, r"spec\.autoscaling\.model: unknown model"),
    ({"expander": "cheapest"}, r"spec\.autoscaling\.expander: unknown expander"),
    ({"scanInterval": "0s"}, r"spec\.autoscaling\.scanInterval: must be at least 1s"),
    ({"scaleDownUnneededTime": "soon"}, r"spec\.autoscaling\.scaleDownUnneededTime: not a"),
    ({"scaleDownUtilizationThreshold": 2}, r"spec\.autoscaling\.scaleDownUtilizationThreshold"),
    ({"scanIntervall": "10s"}, r"spec\.autoscaling"),
])
def test_autoscaling_errors_name_the_field(autoscaling: dict[str, Any], field: str) -> None:
    with pytest.raises(dralab.DralabError, match=field):
        _scenario([_pool("h100")], ["0s"], **autoscaling)


def test_autoscaling_needs_an_autoscaled_pool() -> None:
    fixed = {"name": "fixed", "count": 1, "gpu": {"model": "h100-80gb", "count": 8}}
    with pytest.raises(dralab.DralabError, match=r"spec\.autoscaling: the fleet has no pool"):
        _scenario([fixed], ["0s"], model="karpenter")


def test_the_shipped_example_loads() -> None:
    scenario = load_scenario(str(EXAMPLES / "queues-dra-autoscaling.yaml"))
    assert scenario.autoscaling is not None
    assert scenario.autoscaling.pools == ("h100", "a100-mig")
    assert scenario.kueue_objects


def test_autoscaling_runs_after_scheduling_and_before_sampling() -> None:
    from dralab.sim.stages import AutoscalingStage, Sampling, SchedulingStage

    assert SchedulingStage.order < AutoscalingStage.order == 35 < Sampling.order
