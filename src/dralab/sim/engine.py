"""The discrete-event engine: one clock and one heap of events.

Modelled on SimPy's Environment: the environment alone owns time; an event is
(time, priority, sequence, action) and the heap pops the earliest, then the
lowest priority number, then the earliest scheduled, so a seed reproduces a run
exactly. Nothing else in the simulator keeps a "now". Actions run synchronously
and may schedule further events; cancelled events are skipped, never lost
silently (``cancelled`` counts them).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

__all__ = ["Environment", "Event", "Priority"]


class Priority(IntEnum):
    """Order of events due at the same instant: capacity returns before new demand, and
    the scheduler sees everything that happened at an instant before it runs."""

    NODE = 0          # nodes added, removed, tainted
    COMPLETION = 1    # pods finish and release devices
    ARRIVAL = 2       # jobs arrive
    SCHEDULE = 3      # a scheduling round
    SAMPLE = 4        # metrics sampling sees the instant's final state


@dataclass(order=True, slots=True)
class Event:
    time: float
    priority: int
    sequence: int
    action: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class Environment:
    """Owns the simulated clock (seconds from 0) and the event heap."""

    __slots__ = ("_heap", "_sequence", "cancelled", "now", "processed")

    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list[Event] = []
        self._sequence = 0
        self.processed = 0
        self.cancelled = 0

    def at(self, time: float, action: Callable[[], None],
           priority: int = Priority.ARRIVAL) -> Event:
        """Schedule ``action`` at absolute ``time`` (not before now)."""
        if math.isnan(time) or time < self.now:
            raise ValueError(f"cannot schedule at {time} (now is {self.now})")
        self._sequence += 1
        event = Event(time, int(priority), self._sequence, action)
        heapq.heappush(self._heap, event)
        return event

    def after(self, delay: float, action: Callable[[], None],
              priority: int = Priority.ARRIVAL) -> Event:
        return self.at(self.now + delay, action, priority)

    def peek(self) -> float:
        """Time of the next pending event, or +inf."""
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)
            self.cancelled += 1
        return self._heap[0].time if self._heap else math.inf

    def step(self) -> bool:
        """Run the next event; False when none is left."""
        while self._heap:
            event = heapq.heappop(self._heap)
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
