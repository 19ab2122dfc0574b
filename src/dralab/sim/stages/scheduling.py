"""The scheduling stage: the run's ``Scheduler`` takes the pods its queue offers.

Its interface to the rest of the run is narrow: ``on_pod_added`` (a pod object
exists; it joins the scheduler's queue unless PreEnqueue holds it),
``delete_pod`` (a pod leaves: completed, evicted; its claims are released and
the queue forgets it), ``request_round`` (the cluster changed: a round at this
instant) and the verb ``run_round``; it reports back through the two callbacks
given to ``bind`` (a pod was bound; a preemption victim was deleted and must be
re-created).

A round is ``Scheduler.schedule_pending()``: the same loop ``dralab schedule``
runs, on the simulated clock (QueueSort order, back-off, queueing hints, the
five-minute flush of unschedulable pods; see ``dralab.scheduler.queue``). Pods
of one job kind and priority form one equivalence class, so a backlog of
identical pods costs one cycle per event that may help them, not one per pod.
After a round, a wake-up is set for whatever the queue has due later on its own.

Unschedulable reasons are counted per cycle from the diagnosis's typed reasons
(kube-scheduler's phrases, without node counts).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dralab.cluster import PodInfo
from dralab.scheduler import Scheduler
from dralab.scheduler.cycle import Attempt

from ..engine import Environment, Stage
from .pods import PodBook, PodState

__all__ = ["SchedulingStage"]

WAITING = "waiting (PreEnqueue or no profile)"
ERROR = "scheduler error"


class SchedulingStage(Stage):
    """Runs scheduling rounds when asked; counts cycles and unschedulable reasons."""

    name = "scheduling"
    order = 30

    def __init__(self, env: Environment, scheduler: Scheduler, book: PodBook) -> None:
        super().__init__(env)
        self.scheduler = scheduler
        self.book = book
        self.round_pending = False
        self.reasons: dict[str, int] = {}
        self._wakeups: set[float] = set()
        self.after_round: list[Callable[[], None]] = []  # e.g. the autoscaler's scan
        self.cycle_seconds: list[float] = []  # wall clock per cycle, with time_cycles()
        self._started: Callable[[PodState, str], None] = _unbound
        self._evicted: Callable[[PodInfo], None] = _unbound
        scheduler.on_placed = self._on_placed
        scheduler.on_failed = self._on_failed
        scheduler.on_evicted = self._on_evicted

    @property
    def attempts(self) -> int:
        """Scheduling cycles run."""
        return self.scheduler.cycles

    def bind(self, started: Callable[[PodState, str], None],
             evicted: Callable[[PodInfo], None]) -> None:
        """``started(state, node)``: a pod was bound; ``evicted(info)``: a preemption victim
        was deleted (its Job controller re-creates it)."""
        self._started = started
        self._evicted = evicted

    def time_cycles(self, timer: Callable[[], float]) -> None:
        """Measure every scheduling cycle's wall-clock time (``cycle_seconds``), as
        kube-scheduler's scheduler_scheduling_attempt_duration_seconds does: the cycle
        itself (PreFilter to Reserve/Permit, claim allocation included), not the queue.
        The run stays pure: the clock is injected and its readings never decide anything."""
        cycle = self.scheduler.cycle
        inner = cycle.schedule_one
        spent = self.cycle_seconds

        def timed(framework: Any, pod: PodInfo) -> Attempt:
            started = timer()
            try:
                return inner(framework, pod)
            finally:
                spent.append(timer() - started)

        # An instance attribute shadows the method for this run's scheduler only.
        cycle.schedule_one = timed  # type: ignore[method-assign]

    # --- the interface ------------------------------------------------------------------
    def on_pod_added(self, state: PodState) -> None:
        """A new pod object: queued if its profile's PreEnqueue lets it, else it waits."""
        info = state.info
        scheduler = self.scheduler
        # Pods of one job kind and priority are interchangeable for the scheduler; a
        # ComputeDomain job's pods are not (each job its own channel template, and a
        # gang plugin places each job apart), so each waits on its own.
        kind = state.arrival.kind
        scheduler.enqueue(info, None if kind.compute_domain else (kind.name, info.priority))
        queued = scheduler.queue.pods.get(info.key)
        if queued is None or queued.where == "gated":
            state.reason = WAITING

    def delete_pod(self, key: str) -> PodInfo | None:
        """The pod leaves the cluster (its claims released and deallocated), the queue
        and any nomination it had; its PodInfo, or None if it was not there."""
        return self.scheduler.delete_pod(key)

    def request_round(self) -> None:
        """Something changed: a round at this instant, after the instant's other stages."""
        if not self.round_pending:
            self.round_pending = True
            self.at(self.env.now, self.run_round)

    # --- the verb -----------------------------------------------------------------------
    def run_round(self) -> None:
        """Every pod the queue offers now; then a wake-up for what falls due later."""
        self.round_pending = False
        self.scheduler.schedule_pending()
        for then in self.after_round:
            then()
        wakeup = self.scheduler.next_wakeup()
        if not math.isinf(wakeup) and wakeup not in self._wakeups:
            self._wakeups.add(wakeup)
            self.at(wakeup, lambda: self._wake(wakeup))

    def _wake(self, when: float) -> None:
        self._wakeups.discard(when)
        self.request_round()

    # --- what the scheduler reports -----------------------------------------------------
    def _on_placed(self, info: PodInfo, node: str) -> None:
        state = self.book.pods.get(info.key)
        if state is None or state.started is not None:
            return
        state.info = info  # the pod as bound (node, claim statuses)
        self._started(state, node)

    def _on_failed(self, info: PodInfo, attempt: Attempt) -> None:
        state = self.book.pods.get(info.key)
        if state is None:
            return
        if attempt.error is not None:
            state.reason = ERROR
            self._count(ERROR)
            return
        assert attempt.diagnosis is not None
        for reason in attempt.diagnosis.reasons():
            self._count(reason)
            state.reason = reason

    def _on_evicted(self, victim: PodInfo, preemptor: PodInfo) -> None:
        self._evicted(victim)

    def _count(self, reason: str) -> None:
        self.reasons[reason] = self.reasons.get(reason, 0) + 1


def _unbound(*_: object) -> None:
    raise RuntimeError("SchedulingStage.bind() was not called")
