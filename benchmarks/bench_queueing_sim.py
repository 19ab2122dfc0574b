"""Queueing at scale in the simulator (issue: queueing): 100 ClusterQueues in 10 cohorts,
10,000 jobs arriving over one simulated hour on 1,000 nodes (8 GPUs each), Kueue's
admission before scheduling, device-plugin and DRA modes.

Target: the admission decisions of the run in at most 2 minutes (the time the policy's
cycles take; the whole run, scheduling included, is shown too). Prints figures; asserts
nothing.

    python benchmarks/bench_queueing_sim.py [--nodes N] [--queues Q] [--jobs J] [--mode M]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import yaml

import dralab
from dralab.queueing.model import AdmissionPolicy, Decision, QueueingState
from dralab.sim.jobs import draw_arrivals
from dralab.sim.queueing import QueueingSetup, queueing_setup
from dralab.sim.simulate import run_mode


def kueue_objects(queues: int, cohorts: int, gpus_per_queue: int) -> list[dict[str, object]]:
    docs: list[dict[str, object]] = [
        {"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration",
         "resources": {"deviceClassMappings": [{"name": "nvidia.com/gpu",
                                                "deviceClassNames": ["gpu.nvidia.com"]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
         "metadata": {"name": "h100"}}]
    for q in range(queues):
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
                     "metadata": {"name": f"cq-{q:03d}"},
                     "spec": {"cohort": f"cohort-{q % cohorts}", "namespaceSelector": {},
                              "preemption": {"reclaimWithinCohort": "Any"},
                              "resourceGroups": [{
                                  "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                                  "flavors": [{"name": "h100", "resources": [
                                      {"name": "cpu", "nominalQuota": str(gpus_per_queue * 8)},
                                      {"name": "memory",
                                       "nominalQuota": f"{gpus_per_queue * 64}Gi"},
                                      {"name": "nvidia.com/gpu",
                                       "nominalQuota": str(gpus_per_queue)}]}]}]}})
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                     "metadata": {"name": "jobs", "namespace": f"team-{q:03d}"},
                     "spec": {"clusterQueue": f"cq-{q:03d}"}})
    return docs


def scenario(directory: Path, nodes: int, queues: int, jobs: int) -> dralab.Scenario:
    gpus = nodes * 8
    (directory / "kueue.yaml").write_text(yaml.safe_dump_all(
        kueue_objects(queues, max(1, queues // 10), max(1, gpus // queues))))
    per_queue = jobs / queues
    return dralab.scenario({
        "duration": "1h", "sampleInterval": "5m", "seed": 1,
        "queueing": {"kueue": "kueue.yaml"},
        "fleet": {"spec": {"pools": [{"name": "h100", "count": nodes, "cpu": "192",
                                      "memory": "2Ti", "namePrefix": "h100-",
                                      "gpu": {"model": "h100-80gb-sxm", "count": 8}}]}},
        "workload": [{"name": f"team-{q:03d}", "arrivalRate": f"{per_queue:g}/h",
                      "queue": f"team-{q:03d}/jobs", "cpu": "8", "memory": "64Gi",
                      "duration": {"distribution": "exponential", "mean": "2h"},
                      "devices": {"type": "gpu", "count": 1}}
                     for q in range(queues)]}, base_dir=directory)


class Timed:
    """The policy, with the time its cycles take."""

    def __init__(self, policy: AdmissionPolicy) -> None:
        self.policy = policy
        self.seconds = 0.0
        self.cycles = 0

    def cycle(self, state: QueueingState, now: float) -> list[Decision]:
        start = time.perf_counter()
        try:
            return self.policy.cycle(state, now)
        finally:
            self.seconds += time.perf_counter() - start
            self.cycles += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--queues", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--mode", action="append", choices=["device-plugin", "dra"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        s = scenario(Path(tmp), args.nodes, args.queues, args.jobs)
    arrivals = draw_arrivals(s)
    base = queueing_setup(s)
    assert base is not None
    timers: list[Timed] = []

    def timed_policy() -> AdmissionPolicy:
        timers.append(Timed(base.policy()))
        return timers[-1]

    setup = QueueingSetup(base.state, timed_policy, base.workload_of)
    print(f"{args.queues} ClusterQueues, {len(arrivals):,} jobs in 1 h, {args.nodes:,} nodes "
          "(target: <= 120 s)")
    for mode in args.mode or ["device-plugin", "dra"]:
        start = time.perf_counter()
        result = run_mode(s, mode, arrivals, queueing=setup)
        took = time.perf_counter() - start
        admitted = sum(q.admitted for q in result.queues.values())
        preempted = sum(q.preempted for q in result.queues.values())
        admission = timers[-1]
        print(f"  {mode:13s} run {took:7.1f} s, of which admission {admission.seconds:6.1f} s "
              f"({admission.cycles:,} cycles)  admitted {admitted:,}  preempted {preempted:,}  "
              f"pods started {sum(1 for p in result.pods if p.start is not None):,}  "
              f"[{'ok' if admission.seconds <= 120 else 'over'}]")


if __name__ == "__main__":
    main()
