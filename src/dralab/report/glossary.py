"""Every number of the report defined once: the page's glossary and the tables' tooltips.

Keys are ``MetricSpec.key`` for the compared numbers, and plain terms for the rest
(plots and sections use them). A test checks every metric has an entry. Pure.
"""

from __future__ import annotations

__all__ = ["GLOSSARY", "TERMS"]

GLOSSARY: dict[str, str] = {
    "pods_arrived": "Pods created by their job, each counted once: a pod evicted and "
                    "re-created counts by its last incarnation.",
    "pods_started": "Pods bound to a node by the end of the run.",
    "pods_completed": "Pods that ran their whole run time before the end.",
    "pods_never_started": "Pods still pending at the end; their waits are in no percentile. "
                          "Under Kueue a job's pods exist only once it is admitted (a job "
                          "still queued at the end has none), while a KAI job's pods exist "
                          "from its arrival: compare the job waits.",
    "throughput_pods_per_hour": "Completed pods per simulated hour.",
    "wait_p50": "Scheduling wait: seconds from a pod's creation to its start (bound). Over "
                "pods that started, each pod once (a preemption victim counts by its "
                "re-created pod). Under Kueue a pod is created when its job is admitted, so "
                "this is scheduling wait only: add the admission wait for the whole wait. "
                "This is kube-scheduler's pod scheduling SLI "
                "(scheduler_pod_scheduling_sli_duration_seconds). p50, p90, p99: the "
                "percentiles (linear interpolation), mean: the average.",
    "job_wait_p50": "Job wait: from a job's arrival to the start of its first pod, over the "
                    "jobs that started; only with a queue in front of scheduling (Kueue, or "
                    "KAI). It is the wait the compared modes share: under Kueue a pod is "
                    "created at admission, so its scheduling wait leaves the time in queue "
                    "out, while a KAI pod exists (and waits) from its job's arrival.",
    "admission_wait_p50": "Admission wait: from a job's submission to its admission by "
                          "Kueue (quota reserved), pooled over every ClusterQueue; only with "
                          "queueing. The Queues table has it per ClusterQueue.",
    "mean_gpu_capacity_allocated": "Share of the fleet's GPU capacity allocated, averaged over "
                                   "time (a whole GPU counts 1, a MIG slice its compute "
                                   "slices over the GPU's, a share its memory over the "
                                   "GPU's). Over the GPUs present: with autoscaling the fleet "
                                   "changes too, so compare Mean GPUs busy for the amount.",
    "mean_gpu_capacity_requested": "Share of the fleet's GPU capacity the running pods asked "
                                   "for, averaged over time. Under DRA it equals the "
                                   "allocation; the device plugin hands out whole GPUs, so "
                                   "there it is lower.",
    "gpu_allocation_efficiency": "Requested over allocated GPU capacity (time averages): "
                                 "what the pods asked for of what they were given.",
    "peak_gpu_capacity_allocated": "The highest share of GPU capacity allocated at any "
                                   "sample.",
    "mean_gpus_busy": "Physical GPUs holding at least one allocation, averaged over time "
                      "(GPU utilisation by allocation, not by SM activity).",
    "mean_fragmentation": "Idle GPU capacity that the workload's common request shapes "
                          "cannot use, as a share of all capacity (FGD's measure). It is not "
                          "highlighted: a mode that holds fewer GPUs has more idle capacity, "
                          "and more of it can be in pieces too small for an 8-GPU job, "
                          "without packing worse.",
    "scheduling_attempts": "Scheduling cycles run: one per pod tried (pods of one job kind "
                           "and priority share a cycle's answer when they cannot fit). In "
                           "the kai mode: KAI sessions, each over every pending job.",
    "cycles_per_started_pod": "Scheduling cycles over pods started: how many tries a placed "
                              "pod cost on average. Not highlighted: tries cost scheduler "
                              "time, and what they cost the pods is in the scheduling wait.",
    "preemptions": "Scheduler preemptions: running pods that kube-scheduler evicted to make "
                   "room for a higher-priority pod (re-created by their job). Kueue's "
                   "evictions are counted apart. In the kai mode: the pods KAI evicted "
                   "(reclaim, preempt, consolidation, stale gangs).",
    "kueue_preemptions": "Kueue preemptions: admitted workloads that Kueue evicted to admit "
                         "another (quota reclaim or priority); their pods are deleted and "
                         "created again on re-admission. Only with queueing.",
    "autoscaled_cost": "Cost of the autoscaled pools: each pool's pricePerHour times its "
                       "node-hours (a node is billed from joining to leaving), in the unit "
                       "of the fleet's pricePerHour.",
    "autoscaled_node_hours": "Hours of autoscaled nodes, summed over nodes.",
    "autoscaled_peak_nodes": "The most autoscaled nodes Ready at one time.",
    "nodes_added": "Nodes the autoscaler added (scale-ups), all pools.",
    "nodes_removed": "Nodes the autoscaler removed (scale-downs), all pools.",
    "node_wait_p50": "Wait for a new node (scale-up latency): for each pod a scale-up was "
                     "made for, from the pod's creation until its new node was Ready "
                     "(the autoscaler's scan plus the pool's provisioning delay).",
}
# The other percentiles share their definition.
for _k, _src in (("wait_p90", "wait_p50"), ("wait_p99", "wait_p50"), ("wait_mean", "wait_p50"),
                 ("job_wait_p90", "job_wait_p50"),
                 ("admission_wait_p90", "admission_wait_p50"),
                 ("node_wait_p90", "node_wait_p50")):
    GLOSSARY[_k] = GLOSSARY[_src]

