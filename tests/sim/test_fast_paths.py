"""The scheduler's fast paths inside the simulator change nothing: the default mix
(with GPUs shared by consumable capacity, whose cached outcomes draw share IDs on
every visit) run with the masked search and with the plain node-by-node search
gives the same result, down to every random draw (ties between nodes are broken
with the same generator, so a draw out of order would move pods)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml

import dralab.scheduler.cycle as cycle_module
from dralab.allocator import Allocator
from dralab.autoscale import clusterautoscaler, estimator
from dralab.scheduler.plugins.dryruns import DryRuns, PreemptorRuns
from dralab.scheduler.plugins.dynamicresources.view import AllocatorCache, _outcome
from dralab.sim.default import default_scenario_text
from dralab.sim.jobs import draw_arrivals
from dralab.sim.results import ModeResult
from dralab.sim.scenario import Scenario, parse_scenario
from dralab.sim.simulate import run_mode


def scaled(nodes: int, duration: str) -> Scenario:
    """The built-in scenario's mix on ``nodes`` nodes, arrivals scaled with the fleet."""
    doc: dict[str, Any] = yaml.safe_load(default_scenario_text())
    spec = doc["spec"]
    shares = {"h100": 0.3, "a100-mig": 0.2, "l4": 0.5}
    for pool in spec["fleet"]["spec"]["pools"]:
        pool["count"] = max(1, round(nodes * shares[pool["name"]]))
        pool.get("topology", {}).pop("nodesPerRack", None)
        pool.get("topology", {}).pop("racksPerBlock", None)
    for kind in spec["workload"]:
        number, _, unit = str(kind["arrivalRate"]).partition("/")
        kind["arrivalRate"] = f"{float(number) * nodes / 10:g}/{unit}"
    spec["duration"] = duration
    # Preemption frees DRA devices only with DRAPreemption (off by default, as upstream).
    spec["featureGates"] = "DRAPreemption=true"
    return parse_scenario(doc, f"<scaled {nodes}>")


def run(scenario: Scenario, masks: bool, monkeypatch: pytest.MonkeyPatch) -> ModeResult:
    original = cycle_module.Cycle.__init__

    def init(self: cycle_module.Cycle, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.use_masks = masks

    with monkeypatch.context() as patch:
        patch.setattr(cycle_module.Cycle, "__init__", init)
        result = run_mode(scenario, "dra", draw_arrivals(scenario))
    return dataclasses.replace(result, wall_seconds=0.0)


def test_masked_search_in_the_simulator_changes_nothing(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    scenario = scaled(60, "90m")
    fast = run(scenario, True, monkeypatch)
    plain = run(scenario, False, monkeypatch)
    assert len(fast.pods) > 300
    assert any(p.kind == "inference-share" and p.node for p in fast.pods)
    assert fast == plain


def test_remembered_what_if_outcomes_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Preemption's what-if searches are remembered per node and holdings; searching
    every time gives the same run."""
    scenario = scaled(60, "3h")
    remembered = run(scenario, True, monkeypatch)

    def search_always(self: AllocatorCache, engine: Any, claims: Any, entry: Any,
                      policy: Any, token: int) -> Any:
        return _outcome(self._search(engine, claims, entry, policy, False))

    monkeypatch.setattr(AllocatorCache, "_what_if_outcome", search_always)
    searched = run(scenario, True, monkeypatch)
    assert remembered.preemptions > 0
    assert remembered == searched


def test_remembered_hopeless_nodes_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A node where a claim shape can never fit (too few devices its selectors accept)
    keeps its failure across changes of the allocated state instead of searching
    again; searching every time gives the same run."""
    scenario = scaled(60, "90m")
    remembered = run(scenario, True, monkeypatch)
    calls: list[bool] = []
    original = Allocator.unsatisfiable

    def spy(self: Allocator, claims: Any, pools: Any) -> bool:
        calls.append(original(self, claims, pools))
        return False

    monkeypatch.setattr(Allocator, "unsatisfiable", spy)
    searched = run(scenario, True, monkeypatch)
    assert any(calls) and not all(calls)
    assert remembered == searched


def test_remembered_dry_runs_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Preemption's failed dry runs are remembered per kind of preemptor until their
    node changes; running every dry run gives the same run."""
    # A fleet and span where some preemptors meet a remembered dry run and some do not
    # (with 1.36's balanced-allocation score, 60 nodes over 3h preempt only once).
    scenario = scaled(30, "4h")
    hits: list[bool] = []
    original = PreemptorRuns.known

    def spy(self: PreemptorRuns, node: Any, nominated: Any) -> Any:
        found = original(self, node, nominated)
        hits.append(found is not None)
        return found

    monkeypatch.setattr(PreemptorRuns, "known", spy)
    remembered = run(scenario, True, monkeypatch)
    monkeypatch.setattr(DryRuns, "runs_for", lambda self, *args: None)
    fresh = run(scenario, True, monkeypatch)
    assert remembered.preemptions > 0
    assert any(hits) and not all(hits)
    assert remembered == fresh


def _autoscaled_mix() -> Scenario:
    """The built-in mix at five times its rate on pools that start at a fifth of what
    they may grow to: pods wait for nodes being provisioned, and preempt meanwhile."""
    doc: dict[str, Any] = yaml.safe_load(default_scenario_text())
    spec = doc["spec"]
    for pool in spec["fleet"]["spec"]["pools"]:
        top = pool["count"] * 5
        pool["autoscaling"] = {"min": 0, "max": top, "pricePerHour": 10.0,
                               "provisioningDelay": "5m"}
    for kind in spec["workload"]:
        number, _, unit = str(kind["arrivalRate"]).partition("/")
        kind["arrivalRate"] = f"{float(number) * 5:g}/{unit}"
    spec.update(duration="3h", compare=["dra"], autoscaling={"model": "cluster-autoscaler"},
                featureGates="DRAPreemption=true")
    return parse_scenario(doc, "<autoscaled mix>")


def test_autoscaler_shortcuts_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """In an autoscaled run (what-ifs inside what-ifs, every loop): sharing what fits
    no fresh node between a group's in-flight estimates, remembered dry runs and
    measuring only what the expander reads give the run that does every estimate
    and dry run in full."""
    scenario = _autoscaled_mix()
    fast = run(scenario, True, monkeypatch)
    original = estimator.estimate

    def full(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("hopeless", None)
        kwargs.pop("measures", None)
        return original(*args, **kwargs)

    monkeypatch.setattr(clusterautoscaler, "estimate", full)
    monkeypatch.setattr(DryRuns, "runs_for", lambda self, *args: None)
    slow = run(scenario, True, monkeypatch)
    assert fast.autoscaling is not None and fast.autoscaling.summary()["scale_ups"] > 0
    assert fast.preemptions > 0
    assert fast == slow


@pytest.mark.parametrize("which", ["mix", "autoscaled"])
def test_unrecorded_rejections_change_nothing(which: str, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    """The simulator does not work out the statuses of the nodes a placed pod was not
    placed on (nothing reads them); recording them gives the same run (the autoscaled
    mix has nominated pods, whose nominated node is tried before the others)."""
    scenario = scaled(60, "90m") if which == "mix" else _autoscaled_mix()
    unrecorded = run(scenario, True, monkeypatch)
    with monkeypatch.context() as patch:
        # Always on, whatever the simulator sets.
        patch.setattr(cycle_module.Cycle, "record_rejections",
                      property(lambda _: True, lambda _, value: None), raising=False)
        recorded = run(scenario, True, monkeypatch)
    assert unrecorded == recorded
