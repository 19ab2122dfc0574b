"""Cluster Autoscaler's expander tests, ported.

Upstream: kubernetes/autoscaler, branch cluster-autoscaler-release-1.37 at
a16f0ae8b5578f09604371c75e0cad29ed794e59, cluster-autoscaler/expander/:

* leastnodes/leastnodes_test.go TestLeastNodes: each table case (id = its name);
* mostpods/mostpods_test.go TestMostPods, waste/waste_test.go TestLeastWaste,
  random/random_test.go TestRandomExpander: one function each, every assertion;
* priority/priority_test.go: each Test function; the options are filtered by
  ``best_options("priority", ..., priorities)`` with the ConfigMap's YAML parsed.
  CA's warning events and its count of good and bad config updates are not
  modelled (dralab reads the configuration once, no ConfigMap watch): those cases
  assert the options kept, which is what a scale-up acts on;
* factory/chain_test.go TestChainStrategy_BestOption: each case, with upstream's
  substring filters over ``run_chain``;
* price/price_test.go TestPriceExpander and price/preferred_test.go
  (TestPreferredNode, TestSimpleNodeUnfitness): one function each, every assertion,
  on ``dralab.autoscale.price`` with upstream's test pricing model (node and pod
  prices by name, a missing name an error) and preferred nodes; plus the ``price``
  expander end to end on ``Estimate``s with dralab's pricing model (ours);
* grpcplugin: not ported (an external gRPC expander).

Options are ``Estimate``s of stub groups named as upstream's Debug strings.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
import yaml

from dralab.api.codec import decode
from dralab.api.core import Node, Pod
from dralab.autoscale.estimator import Estimate, _least_waste
from dralab.autoscale.expanders import best_options, choose, run_chain
from dralab.autoscale.groups import NodeGroup
from dralab.autoscale.price import (
    PriceOption,
    best_price_options,
    preferred_node_cpu_m,
    simple_node_unfitness,
)
from dralab.autoscale.units import PodUnit
from dralab.cluster import ClusterState

from .builders_up import node, pod


def _group(name: str) -> NodeGroup:
    return NodeGroup(name, 1, 1, 10, 1.0, 0.0, 0)


def _option(name: str, node_count: int = 0, pods: Sequence[Pod] = ()) -> Estimate:
    cluster = ClusterState()
    units = [PodUnit(f"p{i}", (cluster.add_pod(p),), i) for i, p in enumerate(pods)]
    return Estimate(_group(name), [f"{name}-n{i}" for i in range(node_count)], units)


def _names(options: Sequence[Estimate] | None) -> list[str] | None:
    return None if not options else [o.group.name for o in options]


LEAST_NODES = [
    ("no options", [], None),
    ("no valid options", [("EO0", 0)], None),
    ("1 valid option", [("EO0", 2)], ["EO0"]),
    ("2 valid options, not equal", [("EO0", 2), ("EO1", 1)], ["EO1"]),
    ("3 valid options, 2 equal", [("EO0", 6), ("EO1", 2), ("EO2", 2)], ["EO1", "EO2"]),
    ("3 valid options, all equal", [("EO0", 8), ("EO1", 8), ("EO2", 8)],
     ["EO0", "EO1", "EO2"]),
    ("6 valid options, 1 invalid option, 3 equal",
     [("EO0", 23), ("EO1", 0), ("EO2", 5), ("EO3", 8), ("EO4", 5), ("EO5", 5), ("EO6", 22)],
     ["EO2", "EO4", "EO5"]),
]


@pytest.mark.parametrize(("options", "expected"), [c[1:] for c in LEAST_NODES],
                         ids=[c[0] for c in LEAST_NODES])
def test_least_nodes(options: list[tuple[str, int]], expected: list[str] | None) -> None:
    """leastnodes_test.go TestLeastNodes."""
    kept = best_options("least-nodes", [_option(n, c) for n, c in options])
    assert _names(kept) == expected


def _any_pod(name: str = "p") -> Pod:
    doc = decode(pod(name))
    assert isinstance(doc, Pod)
    return doc


def test_most_pods() -> None:
    """mostpods_test.go TestMostPods."""
    eo0 = _option("EO0")
    assert _names(best_options("most-pods", [eo0])) == ["EO0"]
    eo1 = _option("EO1", pods=[_any_pod()])
    assert _names(best_options("most-pods", [eo0, eo1])) == ["EO1"]
    eo1b = _option("EO1b", pods=[_any_pod()])
    assert _names(best_options("most-pods", [eo0, eo1, eo1b])) == ["EO1", "EO1b"]


class _Templates:
    """The node infos a waste test gives, by group (as ``TemplateNodes.node``)."""

    def __init__(self, nodes: dict[str, Node]) -> None:
        self.nodes = nodes

    def node(self, pool: str, index: int) -> tuple[Node, tuple[()]]:
        return self.nodes[pool], ()


def _node_info(cpu_m: int, memory: int, pods: int) -> Node:
    made = decode(node("n", cpu_m, memory, pods))
    assert isinstance(made, Node)
    return made


def test_least_waste() -> None:
    """waste_test.go TestLeastWaste: the score is CPU and memory only."""
    cpu_per_pod, memory_per_pod = 500, 1000 * 1024 * 1024
    nodes = {"balanced": _node_info(16 * cpu_per_pod, 16 * memory_per_pod, 100)}
    templates = _Templates(nodes)

    def scored(name: str, pods: Sequence[Pod]) -> Estimate:
        option = _option(name, 1, pods)
        option.waste = _least_waste(templates, option)  # type: ignore[arg-type]
        return option

    the_pod = decode(pod("p", cpu_per_pod, memory_per_pod))
    assert isinstance(the_pod, Pod)
    assert _names(best_options("least-waste", [scored("balanced", [])])) == ["balanced"]
    balanced = scored("balanced", [the_pod])
    assert _names(best_options("least-waste", [balanced])) == ["balanced"]
    nodes["highmem"] = _node_info(16 * cpu_per_pod, 32 * memory_per_pod, 100)
    highmem = scored("highmem", [the_pod])
    assert _names(best_options("least-waste", [balanced, highmem])) == ["balanced"]
    nodes["lowcpu"] = _node_info(8 * cpu_per_pod, 16 * memory_per_pod, 100)
    lowcpu = scored("lowcpu", [the_pod])
    assert _names(best_options("least-waste", [balanced, highmem, lowcpu])) == ["lowcpu"]


def test_random_expander() -> None:
    """random_test.go TestRandomExpander."""
    rng = random.Random(0)
    eo1a, eo1b = _option("EO1a"), _option("EO1b")
    assert choose("random", [eo1a], rng) is eo1a
    assert choose("random", [eo1a, eo1b], rng) in (eo1a, eo1b)
    assert best_options("random", []) == []


CONFIG = """
5:
  - ".*t2\\\\.micro.*"
