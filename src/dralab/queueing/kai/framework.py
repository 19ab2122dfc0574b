"""KAI's session framework: the snapshot's working copy, statements, and the result.

KAI opens a session on a snapshot, runs its actions in order (allocate, consolidation,
reclaim, preempt, stalegangeviction by default) and each action works through
*statements*: a statement places (Allocate), pipelines (onto resources still being
released) or evicts pods tentatively, and either commits them all or discards them all
(pkg/scheduler/framework: session.go, statement.go). Committing binds the allocated pods
(status Binding), records the pipelined ones (they stay Pipelined) and evicts the victims
(they stay Releasing on their node until they are gone).

``session.run_session`` opens a :class:`Session` and runs the actions on it
(``actions/``); this module holds what they share.

* :class:`SessionResult`: each task's outcome (status, node, GPU groups), the events in
  commit order (bind / pipeline / evict, with the action, the reason and the job a
  victim was evicted for), the queues' shares as the session ends, and for each job left
  with pending tasks KAI's unschedulable message.

The fair-share numbers come from ``proportion`` (divide_shares at session open, then
moved by every placement and eviction as the proportion plugin's event handlers do).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from dralab.api.resource import ResourceClaim
from dralab.queueing.kai import dra, proportion
from dralab.queueing.kai.model import KaiJob, KaiState, KaiTask, PodStatus
from dralab.queueing.kai.placement import ACTIVE_USED, NodeUsage
from dralab.queueing.kai.shares import Quantities, QueueShare

__all__ = [
    "ACTIVE_ALLOCATED",
    "ALIVE",
    "ALLOCATED",
    "POD_SCHEDULING_ERRORS",
    "KaiNodeOutcome",
    "Session",
    "SessionEvent",
    "SessionJob",
    "SessionResult",
    "SessionTask",
    "Statement",
    "TaskOutcome",
    "UnknownAction",
]

# pod_status.go status groups
ACTIVE_ALLOCATED: frozenset[PodStatus] = frozenset(
    {"Allocated", "Pipelined", "Binding", "Bound", "Running"})
ALIVE: frozenset[PodStatus] = frozenset(
    {"Allocated", "Pipelined", "Binding", "Bound", "Running", "Pending", "Gated"})
ALLOCATED: frozenset[PodStatus] = frozenset({"Allocated", "Bound", "Binding", "Running"})

EventKind = Literal["bind", "pipeline", "evict"]


class UnknownAction(ValueError):
    """An action name KAI does not have."""


# --- the session's working copy -----------------------------------------------------------

@dataclass(slots=True, eq=False)
class SessionTask:
    """A task as the session sees it: its spec and where it stands now. ``virtual``: its
    status was set inside a statement not yet committed (KAI's IsVirtualStatus)."""

    job: str
    spec: KaiTask
    status: PodStatus
    node: str | None
    groups: tuple[str, ...]
    index: int
    virtual: bool = False
    # AcceptedResource's GPUs: set when the pod is put on a node (and, as in KAI, kept
    # if the placement is undone)
    accepted_gpus: float = 0.0

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def key(self) -> tuple[str, str]:
        return (self.job, self.spec.name)

    @property
    def podset(self) -> str:
        return self.spec.subgroup or ""

    def should_allocate(self, real: bool) -> bool:
        """ShouldAllocate: pending, or (simulating) a victim evicted in this statement."""
        return self.status == "Pending" or (
            not real and self.status == "Releasing" and self.virtual)


@dataclass(slots=True, eq=False)
class SessionJob:
    """A pod group in the session: its spec, its pods and what KAI says about it."""

    spec: KaiJob
    pods: list[SessionTask]
    # KAI's job fit errors: (reason, detailed message)
    fit_errors: list[tuple[str, str]] = field(default_factory=list)
    task_errors: dict[str, list[str]] = field(default_factory=dict)
    started: bool = False
    # a partial job's pod-set minima (the solver's job representative); None: the spec's
    minima: dict[str, int] | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def queue(self) -> str:
        return self.spec.queue

    def podsets(self) -> dict[str, int]:
        """Pod sets (sub-groups holding pods) and their minAvailable; pods without a
        sub-group form the default set with the job's minMember."""
        if self.minima is not None:
            return dict(self.minima)
        sets: dict[str, int] = {}
        minima = {g.name: g.min_member for g in self.spec.subgroups}
        for pod in self.pods:
            name = pod.podset
            if name not in sets:
                sets[name] = minima.get(name, 0) if name else max(self.spec.min_member, 1)
        for group in self.spec.subgroups:
            if group.name in minima and group.name not in sets and not self._is_parent(
                    group.name):
                sets[group.name] = group.min_member
        return sets

    def _is_parent(self, name: str) -> bool:
        return any(g.parent == name for g in self.spec.subgroups)

    def pods_of(self, podset: str) -> list[SessionTask]:
        return [p for p in self.pods if p.podset == podset]

    def count(self, statuses: frozenset[PodStatus], podset: str | None = None) -> int:
        return sum(1 for p in self.pods
                   if p.status in statuses and (podset is None or p.podset == podset))

    def pending(self) -> list[SessionTask]:
        return [p for p in self.pods if p.status == "Pending"]

    def is_preemptible(self) -> bool:
        return self.spec.is_preemptible()

    def ready(self) -> bool:
        """IsReadyForScheduling: every pod set has at least minAvailable alive, ungated
        pods."""
        for podset, minimum in self.podsets().items():
            alive = sum(1 for p in self.pods_of(podset)
                        if p.status in ALIVE and p.status != "Gated")
            if alive < minimum:
                return False
        return True

    def gang_satisfied(self) -> bool:
        return all(self.count(ACTIVE_USED, s) >= m for s, m in self.podsets().items())

    def should_pipeline(self) -> bool:
        """ShouldPipelineJob: some pod set has a pipelined pod and fewer than minAvailable
        pods otherwise allocated -- then the whole job waits, pipelined."""
        for podset, minimum in self.podsets().items():
            pods = self.pods_of(podset)
            if any(p.status == "Pipelined" for p in pods):
                others = sum(1 for p in pods
                             if p.status in ACTIVE_ALLOCATED and p.status != "Pipelined")
                if others < minimum:
                    return True
        return False


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """A committed decision: ``bind`` (to ``node``), ``pipeline`` (to ``node``, waiting
    for releasing resources) or ``evict`` (from ``node``; ``for_job``: the preemptor,
    reclaimer or consolidated job)."""

    kind: EventKind
    action: str
    job: str
    task: str
    node: str | None
    gpu_groups: tuple[str, ...] = ()
    reason: str = ""
    for_job: str | None = None


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    job: str
    name: str
    status: PodStatus
    node: str | None
    gpu_groups: tuple[str, ...]
    accepted_gpus: float = 0.0


@dataclass(frozen=True, slots=True)
class KaiNodeOutcome:
    """A node's whole GPUs as the session ends (NodeInfo's Releasing and Idle)."""

    releasing_gpus: float
    idle_gpus: float


@dataclass(frozen=True, slots=True)
class SessionResult:
    tasks: tuple[TaskOutcome, ...]
    events: tuple[SessionEvent, ...]
    shares: Mapping[str, QueueShare]
    unschedulable: Mapping[str, str]
    started_jobs: frozenset[str] = frozenset()
    nodes: Mapping[str, KaiNodeOutcome] = field(default_factory=dict)
    # DRA claims ("namespace/name") as the session leaves them: reservations and
    # allocations of placed pods, released ones freed
    resource_claims: Mapping[str, ResourceClaim] = field(default_factory=dict)

    def task(self, job: str, name: str) -> TaskOutcome:
        for outcome in self.tasks:
            if outcome.job == job and outcome.name == name:
                return outcome
        raise KeyError(f"{job}/{name}")

    def of_job(self, job: str) -> list[TaskOutcome]:
        return [t for t in self.tasks if t.job == job]

    def count(self, kind: EventKind) -> int:
        return sum(1 for e in self.events if e.kind == kind)


# --- statements -------------------------------------------------------------------------

OpKind = Literal["allocate", "pipeline", "evict", "undo"]


@dataclass(slots=True, eq=False)
class _Op:
    kind: OpKind
    pod: SessionTask
    undo: list[Callable[[], None]]
    action: str = ""
    reason: str = ""
    for_job: str | None = None
    node: str | None = None
    valid: bool = True


class Statement:
    """Tentative placements and evictions, committed or discarded together
    (framework/statement.go). Checkpoints allow undoing part of it."""

    def __init__(self, session: Session, action: str) -> None:
        self.session = session
        self.action = action
        self.ops: list[_Op] = []

    # each mutation appends its inverse to ``undo``
    def _set(self, pod: SessionTask, undo: list[Callable[[], None]], *, status: PodStatus,
             node: str | None, groups: tuple[str, ...], virtual: bool) -> None:
        before = (pod.status, pod.node, pod.groups, pod.virtual)

        def restore() -> None:
            pod.status, pod.node, pod.groups, pod.virtual = before
        undo.append(restore)
        pod.status, pod.node, pod.groups, pod.virtual = status, node, groups, virtual

    def _node_put(self, node: str, pod: SessionTask, undo: list[Callable[[], None]]) -> None:
        usage = self.session.nodes[node]
        pod.accepted_gpus = usage.accepted_gpus(pod.spec)
        old = usage.pods.get(pod.key)
        old_spec = usage.specs.get(pod.key)
        usage.remove(pod.key)
        usage.add(pod.key, pod.spec, pod.status, pod.groups)

        def restore() -> None:
            usage.remove(pod.key)
            if old is not None and old_spec is not None:
                usage.add(pod.key, old_spec, old.status, old.groups)
        undo.append(restore)

    def _node_drop(self, node: str, pod: SessionTask, undo: list[Callable[[], None]]) -> None:
        usage = self.session.nodes[node]
        old = usage.pods.get(pod.key)
        old_spec = usage.specs.get(pod.key)
        if old is None or old_spec is None:
            return
        usage.remove(pod.key)

        def restore() -> None:
            usage.add(pod.key, old_spec, old.status, old.groups)
        undo.append(restore)

    def _share(self, pod: SessionTask, node: str, sign: float,
               undo: list[Callable[[], None]]) -> None:
        session = self.session
        job = session.jobs[pod.job].spec
        amounts = session.accepted(pod, node)
        move = proportion.allocate if sign > 0 else proportion.deallocate
        back = proportion.deallocate if sign > 0 else proportion.allocate
        move(session.shares, job, amounts)
        undo.append(lambda: back(session.shares, job, amounts))

    # --- operations ---------------------------------------------------------------------

    def allocate(self, pod: SessionTask, node: str, groups: tuple[str, ...] = ()) -> None:
        undo: list[Callable[[], None]] = []
        self._set(pod, undo, status="Allocated", node=node, groups=groups, virtual=True)
        self._node_put(node, pod, undo)
        self._share(pod, node, 1.0, undo)
        dra.on_place(self.session, pod, node, undo)
        self.ops.append(_Op("allocate", pod, undo, action=self.action, node=node))

    def pipeline(self, pod: SessionTask, node: str, groups: tuple[str, ...] = (),
                 update_if_on_node: bool = True, reason: str = "") -> None:
        usage = self.session.nodes[node]
        on_node = usage.pods.get(pod.key)
        moved_gpu = bool(on_node and groups and on_node.groups != groups)
        if on_node is not None and not update_if_on_node and not moved_gpu:
            # back where it was evicted from in this statement: undo the eviction
            self.unevict(pod)
            return
        undo: list[Callable[[], None]] = []
        self._set(pod, undo, status="Pipelined", node=node, groups=groups, virtual=True)
        self._node_put(node, pod, undo)
        self._share(pod, node, 1.0, undo)
        dra.on_place(self.session, pod, node, undo)
        self.ops.append(_Op("pipeline", pod, undo, action=self.action, node=node,
                            reason=reason))

    def evict(self, pod: SessionTask, reason: str = "", for_job: str | None = None) -> None:
        if pod.node is None:
            return
        op = _Op("evict", pod, [], action=self.action, node=pod.node, reason=reason,
                 for_job=for_job)
        self._evict(op)
        self.ops.append(op)

    def _evict(self, op: _Op) -> None:
        pod, node = op.pod, op.node or ""
        undo: list[Callable[[], None]] = []
        self._set(pod, undo, status="Releasing", node=node, groups=pod.groups, virtual=True)
        self._node_put(node, pod, undo)
        self._share(pod, node, -1.0, undo)
        dra.on_release(self.session, pod, undo)
        op.undo = undo
        op.valid = True

    def unevict(self, pod: SessionTask) -> None:
        """Undo the earliest eviction of ``pod`` still in force; the undo is itself an
        operation, so rolling back past it evicts the pod again (statement.go)."""
        for op in self.ops:
            if op.kind == "evict" and op.pod is pod and op.valid:
                for restore in reversed(op.undo):
                    restore()
                op.valid = False
                self.ops.append(_Op("undo", pod, [functools.partial(self._evict, op)]))
                return

    def convert_allocated_to_pipelined(self, job: str) -> None:
        """ConvertAllAllocatedToPipelined: the job waits whole -- its pods allocated in
        this statement become pipelined on the same nodes."""
        mine = [op for op in self.ops if op.kind == "allocate" and op.pod.job == job]
        for op in mine:
            node, groups = op.node, op.pod.groups
            for restore in reversed(op.undo):
                restore()
            self.ops.remove(op)
            if node is not None:
                self.pipeline(op.pod, node, groups)

    def checkpoint(self) -> int:
        return len(self.ops)

    def rollback(self, checkpoint: int) -> None:
        while len(self.ops) > checkpoint:
            op = self.ops.pop()
            if not op.valid:
                continue
            for restore in reversed(op.undo):
                restore()

    def discard(self) -> None:
        self.rollback(0)

    def evicted(self) -> list[SessionTask]:
        return [op.pod for op in self.ops if op.kind == "evict" and op.valid]

    def commit(self) -> None:
        session = self.session
        for op in self.ops:
            pod = op.pod
            if not op.valid or op.kind == "undo":
                continue
            if op.kind == "allocate":
                usage = session.nodes[op.node or ""]
                pod.status = "Binding"
                pod.virtual = False
                usage.remove(pod.key)
                usage.add(pod.key, pod.spec, pod.status, pod.groups)
                session.events.append(SessionEvent(
                    "bind", op.action, pod.job, pod.name, op.node, pod.groups))
            elif op.kind == "pipeline":
                session.events.append(SessionEvent(
                    "pipeline", op.action, pod.job, pod.name, op.node, pod.groups,
                    reason=op.reason))
            else:
                pod.virtual = False
                session.events.append(SessionEvent(
                    "evict", op.action, pod.job, pod.name, op.node, pod.groups,
                    reason=op.reason, for_job=op.for_job))
        self.ops = []


# --- the session ---------------------------------------------------------------------------

class Session:
    """The working copy of a snapshot that actions read and change."""

    def __init__(self, state: KaiState) -> None:
        self.state = state
        self.config = state.config
        self.nodes: dict[str, NodeUsage] = {
            name: NodeUsage.of(state.nodes[name]) for name in sorted(state.nodes)}
        self.jobs: dict[str, SessionJob] = {}
        for name in sorted(state.jobs):
            spec = state.jobs[name]
            pods = [SessionTask(spec.name, task, task.status, task.node, tuple(task.gpu_groups), i)
                    for i, task in enumerate(spec.tasks)]
            self.jobs[name] = SessionJob(spec, pods)
            for pod in pods:
                if pod.node in self.nodes and pod.status in ACTIVE_USED:
                    usage = self.nodes[pod.node]
                    usage.add(pod.key, pod.spec, pod.status, pod.groups)
                    pod.accepted_gpus = usage.accepted_gpus(pod.spec)
        self.shares: dict[str, QueueShare] = proportion.divide_shares(state)
        self.total: Quantities = proportion.cluster_total(
            state.nodes[n] for n in sorted(state.nodes))
        self.events: list[SessionEvent] = []
        # what plugins keep for the session (the topology trees, node scores)
        self.plugin_state: dict[str, object] = {}
        self._groups = itertools.count(1)
        self._accepted: dict[tuple[int, str], dict[str, float]] = {}
        self._given_groups = {g for job in self.jobs.values() for p in job.pods
                              for g in p.groups}

    def statement(self, action: str) -> Statement:
        return Statement(self, action)

    def new_gpu_group(self) -> str:
        """A fresh GPU group name (KAI draws a UUID; here a counter, deterministic)."""
        while True:
            name = f"kai-gpu-group-{next(self._groups)}"
            if name not in self._given_groups:
                return name

    def accepted(self, pod: SessionTask, node: str) -> dict[str, float]:
        """What the pod holds on ``node`` in its queue (AcceptedResource)."""
        key = (id(pod.spec), node)
        cached = self._accepted.get(key)
        if cached is None:
            cached = dict(proportion.task_accepted(pod.spec, self.state.nodes.get(node)))
            self._accepted[key] = cached
        return cached

    def requested(self, pods: Iterable[SessionTask]) -> dict[str, float]:
        total = {"cpu": 0.0, "memory": 0.0, "gpu": 0.0}
        for pod in pods:
            for resource, value in proportion.task_requested(pod.spec).items():
                total[resource] += value
        return total

    def queue_children(self) -> dict[str | None, list[str]]:
        """Each queue's children by name (None: the top queues)."""
        cached = self.plugin_state.get("queue_children")
        if isinstance(cached, dict):
            return cached
        children: dict[str | None, list[str]] = {}
        for name in sorted(self.state.queues):
            children.setdefault(self.state.queues[name].parent or None, []).append(name)
        self.plugin_state["queue_children"] = children
        return children

    def is_leaf(self, queue: str) -> bool:
        return not self.queue_children().get(queue)

    def result(self) -> SessionResult:
        tasks = tuple(TaskOutcome(p.job, p.name, p.status, p.node, p.groups, p.accepted_gpus)
                      for job in self.jobs.values() for p in job.pods)
        unschedulable = {name: message for name, job in self.jobs.items()
                         if job.pending() and (message := _message(job))}
        started = frozenset(name for name, job in self.jobs.items() if job.started)
        nodes = {name: KaiNodeOutcome(usage.releasing("gpu"), usage.idle("gpu"))
                 for name, usage in self.nodes.items()}
        return SessionResult(tasks, tuple(self.events), self.shares, unschedulable, started,
                             nodes, dra.final_claims(self))


POD_SCHEDULING_ERRORS = "PodSchedulingErrors"
_DEFAULT_REASON = "Unable to schedule podgroup"


def _message(job: SessionJob) -> str:
    """JobFitErrorsToDetailedMessage: the reason (the one error's, else KAI's default)
    then every error's message on its own line, sorted."""
    if not job.fit_errors:
        return ""
    reason = job.fit_errors[0][0] if len(job.fit_errors) == 1 else _DEFAULT_REASON
    lines = sorted(f"\n{message}." for _, message in job.fit_errors)
    return "\n" + reason + "." + "".join(lines)
