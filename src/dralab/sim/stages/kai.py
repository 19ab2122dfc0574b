"""KAI Scheduler as the run's pod scheduler: a KAI session where kube-scheduler's round was.

In the ``kai`` mode this stage takes the scheduling stage's place (same name and
order, same narrow interface: ``on_pod_added``, ``delete_pod``, ``request_round``),
and Kueue's admission is off: KAI is both the queueing policy and the scheduler. Each
job is one PodGroup in its kind's leaf queue (``kaiQueue``; gang ``minMember``, default
every pod). A round is one KAI session (``dralab.queueing.kai.run_session``) on the
run's nodes and every live job, with the actions the scenario's SchedulingShard names
(KAI's five by default): what it binds starts, what it evicts goes and is re-created
by its Job controller, as the simulator treats preemption victims.

Cadence: KAI runs a session every schedule period (1 s by default); between two
changes of the cluster a session decides nothing new, so the stage runs one at every
instant where something changed (an arrival, a completion, a node event), and one
schedule period after a session that evicted or pipelined pods (the pipelined ones
bind once their victims are gone), or when a gang that fell below its minimum reaches
the staleness grace period (the stalegangeviction action's clock).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from dralab.api.core import Node, Taint
from dralab.api.taints import tolerates
from dralab.cluster import PodInfo
from dralab.queueing.kai.model import KaiJob, KaiNode, KaiTask
from dralab.queueing.kai.reader import DEFAULT_PRIORITY_CLASSES, KaiSnapshot
from dralab.queueing.kai.session import SessionResult, run_session
from dralab.scheduler import Scheduler

from ..engine import Environment
from ..kai import KaiAccounting, kai_node, kai_state, kai_task
from ..results import KaiQueueMetrics
from .pods import PodBook, PodState
from .scheduling import SchedulingStage

__all__ = ["SCHEDULE_PERIOD", "KaiSchedulingStage"]

# KAI's SchedulingShard default schedulePeriod (pkg/apis/kai/v1 schedulingshard_types.go)
SCHEDULE_PERIOD = 1.0
_ACTIVE = frozenset({"Running", "Binding", "Bound", "Allocated"})
_NO_SCHEDULE = ("NoSchedule", "NoExecute")


@dataclass(slots=True)
class _Job:
    spec: KaiJob
    size: int                                    # pods the job has
    tasks: dict[str, KaiTask] = field(default_factory=dict)   # pod key -> task
    waiting_since: float = 0.0                   # submitted, or last lost all its pods
    running: bool = False
    stale_from: float | None = None
    last_start: float | None = None              # the PodGroup's last-start-timestamp


@dataclass(slots=True)
class _QueueStats:
    parent: str | None
    started: int = 0
    evicted: int = 0
    waits: list[float] = field(default_factory=list)
    # (t, deserved GPUs, fair share GPUs, allocated GPUs, pending jobs, running jobs)
    samples: list[tuple[float, float, float, float, int, int]] = field(default_factory=list)

    def freeze(self) -> KaiQueueMetrics:
        return KaiQueueMetrics(parent=self.parent, started=self.started, evicted=self.evicted,
                               waits=tuple(self.waits), samples=tuple(self.samples))


class KaiSchedulingStage(SchedulingStage):
    """A KAI session per round; keeps KAI's jobs and per-queue figures."""

    def __init__(self, env: Environment, scheduler: Scheduler, book: PodBook,
                 snapshot: KaiSnapshot, accounting: KaiAccounting) -> None:
        super().__init__(env, scheduler, book)
        self.snapshot = snapshot
        self.accounting = accounting
        self.jobs: dict[str, _Job] = {}
        self.sessions = 0
        self.last: SessionResult | None = None
        self.stats = {name: _QueueStats(q.parent)
                      for name, q in sorted(self.snapshot.state.queues.items())}
        self._nodes: dict[str, tuple[Node, KaiNode]] = {}
        self._timer: Callable[[], float] | None = None
        self._pod_groups: dict[str, tuple[str, ...]] = {}   # pod key -> its shared GPU groups
        self._runtimes = sorted({r for q in snapshot.state.queues.values()
                                 for r in (q.preempt_min_runtime, q.reclaim_min_runtime)
                                 if r is not None and r > 0})

    @property
    def attempts(self) -> int:
        """KAI sessions run."""
        return self.sessions

    def time_cycles(self, timer: Callable[[], float]) -> None:
        """Each session's wall-clock time (``cycle_seconds``)."""
        self._timer = timer

    # --- the interface ------------------------------------------------------------------
    def on_pod_added(self, state: PodState) -> None:
        arrival = state.arrival
        kind = arrival.kind.spec
        job = self.jobs.get(arrival.name)
        if job is None:
            size = len(arrival.durations)
            queue = kind.kai_queue or ""
            pod = state.info.pod
            # a manifest's priorityClassName of KAI's chart (train, build, ...) is the
            # PodGroup's priority; else the pod's priority (the kind's)
            cls = pod.spec.priority_class_name or ""
            own = pod.spec.priority if pod.spec.priority is not None else arrival.kind.priority
            spec = KaiJob(name=arrival.name, queue=queue,
                          priority=DEFAULT_PRIORITY_CLASSES.get(cls, own), priority_class=cls,
                          min_member=kind.min_member or size,
                          # jobs of one instant keep their arrival order
                          created=arrival.time + arrival.index * 1e-6)
            job = self.jobs[arrival.name] = _Job(spec, size, waiting_since=self.env.now)
        job.tasks[state.info.key] = kai_task(state.info, arrival.name)

    def delete_pod(self, key: str) -> PodInfo | None:
        info = self.scheduler.delete_pod(key)
        state = self.book.pods.get(key)
        groups = self._pod_groups.pop(key, None)
        if info is not None and groups is not None:
            self._release_share(info, groups)
        if state is None:
            return info
        job = self.jobs.get(state.arrival.name)
        if job is None or key not in job.tasks:
            return info
        if state.ended is not None and not state.preempted and state.started is not None:
            # finished: KAI keeps a succeeded pod in its group (a gang with one is not stale)
            job.tasks[key] = replace(job.tasks[key], status="Succeeded", node=None,
                                     gpu_groups=())
        else:
            del job.tasks[key]
        if job.tasks and all(t.status == "Succeeded" for t in job.tasks.values()) and \
                len(job.tasks) >= job.size:
            del self.jobs[state.arrival.name]
        return info

    # --- the verb -----------------------------------------------------------------------
    def run_round(self) -> None:
        self.round_pending = False
        now = self.env.now
        started = self._timer() if self._timer is not None else 0.0
        state = kai_state(self.snapshot)
        state.now = now
        state.nodes = self._kai_nodes()
        state.jobs = self._kai_jobs(state.nodes, now)
        result = run_session(state)
        if self._timer is not None:
            self.cycle_seconds.append(self._timer() - started)
        self.sessions += 1
        self.last = result
        follow_up = self._apply(result)
        self._note_jobs(now)
        for then in self.after_round:
            then()
        wakeups = [now + SCHEDULE_PERIOD] if follow_up else []
        grace = self.snapshot.state.config.staleness_grace_period
        if grace >= 0:
            wakeups += [j.stale_from + grace for j in self.jobs.values()
                        if j.stale_from is not None and j.stale_from + grace > now]
        wakeups += self._protection_ends(now)
        if wakeups:
            wakeup = min(wakeups)
            if not math.isinf(wakeup) and wakeup not in self._wakeups:
                self._wakeups.add(wakeup)
                self.at(wakeup, lambda: self._wake(wakeup))

    def _protection_ends(self, now: float) -> list[float]:
        """While jobs wait: when a running job's minimum runtime (any queue's
        preemptMinRuntime / reclaimMinRuntime) runs out, it may become a victim, so a
        session then (KAI's sessions are periodic; one at such a time is enough)."""
        if not self._runtimes or not any(
                t.status == "Pending" for j in self.jobs.values() for t in j.tasks.values()):
            return []
        return [j.last_start + r for j in self.jobs.values()
                if j.running and j.last_start is not None
                for r in self._runtimes if j.last_start + r > now]

    def _kai_nodes(self) -> dict[str, KaiNode]:
        out: dict[str, KaiNode] = {}
        for name, info in self.scheduler.cluster.nodes.items():
            cached = self._nodes.get(name)
            if cached is None or cached[0] is not info.node:
                cached = self._nodes[name] = (info.node, kai_node(info.node))
            out[name] = cached[1]
        return dict(sorted(out.items()))

    def _kai_jobs(self, nodes: dict[str, KaiNode], now: float) -> dict[str, KaiJob]:
        tainted = {n: [t for t in info.node.spec.taints if t.effect in _NO_SCHEDULE]
                   for n, info in self.scheduler.cluster.nodes.items()}
        tainted = {n: t for n, t in tainted.items() if t}
        out: dict[str, KaiJob] = {}
        for name, job in sorted(self.jobs.items()):
            tasks = []
            for key, task in job.tasks.items():
                if task.status == "Pending" and tainted:
                    task = replace(task, node_names=self._tolerated(key, nodes, tainted))
                tasks.append(task)
            stale = None if job.stale_from is None else now - job.stale_from
            out[name] = replace(job.spec, tasks=tuple(tasks), stale_since=stale,
                                last_start=job.last_start)
        return out

    def _tolerated(self, key: str, nodes: dict[str, KaiNode],
                   tainted: dict[str, list[Taint]]) -> tuple[str, ...]:
        """The nodes whose NoSchedule taints the pod tolerates (KAI's taint predicate),
        as the task's required node names."""
        state = self.book.pods.get(key)
        tolerations = state.info.pod.spec.tolerations if state is not None else []
        names = [n for n in nodes if all(any(tolerates(tol, taint) for tol in tolerations)
                                          for taint in tainted.get(n, ()))]
        # no node at all: a name no node has, so the task stays pending
        return tuple(names) or ("",)

    def _apply(self, result: SessionResult) -> bool:
        follow_up = False
        evicted_jobs: set[str] = set()
        for event in result.events:
            if event.kind == "evict":
                follow_up = True
                info = self.delete_pod(event.task)
                if info is not None:
                    if event.job not in evicted_jobs:
                        evicted_jobs.add(event.job)
                        stats = self._stats_of(event.job)
                        if stats is not None:
                            stats.evicted += 1
                    self._evicted(info)
            elif event.kind == "pipeline":
                follow_up = True
            else:
                self._bind(event.job, event.task, event.node or "", event.gpu_groups)
        for job_name, message in result.unschedulable.items():
            job = self.jobs.get(job_name)
            if job is None:
                continue
            for key, task in job.tasks.items():
                if task.status == "Pending":
                    state = self.book.pods.get(key)
                    if state is not None:
                        state.reason = _reason(message)
            self._count(_reason(message))
        return follow_up

    def _bind(self, job_name: str, key: str, node: str, groups: tuple[str, ...]) -> None:
        cluster = self.scheduler.cluster
        info = cluster.pods.get(key)
        job = self.jobs.get(job_name)
        if info is None or job is None or key not in job.tasks or node not in cluster.nodes:
            return
        cluster.bind_pod(info, node)
        job.tasks[key] = replace(job.tasks[key], status="Running", node=node,
                                 gpu_groups=groups, started=self.env.now)
        bound = cluster.pods.get(key, info)
        share = self.accounting.share_of(bound)
        if share and groups:
            # the pod's share on each shared GPU it holds (gpu-fraction-num-devices: several)
            for group in groups:
                used = self.accounting.groups.setdefault(node, {})
                used[group] = used.get(group, 0.0) + share
            self._pod_groups[key] = groups
        state = self.book.pods.get(key)
        if state is not None and state.started is None:
            state.info = cluster.pods.get(key, info)
            state.reason = None
            self._started(state, node)

    def _release_share(self, info: PodInfo, groups: tuple[str, ...]) -> None:
        node = info.assumed_node or info.pod.spec.node_name or ""
        used = self.accounting.groups.get(node, {})
        share = self.accounting.share_of(info)
        for group in groups:
            left = used.get(group, 0.0) - share
            if left > 1e-9:
                used[group] = left
            else:
                used.pop(group, None)

    def _note_jobs(self, now: float) -> None:
        """Per job: whether it runs now (a start counts once per wait), and since when a
        running gang is below its minimum."""
        for job in self.jobs.values():
            active = sum(1 for t in job.tasks.values() if t.status in _ACTIVE)
            succeeded = any(t.status == "Succeeded" for t in job.tasks.values())
            if active and not job.running:
                job.running = True
                job.last_start = now
                stats = self._stats_of(job.spec.name)
                if stats is not None:
                    stats.started += 1
                    stats.waits.append(now - job.waiting_since)
            elif not active and job.running and not succeeded:
                job.running = False
                job.waiting_since = now
            stale = active > 0 and not succeeded and active < job.spec.min_member
            if not stale:
                job.stale_from = None
            elif job.stale_from is None:
                job.stale_from = now

    def _stats_of(self, job_name: str) -> _QueueStats | None:
        job = self.jobs.get(job_name)
        return self.stats.get(job.spec.queue) if job is not None else None

    # --- metrics ------------------------------------------------------------------------
    def sample(self) -> None:
        """Per KAI queue: its GPU deserved quota, fair share and allocation as the last
        session left them, and its pending and running jobs now (from the first session
        on)."""
        if self.last is None:
            return   # no session yet: KAI has not divided anything
        now = self.env.now
        shares = self.last.shares
        pending: dict[str, int] = {}
        running: dict[str, int] = {}
        for job in self.jobs.values():
            target = running if job.running else pending
            target[job.spec.queue] = target.get(job.spec.queue, 0) + 1
        children: dict[str, list[str]] = {}
        for name, stats in self.stats.items():
            if stats.parent:
                children.setdefault(stats.parent, []).append(name)
        for name, stats in self.stats.items():
            share = shares.get(name)
            gpu = share.gpu if share is not None else None
            leaves = _leaves(name, children)
            stats.samples.append((
                now, gpu.deserved if gpu else 0.0, gpu.fair_share if gpu else 0.0,
                gpu.allocated if gpu else 0.0, sum(pending.get(q, 0) for q in leaves),
                sum(running.get(q, 0) for q in leaves)))

    def queue_metrics(self) -> dict[str, KaiQueueMetrics]:
        return {name: stats.freeze() for name, stats in self.stats.items()}


def _leaves(name: str, children: dict[str, list[str]]) -> list[str]:
    below = children.get(name)
    if not below:
        return [name]
    return [leaf for child in below for leaf in _leaves(child, children)]


_HEADER = "PodSchedulingErrors."
_NUMBER = re.compile(r"\b\d+(\.\d+)?\b")


def _reason(message: str) -> str:
    """KAI's unschedulable message cut to its first sentence, without KAI's header line
    and with counts as N, so that jobs waiting for the same reason count together
    (e.g. "Resources were found for N pods while N are required for gang scheduling")."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if lines and lines[0] == _HEADER:
        lines = lines[1:]
    first = lines[0].split(". ")[0].rstrip(".") if lines else "unschedulable"
    return _NUMBER.sub("N", first)