10:
  - ".*t2\\\\.large.*"
  - ".*t3\\\\.large.*"
50:
  - ".*m4\\\\.4xlarge.*"
"""
ONE_ENTRY = """
10:
  - ".*t2\\\\.large.*"
"""
WILDCARD = """
5:
  - ".*"
10:
  - ".t2\\\\.large.*"
"""
T2_MICRO, T2_LARGE, T3_LARGE, M4_4XLARGE = ("my-asg.t2.micro", "my-asg.t2.large",
                                           "my-asg.t3.large", "my-asg.m4.4xlarge")


def _priorities(text: str) -> dict[int, tuple[str, ...]]:
    parsed = yaml.safe_load(text) or {}
    return {int(k): tuple(v) for k, v in parsed.items()}


def _priority(config: str, *groups: str) -> list[str] | None:
    return _names(best_options("priority", [_option(g) for g in groups], _priorities(config)))


def test_priority_expander_correcltly_filters_single_matching_option_out_of_one() -> None:
    """priority_test.go TestPriorityExpanderCorrecltyFiltersSingleMatchingOptionOutOfOne."""
    assert _priority(CONFIG, T2_LARGE) == [T2_LARGE]


def test_priority_expander_correcltly_filters_single_matching_option_out_of_many() -> None:
    """priority_test.go TestPriorityExpanderCorrecltyFiltersSingleMatchingOptionOutOfMany."""
    assert _priority(CONFIG, T2_LARGE, M4_4XLARGE) == [M4_4XLARGE]


def test_priority_expander_filters_to_higher_priority_match() -> None:
    """priority_test.go TestPriorityExpanderFiltersToHigherPriorityMatch."""
    assert _priority(WILDCARD, T2_LARGE, T2_MICRO) == [T2_LARGE]


def test_priority_expander_correcltly_filters_two_matching_options_out_of_many() -> None:
    """priority_test.go TestPriorityExpanderCorrecltyFiltersTwoMatchingOptionsOutOfMany."""
    assert _priority(CONFIG, T2_LARGE, T3_LARGE, T2_MICRO) == [T2_LARGE, T3_LARGE]


def test_priority_expander_correcltly_falls_back_to_all_when_no_matches() -> None:
    """priority_test.go TestPriorityExpanderCorrecltyFallsBackToAllWhenNoMatches (upstream
    passes the config whose entries do match both; the result is the same)."""
    assert _priority(CONFIG, T2_LARGE, T3_LARGE) == [T2_LARGE, T3_LARGE]


def test_priority_expander_correcltly_handles_config_update() -> None:
    """priority_test.go TestPriorityExpanderCorrecltyHandlesConfigUpdate: the options kept
    before and after the ConfigMap changes (the warning events and update counter are
    not modelled)."""
    assert _priority(ONE_ENTRY, T2_LARGE, T3_LARGE, M4_4XLARGE) == [T2_LARGE]
    assert _priority(CONFIG, T2_LARGE, T3_LARGE, M4_4XLARGE) == [M4_4XLARGE]


def test_priority_expander_correcltly_skips_bad_change_config() -> None:
    """priority_test.go TestPriorityExpanderCorrecltySkipsBadChangeConfig: an empty
    configuration filters nothing."""
    assert _priority("", T2_LARGE, T3_LARGE, M4_4XLARGE) == [T2_LARGE, T3_LARGE, M4_4XLARGE]


def _substring(text: str) -> object:
    def keep(options: Sequence[Estimate]) -> list[Estimate]:
        return [o for o in options if text in o.group.name]
    return keep


def _first(text: str) -> object:
    def pick(options: Sequence[Estimate]) -> Estimate | None:
        kept = [o for o in options if text in o.group.name]
        return kept[0] if kept else None
    return pick


CHAIN = [
    ("selects with no filters", [], "a", ["b", "a"], "a"),
    ("filters with one filter", ["a"], "b", ["ab", "b"], "ab"),
    ("filters with multiple filters", ["a", "b"], "x", ["xab", "xa", "x"], "xab"),
    ("selects from multiple after filters", ["x"], "a", ["xc", "xaa", "xab"], "xaa"),
    ("short circuits", ["a", "b"], "x", ["a"], "a"),
]


@pytest.mark.parametrize(("filters", "fallback", "options", "expected"),
                         [c[1:] for c in CHAIN], ids=[c[0] for c in CHAIN])
def test_chain_strategy_best_option(filters: list[str], fallback: str, options: list[str],
                                    expected: str) -> None:
    """chain_test.go TestChainStrategy_BestOption."""
    picked = run_chain([_substring(f) for f in filters],  # type: ignore[misc]
                       _first(fallback), [_option(o) for o in options])  # type: ignore[arg-type]
    assert picked is not None and picked.group.name == expected


def _priced(name: str, count: int, pods: Sequence[str], cpu_m: int,
            node_prices: dict[str, float], pod_prices: dict[str, float],
            exists: bool = True) -> PriceOption:
    """An option of a group whose node is ``n<name's digit>`` (ng1 -> n1), priced by
    price_test.go's testPricingModel: a name missing from the maps is an error."""
    node_name = "n" + name[-1]
    return PriceOption(name, count, node_prices.get(node_name),
                       [pod_prices.get(p) for p in pods], cpu_m, exists=exists)


