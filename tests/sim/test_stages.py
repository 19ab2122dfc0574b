"""Stages, modes and the typed scenario: pool-template nodes, the observed node set,
Mode objects and values parsed once."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dralab.api.core import Taint
from dralab.api.quantity import parse_quantity
from dralab.fleet import generate, parse_fleet
from dralab.fleet.catalog import CATALOG
from dralab.sim.fleets import mig_fraction
from dralab.sim.jobs import Arrival
from dralab.sim.model import DurationLaw, KindDevices
from dralab.sim.modes import DEVICE_PLUGIN, DRA, MODES, Mode, resolve_mode
from dralab.sim.scenario import Scenario, ScenarioError, parse_scenario
from dralab.sim.simulate import MODE_LABELS, simulate

H100 = {"name": "h100", "count": 1, "namePrefix": "h100-", "cpu": "192", "memory": "2Ti",
        "gpu": {"model": "h100-80gb-sxm", "count": 8}}
FULL_NODE = {"name": "train", "arrivals": ["0s", "0s"],
             "duration": {"distribution": "fixed", "mean": "3h"},
             "cpu": "8", "memory": "8Gi", "devices": {"type": "gpu", "count": 8}}


def scenario(events: list[dict[str, Any]], pools: list[dict[str, Any]] | None = None,
             workload: list[dict[str, Any]] | None = None, **spec: Any) -> Scenario:
    return parse_scenario({
        "apiVersion": "dralab.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "t"},
        "spec": {"seed": 3, "duration": "4h", "sampleInterval": "30m",
                 "fleet": {"spec": {"pools": pools or [H100]}},
                 "workload": workload or [FULL_NODE], "events": events, **spec}}, "s.yaml")


# --- a node from a pool template ----------------------------------------------------------

def test_a_pool_add_event_brings_the_next_node_and_pending_pods_start_on_it() -> None:
    s = scenario([{"at": "1h", "pool": "h100", "action": "add"}])
    assert [c.node for c in s.timeline] == ["h100-02"]
    for mode in simulate(s).modes:
        # Two full-node pods, one node: the second waits until the pool grows at 1 h.
        starts = sorted((p.start, p.node) for p in mode.pods)
        assert starts == [(0.0, "h100-01"), (3600.0, "h100-02")], mode.mode
        totals = [(x.t, x.gpus_total) for x in mode.samples]
        assert all(total == (16 if t >= 3600.0 else 8) for t, total in totals), mode.mode
        assert mode.occupancy.nodes == ("h100-01", "h100-02")


def test_the_pool_node_is_what_the_fleet_would_publish_for_one_more_node() -> None:
    s = scenario([{"at": "1h", "pool": "h100", "action": "add"},
                  {"at": "2h", "pool": "h100", "action": "add"}])
    assert [c.node for c in s.timeline] == ["h100-02", "h100-03"]
    larger = generate(parse_fleet({"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
                                   "metadata": {"name": "t"},
                                   "spec": {"pools": [{**H100, "count": 3}]}}, "f"), 3)
    node, slices = s.pool_nodes["dra"]["h100-03"]
    assert node == larger.nodes[2]
    assert slices == tuple(x for x in larger.slices if x.spec.node_name == "h100-03")
    assert slices and all(x.spec.node_name == "h100-03" for x in slices)
    plugin_node, plugin_slices = s.pool_nodes["device-plugin"]["h100-03"]
    assert plugin_slices == () and plugin_node.status.allocatable["nvidia.com/gpu"].value() == 8


@pytest.mark.parametrize(
    ("event", "path", "fragment"),
    [({"at": "1h", "pool": "a100", "action": "add"}, "spec.events[0].pool", "unknown pool"),
     ({"at": "1h", "pool": "h100", "node": "h100-01", "action": "add"},
      "spec.events[0].pool", "exclusive"),
     ({"at": "1h", "pool": "h100", "action": "remove"}, "spec.events[0].pool", "only an add"),
     ({"at": "1h", "action": "add"}, "spec.events[0].node", "required")],
)
def test_pool_events_are_checked_when_the_scenario_loads(event: dict[str, Any], path: str,
                                                         fragment: str) -> None:
    with pytest.raises(ScenarioError) as info:
        scenario([event])
    assert str(info.value).startswith(f"s.yaml: {path}: ") and fragment in str(info.value)


def test_a_pool_with_node_names_cannot_grow() -> None:
    named = {**H100, "nodeNames": ["x", "y"]}
    del named["count"], named["namePrefix"]
    with pytest.raises(ScenarioError, match=r"spec\.events\[0\]\.pool: pool h100 lists"):
        scenario([{"at": "1h", "pool": "h100", "action": "add"}], pools=[named])


# --- the observer follows the node set ----------------------------------------------------

def test_removed_gpus_leave_the_capacity_and_come_back_with_their_node() -> None:
    two = {**H100, "count": 2}
    s = scenario([{"at": "1h", "node": "h100-02", "action": "remove"},
                  {"at": "2h", "node": "h100-02", "action": "add"}], pools=[two],
                 workload=[{**FULL_NODE, "arrivals": ["0s"]}])
    for mode in simulate(s).modes:
        by_time = {x.t: x for x in mode.samples}
        assert by_time[1800.0].gpus_total == 16 and by_time[1800.0].gpu_capacity_allocated == 0.5
        # Without h100-02 the busy node is the whole (smaller) fleet.
        assert by_time[5400.0].gpus_total == 8 and by_time[5400.0].gpu_capacity_allocated == 1.0
        assert by_time[9000.0].gpus_total == 16
        # The heatmap keeps a row for the removed node (zero while it is away).
        assert mode.occupancy.nodes == ("h100-01", "h100-02")


# --- modes --------------------------------------------------------------------------------

def test_modes_resolve_once_and_keep_their_names_and_labels() -> None:
    assert resolve_mode("dra") is DRA and resolve_mode(DEVICE_PLUGIN) is DEVICE_PLUGIN
    assert list(MODES) == ["device-plugin", "dra", "kai"]
    assert MODE_LABELS == {"device-plugin": "Device plugin (whole GPUs)",
                           "dra": "DRA (MIG + sharing)", "kai": "KAI Scheduler"}
    with pytest.raises(KeyError):
        resolve_mode("gpu-operator")
    s = scenario([])
    assert s.compare == ("device-plugin", "dra")
    assert all(isinstance(m, Mode) for m in s.modes) and s.modes == (DEVICE_PLUGIN, DRA)
    result = simulate(s)
    assert [(m.mode, m.label) for m in result.modes] == [
        ("device-plugin", "Device plugin (whole GPUs)"), ("dra", "DRA (MIG + sharing)")]


def test_each_mode_builds_its_own_pod_and_counts_its_own_demand() -> None:
    s = scenario([], workload=[{**FULL_NODE, "devices": {"type": "mig", "profile": "3g.40gb"}}])
    kind = s.kinds[0]
    arrival = Arrival(0.0, kind, 0, (60.0,))
    dp, dra = DEVICE_PLUGIN.make_pod(arrival, 0), DRA.make_pod(arrival, 0)
    assert str(dp.spec.containers[0].resources.limits["nvidia.com/gpu"]) == "1"
    assert dp.spec.resource_claims == []
    assert [c.resource_claim_template_name for c in dra.spec.resource_claims] == ["train"]
    assert DEVICE_PLUGIN.demand(kind) == (1, 1.0, 0)
    assert DRA.demand(kind) == (1, 3 / 7, 0)


def test_mig_shares_come_from_the_fleet_catalog() -> None:
    for model in CATALOG.values():
        for profile in model.mig.profiles if model.mig is not None else ():
            assert mig_fraction(profile.name) == profile.compute_slices / 7
    assert mig_fraction("1g.5gb") == 1 / 7 and mig_fraction("no-such-profile") == 1.0


# --- the typed scenario -------------------------------------------------------------------

def test_the_scenario_parses_once_into_typed_values() -> None:
    s = scenario(
        [{"at": "90m", "node": "h100-01", "action": "taint",
          "taint": {"key": "maintenance", "value": "true", "effect": "NoSchedule"}},
         {"at": 7200, "node": "h100-01", "action": "untaint", "taint": {"key": "maintenance"}}],
        workload=[{"name": "infer", "arrivalRate": "12/h", "cpu": "500m", "memory": "2Gi",
                   "duration": {"distribution": "lognormal", "mean": "90m", "sigma": 0.4},
                   "tolerations": [{"key": "x", "operator": "Exists"}],
                   "devices": {"type": "share", "memory": "6Gi"}},
                  {"name": "nb", "arrivals": ["30m", "0s"],
                   "duration": {"distribution": "uniform", "min": "10m", "max": "1h"}}])
    infer, nb = s.kinds
    assert infer.rate == pytest.approx(12 / 3600) and infer.arrivals == ()
    assert infer.duration == DurationLaw("lognormal", mean=5400.0, sigma=0.4)
    assert infer.cpu == parse_quantity("500m") and infer.memory == parse_quantity("2Gi")
    assert infer.devices == KindDevices(type="share", memory=parse_quantity("6Gi"))
    assert infer.devices is not None and infer.devices.memory_mib == 6144
    assert infer.tolerations[0].key == "x" and infer.tolerations[0].operator == "Exists"
    assert nb.rate is None and nb.arrivals == (0.0, 1800.0) and nb.devices is None
    assert nb.duration == DurationLaw("uniform", sigma=0.5, low=600.0, high=3600.0)
    taint, untaint = s.timeline
    assert taint.at == 5400.0 and taint.taint == Taint(key="maintenance", value="true",
                                                       effect="NoSchedule")
    assert untaint.at == 7200.0 and untaint.taint is None and untaint.taint_key == "maintenance"
    assert [t.metadata.name for t in s.claim_templates] == ["infer"]
    assert s.fleet_data is not None and s.fleet_data["kind"] == "Fleet"
    assert DurationLaw("fixed", mean=60.0).draw(random.Random(1)) == 60.0
