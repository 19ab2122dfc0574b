"""Admission benchmark (issue 12): Kueue's admission engine without the placement check.

100 ClusterQueues in 10 cohorts (each queue: cpu/memory in two flavors, a GPU in
two flavors, borrowing within its cohort), 10,000 pending workloads of mixed sizes
and priorities, admitted by ``admit_until_stable`` (one head per ClusterQueue per
cycle, as Kueue). Reports admissions per second of the whole run (cycles, flavor
assignment, failed heads set aside): without preemption, with classic preemption
(withinClusterQueue LowerPriority, reclaimWithinCohort Any), and with fair sharing.
The queues are oversubscribed about twice, so most of the work is on heads that do
not fit (with preemption on, each asks the preemption oracle) and on the heads set
aside and brought back after every eviction that frees quota.
Target: >= 1,000 admissions/s (Kueue's own harness: ~42 workloads/s end to end).

Prints figures; asserts nothing.

    python benchmarks/bench_admission.py [--queues 100] [--cohorts 10] [--workloads 10000]
                                         [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time

from dralab.queueing.kueue import KueuePolicy, admit_until_stable
from dralab.queueing.model import (
    ClusterQueueSpec,
    FlavorQuotas,
    FlavorSpec,
    PodSetRequest,
    PreemptionPolicy,
    QueueingState,
    ResourceGroup,
    ResourceQuota,
    WorkloadSpec,
)

TARGET_PER_SECOND = 1_000.0
GI = 1024**3 * 1000  # milli-units of one Gi


def build(queues: int, cohorts: int, workloads: int, seed: int = 0,
          preemption: bool = True) -> QueueingState:
    rng = random.Random(seed)
    st = QueueingState()
    for name, labels in (("spot", {"lifecycle": "spot"}), ("on-demand", {"lifecycle": "od"}),
                         ("a100", {"gpu": "a100"}), ("h100", {"gpu": "h100"})):
        st.flavors[name] = FlavorSpec(name, node_labels=labels)
    for i in range(queues):
        cpu_group = ResourceGroup(("cpu", "memory"), (
            FlavorQuotas("spot", {"cpu": ResourceQuota(64_000, borrowing_limit=32_000),
                                  "memory": ResourceQuota(256 * GI)}),
            FlavorQuotas("on-demand", {"cpu": ResourceQuota(32_000, lending_limit=16_000),
                                       "memory": ResourceQuota(128 * GI)})))
        gpu_group = ResourceGroup(("nvidia.com/gpu",), (
            FlavorQuotas("a100", {"nvidia.com/gpu": ResourceQuota(8_000)}),
            FlavorQuotas("h100", {"nvidia.com/gpu": ResourceQuota(4_000)})))
        st.cluster_queues[f"cq-{i:03d}"] = ClusterQueueSpec(
            f"cq-{i:03d}", (cpu_group, gpu_group), cohort=f"cohort-{i % cohorts}",
            preemption=PreemptionPolicy(within_cluster_queue="LowerPriority",
                                        reclaim_within_cohort="Any") if preemption
            else PreemptionPolicy())
    for j in range(workloads):
        queue = f"cq-{rng.randrange(queues):03d}"
        count = rng.choice((1, 1, 2, 4))
        per_pod = {"cpu": rng.choice((500, 1000, 2000, 4000)), "memory": rng.choice((2, 4, 8)) * GI}
        if rng.random() < 0.3:
            per_pod["nvidia.com/gpu"] = 1000
        key = f"ns-{j % 50}/job-{j:05d}"
        st.workloads[key] = WorkloadSpec(key, "lq", queue, rng.choice((0, 0, 0, 100)),
                                         float(j), (PodSetRequest("main", count, per_pod),))
    return st


def run(queues: int, cohorts: int, workloads: int, fair: bool, preemption: bool,
        profile: bool) -> None:
    st = build(queues, cohorts, workloads, preemption=preemption)
    policy = KueuePolicy(fair_sharing=fair)
    profiler = cProfile.Profile() if profile else None
    start, cpu_start = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    decisions = admit_until_stable(policy, st, 0.0)
    if profiler:
        profiler.disable()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    admitted = sum(1 for d in decisions if d.admitted is not None)
    preempted = sum(1 for d in decisions if d.preempted)
    label = ("fair sharing" if fair else "classic") + (
        ", preemption" if preemption else ", no preemption")
    # The rate is over process CPU time: on a shared machine wall time measures the others.
    rate = admitted / cpu if cpu else float("inf")
    print(f"{label:>26}: {admitted:6d} admitted, {preempted:5d} preempted, "
          f"{len(st.workloads) - len(st.admitted):6d} pending, {len(decisions):6d} decisions "
          f"in {cpu:6.2f} s CPU ({elapsed:.2f} s wall) -> {rate:8.0f} admissions/s "
          f"({'meets' if rate >= TARGET_PER_SECOND else 'BELOW'} target {TARGET_PER_SECOND:.0f}/s)")
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queues", type=int, default=100)
    parser.add_argument("--cohorts", type=int, default=10)
    parser.add_argument("--workloads", type=int, default=10_000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    print(f"{args.queues} ClusterQueues in {args.cohorts} cohorts, "
          f"{args.workloads} pending workloads")
    for fair, preemption in ((False, False), (False, True), (True, True)):
        run(args.queues, args.cohorts, args.workloads, fair, preemption, args.profile)


if __name__ == "__main__":
    main()