def test_price_expander() -> None:
    """price/price_test.go TestPriceExpander: n1 1000m, n2 and n3 4000m; p1 and p2 priced
    20 and 10, the stabilisation pod 10; ng3 ("MT1") does not exist yet."""
    pods = {"p1": 20.0, "p2": 10.0}
    stabilize = 10.0
    cpu = {"ng1": 1000, "ng2": 4000, "ng3": 4000}

    def best(options: list[tuple[str, int, list[str]]], node_prices: dict[str, float],
             preferred_cpu_m: int, pod_prices: dict[str, float] = pods) -> list[str]:
        priced = [_priced(n, c, ps, cpu[n], node_prices, pod_prices, exists=n != "ng3")
                  for n, c, ps in options]
        return [priced[i].name for i in best_price_options(priced, preferred_cpu_m,
                                                           stabilize)]

    both = [("ng1", 2, ["p1", "p2"]), ("ng2", 1, ["p1", "p2"])]
    # First node group is cheaper.
    assert best(both, {"n1": 20.0, "n2": 200.0}, 2000) == ["ng1"]
    # First node group is cheaper, however, the second one is preferred.
    assert best(both, {"n1": 50.0, "n2": 200.0}, 4000) == ["ng2"]
    # First node group is cheaper, the second is preferred but there is lots of nodes
    # to be created.
    many = [("ng1", 80, ["p1", "p2"]), ("ng2", 40, ["p1", "p2"])]
    assert best(many, {"n1": 20.0, "n2": 200.0}, 4000) == ["ng1"]
    # Second node group is cheaper.
    assert best(both, {"n1": 200.0, "n2": 100.0}, 2000) == ["ng2"]
    # Both node groups are equally expensive. However 2 accept two pods.
    options2 = [("ng1", 2, ["p1"]), ("ng2", 1, ["p1", "p2"])]
    assert best(options2, {"n1": 200.0, "n2": 200.0}, 2000) == ["ng2"]
    # Errors are expected.
    assert best(options2, {}, 2000, pod_prices={}) == []
    options3 = [*options2, ("ng3", 1, ["p1", "p2"])]
    # Choose existing group when non-existing has the same price.
    assert best(options3, {"n1": 200.0, "n2": 200.0, "n3": 200.0}, 2000) == ["ng2"]
    # Choose non-existing group when non-existing is cheaper.
    assert best(options3, {"n1": 200.0, "n2": 200.0, "n3": 90.0}, 2000) == ["ng3"]


