"""What a scheduling run returns: placed pods, unplaced pods with their diagnosis,
evicted victims, and the final cluster state. All immutable except ``cluster``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from dralab.api.core import Pod
from dralab.api.resource import ResourceClaim
from dralab.cluster import ClusterState

from .framework import Status

__all__ = [
    "REASON_NOT_READY",
    "REASON_NO_PROFILE",
    "REASON_SCHEDULER_ERROR",
    "REASON_SCHEDULING_GATED",
    "REASON_UNSCHEDULABLE",
    "Evicted",
    "Placement",
    "ScheduleResult",
    "Unplaced",
]

REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULING_GATED = "SchedulingGated"
# KEP-5501 (SchedulerPreEnqueuePodStatus): a PreEnqueue plugin other than
# SchedulingGates kept the pod out of the queue; the message is the plugin's.
REASON_NOT_READY = "NotReadyForScheduling"
REASON_SCHEDULER_ERROR = "SchedulerError"
REASON_NO_PROFILE = "NoProfile"  # ours: kube-scheduler would just never look at the pod

_EMPTY: Mapping[str, Status] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Placement:
    """A pod bound to ``node`` after ``attempts`` scheduling cycles."""

    pod: Pod
    node: str
    attempts: int


@dataclass(frozen=True, slots=True)
class Unplaced:
    """A pod left pending. ``statuses`` maps each rejecting node to its Status (the
    first failing plugin); nodes absent from it share ``absent`` (e.g. excluded by a
    PreFilter result). ``nominated_node`` is set when preemption made room that the
    pod then could not use."""

    pod: Pod
    reason: str
    message: str
    attempts: int
    statuses: Mapping[str, Status] = field(default_factory=lambda: _EMPTY)
    absent: Status | None = None
    nominated_node: str | None = None


@dataclass(frozen=True, slots=True)
class Evicted:
    """A preemption victim: deleted from ``node`` to make room for ``preemptor``."""

    pod: Pod
    node: str
    preemptor: str


@dataclass(frozen=True, slots=True)
class ScheduleResult:
    """The outcome of ``Scheduler.run``. ``pods`` is every pod of the run in arrival
    order, in its final form, as the API server would hold it without kubelets:
    created pods with phase Pending and their qosClass; bound with PodScheduled=True,
    pending with PodScheduled=False (reason, message, observedGeneration), evicted
    with DisruptionTarget and a graceful deletion's deletionTimestamp. Times are the
    cluster's clock (``ClusterState.clock``)."""

    placed: tuple[Placement, ...]
    unplaced: tuple[Unplaced, ...]
    evicted: tuple[Evicted, ...]
    pods: tuple[Pod, ...]
    cluster: ClusterState = field(repr=False, compare=False)
    warnings: tuple[str, ...] = ()

    @property
    def all_placed(self) -> bool:
        """Every pending pod got a node and nothing was evicted."""
        return not self.unplaced and not self.evicted

    @property
    def claims(self) -> tuple[ResourceClaim, ...]:
        """Every ResourceClaim of the final cluster (input, generated and shared)."""
        return tuple(self.cluster.claims.values())

    def objects(self) -> list[Pod | ResourceClaim]:
        """Pods then claims: what ``dralab schedule`` prints."""
        return [*self.pods, *self.claims]
