"""The scheduling loop: one queue, one cycle per pod, preemption, waiting pods.

One ``Scheduler`` serves ``dralab schedule``, ``dralab explain`` and the
simulator. Pods enter with ``add_pod`` (PreEnqueue decides: the queue, or held
back until a hint re-checks them); ``schedule_pending()`` takes pods from the
queue (``queue``: activeQ in QueueSort order, backoffQ, unschedulable pods)
and runs kube-scheduler's scheduleOne for each (``cycle``). A pod that does
not fit waits with the plugins that rejected it; the cluster events that
follow (the store's typed events, read from ``cluster.events``) move it back
when one of those plugins' queueing hints says the event may help
(``hints``): a preemptor after its victims are gone, a DRA pod after a claim
was deallocated. Permit ``Wait`` leaves a pod waiting on its node
(``waiting``) until allowed, rejected or timed out.

Time is the caller's: the simulator passes its clock; a run to completion
(``run``) uses a clock that stands still except to reach the next Permit
timeout. No I/O, no wall clock: the same inputs and seed give the same result.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from dralab.api.core import Pod, PodCondition
from dralab.api.features import Gate
from dralab.cluster import (
    ClusterState,
    PodInfo,
    delete_gracefully,
    observed_generation,
    update_condition,
)
from dralab.cluster import events as cluster_events
from dralab.cluster.events import ClaimChanged, ClusterEvent
from dralab.controllers.podgroups import GroupIndex, group_key
from dralab.controllers.resourceclaims import delete_pod, ensure_pod_claims

from .cycle import DEFAULT_SCHEDULER_NAME, Attempt, Cycle
from .framework import Registry
from .hints import EnqueueExtensions, EventHint, HintFn
from .plugins.dynamicresources.plugin import NAME as DYNAMIC_RESOURCES
from .plugins.gangscheduling import NAME as GANG_SCHEDULING
from .plugins.gangscheduling import group_unplaceable
from .queue import INITIAL_BACKOFF, MAX_BACKOFF, QueuedPod, SchedulingQueue
from .result import (
    REASON_NO_PROFILE,
    REASON_NOT_READY,
    REASON_SCHEDULER_ERROR,
    REASON_SCHEDULING_GATED,
    REASON_UNSCHEDULABLE,
    Evicted,
    Placement,
    ScheduleResult,
    Unplaced,
)
from .runtime import Framework
from .unmodelled import unmodelled_field_warnings
from .waiting import WaitingPod, WaitingPods

__all__ = ["MAX_ATTEMPTS", "Scheduler", "StillClock"]

SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
SCHEDULING_GATES = "SchedulingGates"  # the plugin whose rejection is a scheduling gate
# A pod is tried at most this often in one ``schedule_pending``; hints make retries
# finite, so this is only a backstop.
MAX_ATTEMPTS = 64
# Rejections with no plugin named (no nodes at all): any event may help.
_ANY = ""


@dataclass(frozen=True, slots=True)
class _ForkMark:
    """What ``Scheduler.fork`` saves besides the store's own fork."""

    rng_state: tuple[Any, ...]
    start_index: int


