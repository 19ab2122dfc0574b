"""Cluster Autoscaler's fastpath binpacking against the full simulation (issue 31).

Upstream's BenchmarkBinpackingEstimate shape (cluster-autoscaler/estimator/
binpacking_estimator_test.go, release-1.37 a16f0ae8), scaled down: one node group of
1000m CPU, 5000 MiB, 100 pods a node; ``--small`` pods of 50m/100 MiB and a twentieth
as many of 95m/190 MiB, pending. One estimate of the group with
--fastpath-binpacking-enabled off (every pod simulated) and on (the larger group of
equivalent pods packed by arithmetic after one simulated node); both must give the
same nodes and pods. CPU time (time.process_time), the better of ``--repeat`` runs.

    python benchmarks/bench_fastpath.py [--small 5000] [--repeat 3]

Prints figures; asserts only that the two estimates agree.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from dralab.api.codec import decode
from dralab.autoscale.estimator import Estimate, estimate
from dralab.autoscale.groups import TemplateNodes, node_groups, pool_sizes
from dralab.autoscale.units import pod_units
from dralab.fleet import parse_fleet
from dralab.scheduler import Scheduler, build_cluster

FLEET: dict[str, Any] = {
    "apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "metadata": {"name": "bench"},
    "spec": {"pools": [{"name": "ng", "count": 0, "cpu": "1000m", "memory": "5000Mi",
                        "pods": 100, "autoscaling": {"min": 0, "max": 5000}}]}}


def _pod(name: str, cpu_m: int, mem_mib: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "universe", "uid": name,
                         "labels": {"app": "estimatee"}},
            "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {
                "requests": {"cpu": f"{cpu_m}m", "memory": f"{mem_mib}Mi"}}}]}}


def run(small: int, fastpath: bool) -> tuple[float, Estimate]:
    docs = [_pod(f"small-{i}", 50, 100) for i in range(small)]
    docs += [_pod(f"large-{i}", 95, 190) for i in range(small // 20)]
    the_fleet = parse_fleet(FLEET, "fleet.yaml")
    cluster, waiting = build_cluster([decode(d) for d in docs])
    scheduler = Scheduler.build(cluster, None, 0)
    groups = node_groups(the_fleet, pool_sizes(the_fleet, ()))
    templates = TemplateNodes(the_fleet, {}, cluster.node_names(), None, {})
    units = pod_units(waiting)
    start = time.process_time()
    result = estimate(scheduler, templates, groups["ng"], units, measures=(),
                      max_nodes=0, fastpath=fastpath)
    return time.process_time() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    figures: dict[bool, tuple[float, Estimate]] = {}
    for fastpath in (False, True):
        runs = [run(args.small, fastpath) for _ in range(args.repeat)]
        figures[fastpath] = (min(t for t, _ in runs), runs[0][1])
    slow, fast = figures[False][1], figures[True][1]
    assert (slow.node_count, sorted(slow.pods)) == (fast.node_count, sorted(fast.pods)), \
        "the fastpath gave another estimate"
    pods = args.small + args.small // 20
    print(f"{pods:,} pending pods, {slow.node_count:,} nodes, {slow.pod_count:,} pods placed")
    print(f"full simulation:  {figures[False][0]:.2f} s CPU")
    print(f"fastpath:         {figures[True][0]:.2f} s CPU "
          f"({figures[False][0] / max(figures[True][0], 1e-9):.1f}x)")


if __name__ == "__main__":
    main()
