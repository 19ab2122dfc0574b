"""The scheduling stage: pending pods get scheduling cycles of the scenario's scheduler.

Its interface to the rest of the run is narrow: ``on_pod_added`` (a pod object
exists; it joins the queue unless PreEnqueue holds it), ``delete_pod`` (a pod
leaves: completed, evicted; the queue and nominations forget it),
``request_round`` (the cluster changed: schedule a round at this instant) and the
verb ``run_round``; it reports back through the two callbacks given to ``bind``
(a pod was bound; a preemption victim must go). Everything queue-specific lives
in this module (and ``podqueue``, which only it uses), so the queue can be
replaced without touching the other stages.

A round gives every pending pod, in QueueSort order (priority, then arrival),
one scheduling cycle of the framework (``cycle.schedule_one``). A pod kind that
failed without preemption is not retried in the same round, since nothing
changed for it (kube-scheduler's queueing hints do the same; ``podqueue``).
A nominated pod is retried (up to three cycles in a turn) once its preemption
victims are gone; the victims are evicted through the job controller, which
re-creates them.

Unschedulable reasons are counted per attempt from the diagnosis's typed
reasons (kube-scheduler's phrases, without node counts).
"""

from __future__ import annotations

from collections.abc import Callable

from dralab.scheduler import Scheduler
from dralab.scheduler.claims import delete_pod
from dralab.scheduler.cluster import PodInfo

from ..engine import Environment, Stage
from ..podqueue import Item, KindQueues
from .pods import PodBook, PodState

__all__ = ["SchedulingStage"]

WAITING = "waiting (PreEnqueue or no profile)"
ERROR = "scheduler error"
_TURN = 3  # cycles in one pod's turn: a nominated pod is retried once its victims are gone


class SchedulingStage(Stage):
    """Runs scheduling rounds when asked; counts attempts and unschedulable reasons."""

    name = "scheduling"
    order = 30

    def __init__(self, env: Environment, scheduler: Scheduler, book: PodBook) -> None:
        super().__init__(env)
        self.scheduler = scheduler
        self.book = book
        self.queue = KindQueues()
        self.round_pending = False
        self.attempts = 0
        self.reasons: dict[str, int] = {}
        self._started: Callable[[PodState, str], None] = _unbound
        self._evict: Callable[[str], None] = _unbound

    def bind(self, started: Callable[[PodState, str], None],
             evict: Callable[[str], None]) -> None:
        """``started(state, node)``: a pod was bound; ``evict(key)``: a preemption victim
        must go (and be re-created)."""
        self._started = started
        self._evict = evict

    # --- the interface ------------------------------------------------------------------
    def on_pod_added(self, state: PodState) -> None:
        """A new pod object: queued if its profile's PreEnqueue lets it, else it waits."""
        info = state.info
        framework = self.scheduler.framework_for(info)
        if framework is not None and framework.run_pre_enqueue(info).is_success():
            self.queue.push((state.arrival.kind.name, info.priority),
                            (-info.priority, info.sequence, info.key))
        else:
            state.reason = WAITING

    def delete_pod(self, key: str) -> PodInfo | None:
        """The pod leaves the cluster (its claims released and deallocated) and any
        nomination it had; its PodInfo, or None if it was not there."""
        info = delete_pod(self.scheduler.cluster, key)
        if info is not None:
            self.scheduler.cycle.set_nomination(info, None)
        return info

    def request_round(self) -> None:
        """Something changed: a round at this instant, after the instant's other stages."""
        if not self.round_pending:
            self.round_pending = True
            self.at(self.env.now, self.run_round)

    # --- the verb -----------------------------------------------------------------------
    def run_round(self) -> None:
        """Every pending pod in QueueSort order, one turn each; a kind that failed waits
        for the next round (``podqueue``)."""
        self.round_pending = False
        self.queue.start_round()
        while (taken := self.queue.next()) is not None:
            kind, item = taken
            state = self.book.pods.get(item[2])
            if state is None or state.started is not None:
                self.queue.settle(kind, item, done=True, kind_failed=False)
                continue
            started, kind_failed = self._turn(state, item)
            self.queue.settle(kind, item, done=started, kind_failed=kind_failed)
        self.queue.end_round()

    def _turn(self, state: PodState, item: Item) -> tuple[bool, bool]:
        """One pod's turn: (started, whether its kind failed for the rest of the round)."""
        info = state.info
        framework = self.scheduler.framework_for(info)
        if framework is None:
            return False, False
        cycle = self.scheduler.cycle
        for _ in range(_TURN):
            self.attempts += 1
            attempt = cycle.schedule_one(framework, info)
            if attempt.node is not None:
                bound = self.scheduler.cluster.pods.get(info.key)
                if bound is not None:  # the pod as bound (node, claim statuses)
                    state.info = bound
                self._started(state, attempt.node)
                return True, False
            if attempt.error is not None:
                state.reason = ERROR
                self._count(ERROR)
                return False, True
            assert attempt.diagnosis is not None
            for reason in attempt.diagnosis.reasons():
                self._count(reason)
                state.reason = reason
            if attempt.nominated or attempt.clear_nomination:
                cycle.set_nomination(info, attempt.nominated)
            if attempt.victims:
                for key in attempt.victims:
                    self._evict(key)
                self.queue.reopen(item)
                continue
            if attempt.cluster_changed:
                continue
            return False, True
        return False, False

    def _count(self, reason: str) -> None:
        self.reasons[reason] = self.reasons.get(reason, 0) + 1


def _unbound(*_: object) -> None:
    raise RuntimeError("SchedulingStage.bind() was not called")