class StillClock:
    """A clock for runs to completion: it stands still unless advanced."""

    __slots__ = ("now",)

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Scheduler:
    """Schedules the pods of one ClusterState with one or more profiles.

    ``frameworks`` maps schedulerName to its Framework; all share the cluster and
    ``rng`` (the run's only randomness). ``observe`` is called after every cycle,
    before its outcome is applied (victims are still on their nodes). ``clock``
    gives the time in seconds (default: a ``StillClock``). Callbacks for a caller
    that follows pods (the simulator): ``on_placed(pod, node)``,
    ``on_failed(pod, attempt)``, ``on_evicted(victim, preemptor)``. ``backoff``:
    (podInitialBackoffSeconds, podMaxBackoffSeconds) of the scheduling queue.
    Use ``Scheduler.build`` or ``dralab.scheduler.schedule`` to construct from a config.
    """

    def __init__(self, cluster: ClusterState, frameworks: Mapping[str, Framework],
                 rng: random.Random, percentage_of_nodes_to_score: int | None = None,
                 observe: Callable[[Attempt], None] | None = None,
                 clock: Callable[[], float] | None = None,
                 backoff: tuple[float, float] = (INITIAL_BACKOFF, MAX_BACKOFF)) -> None:
        if not frameworks:
            raise ValueError("at least one profile is needed")
        first = next(iter(frameworks.values()))
        if first.queue_sort is None:
            raise ValueError(f"profile {first.profile_name!r} has no QueueSort plugin")
        self.cluster = cluster
        self.frameworks = dict(frameworks)
        self.cycle = Cycle(cluster, rng, percentage_of_nodes_to_score)
        self.waiting = WaitingPods()
        for framework in self.frameworks.values():
            framework.nominated = self.cycle.nominated
            framework.waiting_pods = self.waiting
        self.observe = observe
        self.clock: Callable[[], float] = clock if clock is not None else StillClock()
        # What the run writes into objects is stamped with the snapshot's moment plus
        # this clock's seconds.
        cluster.clock.elapsed = self.clock
        self.queue = SchedulingQueue(first.queue_sort, *backoff)
        self.on_placed: Callable[[PodInfo, str], None] | None = None
        self.on_failed: Callable[[PodInfo, Attempt], None] | None = None
        self.on_evicted: Callable[[PodInfo, PodInfo], None] | None = None
        self.warnings: tuple[str, ...] = ()
        self.cycles = 0           # scheduling cycles run
        self.parked = 0           # pods parked with their waiting class, no cycle
        self._hints = _registrations(self.frameworks.values())
        self._cursor = cluster.events.end
        self._waiting_queued: dict[str, QueuedPod] = {}
        self._evicted: dict[str, PodInfo] = {}
        self._placed: list[Placement] = []
        self._failures: dict[str, Attempt] = {}
        self._class_failure: dict[Hashable, Attempt] = {}
        self._evictions: list[Evicted] = []
        self._no_profile: list[PodInfo] = []
        self._forks: list[_ForkMark] = []
        self._groups = GroupIndex(cluster)

    @classmethod
    def build(cls, cluster: ClusterState, config: object | None = None, seed: int = 0,
              observe: Callable[[Attempt], None] | None = None,
              registry: Registry | None = None,
              clock: Callable[[], float] | None = None) -> Scheduler:
        """Frameworks from ``config``: a ``SchedulerConfig``, a mapping shaped like
        KubeSchedulerConfiguration, or None for the default profile. ConfigError if
        the configuration is invalid."""
        from .profile import SchedulerConfig, build_frameworks, parse_config

        if config is None or isinstance(config, Mapping):
            config = parse_config(config)
        if not isinstance(config, SchedulerConfig):
            raise TypeError(f"expected SchedulerConfig or mapping, got {type(config).__name__}")
        rng = random.Random(seed)
        warnings: list[str] = []
        frameworks = build_frameworks(config, cluster, rng, registry, warnings)
        scheduler = cls(cluster, frameworks, rng, config.percentage_of_nodes_to_score, observe,
                        clock, (float(config.pod_initial_backoff_seconds),
                                float(config.pod_max_backoff_seconds)))
        scheduler.warnings = tuple(warnings)
        return scheduler

    def framework_for(self, pod: PodInfo) -> Framework | None:
        return self.frameworks.get(pod.pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME)

    def now(self) -> float:
        return self.clock()

    # --- pods in and out ----------------------------------------------------------------
    def add_pod(self, pod: Pod, equivalence: Hashable | None = None) -> PodInfo:
        """Create ``pod`` in the store and queue it (PreEnqueue permitting)."""
        info = self.cluster.add_pod(pod)
        if not info.assumed_node and not pod.spec.node_name:
            self.enqueue(info, equivalence)
        return info

    def enqueue(self, info: PodInfo, equivalence: Hashable | None = None) -> None:
        """Queue a pending pod already in the store. ``equivalence``: pods with one key
        are interchangeable for scheduling (see ``queue``)."""
        framework = self.framework_for(info)
        if framework is None:
            self._no_profile.append(info)
            return
        status = framework.run_pre_enqueue(info)
        if status.is_success():
            self.queue.add(info, equivalence)
        else:
            self.queue.hold(info, status, equivalence)

    def update_pod(self, info: PodInfo, pod: Pod) -> None:
        """Replace the pod's object (the event re-checks it if it was held back)."""
        self.cluster.update_pod(info, pod)

    def delete_pod(self, key: str) -> PodInfo | None:
        """Delete a pod (finished, evicted, its node gone): its claims are released,
        it leaves the queue and any wait, and preemption forgets its nomination."""
        waiting = self.waiting.remove(key)
        if waiting is not None:
            waiting.framework.run_unreserve(waiting.state, waiting.pod, waiting.node)
            self._waiting_queued.pop(key, None)
        info = delete_pod(self.cluster, key)
        self.queue.forget(key)
        if info is not None:
            self.cycle.set_nomination(info, None)
        return info

    # --- the loop -----------------------------------------------------------------------
    def schedule_pending(self) -> int:
        """Try every pod the queue offers now, until activeQ and backoffQ are empty;
        returns the number of cycles run."""
        before = self.cycles
        now = self.now()
        self._drain_events()
        self.queue.flush_leftover(now)
        self._settle_waiting(now)
        tries: dict[str, int] = {}
        queue = self.queue
        while (queued := queue.pop(now)) is not None:
            if queued.equivalence is not None and queue.class_waiting(queued.equivalence):
                queue.park(queued, now)
                self.parked += 1
                continue
            count = tries.get(queued.key, 0) + 1
            if count > MAX_ATTEMPTS:
                queue.park(queued, now)
                continue
            tries[queued.key] = count
            self._attempt(queued, now)
            group = group_key(self.cluster, queued.info.pod)
            if group is not None:
                self._pod_group_cycle(group, now, tries)
            if len(self.waiting):
                self._settle_waiting(now)
        return self.cycles - before

    def _pod_group_cycle(self, group: str, now: float, tries: dict[str, int]) -> None:
        """The rest of a PodGroup's cycle, after its first pod: the group's other queued
        pods are tried at once, in queue order, before any member binds. If the gang
        (GangScheduling in the profile) still lacks ``minCount`` placed members then,
        the waiting members are rejected with upstream's message and let go of their
        nodes: a PodGroup is placed as one unit or not at all."""
        cluster = self.cluster
        pods = self._groups.members(group)
        for member in self.queue.take(info.key for info in pods):
            tries[member.key] = tries.get(member.key, 0) + 1
            self._attempt(member, now)
        pod_group = cluster.pod_groups.get(group)
        count = pod_group.min_count if pod_group is not None else None
        if count is None:
            return
        members = [w for info in pods
                   if (w := self.waiting.get(info.key)) is not None and w.rejected is None]
        if not members or GANG_SCHEDULING not in members[0].framework.plugins:
            return
        bound = sum(1 for info in pods if info.pod.spec.node_name)
        scheduled = bound + len(members)
        if scheduled >= count:
            return
        for waiting in members:
            waiting.reject(GANG_SCHEDULING, group_unplaceable(count, scheduled))

    def next_wakeup(self) -> float:
        """When the loop has something to do without any new event: a Permit timeout,
        an error back-off running out, the five-minute flush. +inf: never."""
        now = self.now()
        deadline = self.waiting.next_deadline()
        times = [self.queue.next_wakeup(now)]
        if deadline is not None:
            times.append(max(deadline, now))
        return min(times)

    def run(self, pending: Iterable[PodInfo] | None = None) -> ScheduleResult:
        """Schedule ``pending`` (default: every pod without spec.nodeName that is not
        waiting at Permit) to completion:
        until no pod is left to try and no Permit wait is open."""
        if pending is None:
            # Assumed but unbound pods wait at Permit: they hold a node already.
            pending = [p for p in self.cluster.pending_pods() if p.assumed_node is None]
        pending = sorted(pending, key=lambda p: p.sequence)
        self.warnings = (*self.warnings, *unmodelled_field_warnings(p.pod for p in pending))
        for info in pending:
            self.enqueue(info)
        self.schedule_pending()
        clock = self.clock
        while isinstance(clock, StillClock) and (deadline := self.waiting.next_deadline()) \
                is not None:
            clock.now = max(clock.now, deadline)
            self.schedule_pending()
        return self._result()

    def _attempt(self, queued: QueuedPod, now: float) -> None:
        pod = queued.info
        framework = self.frameworks[pod.pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME]
        pod.attempts += 1
        self.cycles += 1
        events = self.cluster.events
        start = events.end
        attempt = self.cycle.schedule_one(framework, pod)
        # Nobody waits for an event: what the cycle changed is news to no one. Nor is
        # a cycle inside a what-if (see ``_drain_events``).
        during: Sequence[ClusterEvent] = ()
        if not self._forks:
            during = (events.since(start) or []) if self.queue.has_waiting() else ()
            self._cursor = events.end
        if self.observe is not None:
            self.observe(attempt)
        if attempt.node is not None and attempt.waiting:
            assert attempt.state is not None
            self.waiting.add(WaitingPod(pod, attempt.node, framework, attempt.state,
                                        {p: now + t for p, t in attempt.waiting.items()}, now))
            self._waiting_queued[pod.key] = queued
        elif attempt.node is not None:
            self._placed_pod(queued, attempt.node)
        else:
            self._failed_pod(queued, attempt, framework, now)
        # What the cycle changed besides the pod itself (its own assumption and claims
        # are not news to it) may move other waiting pods, as in-flight events do.
        for event in during:
            if getattr(event, "key", None) != pod.key and not isinstance(event, ClaimChanged):
                self._dispatch(event, now)
        self._drain_events()

    def _placed_pod(self, queued: QueuedPod, node: str) -> None:
        pod = queued.info
        self._failures.pop(pod.key, None)
        self.cycle.set_nomination(pod, None)
        self._placed.append(Placement(pod.pod, node, pod.attempts))
        self.queue.done(queued)
        if self.on_placed is not None:
            self.on_placed(pod, node)

    def _failed_pod(self, queued: QueuedPod, attempt: Attempt, framework: Framework,
                    now: float) -> None:
        pod = queued.info
        self._failures[pod.key] = attempt
        if queued.equivalence is not None:
            self._class_failure[queued.equivalence] = attempt
        self._record_failure(pod, attempt)
        rejectors = frozenset(attempt.diagnosis.unschedulable_plugins) \
            if attempt.diagnosis is not None else frozenset()
        if not rejectors and attempt.error is None:
            rejectors = frozenset({_ANY})
        # A nominated pod holds room on its node: it must be the one that is retried.
        self.queue.failed(queued, rejectors, attempt.error is not None, now,
                          retry=attempt.cluster_changed,
                          alone=bool(pod.pod.status.nominated_node_name))
        if self.on_failed is not None:
            self.on_failed(pod, attempt)
        for key in attempt.victims:
            evicted = self._evict(key, pod, framework)
            if evicted is not None:
                self._evictions.append(evicted)

    def _settle_waiting(self, now: float) -> None:
        """Bind the waiting pods every plugin allowed; fail the rejected and timed out.
        Repeated until nothing changes: failing one pod may reject others (a gang's
        Unreserve rejects the rest of the gang)."""
        if not len(self.waiting):
            return
        self.waiting.expire(now)
        settled = True
        while settled:
            settled = False
            for waiting in self.waiting:
                if waiting.rejected is None and not waiting.ready():
                    continue
                if self.waiting.get(waiting.key) is not waiting:
                    continue  # settled meanwhile (deleted by a plugin's doing)
                settled = True
                self.waiting.remove(waiting.key)
                queued = self._waiting_queued.pop(waiting.key)
                attempt = Attempt(waiting.pod, waiting.framework, node=waiting.node)
                status = waiting.rejected or self.cycle.bind(
                    waiting.framework, waiting.state, waiting.pod, waiting.node)
                if status.is_success():
                    self._placed_pod(queued, waiting.node)
                    continue
                self.cycle.unreserve(waiting.framework, waiting.state, waiting.pod,
                                     waiting.node, status, attempt)
                self._failed_pod(queued, attempt, waiting.framework, now)
        self._drain_events()

    # --- what-ifs -----------------------------------------------------------------------
    def fork(self) -> None:
        """Open a what-if on the cluster (``ClusterState.fork``) that also covers what
        a cycle changes outside the store: the run's RNG (host ties, generated names)
        and the rotating start index of the node search. Forks nest; close each with
        ``revert`` or ``commit``. Pending cluster events are dispatched first, so the
        loop's view of the past is settled before the what-if begins; events made
        inside a what-if reach the queue only once the outermost fork is committed
        (a revert drops them)."""
        self._drain_events()
        self._forks.append(_ForkMark(self.cycle.rng.getstate(),
                                     self.cycle.next_start_node_index))
        self.cluster.fork()

    def revert(self) -> None:
        """Undo everything since the matching ``fork``: the store, the RNG and the start
        index are as they were, so the run continues as if nothing had been tried.
        The events of the what-if and of its undoing cancel out; the loop skips them
        (it had dispatched everything before the fork)."""
        if not self._forks:
            raise RuntimeError("revert() without fork()")
        mark = self._forks.pop()
        self.cluster.revert()
        self.cycle.rng.setstate(mark.rng_state)
        self.cycle.next_start_node_index = mark.start_index
        if not self._forks:
            self._cursor = self.cluster.events.end

    def commit(self) -> None:
        """Keep everything since the matching ``fork``; its events reach the waiting
        pods' queueing hints as any other change does."""
        if not self._forks:
            raise RuntimeError("commit() without fork()")
        self._forks.pop()
        self.cluster.commit()

    # --- cluster events -----------------------------------------------------------------
    def _drain_events(self) -> None:
        """Dispatch the store's events since the last call to the waiting pods' hints.
        Not while a what-if is open: its changes are hypothetical, and waiting pods
        moved by them would stay moved after the revert (the queue is not part of
        the what-if), so how much a what-if tried would change what the run does."""
        if self._forks:
            return
        events = self.cluster.events
        if self._cursor == events.end:
            return
        if not self.queue.has_waiting():
            self._cursor = events.end
            return
        batch = events.since(self._cursor)
        self._cursor = events.end
        now = self.now()
        if batch is None:  # fell behind the log: anything may have changed
            for plugin in list(self.queue.plugins()):
                for ident in self.queue.units_rejected_by(plugin):
                    self._move_unit(ident, now)
            return
        for event in batch:
            self._dispatch(event, now)

    def _dispatch(self, event: ClusterEvent, now: float) -> None:
        queue = self.queue
        for plugin, hint in self._hints.get(type(event), ()):
            idents = queue.units_rejected_by(plugin)
            if not idents:
                continue
            answer = hint(event, self.cluster)
            if answer is False:
                continue
            if isinstance(answer, frozenset):
                for key in sorted(answer):
                    if queue.unit_of(key) in idents:
                        self._requeue(queue.move_pod(key, now))
                continue
            # Sorted: a held-back pod's PreEnqueue may draw from the run's RNG.
            for ident in sorted(idents, key=repr):
                if answer is not True:
                    head = queue.unit_head(ident)
                    if head is None or not answer(head):
                        continue
                self._move_unit(ident, now)

    def _move_unit(self, ident: Hashable, now: float) -> None:
        self._requeue(self.queue.move_unit(ident, now))

    def _requeue(self, gated: QueuedPod | None) -> None:
        """A held-back pod whose gating plugin's hint fired: PreEnqueue again."""
        if gated is not None:
            self.enqueue(gated.info, gated.equivalence)

    # --- failures and evictions ---------------------------------------------------------
    def _record_failure(self, pod: PodInfo, attempt: Attempt) -> None:
        """PodScheduled=False with the message and the pod's generation (v1.36.2
        schedule_one.go handleSchedulingFailure), and nominatedNodeName as PostFilter
        said."""
        generation = observed_generation(pod.pod)
        if attempt.error is not None:
            condition = PodCondition(type="PodScheduled", status="False",
                                     reason=REASON_SCHEDULER_ERROR, message=attempt.error.message,
                                     observed_generation=generation)
        else:
            assert attempt.diagnosis is not None
            condition = PodCondition(type="PodScheduled", status="False",
                                     reason=REASON_UNSCHEDULABLE,
                                     message=attempt.diagnosis.message(),
                                     observed_generation=generation)
        updated = update_condition(pod.pod, condition, self.cluster.clock.now())
        if attempt.clear_nomination or attempt.nominated:
            updated = msgspec.structs.replace(updated, status=msgspec.structs.replace(
                updated.status, nominated_node_name=attempt.nominated))
            self.cycle.set_nomination(pod, attempt.nominated)
        self.cluster.update_pod(pod, updated)

    def _evict(self, key: str, preemptor: PodInfo, framework: Framework) -> Evicted | None:
        info = self.delete_pod(key)
        if info is None:
            return None
        node = info.assumed_node or info.pod.spec.node_name or ""
        # v1.36.2 preemption/executor.go: the condition is patched, then the pod is
        # deleted (gracefully: it stays, terminating, until its kubelet is done).
        clock = self.cluster.clock
        info.pod = delete_gracefully(update_condition(info.pod, PodCondition(
            type="DisruptionTarget", status="True", reason="PreemptionByScheduler",
            message=f"{framework.profile_name}: preempting to accommodate a higher "
                    "priority pod", observed_generation=observed_generation(info.pod)),
            clock.now()), clock.seconds())
        self._evicted[key] = info
        if self.on_evicted is not None:
            self.on_evicted(info, preemptor)
        return Evicted(info.pod, node, preemptor.key)

    # --- the result ---------------------------------------------------------------------
    def _claims_of_waiting_pods(self) -> None:
        """The resourceclaim controller creates a pod's claims from templates whatever
        the scheduler thinks of the pod (v1.36.2 pkg/controller/resourceclaim,
        syncPod): pods kept out of the queue before DynamicResources' PreEnqueue ran
        (scheduling gates) and pods of no profile get theirs too."""
        held = [info for info, status in self.queue.gated.values()
                if status.plugin != DYNAMIC_RESOURCES]
        for info in sorted([*held, *self._no_profile], key=lambda p: p.sequence):
            if self.cluster.pods.get(info.key) is info:
                ensure_pod_claims(self.cluster, info, self.cycle.rng)

    def _result(self) -> ScheduleResult:
        self._claims_of_waiting_pods()
        left: list[tuple[int, Unplaced]] = []
        for pod, status in self.queue.gated.values():
            # Only spec.schedulingGates get the API server's SchedulingGated wording;
            # any other PreEnqueue rejection is reported with the plugin's message.
            # The API server wrote SchedulingGated when the pod was created; the other
            # condition is written only with SchedulerPreEnqueuePodStatus (KEP-5501),
            # off by default: kube-scheduler 1.36 leaves such a pod without one.
            if status.plugin == SCHEDULING_GATES:
                reason, message = REASON_SCHEDULING_GATED, SCHEDULING_GATED_MESSAGE
            else:
                reason, message = REASON_NOT_READY, status.message
            gated = pod.pod
            if reason == REASON_SCHEDULING_GATED or self.cluster.features.is_enabled(
                    Gate.SCHEDULER_PRE_ENQUEUE_POD_STATUS):
                gated = update_condition(gated, PodCondition(
                    type="PodScheduled", status="False", reason=reason, message=message),
                    self.cluster.clock.now())
                self.cluster.update_pod(pod, gated)
            left.append((pod.sequence, Unplaced(gated, reason, status.message, 0)))
        for pod in self._no_profile:
            name = pod.pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME
            left.append((pod.sequence, Unplaced(
                pod.pod, REASON_NO_PROFILE, f"no profile for scheduler name {name!r}", 0)))
        for pod in self.queue.pending():
            attempt = self._failures.get(pod.key)
            if attempt is None:
                queued = self.queue.pods.get(pod.key)
                if queued is not None and queued.equivalence is not None:
                    attempt = self._class_failure.get(queued.equivalence)
            if attempt is None:
                continue
            if attempt.error is not None:
                left.append((pod.sequence, Unplaced(
                    pod.pod, REASON_SCHEDULER_ERROR, attempt.error.message, pod.attempts)))
                continue
            diagnosis = attempt.diagnosis
            assert diagnosis is not None
            left.append((pod.sequence, Unplaced(
                pod.pod, REASON_UNSCHEDULABLE, diagnosis.message(), pod.attempts,
                dict(diagnosis.statuses.explicit), diagnosis.statuses.absent,
                pod.pod.status.nominated_node_name)))
        left.sort(key=lambda item: item[0])
        everything = sorted([*self.cluster.pods.values(), *self._evicted.values()],
                            key=lambda p: p.sequence)
        return ScheduleResult(tuple(self._placed), tuple(u for _, u in left),
                              tuple(self._evictions), tuple(p.pod for p in everything),
                              self.cluster, self.warnings)


