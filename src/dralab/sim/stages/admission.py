"""Admission: jobs sent to a queue wait, suspended, until the admission policy admits them.

With queueing on, a job of a kind that names a LocalQueue does not create its pods
when it arrives: it becomes a pending Workload (``submit``). At an instant where
something changed (a job arrived, a workload finished, one was preempted), the
stage runs the policy (Kueue's, ``dralab.queueing``) until nothing changes; each
admitted workload's job creates its pods (``release``: the job controller), which
the scheduling stage then places at the same instant. A workload the policy
preempts loses its pods (``evict``) and waits again, as Kueue requeues an evicted
workload; one whose pods have all finished gives its quota back (``finished``).

Per queue it keeps what the report shows: admissions, preemptions, the time each
workload waited for admission, and samples of pending workloads and of the quota
in use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import msgspec

from dralab.api.core import Pod
from dralab.queueing.feasibility import PodSetPlacement, PodSetPods
from dralab.queueing.model import (
    Admission,
    AdmissionPolicy,
    Decision,
    QueueingState,
    WorkloadSpec,
)
from dralab.scheduler import Scheduler

from ..engine import Environment, Stage
from ..jobs import Arrival
from ..results import QueueMetrics

__all__ = ["MAX_ADMISSION_CYCLES", "AdmissionStage", "QueueStats"]

# Cycles one instant may run before the stage stops (each admits or preempts at least
# one workload, so a stable state is reached far sooner).
MAX_ADMISSION_CYCLES = 10_000
_CYCLE_APART = 1e-6  # seconds between two admission cycles of one instant


@dataclass(slots=True)
class QueueStats:
    """What one ClusterQueue saw over a run."""

    admitted: int = 0
    preempted: int = 0
    waits: list[float] = field(default_factory=list)       # seconds from submit to admission
    samples: list[tuple[float, int, int]] = field(default_factory=list)  # (t, pending, admitted)
    usage: list[tuple[float, dict[str, int]]] = field(default_factory=list)  # (t, resource->milli)

    def freeze(self) -> QueueMetrics:
        return QueueMetrics(admitted=self.admitted, preempted=self.preempted,
                            waits=tuple(self.waits), samples=tuple(self.samples),
                            usage=tuple(self.usage))


class AdmissionStage(Stage):
    """Pending workloads by key; ``run_cycle`` is the verb."""

    name = "admission"
    order = 25

    def __init__(self, env: Environment, policy: AdmissionPolicy, state: QueueingState,
                 release: Callable[[Arrival], None], evict: Callable[[Arrival], None]) -> None:
        super().__init__(env)
        self.policy = policy
        self.state = state
        self._release = release
        self._evict = evict
        self.arrivals: dict[str, Arrival] = {}
        self.submitted: dict[str, float] = {}
        self.stats: dict[str, QueueStats] = {name: QueueStats() for name in state.cluster_queues}
        self.cycles = 0
        self._pending_cycle = False
        self._released: dict[str, Arrival] = {}
        self._suspended: list[Arrival] = []
        # With the Kueue gate KueueDRADeviceFeasibility: the pod-set placement check.
        self.placement: LivePlacement | None = None

    # --- the interface ------------------------------------------------------------------
    def submit(self, arrival: Arrival, workload: WorkloadSpec) -> None:
        """A job arrived (or was evicted): its workload waits for admission."""
        self.state.workloads[workload.key] = workload
        self.arrivals[workload.key] = arrival
        self.submitted[workload.key] = self.env.now
        self.request_cycle()

    def finished(self, key: str) -> None:
        """Every pod of the workload has finished: its quota is free again."""
        self.state.admitted.pop(key, None)
        self.state.workloads.pop(key, None)
        self.arrivals.pop(key, None)
        self.request_cycle()

    def request_cycle(self) -> None:
        if not self._pending_cycle:
            self._pending_cycle = True
            self.at(self.env.now, self.run_cycle)

    # --- the verb -----------------------------------------------------------------------
    def run_cycle(self) -> None:
        """Admission cycles until nothing changes; admitted jobs create their pods."""
        self._pending_cycle = False
        if self.placement is not None:
            # The placement check keeps each admitted pod set's room on a what-if of
            # the live cluster; the jobs create their pods once it is undone.
            self.placement.open()
        self._released = {}
        self._suspended = []
        try:
            for k in range(MAX_ADMISSION_CYCLES):
                # Kueue's cycles are apart in time: a later cycle's admissions are more
                # recent (preemption prefers the most recently admitted victims).
                decisions = self.policy.cycle(self.state, self.env.now + k * _CYCLE_APART)
                self.cycles += 1
                changed = False
                for decision in decisions:
                    changed |= self._apply(decision)
                if not changed:
                    break
        finally:
            if self.placement is not None:
                self.placement.close()
        # Evictions first: the what-if that held them is undone, the pods go for real.
        for arrival in self._suspended:
            self._evict(arrival)
        for arrival in self._released.values():
            self._release(arrival)
        self._released = {}
        self._suspended = []

    def _apply(self, decision: Decision) -> bool:
        key = decision.workload
        arrival = self.arrivals.get(key)
        if arrival is None:
            return False
        if decision.admitted is not None:
            stats = self._stats(decision.admitted.cluster_queue)
            stats.admitted += 1
            stats.waits.append(self.env.now - self.submitted.get(key, self.env.now))
            self._released[key] = arrival
            return True
        if decision.preempted:
            workload = self.state.workloads.get(key)
            if workload is not None and workload.cluster_queue is not None:
                self._stats(workload.cluster_queue).preempted += 1
            if self.placement is None:
                self._evict(arrival)
            elif self._released.pop(key, None) is None:
                # Under the placement check's what-if: deleted once it is undone (an
                # eviction now would be undone with it). One admitted in this instant
                # has no pods yet: it is simply not released.
                self._suspended.append(arrival)
            self.submitted[key] = self.env.now
            return True
        return False

    def _stats(self, cluster_queue: str) -> QueueStats:
        stats = self.stats.get(cluster_queue)
        if stats is None:
            stats = self.stats[cluster_queue] = QueueStats()
        return stats

    # --- metrics ------------------------------------------------------------------------
    def sample(self) -> None:
        """Pending and admitted workloads and quota in use, per ClusterQueue, now."""
        now = self.env.now
        pending: dict[str, int] = dict.fromkeys(self.stats, 0)
        admitted: dict[str, int] = dict.fromkeys(self.stats, 0)
        usage: dict[str, dict[str, int]] = {name: {} for name in self.stats}
        for key, workload in self.state.workloads.items():
            queue = workload.cluster_queue
            if queue is None:
                continue
            admission = self.state.admitted.get(key)
            if admission is None:
                pending[queue] = pending.get(queue, 0) + 1
                continue
            admitted[queue] = admitted.get(queue, 0) + 1
            totals = usage.setdefault(queue, {})
            for pod_set in admission.pod_sets:
                _add(totals, pod_set.usage)
        for queue, stats in self.stats.items():
            stats.samples.append((now, pending.get(queue, 0), admitted.get(queue, 0)))
            stats.usage.append((now, usage.get(queue, {})))


class LivePlacement(PodSetPlacement):
    """``KueuePolicy.placement`` on the simulation's live cluster: each admission in an
    instant places its pods on one what-if of the cluster (so the next check sees the
    room taken), undone when the instant's admission is over. A workload evicted in
    the instant loses its pods on the what-if too (its live pods, or those the check
    placed), so its room counts for the checks after it; the stage deletes the live
    pods for real once the what-if is undone."""

    def __init__(self, scheduler: Scheduler, pods_of: Callable[[str], list[Pod]],
                 labels_of: Callable[[Admission], dict[str, str]],
                 live_pods_of: Callable[[str], list[str]] | None = None) -> None:
        super().__init__(scheduler)
        self.new_pods_of = pods_of
        self.labels_of = labels_of
        self.live_pods_of = live_pods_of
        self._open = False

    def open(self) -> None:
        self.scheduler.fork()
        self._open = True

    def close(self) -> None:
        if self._open:
            self.scheduler.revert()
            self._open = False
        self.placed.clear()
        self.topology_assignments.clear()

    def pod_sets(self, key: str, workload: WorkloadSpec, admission: Admission
                 ) -> list[PodSetPods] | None:
        if not self._open:
            return None
        labels = self.labels_of(admission)
        pods = [_with_selector(p, labels) for p in self.new_pods_of(key)]
        request = workload.pod_sets[0].topology if workload.pod_sets else None
        return [PodSetPods("main", pods, None, request)]

    def pods_of(self, key: str) -> list[str]:
        placed = self.placed.get(key)
        if placed is not None:
            return placed
        return self.live_pods_of(key) if self.live_pods_of is not None and self._open else []


def _with_selector(pod: Pod, labels: Mapping[str, str]) -> Pod:
    if not labels:
        return pod
    selector = {**pod.spec.node_selector, **labels}
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(
        pod.spec, node_selector=selector))


def _add(totals: dict[str, int], amounts: Mapping[str, int]) -> None:
    for resource, amount in amounts.items():
        totals[resource] = totals.get(resource, 0) + amount
