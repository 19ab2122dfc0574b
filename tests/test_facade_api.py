"""The facade covers the two main jobs without internals: a scenario built in code and
simulated, a trace replay, and paths given as pathlib.Path."""

from __future__ import annotations

from pathlib import Path

import pytest

import dralab

ROOT = Path(__file__).parent.parent


def test_scenario_built_in_code_runs() -> None:
    scenario = dralab.scenario({
        "duration": "2h", "seed": 3, "compare": ["dra"],
        "fleet": {"spec": {"pools": [{"name": "h100", "count": 2, "cpu": "64",
                                      "memory": "512Gi",
                                      "gpu": {"model": "h100-80gb-sxm", "count": 8}}]}},
        "workload": [{"name": "train", "arrivals": ["0s", "0s", "0s"], "cpu": "4",
                      "memory": "8Gi", "duration": {"distribution": "fixed", "mean": "1h"},
                      "devices": {"type": "gpu", "count": 8}}]})
    assert isinstance(scenario, dralab.Scenario)
    [dra] = dralab.simulate(scenario).modes
    starts = sorted(p.start for p in dra.pods)
    assert starts == [0.0, 0.0, 3600.0]  # two nodes of 8 GPUs, the third job waits an hour


def test_scenario_errors_name_the_field() -> None:
    with pytest.raises(dralab.DralabError, match=r"spec\.duration"):
        dralab.scenario({"duration": "-1h", "workload": []})


def test_default_scenario_from_the_facade() -> None:
    assert dralab.scenario().name == dralab.scenario(None).name


def test_replay_trace_from_the_facade() -> None:
    run = dralab.replay_trace(policy="BestFit", seed=42)
    assert isinstance(run, dralab.ReplayRun)
    assert run.policy == "BestFit" and run.events > 0


def test_load_and_validate_take_paths() -> None:
    objects = dralab.load(ROOT / "examples" / "fleet")
    assert objects and dralab.validate([ROOT / "examples" / "fleet"]) == []
