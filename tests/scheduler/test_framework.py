"""Framework runtime semantics with small fake plugins: PreFilter results, Reserve and
Permit failures, errors, Skip, and the public API surface."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

import dralab.scheduler
from dralab.api.core import Pod
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.scheduler import Scheduler, ScheduleResult, build_cluster
from dralab.scheduler.framework import CycleState, Handle, PreFilterResult, Registry, Status
from dralab.scheduler.plugins.nodename import NodeName
from dralab.scheduler.plugins.registry import default_registry
from dralab.scheduler.profile import ConfigError

from .builders import config, node, placements, pod

log: list[str] = []


@dataclass
class Fake:
    """A plugin at any point; behaviour set per test through ``args``."""

    plugin_name: str
    args: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.plugin_name

    def pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                   ) -> tuple[PreFilterResult | None, Status]:
        nodes = self.args.get("nodes")
        code = self.args.get("pre_filter", "ok")
        if code == "skip":
            return None, Status.skip(self.name)
        if code == "unschedulable":
            return None, Status.unschedulable(self.name, "not today")
        if code == "error":
            return None, Status.error(self.name, "broken input")
        return (PreFilterResult(frozenset(nodes)) if nodes is not None else None), \
            Status.success()

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        log.append(f"{self.name}.filter {node.name}")
        return Status.success()

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        log.append(f"{self.name}.reserve")
        if self.args.get("reserve") == "reject":
            return Status.unschedulable(self.name, "reservation refused")
        return Status.success()

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        log.append(f"{self.name}.unreserve")

    def post_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState,
                    statuses: Mapping[str, Status]) -> tuple[None, Status]:
        victim = self.args.get("delete")
        if victim and cluster.remove_pod(victim) is not None:
            return None, Status.unschedulable(self.name, "deleted something")
        return None, Status.unschedulable(self.name, "nothing to do")

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        if self.args.get("permit") == "reject":
            return Status.unresolvable(self.name, "not permitted")
        return Status.success()


def registry() -> Registry:
    reg = default_registry()
    for name in ("FakeA", "FakeB"):
        reg = reg.with_plugin(name, lambda args, handle, n=name: Fake(n, args))
    return reg


def run(objects: Sequence[Any], plugins: Mapping[str, Any],
        args: Mapping[str, Mapping[str, Any]] | None = None) -> ScheduleResult:
    log.clear()
    doc = config({"schedulerName": "default-scheduler", "plugins": plugins,
                  "pluginConfig": [{"name": n, "args": a} for n, a in (args or {}).items()]})
    cluster, pending = build_cluster(objects)
    return Scheduler.build(cluster, doc, registry=registry()).run(pending)


NODES = [node("a"), node("b"), node("c")]


def test_pre_filter_results_intersect_and_restrict_filter() -> None:
    result = run([*NODES, pod("p", "1")],
                 {"preFilter": {"enabled": [{"name": "FakeA"}, {"name": "FakeB"}]},
                  "filter": {"enabled": [{"name": "FakeA"}]}},
                 {"FakeA": {"nodes": ["a", "b"]}, "FakeB": {"nodes": ["b", "c"]}})
    assert placements(result) == {"p": "b"}
    assert log == ["FakeA.filter b"]


def test_pre_filter_results_disjoint() -> None:
    result = run([*NODES, pod("p", "1")],
                 {"preFilter": {"enabled": [{"name": "FakeA"}, {"name": "FakeB"}]}},
                 {"FakeA": {"nodes": ["a"]}, "FakeB": {"nodes": ["c"]}})
    assert result.unplaced[0].message.startswith(
        "0/3 nodes are available: node(s) didn't satisfy plugin(s) [FakeA FakeB] "
        "simultaneously.")


def test_nodes_outside_pre_filter_result_are_counted_as_absent() -> None:
    result = run([node("a", "1"), node("b"), node("c"), pod("p", "2")],
                 {"preFilter": {"enabled": [{"name": "FakeA"}]}},
                 {"FakeA": {"nodes": ["a"]}})
    assert result.unplaced[0].message.startswith(
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) "
        "[FakeA].")


def test_pre_filter_unschedulable_replaces_the_histogram() -> None:
    result = run([*NODES, pod("p", "1")], {"preFilter": {"enabled": [{"name": "FakeA"}]}},
                 {"FakeA": {"pre_filter": "unschedulable"}})
    assert result.unplaced[0].message.startswith("0/3 nodes are available: not today.")


def test_pre_filter_skip_skips_filter() -> None:
    run([*NODES, pod("p", "1")], {"preFilter": {"enabled": [{"name": "FakeA"}]},
                                  "filter": {"enabled": [{"name": "FakeA"}]}},
        {"FakeA": {"pre_filter": "skip"}})
    assert log == []


def test_error_is_a_scheduler_error_not_unschedulable() -> None:
    result = run([*NODES, pod("p", "1")], {"preFilter": {"enabled": [{"name": "FakeA"}]}},
                 {"FakeA": {"pre_filter": "error"}})
    (unplaced,) = result.unplaced
    assert unplaced.reason == "SchedulerError"
    assert unplaced.message == 'running PreFilter plugin "FakeA": broken input'
    assert unplaced.pod.status.conditions[-1].reason == "SchedulerError"


def test_reserve_rejection_unreserves_in_reverse_and_forgets() -> None:
    result = run([node("a"), pod("p", "1")],
                 {"reserve": {"enabled": [{"name": "FakeA"}, {"name": "FakeB"}]}},
                 {"FakeB": {"reserve": "reject"}})
    assert log == ["FakeA.reserve", "FakeB.reserve", "FakeB.unreserve", "FakeA.unreserve"]
    assert result.unplaced[0].message.startswith(
        "0/1 nodes are available: 1 reservation refused.")
    assert result.cluster.nodes["a"].pods == []


def test_permit_rejection() -> None:
    result = run([node("a"), pod("p", "1")],
                 {"reserve": {"enabled": [{"name": "FakeA"}]},
                  "permit": {"enabled": [{"name": "FakeA"}]}},
                 {"FakeA": {"permit": "reject"}})
    assert log == ["FakeA.reserve", "FakeA.unreserve"]
    assert result.unplaced[0].message == "0/1 nodes are available: 1 not permitted."


def test_post_filter_that_changes_the_cluster_retries_the_pod() -> None:
    result = run([node("a", "2"), pod("blocker", "2", priority=100, node_name="a"),
                  pod("p", "2")],
                 {"postFilter": {"enabled": [{"name": "FakeA"}]}},
                 {"FakeA": {"delete": "default/blocker"}})
    assert placements(result) == {"p": "a"}
    assert result.placed[0].attempts == 2


def test_queue_sort_must_match_across_profiles() -> None:
    class OtherSort:
        name = "OtherSort"

        def less(self, a: PodInfo, b: PodInfo) -> bool:
            return a.sequence < b.sequence

    def make(args: Mapping[str, Any], handle: Handle) -> OtherSort:
        return OtherSort()

    doc = config({"schedulerName": "a"}, {"schedulerName": "b", "plugins": {"queueSort": {
        "disabled": [{"name": "*"}], "enabled": [{"name": "OtherSort"}]}}})
    with pytest.raises(ConfigError, match=r"^profiles\[1\]\.plugins\.queueSort: Invalid value: "
                                          r"\"OtherSort\": queueSort must be the same"):
        Scheduler.build(ClusterState(), doc, registry=default_registry().with_plugin(
            "OtherSort", make))


def test_node_name_filter() -> None:
    plugin = NodeName()
    info = PodInfo(pod=pod("p", node_name="b"))
    a = NodeInfo.of(node("a"))
    b = NodeInfo.of(node("b"))
    assert plugin.filter(CycleState(), info, b).is_success()
    rejected = plugin.filter(CycleState(), info, a)
    assert rejected.message == "node(s) didn't match the requested node name"
    assert plugin.filter(CycleState(), PodInfo(pod=pod("q")), a).is_success()


def test_cycle_state_clone_is_independent() -> None:
    class Counter:
        def __init__(self, n: int) -> None:
            self.n = n

        def clone(self) -> Counter:
            return Counter(self.n)

    state = CycleState()
    state.write("k", Counter(1))
    copy = state.clone()
    copy.read("k", Counter).n = 5
    assert state.read("k", Counter).n == 1


def test_public_api_is_exact() -> None:
    public = {n for n in vars(dralab.scheduler) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(dralab.scheduler, n)).__name__ == "module"}
    helpers = {"annotations", "Iterable", "Mapping", "Any", "KubeObject", "FeatureGates"}
    assert public - modules - helpers == set(dralab.scheduler.__all__)
    for name in dralab.scheduler.__all__:
        assert hasattr(dralab.scheduler, name)


def test_unplaced_pods_keep_other_fields() -> None:
    result = run([node("a", "1"), pod("p", "2", labels={"team": "ml"})], {})
    kept: Pod = result.unplaced[0].pod
    assert kept.metadata.labels == {"team": "ml"}
    assert kept.spec.node_name is None
