"""The job controller: a job's pods are created when it arrives, and a pod that was
evicted (preempted, or its node removed) is re-created, to run its full time again."""

from __future__ import annotations

import functools
from collections.abc import Callable

from dralab.api.core import Pod
from dralab.api.keys import object_key
from dralab.cluster import ClusterState, PodInfo
from dralab.queueing.model import WorkloadSpec

from ..computedomains import job_template
from ..engine import Environment, Stage
from ..jobs import Arrival
from ..modes import Mode
from ..observe import Observer
from .admission import AdmissionStage
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
        # Queueing (off unless ``queue_with``): a job whose kind has a workload waits for
        # admission instead of creating its pods.
        self.admission: AdmissionStage | None = None
        self.workload_of: Callable[[Arrival], WorkloadSpec | None] = _no_workload
        self._workloads: dict[str, str] = {}        # job name -> workload key
        self._live: dict[str, set[str]] = {}        # job name -> keys of its pods alive
        self._left: dict[str, int] = {}             # job name -> pods still to finish

    def queue_with(self, admission: AdmissionStage,
                   workload_of: Callable[[Arrival], WorkloadSpec | None]) -> None:
        self.admission = admission
        self.workload_of = workload_of

    def arrive(self, arrival: Arrival) -> None:
        """A job arrives: its workload waits for admission, or (no queue) one pod per
        replica, then a scheduling round."""
        if arrival.kind.compute_domain:
            # The job's ComputeDomain is created with it (a queued job's too), and
            # NVIDIA's controller writes its workload channel template at once.
            self.cluster.add_template(job_template(arrival))
        if self.admission is not None:
            workload = self.workload_of(arrival)
            if workload is not None:
                self._workloads[arrival.name] = workload.key
                self.admission.submit(arrival, workload)
                return
        self.release(arrival)

    def live_pods(self, job: str) -> list[str]:
        """The keys of a job's pods alive now, sorted."""
        return sorted(self._live.get(job, ()))

    def release(self, arrival: Arrival) -> None:
        """The job runs (admitted, or not queued): its pods are created."""
        self._left[arrival.name] = len(arrival.durations)
        for replica in range(len(arrival.durations)):
            self._add_pod(arrival, replica, 0)
        self.scheduling.request_round()

    def suspend(self, arrival: Arrival) -> None:
        """The admission policy evicted the job's workload: its pods go (they are
        created anew, to run their full time, when it is admitted again)."""
        for key in sorted(self._live.pop(arrival.name, set())):
            info = self.scheduling.delete_pod(key)
            if info is None:
                continue
            state = self.book.pods.get(key)
            self.observer.pod_left(info)
            if state is not None:
                if state.completion is not None:
                    state.completion.cancel()
                    state.completion = None
                self.book.change(state, preempted=True, ended=self.env.now)
        self.scheduling.request_round()

    def pod_finished(self, state: PodState) -> None:
        """One of a job's pods ran its time; the last one gives the workload's quota back
        and takes its ComputeDomain's channel template away."""
        name = state.arrival.name
        self._live.get(name, set()).discard(state.info.key)
        left = self._left.get(name)
        if left is None:
            return
        left -= 1
        self._left[name] = left
        if left <= 0 and state.arrival.kind.compute_domain:
            # The job is done: its ComputeDomain and the channel template go with it.
            template = job_template(state.arrival)
            self.cluster.remove_template(object_key(template.metadata.namespace,
                                                    template.metadata.name))
        key = self._workloads.get(name)
        if left <= 0 and key is not None and self.admission is not None:
            self.admission.finished(key)

    def _add_pod(self, arrival: Arrival, replica: int, restarts: int) -> PodState:
        pod = self.mode.make_pod(arrival, replica, restarts,
                                 self.prototypes.get(arrival.kind.name))
        info = self.cluster.add_pod(pod)
        state = PodState(arrival, replica, info, self.env.now, restarts=restarts)
        self._live.setdefault(arrival.name, set()).add(info.key)
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
        self._live.get(state.arrival.name, set()).discard(info.key)
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


def _no_workload(arrival: Arrival) -> WorkloadSpec | None:
    return None
