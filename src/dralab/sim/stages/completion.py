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

    def start(self, state: PodState, node: str) -> None:
        """``state``'s pod was bound to ``node``: count what it holds, schedule its end."""
        self.book.change(state, started=self.env.now)
        state.node = node
        state.devices, state.gpu_fraction = self.observer.pod_started(
            state.info, state.arrival.kind.demand, node)
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