def _registrations(frameworks: Iterable[Framework]
                   ) -> dict[type, list[tuple[str, HintFn]]]:
    """Event type -> (plugin, hint) for every plugin of every profile that declares
    hints (the first profile's instance answers for a plugin name); plus the catch-all
    for rejections that name no plugin."""
    out: dict[type, list[tuple[str, HintFn]]] = {}
    seen: set[tuple[str, type]] = set()
    for framework in frameworks:
        for name, plugin in framework.plugins.items():
            if not isinstance(plugin, EnqueueExtensions):
                continue
            hints: Sequence[EventHint] = plugin.events_to_register()
            for hint in hints:
                for event_type in hint.events:
                    if (name, event_type) in seen:
                        continue
                    seen.add((name, event_type))
                    out.setdefault(event_type, []).append((name, hint.hint))
    for event_type in _EVENT_TYPES:
        out.setdefault(event_type, []).append((_ANY, _queue_any))
    return out


def _queue_any(event: ClusterEvent, cluster: ClusterState) -> bool:
    return True


# What may help a pod whose rejection named no plugin: every change of capacity, not
# the comings and goings of pending pods (their status writes would wake it forever).
_EVENT_TYPES: tuple[type, ...] = (
    cluster_events.NodeAdded, cluster_events.NodeUpdated, cluster_events.NodeRemoved,
    cluster_events.SlicesChanged, cluster_events.PodRemoved, cluster_events.PodForgotten,
    cluster_events.ClaimChanged, cluster_events.ClassChanged, cluster_events.TemplateChanged,
    cluster_events.PriorityClassChanged, cluster_events.TaintRulesChanged,
)
