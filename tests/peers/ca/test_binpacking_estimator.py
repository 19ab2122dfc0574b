"""Cluster Autoscaler's binpacking estimator tests, ported whole.

Upstream: kubernetes/autoscaler, branch cluster-autoscaler-release-1.37 at
a16f0ae8b5578f09604371c75e0cad29ed794e59, cluster-autoscaler/estimator/
binpacking_estimator_test.go:

* TestBinpackingEstimate: each case here, id = its name. The snapshot holds "oldnode"
  (100m CPU, 100 MiB, 10 pods, zone-jupiter); the template node has the case's CPU
  and memory (MiB), 10 pods, zone-mars; the pods are pending and go straight to the
  estimator (``estimate`` with the group's template, the limiter's ``maxNodes``).
  Upstream adds one pod object N times (makePodEquivalenceGroup); here N pods with
  one spec and labels. As upstream, a case of one equivalence group is estimated a
  second time with the fastpath (--fastpath-binpacking-enabled), which must give the
  same nodes and pods.
* TestDetermineBestPodEquivalenceGroupToFastpath: each case, id = its name, on
  ``best_group_for_fastpath`` with the groups' first pods and "oldnode"'s capacity
  (100m CPU, 100 MiB).

The cases once in tests/autoscale/test_topology_spread.py and test_affinity_ports.py
(hostport, the two topology spreading cases) live here now.
"""

from __future__ import annotations

from typing import Any

import pytest

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.autoscale.fastpath import best_group_for_fastpath

from .builders_up import MIB, Doc, estimate_on, node, pod

FILE = "cluster-autoscaler/estimator/binpacking_estimator_test.go"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def _make_node(cpu_m: int, mem_mib: int, pods: int, name: str, zone: str) -> Doc:
    return node(name, cpu_m, mem_mib * MIB, pods, labels={ZONE: zone})


def _estimatee(i: int, cpu_m: int, mem: int, *, host_port: int | None = None,
               skew: tuple[int, str, int] | None = None, prefix: str = "estimatee") -> Doc:
    doc = pod(f"{prefix}-{i}", cpu_m, mem, labels={"app": "estimatee"}, owner=None,
              namespace="universe")
    if host_port is not None:
        doc["spec"]["containers"][0]["ports"] = [{"containerPort": host_port,
                                                  "hostPort": host_port}]
    if skew is not None:
        max_skew, key, min_domains = skew
        doc["spec"]["topologySpreadConstraints"] = [{
            "maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "estimatee"}},
            "minDomains": min_domains}]
    return doc


def _group(count: int, cpu_m: int, mem: int, **kw: Any) -> list[Doc]:
    return [_estimatee(i, cpu_m, mem, **kw) for i in range(count)]


CASES: list[tuple[str, int, int, int, list[Doc], int, int, str | None]] = [
    # name, millicores, memory (MiB), maxNodes, pods, nodes, pods, processed prefix
    ("simple resource-based binpacking", 350 * 3 - 50, 2 * 1000, 0,
     _group(10, 350, 1000), 5, 10, None),
    ("pods-per-node bound binpacking", 10000, 20000, 0, _group(20, 10, 100), 2, 20, None),
    ("hostport conflict forces pod-per-node", 1000, 5000, 0,
     _group(8, 200, 1000, host_port=5555), 8, 8, None),
    ("limiter cuts binpacking", 1000, 5000, 5, _group(20, 500, 1000), 5, 10, None),
    ("decreasing ordered pods are processed first", 1000, 5000, 5,
     [*_group(10, 50, 1000, prefix="small"), *_group(10, 500, 1000, prefix="high")],
     5, 10, "high"),
    ("hostname topology spreading with maxSkew=2 forces 2 pods/node", 1000, 5000, 0,
     _group(8, 200, 200, skew=(2, HOSTNAME, 1)), 4, 8, None),
    ("zonal topology spreading with maxSkew=2 only allows 2 pods to schedule", 1000, 5000, 0,
     _group(8, 20, 100, skew=(2, ZONE, 1)), 1, 2, None),
    ("hostname topology spreading with maxSkew=1 with a large scaleup handles scheduling "
     "pods retroactively", 1000, 5000, 0, _group(12, 20, 100, skew=(1, HOSTNAME, 3)), 3, 12,
     None),
]


