"""The job controller: a job's pods are created when it arrives, and a pod that was
evicted (preempted, or its node removed) is re-created, to run its full time again."""

from __future__ import annotations

import functools

from dralab.api.core import Pod
from dralab.scheduler.cluster import ClusterState, PodInfo

from ..engine import Environment, Stage
from ..jobs import Arrival
from ..modes import Mode
from ..observe import Observer
from .pods import PodBook, PodState
from .scheduling import SchedulingStage

__all__ = ["JobController"]


class JobController(Stage):
    """Creates pods (``arrive``) in the run's mode; ``evict`` removes and re-creates one."""

    name = "arrival"
    order = 20

    def __init__(self, env: Environment, cluster: ClusterState, book: PodBook, mode: Mode,
                 prototypes: dict[str, Pod], observer: Observer,
                 scheduling: SchedulingStage) -> None:
        super().__init__(env)
        self.cluster = cluster
        self.book = book
        self.mode = mode
        self.prototypes = prototypes  # template kinds' pods, as the mode has them
        self.observer = observer
        self.scheduling = scheduling
        self.preemptions = 0

    def arrive(self, arrival: Arrival) -> None:
        """A job arrives: one pod per replica, then a scheduling round."""
        for replica in range(len(arrival.durations)):
            self._add_pod(arrival, replica, 0)
        self.scheduling.request_round()

    def _add_pod(self, arrival: Arrival, replica: int, restarts: int) -> PodState:
        pod = self.mode.make_pod(arrival, replica, restarts,
                                 self.prototypes.get(arrival.kind.name))
        info = self.cluster.add_pod(pod)
        state = PodState(arrival, replica, info, self.env.now, restarts=restarts)
        self.book.add(state)
        self.scheduling.on_pod_added(state)
        return state

    def evict(self, key: str, counted: bool = True) -> None:
        """The pod goes (``counted``: as a preemption victim) and its Job controller
        re-creates it; it runs its full time again."""
        info = self.scheduling.delete_pod(key)
        if info is not None:
            self._gone(info, counted)

    def preempted(self, info: PodInfo) -> None:
        """The scheduler deleted ``info`` to make room for a higher-priority pod."""
        self._gone(info, True)

    def _gone(self, info: PodInfo, counted: bool) -> None:
        state = self.book.pods.get(info.key)
        if state is None:
            return
        if counted:
            self.preemptions += 1
        self.observer.pod_left(info)
        if state.completion is not None:
            state.completion.cancel()
            state.completion = None
        self.book.change(state, preempted=True, ended=self.env.now)
        # Re-created once the old pod is gone: after the scheduling round that evicted it
        # (the preemptor is retried first, as a real victim's graceful termination outlasts
        # the preemptor's one-second back-off).
        self.at(self.env.now, functools.partial(self._recreate, state))

    def _recreate(self, state: PodState) -> None:
        self._add_pod(state.arrival, state.replica, state.restarts + 1)
        self.scheduling.request_round()
