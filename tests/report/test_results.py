"""dralab.sim.results: the summary numbers on hand-computed data, records and JSON."""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest

from dralab.sim.results import (
    SCHEMA,
    SUMMARY_KEYS,
    ModeResult,
    NodeOccupancy,
    SimulationResult,
    percentile,
    time_weighted_mean,
)

from .fixtures import comparison_result, tiny_mode


@pytest.mark.parametrize(("values", "q", "expected"), [
    ([0.0, 10.0, 20.0, 40.0], 50, 15.0),     # h = 1.5: halfway between 10 and 20
    ([0.0, 10.0, 20.0, 40.0], 90, 34.0),     # h = 2.7: 20 + 0.7 * 20
    ([0.0, 10.0, 20.0, 40.0], 99, 39.4),     # h = 2.97
    ([0.0, 10.0, 20.0, 40.0], 0, 0.0),
    ([0.0, 10.0, 20.0, 40.0], 100, 40.0),
    ([40.0, 0.0, 20.0, 10.0], 50, 15.0),     # order of input does not matter
    ([7.0], 99, 7.0),
])
def test_percentile_interpolates_linearly(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_percentile_agrees_with_numpy_default() -> None:
    rng = np.random.default_rng(3)
    for n in (1, 2, 5, 17, 100):
        values = rng.exponential(100.0, n).tolist()
        for q in (0, 1, 25, 50, 90, 99, 100):
            assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


def test_percentile_edges() -> None:
    assert math.isnan(percentile([], 50))
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_time_weighted_mean() -> None:
    # 0 for 10 s, then 0.5 for 20 s; the last sample (1.0) marks the end and carries no weight.
    assert time_weighted_mean([0, 10, 30], [0.0, 0.5, 1.0]) == pytest.approx(1 / 3)
    assert time_weighted_mean([5, 5], [1.0, 3.0]) == 2.0      # no elapsed time: plain mean
    assert math.isnan(time_weighted_mean([], []))
    with pytest.raises(ValueError):
        time_weighted_mean([0], [])


def test_summary_by_hand() -> None:
    s = tiny_mode().summary()
    assert list(s) == list(SUMMARY_KEYS)
    # d-0 was preempted (its re-created pod would be another record): each pod counts once.
    assert s["pods_arrived"] == 4
    assert s["pods_started"] == 3
    assert s["pods_completed"] == 2
    assert s["pods_never_started"] == 1
    # Waits of the started pods a, b, c: 0, 10, 20.
    assert s["wait_p50"] == pytest.approx(10.0)
    assert s["wait_p90"] == pytest.approx(18.0)
    assert s["wait_p99"] == pytest.approx(19.8)
    assert s["wait_mean"] == pytest.approx(10.0)
    assert s["mean_gpu_capacity_allocated"] == pytest.approx(1 / 3)
    assert s["mean_gpu_capacity_requested"] == 0.0   # the tiny samples ask for nothing
    assert s["gpu_allocation_efficiency"] == 0.0
    assert s["mean_gpus_busy"] == pytest.approx((0 * 10 + 4 * 20) / 30)
    assert s["peak_gpu_capacity_allocated"] == 1.0
    assert s["mean_fragmentation"] == pytest.approx((0.2 * 10 + 0.1 * 20) / 30)
    assert s["throughput_pods_per_hour"] == pytest.approx(2 * 3600 / 30)   # 2 done in 30 s
    assert s["scheduling_attempts"] == 9
    assert s["preemptions"] == 1


def test_summary_of_an_empty_run_is_undefined_not_zero() -> None:
    empty = ModeResult(mode="m", label="M", samples=(), pods=(),
                       occupancy=NodeOccupancy(nodes=(), times=(), matrix=()),
                       scheduling_attempts=0, preemptions=0, unschedulable_reasons={},
                       wall_seconds=0.0)
    s = empty.summary()
    assert s["pods_arrived"] == 0 and s["pods_never_started"] == 0
    for key in ("wait_p50", "wait_mean", "mean_gpu_capacity_allocated",
                "peak_gpu_capacity_allocated", "throughput_pods_per_hour"):
        assert math.isnan(s[key]), key
    assert empty.to_json()["summary"]["wait_p50"] is None


def test_records_are_plain_dicts() -> None:
    mode = tiny_mode()
    samples = mode.samples_records()
    assert samples[1] == {"t": 10.0, "gpus_total": 64, "gpus_busy": 4,
                          "gpu_capacity_allocated": 0.5, "gpu_capacity_requested": 0.0,
                          "fragmentation": 0.1,
                          "pending_pods": 2, "running_pods": 2, "completed_pods": 0}
    pods = mode.pods_records()
    assert [p["wait"] for p in pods] == [0.0, 10.0, 20.0, 40.0, None]
    assert pods[4]["node"] is None and pods[3]["preempted"] is True


def test_reasons_are_sorted_copies() -> None:
    counts = {"z": 1, "a": 2}
    mode = ModeResult(**{**_fields(tiny_mode()), "unschedulable_reasons": counts})
    assert list(mode.unschedulable_reasons) == ["a", "z"]
    counts["b"] = 5
    assert "b" not in mode.unschedulable_reasons


def test_occupancy_shape_is_checked() -> None:
    with pytest.raises(ValueError, match="rows"):
        NodeOccupancy(nodes=("a", "b"), times=(0.0,), matrix=((0.1,),))
    with pytest.raises(ValueError, match="bins"):
        NodeOccupancy(nodes=("a",), times=(0.0, 60.0), matrix=((0.1,),))
    with pytest.raises(ValueError, match="increasing"):
        NodeOccupancy(nodes=("a",), times=(60.0, 0.0), matrix=((0.1, 0.2),))


def test_json_round_trip() -> None:
    result = comparison_result(duration=3600.0)
    data = json.loads(json.dumps(result.to_json(), allow_nan=False))
    assert data["schema"] == SCHEMA
    assert data["modes"][0]["summary"]["pods_arrived"] == sum(
        1 for p in result.modes[0].pods if not p.preempted)
    assert SimulationResult.from_json(data) == result
    with pytest.raises(ValueError, match="schema"):
        SimulationResult.from_json({**data, "schema": "other"})


def test_results_pickle_for_worker_processes() -> None:
    result = comparison_result(duration=1800.0)
    assert pickle.loads(pickle.dumps(result)) == result


def test_summary_records() -> None:
    result = comparison_result(duration=3600.0)
    records = result.summary_records()
    assert [r["mode"] for r in records] == ["device-plugin", "dra"]
    assert set(records[0]) == {"mode", "label", *SUMMARY_KEYS}


def _fields(mode: ModeResult) -> dict[str, object]:
    return {name: getattr(mode, name) for name in ModeResult.__dataclass_fields__}
