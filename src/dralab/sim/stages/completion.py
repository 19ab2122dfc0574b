"""Completion: a started pod runs its drawn time, then leaves and releases its devices."""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..engine import Environment, Stage
from ..observe import Observer
from .pods import PodBook, PodState
from .scheduling import SchedulingStage

__all__ = ["Completion"]


class Completion(Stage):
    """Schedules each started pod's end (``start``) and ends it (``complete``)."""

    name = "completion"
    order = 10

    def __init__(self, env: Environment, book: PodBook, observer: Observer,
                 scheduling: SchedulingStage) -> None:
        super().__init__(env)
        self.book = book
        self.observer = observer
        self.scheduling = scheduling
        # Told when a pod has run its time (the job controller counts a job's pods).
        self.on_finished: Callable[[PodState], None] | None = None
        # ComputeDomain jobs: per job not yet running, its placed pods by replica; per job
        # whose pods all got placed (its work started), those pods. A job none of whose
        # pods is left (Kueue suspended it, or all were evicted) starts anew.
        self._gangs: dict[str, dict[int, PodState]] = {}
        self._running_jobs: dict[str, list[PodState]] = {}

    def start(self, state: PodState, node: str) -> None:
        """``state``'s pod was bound to ``node``: count what it holds, schedule its end.

        A multi-node ComputeDomain job's work starts when its last pod is placed: the
        pods placed before it hold their nodes and wait, and then all run the job's
        time and end together. A pod re-created while the job runs (an evicted one) runs
        its full time from its own start, as any other pod."""
        self.book.change(state, started=self.env.now)
        state.node = node
        state.devices, state.gpu_fraction = self.observer.pod_started(
            state.info, state.arrival.kind.demand, node)
        arrival = state.arrival
        name = arrival.name
        if arrival.kind.compute_domain and len(arrival.durations) > 1:
            running = self._running_jobs.get(name, [])
            if any(m.ended is None and not m.preempted for m in running):
                running.append(state)  # re-created while the job runs
                self._run(state)
                return
            placed = self._gangs.setdefault(name, {})
            placed[state.replica] = state
            live = {r: s for r, s in placed.items() if s.ended is None and not s.preempted}
            if len(live) < len(arrival.durations):
                self._gangs[name] = live
                return
            del self._gangs[name]
            self._running_jobs[name] = list(live.values())
            for member in live.values():
                self._run(member)
            return
        self._run(state)

    def held_gpus(self) -> int:
        """Devices held now by placed pods of ComputeDomain jobs whose other pods are not
        all placed yet (their work has not started)."""
        return sum(s.devices for placed in self._gangs.values() for s in placed.values()
                   if s.ended is None and not s.preempted)

    def _run(self, state: PodState) -> None:
        duration = state.arrival.durations[state.replica]
        state.completion = self.after(duration, functools.partial(self.complete,
                                                                  state.info.key))

    def complete(self, key: str) -> None:
        """The pod ran its time: it leaves, its claims are released and deallocated."""
        state = self.book.pods[key]
        self.book.change(state, ended=self.env.now)
        state.completion = None
        self.scheduling.delete_pod(key)
        self.observer.pod_left(state.info)
        if self.on_finished is not None:
            self.on_finished(state)
        self.scheduling.request_round()
