"""Waiting pods: Permit said ``Wait``; the pod holds its node until allowed, rejected
or timed out.

As in kube-scheduler, a Permit plugin may answer ``Wait`` with a timeout (at most
15 minutes). The pod stays assumed on its node with its Reserve done, so other
pods see the room as taken. Any plugin (a gang plugin, typically) can then
``allow`` it for one waiting plugin, or ``reject`` it; once every waiting plugin
has allowed, the binding cycle (PreBind, Bind) runs. When the timeout passes
first, the pod is rejected with upstream's message and goes back to the queue.
Time is the scheduler's clock (simulated, or standing still in a run to
completion, which advances it to the next timeout when nothing else is left).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from dralab.cluster import PodInfo

from .framework import CycleState, Status
from .runtime import Framework

__all__ = ["MAX_PERMIT_TIMEOUT", "WaitingPod", "WaitingPods"]

MAX_PERMIT_TIMEOUT = 15 * 60.0  # kube-scheduler caps a Permit wait at 15 minutes


@dataclass(slots=True, eq=False)
class WaitingPod:
    pod: PodInfo
    node: str
    framework: Framework
    state: CycleState
    deadlines: dict[str, float]          # waiting plugin -> when it times out
    started: float
    rejected: Status | None = None
    allowed: set[str] = field(default_factory=set)

    @property
    def key(self) -> str:
        return self.pod.key

    @property
    def pending_plugins(self) -> list[str]:
        return sorted(set(self.deadlines) - self.allowed)

    def allow(self, plugin: str) -> None:
        """``plugin`` no longer holds the pod back."""
        if plugin in self.deadlines:
            self.allowed.add(plugin)

    def reject(self, plugin: str, message: str) -> None:
        if self.rejected is None:
            self.rejected = Status.unschedulable(plugin, message)

    def ready(self) -> bool:
        return self.rejected is None and self.allowed >= set(self.deadlines)

    def deadline(self) -> float:
        pending = [t for p, t in self.deadlines.items() if p not in self.allowed]
        return min(pending) if pending else self.started


class WaitingPods:
    """The waiting pods of one Scheduler, by pod key (kube-scheduler's waitingPodsMap)."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def __len__(self) -> int:
        return len(self._pods)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def get(self, key: str) -> WaitingPod | None:
        return self._pods.get(key)

    def add(self, waiting: WaitingPod) -> None:
        self._pods[waiting.key] = waiting

    def remove(self, key: str) -> WaitingPod | None:
        return self._pods.pop(key, None)

    def expire(self, now: float) -> None:
        """Reject every pod whose wait ran out at ``now``."""
        for waiting in self:
            for plugin, deadline in sorted(waiting.deadlines.items(), key=lambda i: i[1]):
                if plugin not in waiting.allowed and deadline <= now:
                    waited = _go_duration(deadline - waiting.started)
                    waiting.reject(plugin, f"rejected due to timeout after waiting {waited} "
                                           f"at plugin {plugin}")
                    break

    def next_deadline(self) -> float | None:
        times = [w.deadline() for w in self._pods.values() if w.rejected is None]
        return min(times) if times else None


def _go_duration(seconds: float) -> str:
    """A duration as Go's time.Duration prints it (enough for whole and fractional s)."""
    if seconds >= 60 and seconds == int(seconds):
        minutes, secs = divmod(int(seconds), 60)
        hours, minutes = divmod(minutes, 60)
        out = f"{hours}h" if hours else ""
        return f"{out}{minutes}m{secs}s"
    return f"{seconds:g}s"
