"""The pods of one run: a record per pod object, and running totals of their states."""

from __future__ import annotations

from dataclasses import dataclass, field

from dralab.cluster import PodInfo

from ..engine import Event
from ..jobs import Arrival
from ..results import PodRecord

__all__ = ["PodBook", "PodState"]


@dataclass(slots=True)
class PodState:
    """One pod object of a job replica (a re-created pod gets a new one)."""

    arrival: Arrival
    replica: int
    info: PodInfo
    arrived: float
    started: float | None = None
    ended: float | None = None
    node: str | None = None
    devices: int = 0
    gpu_fraction: float = 0.0
    preempted: bool = False
    reason: str | None = None
    completion: Event | None = None
    restarts: int = 0

    @property
    def category(self) -> str | None:
        """What a sample counts it as: pending (not started, not preempted), running
        (started, not ended), completed (ended without preemption), or nothing."""
        if self.started is None:
            return None if self.preempted else "pending"
        if self.ended is None:
            return "running"
        return None if self.preempted else "completed"

    def record(self) -> PodRecord:
        return PodRecord(
            key=self.info.key, job=self.arrival.name, kind=self.arrival.kind.name,
            arrival=self.arrived, start=self.started, end=self.ended, node=self.node,
            devices=self.devices, gpu_fraction=self.gpu_fraction, preempted=self.preempted,
            unschedulable_reason=self.reason if self.started is None or self.reason else None)


# Kept as running totals: counting every pod at every sample made a run cost pods x samples.
_CATEGORIES = ("pending", "running", "completed")


@dataclass(slots=True)
class PodBook:
    """Every pod of the run by key, in creation order, with the totals samples report."""

    pods: dict[str, PodState] = field(default_factory=dict)
    order: list[PodState] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_CATEGORIES, 0))

    def add(self, state: PodState) -> None:
        self.pods[state.info.key] = state
        self.order.append(state)
        category = state.category
        if category is not None:
            self.counts[category] += 1

    def change(self, state: PodState, **changes: object) -> None:
        """Set fields of ``state`` and keep ``counts`` in step."""
        before = state.category
        for name, value in changes.items():
            setattr(state, name, value)
        after = state.category
        if before != after:
            if before is not None:
                self.counts[before] -= 1
            if after is not None:
                self.counts[after] += 1
