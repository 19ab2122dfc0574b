"""SchedulingGates (PreEnqueue): a pod with spec.schedulingGates stays out of the queue."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dralab.cluster import PodInfo

from ..framework import Handle, Status
from ..hints import EventHint
from .eventhints import SCHEDULING_GATES_HINTS

NAME = "SchedulingGates"


class SchedulingGates:
    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> SchedulingGates:
        return cls()

    @property
    def name(self) -> str:
        return NAME

    def events_to_register(self) -> Sequence[EventHint]:
        return SCHEDULING_GATES_HINTS

    def pre_enqueue(self, pod: PodInfo) -> Status:
        gates = pod.pod.spec.scheduling_gates
        if not gates:
            return Status.success()
        names = " ".join(g.name for g in gates)
        return Status.unresolvable(NAME, f"waiting for scheduling gates: [{names}]")
