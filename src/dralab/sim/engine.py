"""The discrete-event engine: one clock, one heap of events, and the stages that act.

Modelled on SimPy's Environment: the environment alone owns time; an event is
(time, priority, sequence, action) and the heap pops the earliest, then the
lowest priority number, then the earliest scheduled, so a seed reproduces a run
exactly. Nothing else in the simulator keeps a "now". Actions run synchronously
and may schedule further events; cancelled events are skipped, never lost
silently (``cancelled`` counts them).

The priority of an event is not a number chosen by its caller: it is the
``order`` of the **stage** that scheduled it (``Stage.at``). A stage is one
policy of the simulation (the job controller, node lifecycle, the scheduler, ...),
a small class with one verb, registered with the environment. Same-instant
events run in stage order: capacity returns before new demand, and the scheduler
sees everything that happened at an instant before it runs. The slots in use,
with room between them:

====== =============== =====================================================
order  stage           acts
====== =============== =====================================================
0      node-lifecycle  nodes added, removed, tainted
10     completion      pods finish and release their devices
20     arrival         jobs arrive; the job controller creates their pods
25     (admission)     free: e.g. Kueue-style quota admission of new jobs
30     scheduling      a scheduling round
35     autoscaling     (autoscaled pools) the autoscaler's loop: nodes added / removed
40     sampling        metrics see the instant's final state
====== =============== =====================================================

Adding a stage: subclass ``Stage`` with a unique ``name`` and an unused
``order`` that places it among the others (admission between arrival and
scheduling, so admitted pods are scheduled at the same instant; autoscaling
after scheduling, so it sees what the round could not place), give it its one
verb, ``env.register`` it when a run is wired (``simulate.run_mode``), and
schedule its work with ``self.at(time, action)``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

__all__ = ["Environment", "Event", "Stage", "StageError"]


@dataclass(order=True, slots=True)
class Event:
    time: float
    priority: int
    sequence: int
    action: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class StageError(ValueError):
    """Two stages with one name or one order, or a stage used before it registered."""


class Stage:
    """One policy of a simulation run. ``order`` breaks ties between events of the same
    instant (lower first); ``at`` / ``after`` schedule this stage's work."""

    name: ClassVar[str]
    order: ClassVar[int]

    def __init__(self, env: Environment) -> None:
        self.env = env

    def at(self, time: float, action: Callable[[], None]) -> Event:
        return self.env.at(time, action, self.env.priority(self))

    def after(self, delay: float, action: Callable[[], None]) -> Event:
        return self.at(self.env.now + delay, action)


class Environment:
    """Owns the simulated clock (seconds from 0), the event heap and the registered stages."""

    __slots__ = ("_heap", "_priorities", "_sequence", "cancelled", "now", "processed")

    def __init__(self) -> None:
        self.now = 0.0
        # (time, priority, sequence, event): the heap compares the leading numbers in C
        # (sequences are unique, so the event itself is never compared).
        self._heap: list[tuple[float, int, int, Event]] = []
        self._sequence = 0
        self._priorities: dict[str, int] = {}
        self.processed = 0
        self.cancelled = 0

    # --- stages -------------------------------------------------------------------------
    def register(self, *stages: Stage) -> None:
        """Register stages; StageError if a name or an order is taken (ties between two
        stages would depend on who scheduled first)."""
        for stage in stages:
            if stage.name in self._priorities:
                raise StageError(f"stage {stage.name!r} is registered twice")
            taken = [n for n, o in self._priorities.items() if o == stage.order]
            if taken:
                raise StageError(f"stages {taken[0]!r} and {stage.name!r} both have order "
                                 f"{stage.order}")
            self._priorities[stage.name] = stage.order

    def priority(self, stage: Stage) -> int:
        """The tie-break priority of ``stage``'s events: its order, once registered."""
        priority = self._priorities.get(stage.name)
        if priority is None:
            raise StageError(f"stage {stage.name!r} is not registered")
        return priority

    def stages(self) -> list[str]:
        """Registered stage names in the order their same-instant events run."""
        return sorted(self._priorities, key=self._priorities.__getitem__)

    # --- events -------------------------------------------------------------------------
    def at(self, time: float, action: Callable[[], None], priority: int = 0) -> Event:
        """Schedule ``action`` at absolute ``time`` (not before now)."""
        if math.isnan(time) or time < self.now:
            raise ValueError(f"cannot schedule at {time} (now is {self.now})")
        self._sequence += 1
        order = int(priority)
        event = Event(time, order, self._sequence, action)
        heapq.heappush(self._heap, (time, order, self._sequence, event))
        return event

    def after(self, delay: float, action: Callable[[], None], priority: int = 0) -> Event:
        return self.at(self.now + delay, action, priority)

    def peek(self) -> float:
        """Time of the next pending event, or +inf."""
        while self._heap and self._heap[0][3].cancelled:
            heapq.heappop(self._heap)
            self.cancelled += 1
        return self._heap[0][0] if self._heap else math.inf

    def step(self) -> bool:
        """Run the next event; False when none is left."""
        while self._heap:
            event = heapq.heappop(self._heap)[3]
            if event.cancelled:
                self.cancelled += 1
                continue
            self.now = event.time
            self.processed += 1
            event.action()
            return True
        return False

    def run(self, until: float = math.inf) -> None:
        """Run every event due at or before ``until``; the clock then stands at ``until``
        (or at the last event when ``until`` is infinite)."""
        while (due := self.peek()) <= until and not math.isinf(due):
            self.step()
        if not math.isinf(until):
            self.now = max(self.now, until)