def test_preferred_node() -> None:
    """price/preferred_test.go TestPreferredNode: the preferred node's CPU (cores) for
    clusters of 1, 3, 9, 27, 81, 243 and 500 nodes."""
    for nodes, cores in ((1, 1), (3, 2), (9, 4), (27, 8), (81, 16), (243, 32), (500, 32)):
        assert preferred_node_cpu_m(nodes) == cores * 1000, nodes


def test_simple_node_unfitness() -> None:
    """price/preferred_test.go TestSimpleNodeUnfitness: n1 1000m, n2 2000m."""
    assert simple_node_unfitness(1000, 2000) == 2.0
    assert simple_node_unfitness(2000, 1000) == 2.0
    assert simple_node_unfitness(1000, 1000) == 1.0


def test_price_expander_on_estimates() -> None:
    """Ours: ``--expander price`` on two options helping the same pods: a 4-core group at
    $0.20/h beats a 1-core group at $0.04/h adding four nodes, for a 9-node cluster
    (preferred node: 4 cores); a GPU group's unfitness is 1000 whatever its size."""
    pods = [decode(pod(f"p{i}", 1000, 0)) for i in range(4)]
    units = _option("pods", 0, [p for p in pods if isinstance(p, Pod)]).units

    def option(name: str, nodes: int, price: float, cpu_m: int, gpu: bool = False) -> Estimate:
        group = NodeGroup(name, 0, 0, 10, price, 0.0, 0)
        return Estimate(group, nodes=[f"{name}-{i}" for i in range(nodes)], units=units,
                        pods_price=4 * 0.033174, template_cpu_m=cpu_m, template_gpu=gpu,
                        cluster_nodes=9)

    small, large = option("small", 4, 0.04, 1000), option("large", 1, 0.20, 4000)
    assert [o.group.name for o in best_options("price", [small, large])] == ["large"]
    # Cheaper per pod, yet the cost-per-pod expander (ours) takes the small nodes.
    assert [o.group.name for o in best_options("cost-per-pod", [small, large])] == ["small"]
    gpu = option("gpu", 1, 0.20, 4000, gpu=True)
    assert [o.group.name for o in best_options("price", [gpu, small])] == ["small"]
