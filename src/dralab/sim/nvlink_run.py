"""Run an NVLink scenario (``sim.nvlink``) under one placement policy.

The policies:

- ``first-fit`` -- kube-scheduler as it is: the channel claim carries no node constraint,
  so each pod of a job is placed on its own on a free node. Free whole nodes score equal,
  and kube-scheduler's selectHost picks uniformly among the best-scored nodes; so does
  this (seeded), unless the scenario's ``tieBreak: name`` asks for the first free node in
  name order (not upstream: the most favourable tie-break for keeping a job together).
  A job may span NVLink domains.
- ``pod-affinity`` -- the same with NVIDIA's recommended required pod affinity on
  ``nvidia.com/gpu.clique``: the job's first pod goes anywhere, the rest only to its
  domain; they wait there, holding their nodes, until the domain has room.
- ``domain-packing`` -- dralab's opt-in extension (the NVLinkDomainGang profile gate), NOT
  upstream: a job is placed whole at once in the one domain with the fewest free nodes
  that still holds it, or waits.

In the two upstream policies pods are placed one by one and a placed pod holds its node
while its job waits for the rest (no gang): jobs can deadlock on each other's held nodes;
those are counted as never started. The queue is kube-scheduler's: oldest first, and a pod
or job that cannot be placed does not block the ones behind it.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from typing import Any

from dralab.api.computedomain import ComputeDomain
from dralab.api.resource import ResourceClaimTemplate

from .nvlink import (
    CLIQUE_LABEL,
    NvlScenario,
    channel_claim_template,
    compute_domain,
    nvl_nodes,
)

__all__ = ["NvlJob", "NvlRun", "run_nvlink"]


@dataclass
class NvlJob:
    name: str
    kind: str
    pods: int
    arrival: float
    duration: float
    compute_domain: ComputeDomain
    channel_template: ResourceClaimTemplate
    nodes: list[int] = field(default_factory=list)   # node indices, in placement order
    start: float | None = None

    def pod_claim(self) -> dict[str, Any]:
        """The claim entry each of the job's pods carries: the CD's channel template."""
        return {"name": "channel", "resourceClaimTemplateName": self.channel_template.name}


@dataclass
class NvlRun:
    policy: str
    jobs: list[NvlJob]
    domain_of: list[int]                      # node index -> domain
    clique_of: list[str]                      # node index -> clique label value
    samples: list[tuple[float, int, int, int]] = field(default_factory=list)
    # (time, free GPUs, stranded free GPUs, GPUs held by pods of jobs not yet started)

    def domains(self, job: NvlJob) -> int:
        return len({self.domain_of[n] for n in job.nodes})

    def explain(self, job: NvlJob) -> str:
        """One line: where the job's pods landed, in NVLink domains."""
        # domains told apart by clique label; shown by their number in the fleet
        cliques = {self.clique_of[n]: self.domain_of[n] for n in job.nodes}
        state = "waiting" if job.start is None else "started"
        span = f"spans {len(cliques)} NVLink domains" if len(cliques) > 1 \
            else "in one NVLink domain" if cliques else "not placed"
        return (f"job {job.name} ({state}, {len(job.nodes)}/{job.pods} pods): "
                f"{span}" + (f" ({', '.join(str(d) for d in sorted(cliques.values()))})"
                             if len(cliques) > 1 else ""))


def _jobs(sc: NvlScenario) -> list[NvlJob]:
    jobs: list[NvlJob] = []
    for kind in sc.kinds:
        rng = random.Random(f"{sc.seed}/{kind.name}")   # one stream per kind: same jobs
        t, n = 0.0, 0                                    # under every policy
        while kind.rate > 0:
            t += rng.expovariate(kind.rate)
            if t >= sc.duration:
                break
            n += 1
            name = f"{kind.name}-{n}"
            cd = compute_domain(f"{name}-cd", sc.namespace, kind.pods)
            jobs.append(NvlJob(name, kind.name, kind.pods, t,
                               rng.expovariate(1.0 / kind.mean_duration) if
                               kind.mean_duration > 0 else 0.0,
                               cd, channel_claim_template(cd)))
    jobs.sort(key=lambda j: (j.arrival, j.name))
    return jobs


