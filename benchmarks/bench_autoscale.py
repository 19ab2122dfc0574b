"""Autoscaler benchmarks (issue 13): one Cluster Autoscaler loop; a simulated day.

**A simulated day** (``--day``): the default scenario's mix (H100 training, A100 MIG
notebooks and evaluation, shared L4 inference, CPU batch) on a fleet whose three GPU
pools are autoscaled up to 500 nodes (150 H100, 100 A100, 250 L4), starting at a
tenth of that; a base load all day plus a daytime wave (8 h - 18 h) of the same
kinds, so the fleet grows in the morning and shrinks in the evening. Cluster
Autoscaler, 10 s scans, one mode (DRA). Target: <= 2 minutes.

**One loop**:

20 node groups (autoscaled pools of five GPU models and two node sizes each,
whole GPUs, DynamicMIG and CPU-only), 1,000 existing nodes (50 per group, each
full: a bound pod holds all its CPU) and 1,000 pending pods of five shapes (one
or two whole GPUs of a model, a MIG 1g.10gb slice, CPU only), made by
Deployments with claim templates. The scheduling pass that finds the pods
pending is timed apart; the target is the autoscaler loop itself (the
estimates of every group, the expander, the repeated scale-ups).
Target: <= 5 s.

Prints figures; asserts nothing.

    python benchmarks/bench_autoscale.py [--pending 1000] [--per-group 50]
                                         [--model cluster-autoscaler|karpenter] [--profile]
    python benchmarks/bench_autoscale.py --day [--model ...] [--profile]
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

import yaml

from dralab.api.core import Node
from dralab.api.features import FeatureGates
from dralab.api.io import Document
from dralab.autoscale import (
    AutoscalerOptions,
    ClusterAutoscaler,
    Karpenter,
    cluster_objects,
    read_input,
)
from dralab.scheduler import Scheduler, build_cluster

TARGET_SECONDS = 5.0
DAY_TARGET_SECONDS = 120.0
DAY_MAX = {"h100": 150, "a100-mig": 100, "l4": 250}
DAY_PRICE = {"h100": 98.32, "a100-mig": 32.77, "l4": 3.4}
MODELS = (("h100", "h100-80gb-sxm", "off"), ("a100", "a100-80gb", "dynamic"),
          ("l4", "l4", "off"), ("a10", "a10", "off"), ("h200", "h200-141gb", "off"))


def fleet(per_group: int) -> dict[str, Any]:
    pools = []
    for key, model, mig in MODELS:
        for size, gpus in (("s", 4), ("l", 8)):
            for zone in ("a", "b"):
                pools.append({
                    "name": f"{key}-{size}-{zone}", "count": per_group,
                    "cpu": "64" if size == "s" else "128", "memory": "512Gi",
                    "gpu": {"model": model, "count": gpus, "mig": {"mode": mig}},
                    "topology": {"zone": f"zone-{zone}"},
                    "autoscaling": {"max": per_group + 100, "pricePerHour": gpus * 2.5,
                                    "provisioningDelay": "5m"}})
    return {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
            "metadata": {"name": "bench"}, "spec": {"pools": pools}}


def _template(name: str, cls: str, count: int, cel: str | None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": cls, "count": count}
    if cel:
        exactly["selectors"] = [{"cel": {"expression": cel}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def _deployment(name: str, replicas: int, cpu: str, template: str | None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "busybox",
                                 "resources": {"requests": {"cpu": cpu, "memory": "8Gi"}}}
    spec: dict[str, Any] = {"containers": [container]}
    if template is not None:
        container["resources"]["claims"] = [{"name": "gpu"}]
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


def workload(pending: int, per_group: int) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    product = "device.attributes['gpu.nvidia.com'].productName"
    docs += [_template("one-h100", "gpu.nvidia.com", 1, f"{product}.contains('H100')"),
             _template("two-l4", "gpu.nvidia.com", 2, f"{product}.contains('L4')"),
             _template("one-a10", "gpu.nvidia.com", 1, f"{product}.contains('A10')"),
             _template("mig-1g", "mig.nvidia.com", 1,
                       "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'")]
    share = pending // 5
    docs += [_deployment("train-h100", share, "8", "one-h100"),
             _deployment("infer-l4", share, "4", "two-l4"),
             _deployment("infer-a10", share, "4", "one-a10"),
             _deployment("notebook-mig", share, "2", "mig-1g"),
             _deployment("cpu-batch", pending - 4 * share, "16", None)]
    return docs


def fillers(nodes: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """A bound pod that takes all of each existing node's CPU: the nodes are full."""
    return [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"filler-{n}", "namespace": "default",
                          "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                               "name": "filler", "uid": "f",
                                               "controller": True}]},
             "spec": {"nodeName": n, "containers": [{
                 "name": "main", "image": "busybox",
                 "resources": {"requests": {"cpu": cpu, "memory": "8Gi"}}}]}}
            for n, cpu in nodes]


