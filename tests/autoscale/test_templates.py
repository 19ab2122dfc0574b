"""Template nodes are what ``dralab fleet`` publishes for the next nodes of a pool;
a pool's current nodes may come from input Nodes labelled with it."""

from __future__ import annotations

import copy

import pytest

from dralab.api.codec import encode
from dralab.autoscale import TemplateNodes, node_groups, run_once
from dralab.fleet import generate, parse_fleet
from dralab.fleet.generate import grown_pool_nodes

from .helpers import Doc, fleet, load, pod, summary


def _grown(doc: Doc, pool: str, count: int) -> Doc:
    out = copy.deepcopy(doc)
    for p in out["spec"]["pools"]:
        if p["name"] == pool:
            p["count"] += count
    return out


@pytest.mark.parametrize("pool", ["h100", "a100", "l4"])
@pytest.mark.parametrize(("count", "more"), [(0, 1), (0, 3), (2, 2), (9, 2)])
def test_template_is_the_next_nodes_dralab_fleet_publishes(pool: str, count: int,
                                                           more: int) -> None:
    doc = fleet("cpu", pool, **{pool: {"count": count, "autoscaling": {"max": 20}}})
    templates = grown_pool_nodes(parse_fleet(doc, "t"), pool, more)
    larger = generate(parse_fleet(_grown(doc, pool, more), "t"))
    names = [n.metadata.name for n in larger.nodes if n.metadata.labels["dralab.dev/pool"] == pool]
    assert [n.metadata.name for n, _ in templates] == names[count:]
    for node, slices in templates:
        published = [n for n in larger.nodes if n.metadata.name == node.metadata.name]
        assert [encode(n) for n in published] == [encode(node)]
        assert [encode(s) for s in larger.slices if s.spec.node_name == node.metadata.name] \
            == [encode(s) for s in slices]


def test_templates_skip_names_the_cluster_has() -> None:
    f = parse_fleet(fleet("cpu", "h100"), "t")
    templates = TemplateNodes(f, {"h100": 0}, ["h100-01", "h100-03"])
    assert [templates.node("h100", i)[0].metadata.name for i in range(3)] == \
        ["h100-02", "h100-04", "h100-05"]


def test_groups_are_the_autoscaled_pools() -> None:
    f = parse_fleet(fleet(), "t")
    groups = node_groups(f, {"h100": 1})
    assert sorted(groups) == ["a100", "h100", "l4"]
    h100 = groups["h100"]
    assert (h100.size, h100.min_size, h100.max_size, h100.room, h100.price_per_hour,
            h100.provisioning_delay, h100.priority) == (1, 0, 3, 2, 32.0, 300.0, 10)


def _node(name: str, pool: str) -> Doc:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"dralab.dev/pool": pool}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}


def test_input_nodes_labelled_with_a_pool_are_its_nodes() -> None:
    # The Fleet says two cpu-pool nodes... the input has three, one of them busy.
    doc = fleet("cpu", "h100", cpu={"autoscaling": {"max": 5}})
    data = load(doc, _node("edge-1", "cpu"), _node("edge-2", "cpu"), _node("edge-3", "cpu"),
                pod("busy", cpu="30", node="edge-2", owned=False))
    decisions = summary(run_once(data))
    assert [d["node"] for d in decisions["scaleDown"]] == ["edge-1", "edge-3"]
    assert decisions["scaleUp"] == [] and decisions["pending"] == []