class _Fleet:
    def __init__(self, sc: NvlScenario) -> None:
        nodes = nvl_nodes(sc)
        self.domain_of = [n.domain for n in nodes]
        self.clique_of = [dict(n.labels)[CLIQUE_LABEL] for n in nodes]
        self.free = [True] * len(nodes)
        self.per = sc.nodes_per_domain
        self.domains = sc.domains

    def free_in(self, domain: int) -> list[int]:
        base = domain * self.per
        return [i for i in range(base, base + self.per) if self.free[i]]

    def pick(self, rng: random.Random | None, domain: int | None = None) -> int | None:
        """A free node (in ``domain`` when given): the first by name with no ``rng``,
        else one drawn uniformly, as selectHost among equal scores."""
        pool = [i for i in (range(len(self.free)) if domain is None
                            else self.free_in(domain)) if self.free[i]]
        if not pool:
            return None
        return pool[0] if rng is None else rng.choice(pool)


def _place(policy: str, fleet: _Fleet, queue: list[NvlJob],
           rng: random.Random | None) -> list[NvlJob]:
    """Place what fits now; returns the jobs whose last pod was just placed."""
    started: list[NvlJob] = []
    for job in queue:
        if policy == "domain-packing":
            fits = [(len(fleet.free_in(d)), d) for d in range(fleet.domains)
                    if len(fleet.free_in(d)) >= job.pods]
            if fits:
                _, domain = min(fits)
                job.nodes = fleet.free_in(domain)[:job.pods]
        else:
            while len(job.nodes) < job.pods:
                pinned = fleet.domain_of[job.nodes[0]] \
                    if policy == "pod-affinity" and job.nodes else None
                node = fleet.pick(rng, pinned)
                if node is None:
                    break
                fleet.free[node] = False
                job.nodes.append(node)
        for n in job.nodes:
            fleet.free[n] = False
        if len(job.nodes) == job.pods:
            started.append(job)
    return started


def _sample(t: float, sc: NvlScenario, fleet: _Fleet, queue: list[NvlJob],
            min_pods: int) -> tuple[float, int, int, int]:
    free = stranded = 0
    for d in range(fleet.domains):
        n = len(fleet.free_in(d))
        free += n
        if n < min_pods:
            stranded += n
    held = sum(len(j.nodes) for j in queue)
    g = sc.gpus_per_node
    return (t, free * g, stranded * g, held * g)


def run_nvlink(sc: NvlScenario, policy: str) -> NvlRun:
    """Simulate ``sc`` under ``policy``; deterministic for a seed."""
    fleet = _Fleet(sc)
    jobs = _jobs(sc)
    run = NvlRun(policy, jobs, fleet.domain_of, fleet.clique_of)
    # stranded: free GPUs in a domain whose free nodes cannot hold the smallest
    # multi-node job kind whole (1 when there is none: nothing is stranded)
    multi = [k.pods for k in sc.kinds if k.pods > 1]
    min_pods = min(multi) if multi else 1
    events: list[tuple[float, int, int, int]] = []   # (time, order, seq, job index)
    for i, job in enumerate(jobs):
        heapq.heappush(events, (job.arrival, 1, i, i))
    seq = len(jobs)
    steps = int(sc.duration // sc.sample_interval) + 1
    for k in range(steps):
        heapq.heappush(events, (k * sc.sample_interval, 2, seq + k, -1))
    index = {job.name: i for i, job in enumerate(jobs)}
    rng = None if sc.tie_break == "name" else random.Random(f"{sc.seed}/{policy}/ties")
    queue: list[NvlJob] = []
    while events:
        t, order, _, idx = heapq.heappop(events)
        if t > sc.duration:
            break
        if order == 2:
            run.samples.append(_sample(t, sc, fleet, queue, min_pods))
            continue
        if order == 0:                       # a job ends: its nodes are free
            for n in jobs[idx].nodes:
                fleet.free[n] = True
        else:
            queue.append(jobs[idx])
        for job in _place(policy, fleet, queue, rng):
            job.start = t
            queue.remove(job)
            seq += 1
            heapq.heappush(events, (t + job.duration, 0, seq, index[job.name]))
    return run