def day_scenario(model: str = "cluster-autoscaler", hours: float = 24.0) -> Any:
    """The simulated day of a 500-node autoscaled fleet (see the module docstring)."""
    from dralab.sim.default import default_scenario_text
    from dralab.sim.scenario import parse_scenario

    doc: dict[str, Any] = yaml.safe_load(default_scenario_text())
    spec = doc["spec"]
    for pool in spec["fleet"]["spec"]["pools"]:
        top = DAY_MAX[pool["name"]]
        pool["count"] = top // 10
        pool["autoscaling"] = {"min": 0, "max": top, "pricePerHour": DAY_PRICE[pool["name"]],
                               "provisioningDelay": "5m"}
        pool.get("topology", {}).pop("nodesPerRack", None)
        pool.get("topology", {}).pop("racksPerBlock", None)
    rng = random.Random(7)
    base = 500 / 10 * 0.25   # the default mix fills its 10 nodes; a quarter of it all day
    wave = 500 / 10 * 0.6    # and more in the day
    kinds = []
    for kind in spec["workload"]:
        number, _, unit = str(kind["arrivalRate"]).partition("/")
        per_hour = float(number) * {"h": 1.0, "m": 60.0, "d": 1 / 24}[unit]
        kinds.append({**kind, "arrivalRate": f"{per_hour * base:g}/h"})
        t, times = 8 * 3600.0, []
        while True:
            t += rng.expovariate(per_hour * wave / 3600.0)
            if t >= 18 * 3600.0:
                break
            times.append(f"{t:.0f}s")
        day = {k: v for k, v in kind.items() if k != "arrivalRate"}
        kinds.append({**day, "name": f"{kind['name']}-day", "arrivals": times})
    spec["workload"] = kinds
    # Karpenter with DRA-aware launches (ignoreDRARequests: false): the day's pods claim GPUs.
    karpenter = {"ignoreDRARequests": False} if model == "karpenter" else {}
    spec.update(duration=f"{hours:g}h", sampleInterval="10m", compare=["dra"],
                autoscaling={"model": model, **karpenter})
    doc["metadata"]["name"] = "autoscaled-day-500"
    return parse_scenario(doc, "<bench day>")


def run_day(model: str, profile: bool, hours: float = 24.0) -> None:
    from dralab.sim.simulate import run_mode

    scenario = day_scenario(model, hours)
    if profile:
        from pyinstrument import Profiler
        profiler = Profiler()
        profiler.start()
    t0, c0 = time.perf_counter(), time.process_time()
    result = run_mode(scenario, "dra")
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    if profile:
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=False))
    auto = result.autoscaling
    assert auto is not None
    summary = auto.summary()
    print(f"simulated day, 500-node autoscaled fleet ({model}): {seconds:.1f} s wall, "
          f"{cpu:.1f} s CPU (target <= {DAY_TARGET_SECONDS:.0f} s)")
    print(f"pods {len(result.pods)}, autoscaler loops {auto.loops}, peak nodes "
          f"{summary['peak_nodes']}, nodes added {summary['scale_ups']}, removed "
          f"{summary['scale_downs']}, cost {summary['cost']:,.0f}")
    for name, pool in sorted(auto.pools.items()):
        print(f"  {name}: peak {pool.peak}, node-hours {pool.node_hours:,.0f}, "
              f"cost {pool.cost:,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--day", action="store_true",
                        help="the simulated day of a 500-node autoscaled fleet, not one loop")
    parser.add_argument("--hours", type=float, default=24.0,
                        help="--day: simulated hours (a shorter day to profile)")
    parser.add_argument("--pending", type=int, default=1000)
    parser.add_argument("--per-group", type=int, default=50)
    parser.add_argument("--model", choices=["cluster-autoscaler", "karpenter"],
                        default="cluster-autoscaler")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if args.day:
        run_day(args.model, args.profile, args.hours)
        return
    gates = FeatureGates()
    docs = [Document("<bench>", i, d) for i, d in
            enumerate([fleet(args.per_group), *workload(args.pending, args.per_group)])]
    data = read_input(docs, gates)
    objects = cluster_objects(data)
    nodes = [(o.metadata.name or "", str(o.status.allocatable["cpu"]))
             for o in objects if isinstance(o, Node)]
    filler_docs = [Document("<bench>", i, d) for i, d in enumerate(fillers(nodes))]
    data = read_input([*docs, *filler_docs], gates)
    t0 = time.perf_counter()
    cluster, pending = build_cluster(cluster_objects(data))
    scheduler = Scheduler.build(cluster)
    result = scheduler.run(pending)
    waiting = [cluster.pods[f"{u.pod.metadata.namespace}/{u.pod.metadata.name}"]
               for u in result.unplaced]
    t1 = time.perf_counter()
    # Karpenter with DRA-aware launches (--ignore-dra-requests=false): the pods claim GPUs.
    model: ClusterAutoscaler | Karpenter = Karpenter(
        scheduler, data.fleet, ignore_dra_requests=False) \
        if args.model == "karpenter" else \
        ClusterAutoscaler(scheduler, data.fleet, AutoscalerOptions(expander="price"))
    if args.profile:
        from pyinstrument import Profiler
        profiler = Profiler()
        profiler.start()
    t2, c2 = time.perf_counter(), time.process_time()
    decisions = model.loop(waiting, 0.0)
    t3, c3 = time.perf_counter(), time.process_time()
    if args.profile:
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=False))
    print(f"nodes {len(cluster.nodes)}, groups 20, pending {len(waiting)}")
    print(f"build + scheduling pass: {t1 - t0:.2f} s")
    print(f"autoscaler loop: {t3 - t2:.2f} s wall, {c3 - c2:.2f} s CPU "
          f"(target <= {TARGET_SECONDS:.0f} s)")
    print("scale-ups: " + ", ".join(f"{u.pool} +{u.add} ({len(u.pods)} pods)"
                                    for u in decisions.scale_ups))
    print(f"pending after the loop: {len(decisions.pending)}")


if __name__ == "__main__":
    main()
