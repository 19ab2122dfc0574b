"""Scenario values: finite and in range, and the work a scenario asks for, capped at load."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dralab.sim.limits import (
    MAX_NODE_SAMPLES,
    MAX_SCENARIO_PODS,
    check_work,
    expected_pods,
    sample_count,
)
from dralab.sim.scenario import ScenarioError, parse_scenario
from dralab.sim.spec import JobKind, parse_duration, parse_rate

NUMBERS = st.one_of(st.floats(), st.integers(min_value=-(10**400), max_value=10**400))
TEXTS = st.one_of(st.text(max_size=12), st.from_regex(r"[-+]?[0-9.e]{1,8}(ms|s|m|h|d)?",
                                                      fullmatch=True))


@given(st.one_of(NUMBERS, TEXTS))
def test_durations_are_finite_and_not_negative_or_refused(value: Any) -> None:
    try:
        seconds = parse_duration(value)
    except ValueError:
        return
    assert math.isfinite(seconds) and seconds >= 0


@given(st.one_of(NUMBERS, TEXTS, TEXTS.map(lambda t: t + "/s")))
def test_rates_are_finite_and_not_negative_or_refused(value: Any) -> None:
    try:
        rate = parse_rate(value)
    except ValueError:
        return
    assert math.isfinite(rate) and rate >= 0


@pytest.mark.parametrize("value", ["inf/h", "nan/h", "-1/h", "1e999/s", "1_0/h", " /h", "2/w",
                                   float("nan"), float("inf"), 10**400, True])
def test_bad_rates(value: Any) -> None:
    with pytest.raises(ValueError):
        parse_rate(value)


def test_sample_count_and_expected_pods() -> None:
    assert sample_count(3600.0, 600.0) == 7          # 0, 10, ..., 50 min, then the end
    kind = JobKind(name="k", arrival_rate="10/h", pods_per_job=3)
    assert expected_pods(kind, 7200.0) == pytest.approx(60.0)
    listed = JobKind(name="k", arrivals=["0s", "30m", "3h"], pods_per_job=2)
    assert expected_pods(listed, 7200.0) == 4           # the arrival at 3h never comes


def test_check_work_names_field_estimate_and_limit() -> None:
    kinds = [JobKind(name="a", arrival_rate="1/s"), JobKind(name="b", arrival_rate="1/s")]
    check_work(kinds, 40_000.0, 3600.0, 10, "s.yaml")      # 80,000 pods: fine
    with pytest.raises(ScenarioError, match=r"^s\.yaml: spec\.workload: about 120,000 pods "
                                            r"expected over all job kinds, more than 100,000 "
                                            r"\(MAX_SCENARIO_PODS\)$"):
        check_work(kinds, 60_000.0, 3600.0, 10, "s.yaml")
    with pytest.raises(ScenarioError, match=r"spec\.workload\[0\]\.arrivalRate: about"):
        check_work(kinds[:1], 200_000.0, 3600.0, 10, "s.yaml")
    with pytest.raises(ScenarioError, match=r"spec\.sampleInterval: 10,001 samples"):
        check_work(kinds[:1], 10_000.0, 1.0, 1, "s.yaml")
    with pytest.raises(ScenarioError, match=r"MAX_NODE_SAMPLES"):
        check_work(kinds[:1], 10.0, 0.01, MAX_NODE_SAMPLES // 1000, "s.yaml")  # 1,001 x 2,000


def doc(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "duration": "1h", "sampleInterval": "1m",
        "fleet": {"spec": {"pools": [{"name": "a", "count": 1, "cpu": "8", "memory": "8Gi",
                                      "gpu": {"model": "l4", "count": 1}}]}},
        "workload": [{"name": "k", "arrivalRate": "1/h", "cpu": "1", "memory": "1Gi"}]}
    return {"apiVersion": "dralab.dev/v1alpha1", "kind": "Scenario", "spec": {**base, **spec}}


def test_just_under_the_pod_limit_loads() -> None:
    kind = {"name": "k", "arrivalRate": f"{MAX_SCENARIO_PODS - 1}/h", "cpu": "1",
            "memory": "1Gi"}
    assert parse_scenario(doc(workload=[kind])).workload[0].name == "k"
    kind["arrivalRate"] = f"{MAX_SCENARIO_PODS + 1}/h"
    with pytest.raises(ScenarioError, match="MAX_SCENARIO_PODS"):
        parse_scenario(doc(workload=[kind]))


@pytest.mark.parametrize(("change", "path"), [
    ({"workload": [{"name": "k", "arrivalRate": "1/h", "priority": -(2**31) - 1}]},
     "spec.workload[0].priority"),
    ({"workload": [{"name": "k" * 57, "arrivalRate": "1/h"}]}, "spec.workload[0].name"),
    ({"workload": [{"name": "k", "arrivalRate": "1/h", "memory": "-1Gi"}]},
     "spec.workload[0].memory"),
    ({"workload": [{"name": "k", "arrivalRate": "1/h",
                    "devices": {"type": "gpu", "count": 2, "matchAttribute": "no such/attr"}}]},
     "spec.workload[0].devices"),
    ({"events": [{"at": "1m", "node": "a-01", "action": "taint",
                  "taint": {"key": "k", "value": "v" * 64, "effect": "NoSchedule"}}]},
     "spec.events[0].taint.value"),
    ({"events": [{"at": "1m", "node": "A_01", "action": "remove"}]}, "spec.events[0].node"),
])
def test_values_are_valid_as_the_objects_they_become(change: dict[str, Any], path: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(doc(**change), "s.yaml")
    assert str(info.value).startswith(f"s.yaml: {path}: "), str(info.value)