TERMS: tuple[tuple[str, str], ...] = (
    ("Seed", "One draw of the scenario's arrivals and run times. Every mode of one seed sees "
             "the same arrivals; several seeds show how much a number moves by chance."),
    ("Mean ± sd", "The mean over seeds and the sample standard deviation across them."),
    ("Beyond the seeds' spread", "A difference between two modes whose sign is the same in "
                                 "every seed and whose mean exceeds twice the standard "
                                 "deviation of the per-seed differences (at least 3 seeds). "
                                 "Only such differences are highlighted."),
    ("Scheduling latency", "In simulated time: the scheduling wait of a pod (created → "
                           "bound) and of a claim (created → allocated); the simulated "
                           "scheduler takes no simulated time. What a cycle costs to compute "
                           "here (wall clock, claim allocation included; kube-scheduler's "
                           "scheduler_scheduling_attempt_duration_seconds) differs run to "
                           "run, so it is kept out of this page unless asked for "
                           "(--timings-on-page): the terminal summary and timings.json "
                           "(cycle_seconds p50/p90/p99 per mode) always have it."),
    ("Claim allocation status", "At each sample: the GPU requests of the pods (DRA: their "
                                "ResourceClaims; device plugin: their extended resources) "
                                "allocated to running pods, pending (pod not placed yet), "
                                "and failed (pending after a scheduling cycle said no), by "
                                "the last reason."),
    ("Failure modes", "Pods that never started, grouped by job kind and the scheduler's last "
                      "reason."),
    ("KAI queues", "The kai mode, per KAI Queue (a parent sums its children): GPU quota "
                   "(deserved), fair share and allocation as KAI's proportion plugin had "
                   "them after each session, averaged over time, in KAI's GPU units (a MIG "
                   "instance counts its compute slices, 1g.10gb: 1); jobs started (a job "
                   "evicted whole and started again counts again) and jobs with pods "
                   "evicted (reclaim, preemption, consolidation, stale gangs); job wait: "
                   "from a job's arrival (or losing its last pod) to its gang starting. "
                   "KAI has no admission step before scheduling, so a KAI pod's scheduling "
                   "wait includes its time in queue; Kueue's is after admission."),
)