@pytest.mark.parametrize(("millicores", "memory", "max_nodes", "pods", "nodes", "count",
                          "processed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_binpacking_estimate(millicores: int, memory: int, max_nodes: int, pods: list[Doc],
                             nodes: int, count: int, processed: str | None) -> None:
    """TestBinpackingEstimate (binpacking_estimator_test.go)."""
    old = _make_node(100, 100, 10, "oldnode", "zone-jupiter")
    template = _make_node(millicores, memory, 10, "template", "zone-mars")
    result = estimate_on([old], template, pods, max_nodes=max_nodes)
    assert (result.node_count, result.pod_count) == (nodes, count)
    if processed is not None:
        assert {k.partition("/")[2].split("-")[0] for k in result.pods} == {processed}
    if len({p["spec"]["containers"][0]["resources"]["requests"]["cpu"] for p in pods}) == 1:
        # Upstream: one equivalence group gives the same estimate with the fastpath.
        fast = estimate_on([old], template, pods, max_nodes=max_nodes, fastpath=True)
        assert (fast.node_count, sorted(fast.pods)) == (result.node_count,
                                                        sorted(result.pods))


def _peg(name: str, cpu_m: int, mem: int, count: int, skew: bool = False) -> list[Pod]:
    doc = pod(name, cpu_m, mem, owner=None)
    if skew:
        doc["spec"]["topologySpreadConstraints"] = [{
            "maxSkew": 2, "topologyKey": HOSTNAME, "whenUnsatisfiable": "DoNotSchedule",
            "minDomains": 1}]
    one = decode(doc)
    assert isinstance(one, Pod)
    return [one] * count


def _bare(name: str, count: int) -> list[Pod]:
    one = decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                  "spec": {"containers": []}})
    assert isinstance(one, Pod)
    return [one] * count


FASTPATH: list[tuple[str, list[list[Pod]], int]] = [
    ("both groups 2 nodes, take group with more pods",
     [_peg("estimatee1", 30, 5, 5), _peg("estimatee2", 50, 6, 3)], 0),
    ("take group with largest score, even if it has less pods",
     [_peg("estimatee1", 30, 5, 6), _peg("estimatee2", 90, 90, 5)], 1),
    ("take group with largest score, even if it has less nodes",
     [_peg("estimatee1", 15, 5, 10), _peg("estimatee2", 90, 90, 5)], 0),
    ("equal score default to last group",
     [_peg("estimatee2", 80, 80, 3), _peg("estimatee2", 70, 70, 3),
      _peg("estimatee1", 50, 5, 4)], 2),
    ("no fastpath supporting pod groups",
     [_peg("estimatee1", 5, 5, 10, skew=True), _peg("estimatee2", 8, 8, 3, skew=True)], -1),
    ("no resource requests defaults to last group, still valid fastpath group",
     [_bare("estimatee1", 2), _bare("estimatee2", 4)], 1),
    ("groups with only 1 node have the lowest score",
     [_peg("estimatee2", 60, 60, 2), _peg("estimatee1", 1, 5, 100)], 0),
]


@pytest.mark.parametrize(("groups", "expected"), [c[1:] for c in FASTPATH],
                         ids=[c[0] for c in FASTPATH])
def test_determine_best_pod_equivalence_group_to_fastpath(groups: list[list[Pod]],
                                                          expected: int) -> None:
    """TestDetermineBestPodEquivalenceGroupToFastpath (binpacking_estimator_test.go):
    the template is makeNode(100, 100, 10, "oldnode", "zone-jupiter")."""
    assert best_group_for_fastpath(groups, 0.1, 100.0 * MIB) == expected
