"""The scheduling queue, as kube-scheduler (1.37) keeps it.

* **activeQ**: pods ready to be tried, in the QueueSort plugin's order.
* **backoffQ**: pods that failed and were moved back by a cluster event before
  their back-off ran out (1 s after the first attempt, doubling up to 10 s).
  Expiry is rounded to whole-second windows, ordered by QueueSort within a
  window, and when activeQ is empty the head of backoffQ is taken at once
  (gate ``SchedulerPopFromBackoffQ``, on by default). Pods that failed with an
  error wait out their back-off in a queue of their own.
* **unschedulable pods**: pods that did not fit, with the plugins that rejected
  them. A cluster event moves a pod back only when one of those plugins'
  queueing hints says it may help (``hints``); a pod left there longer than
  five minutes is moved back anyway (``flush_leftover``, checked every 30 s).
* **gated pods**: PreEnqueue rejected them (scheduling gates, claims not yet
  created); they are re-checked when the gating plugin's hint asks.

Time comes from the caller (``now`` arguments): a simulated clock, or a clock
that stands still for a run to completion. Nothing here reads a wall clock.

**Equivalence classes.** A caller may give pods an ``equivalence`` key (the
simulator does: one per job kind and priority); pods with one key are
interchangeable for scheduling. Unschedulable pods of one class wait as one
unit: an event that moves the unit moves its first pod, and the next one
follows only when that one was placed; a fresh pod of a class whose unit is
waiting joins it without a cycle, since the hints say nothing has changed that
could help it. The outcome is the one trying every pod would give; the cost of
an event is then one cycle per class instead of one per pod.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import total_ordering
from typing import Any

from dralab.cluster import PodInfo

from .framework import QueueSortPlugin, SortKey, Status

__all__ = [
    "BACKOFF_WINDOW",
    "FLUSH_INTERVAL",
    "INITIAL_BACKOFF",
    "MAX_BACKOFF",
    "MAX_IN_UNSCHEDULABLE",
    "QueuedPod",
    "SchedulingQueue",
]

INITIAL_BACKOFF = 1.0         # podInitialBackoffSeconds
MAX_BACKOFF = 10.0            # podMaxBackoffSeconds
BACKOFF_WINDOW = 1.0          # backoffQ ordering window
MAX_IN_UNSCHEDULABLE = 300.0  # podMaxInUnschedulablePodsDuration
FLUSH_INTERVAL = 30.0         # how often the leftover flush looks


@total_ordering
class _Ordered:
    __slots__ = ("less", "pod")

    def __init__(self, pod: PodInfo, less: Callable[[PodInfo, PodInfo], bool]) -> None:
        self.pod = pod
        self.less = less

    def __lt__(self, other: _Ordered) -> bool:
        return self.less(self.pod, other.pod)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Ordered) and not self.less(self.pod, other.pod) \
            and not self.less(other.pod, self.pod)

    __hash__ = None  # type: ignore[assignment]


@dataclass(slots=True, eq=False)
class QueuedPod:
    """A pod as the queue knows it: attempts, when it last failed and who rejected it."""

    info: PodInfo
    sort_key: Any
    order: int                        # insertion counter: heap tie-break
    equivalence: Hashable | None = None
    attempts: int = 0
    failed_at: float = 0.0
    rejectors: frozenset[str] = frozenset()
    error: bool = False
    where: str = ""                   # active | backoff | error | unschedulable | gated | ""

    @property
    def key(self) -> str:
        return self.info.key

    # (podInitialBackoffSeconds, podMaxBackoffSeconds) of the queue that holds the pod.
    backoff: tuple[float, float] = (INITIAL_BACKOFF, MAX_BACKOFF)

    def backoff_expiry(self) -> float:
        if self.attempts == 0:
            return -math.inf
        duration, longest = self.backoff
        for _ in range(1, self.attempts):
            duration *= 2
            if duration >= longest:
                return self.failed_at + longest
        return self.failed_at + min(duration, longest)


@dataclass(slots=True, eq=False)
class _Unit:
    """Unschedulable pods that wait together: one pod, or one equivalence class."""

    ident: Hashable
    rejectors: frozenset[str]
    since: float
    members: list[tuple[Any, int, str]] = field(default_factory=list)  # heap
    gated: Status | None = None       # PreEnqueue's rejection, for gated pods

    def head(self) -> str | None:
        return self.members[0][2] if self.members else None


class SchedulingQueue:
    """Pods waiting to be scheduled. Not thread-safe; owned by one Scheduler."""

    def __init__(self, sort: QueueSortPlugin, initial_backoff: float = INITIAL_BACKOFF,
                 max_backoff: float = MAX_BACKOFF) -> None:
        self.backoff = (initial_backoff, max_backoff)
        self._key: Callable[[PodInfo], Any]
        if isinstance(sort, SortKey):
            self._key = sort.sort_key
        else:
            less = sort.less
            self._key = lambda pod: _Ordered(pod, less)
        self._counter = 0
        self.pods: dict[str, QueuedPod] = {}
        self._active: list[tuple[Any, int, str]] = []
        self._backoff: list[tuple[float, Any, int, str]] = []
        self._errors: list[tuple[float, int, str]] = []
        self._units: dict[Hashable, _Unit] = {}
        self._unit_of: dict[str, Hashable] = {}
        self._by_plugin: dict[str, set[Hashable]] = {}
        # Classes whose unit was moved: the pod out on trial, for each class.
        self._open: dict[Hashable, str] = {}

    # --- views ---------------------------------------------------------------------------
    def pending(self) -> Iterator[PodInfo]:
        """Every pod the queue holds that is not gated, in queue order of arrival."""
        for queued in sorted(self.pods.values(), key=lambda q: q.order):
            if queued.where != "gated":
                yield queued.info

    @property
    def gated(self) -> dict[str, tuple[PodInfo, Status]]:
        out: dict[str, tuple[PodInfo, Status]] = {}
        for queued in sorted(self.pods.values(), key=lambda q: q.order):
            if queued.where == "gated":
                unit = self._units[self._unit_of[queued.key]]
                assert unit.gated is not None
                out[queued.key] = (queued.info, unit.gated)
        return out

    # --- entering --------------------------------------------------------------------
    def _queued(self, pod: PodInfo, equivalence: Hashable | None) -> QueuedPod:
        queued = self.pods.get(pod.key)
        if queued is None:
            self._counter += 1
            queued = QueuedPod(pod, self._key(pod), self._counter, equivalence,
                               backoff=self.backoff)
            self.pods[pod.key] = queued
        else:
            queued.info = pod
        return queued

    def add(self, pod: PodInfo, equivalence: Hashable | None = None) -> QueuedPod:
        """A new pod PreEnqueue let through: into activeQ."""
        queued = self._queued(pod, equivalence)
        self._detach(queued)
        self._to_active(queued)
        return queued

    def hold(self, pod: PodInfo, status: Status, equivalence: Hashable | None = None) -> None:
        """A pod PreEnqueue rejected: it waits for its gating plugin's hint."""
        queued = self._queued(pod, equivalence)
        self._detach(queued)
        queued.where = "gated"
        ident = ("gated", queued.key)
        plugin = status.plugin
        unit = _Unit(ident, frozenset({plugin}) if plugin else frozenset(), 0.0,
                     [(queued.sort_key, queued.order, queued.key)], status)
        self._units[ident] = unit
        self._unit_of[queued.key] = ident
        for name in unit.rejectors:
            self._by_plugin.setdefault(name, set()).add(ident)

    def _to_active(self, queued: QueuedPod) -> None:
        queued.where = "active"
        heapq.heappush(self._active, (queued.sort_key, queued.order, queued.key))

    def _to_backoff(self, queued: QueuedPod, now: float) -> None:
        expiry = queued.backoff_expiry()
        if expiry <= now:
            self._to_active(queued)
            return
        if queued.error:
            queued.where = "error"
            heapq.heappush(self._errors, (expiry, queued.order, queued.key))
            return
        queued.where = "backoff"
        window = math.floor(expiry / BACKOFF_WINDOW) * BACKOFF_WINDOW
        heapq.heappush(self._backoff, (window, queued.sort_key, queued.order, queued.key))

    # --- leaving ---------------------------------------------------------------------
    def pop(self, now: float) -> QueuedPod | None:
        """The next pod to try: activeQ's head after moving pods whose back-off ran out;
        with activeQ empty, backoffQ's head (SchedulerPopFromBackoffQ)."""
        self.flush_backoff(now)
        while self._active:
            _, _, key = heapq.heappop(self._active)
            queued = self.pods.get(key)
            if queued is not None and queued.where == "active":
                queued.where = ""
                return queued
        while self._backoff:
            _, _, _, key = heapq.heappop(self._backoff)
            queued = self.pods.get(key)
            if queued is not None and queued.where == "backoff":
                queued.where = ""
                return queued
        return None

    def take(self, keys: Iterable[str]) -> list[QueuedPod]:
        """The pods of ``keys`` that are in activeQ or backoffQ, taken out in queue order:
        a PodGroup's scheduling cycle tries its group's queued pods together. (Their
        heap entries go stale and are skipped, as ``pop`` skips moved pods.)"""
        pods = self.pods
        found = [q for k in keys if (q := pods.get(k)) is not None
                 and q.where in ("active", "backoff")]
        found.sort(key=lambda q: (q.sort_key, q.order))
        for queued in found:
            queued.where = ""
        return found

    def flush_backoff(self, now: float) -> None:
        """Pods whose back-off ran out go to activeQ (stale heap entries are dropped)."""
        while self._backoff and self._backoff[0][0] <= now:
            _, _, _, key = heapq.heappop(self._backoff)
            queued = self.pods.get(key)
            if queued is not None and queued.where == "backoff" \
                    and queued.backoff_expiry() <= now:
                self._to_active(queued)
            elif queued is not None and queued.where == "backoff":
                window = math.floor(queued.backoff_expiry() / BACKOFF_WINDOW) * BACKOFF_WINDOW
                heapq.heappush(self._backoff, (window, queued.sort_key, queued.order, key))
                break
        while self._errors and self._errors[0][0] <= now:
            _, _, key = heapq.heappop(self._errors)
            queued = self.pods.get(key)
            if queued is not None and queued.where == "error":
                self._to_active(queued)

    def done(self, queued: QueuedPod) -> None:
        """The pod was placed (or deleted): it leaves the queue; its class's next pod
        is tried too."""
        self.pods.pop(queued.key, None)
        self._release_class(queued)

    def _release_class(self, queued: QueuedPod) -> None:
        eq = queued.equivalence
        if eq is None or self._open.get(eq) != queued.key:
            return
        del self._open[eq]
        unit = self._units.get(("class", eq))
        if unit is not None:
            self._move_head(unit, -math.inf)

    def failed(self, queued: QueuedPod, rejectors: frozenset[str], error: bool,
               now: float, retry: bool = False, alone: bool = False) -> None:
        """After a failed cycle: into the unschedulable pool with its rejecting plugins,
        or (``retry``: the cycle itself changed the cluster in its favour; an error)
        into backoff. ``alone``: the pod is no longer like the rest of its class (it
        holds a nomination), so it waits as a unit of its own."""
        queued.attempts += 1
        queued.failed_at = now
        queued.rejectors = rejectors
        queued.error = error
        if error or retry:
            if error:
                self._release_class(queued)
            self._to_backoff(queued, now)
            return
        if alone and queued.equivalence is not None:
            self._release_class(queued)
            queued.equivalence = None
        self._park(queued, now, fresh=True)

    def park(self, queued: QueuedPod, now: float) -> None:
        """Back into the unschedulable pool without a cycle (its class is waiting, or
        it ran out of attempts)."""
        self._park(queued, now, fresh=False)

    def _park(self, queued: QueuedPod, now: float, fresh: bool) -> None:
        """Into the unit of its class (or its own). ``fresh``: it just failed a cycle, so
        its rejecting plugins and the time become the unit's; otherwise it joins as is."""
        eq = queued.equivalence
        if eq is not None:
            ident: Hashable = ("class", eq)
            if self._open.get(eq) == queued.key:
                del self._open[eq]
        else:
            ident = ("pod", queued.key)
        unit = self._units.get(ident)
        entry = (queued.sort_key, queued.order, queued.key)
        if unit is None:
            unit = _Unit(ident, queued.rejectors, now, [entry])
            self._units[ident] = unit
        else:
            if fresh:
                for name in unit.rejectors - queued.rejectors:
                    self._by_plugin.get(name, set()).discard(ident)
                unit.rejectors = queued.rejectors
                unit.since = now  # the class was just found not to fit
            heapq.heappush(unit.members, entry)
        for name in unit.rejectors:
            self._by_plugin.setdefault(name, set()).add(ident)
        queued.where = "unschedulable"
        self._unit_of[queued.key] = ident

    def class_waiting(self, equivalence: Hashable | None) -> bool:
        """Is a unit of this class parked (and none of its pods out on trial)?"""
        return equivalence is not None and ("class", equivalence) in self._units \
            and equivalence not in self._open

    def forget(self, key: str) -> None:
        """A deleted pod leaves every pool."""
        queued = self.pods.pop(key, None)
        if queued is None:
            return
        self._detach(queued)
        self._release_class(queued)

    def _detach(self, queued: QueuedPod) -> None:
        """Out of the unschedulable pool or the gated set (heap entries go stale)."""
        ident = self._unit_of.pop(queued.key, None)
        if ident is not None:
            unit = self._units.get(ident)
            if unit is not None:
                unit.members = [m for m in unit.members if m[2] != queued.key]
                heapq.heapify(unit.members)
                if not unit.members:
                    self._drop_unit(unit)
        queued.where = ""

    def _drop_unit(self, unit: _Unit) -> None:
        self._units.pop(unit.ident, None)
        for name in unit.rejectors:
            idents = self._by_plugin.get(name)
            if idents is not None:
                idents.discard(unit.ident)

    # --- moving back -----------------------------------------------------------------
    def has_waiting(self) -> bool:
        """Is any pod waiting for an event (unschedulable or held back)?"""
        return bool(self._units)

    def units_rejected_by(self, plugin: str) -> set[Hashable]:
        """The waiting units (unschedulable or gated) that ``plugin`` rejected: live, do
        not change the queue while iterating it."""
        return self._by_plugin.get(plugin) or set()

    def plugins(self) -> list[str]:
        return sorted(name for name, idents in self._by_plugin.items() if idents)

    def unit_of(self, key: str) -> Hashable | None:
        return self._unit_of.get(key)

    def unit_head(self, ident: Hashable) -> PodInfo | None:
        unit = self._units.get(ident)
        key = unit.head() if unit is not None else None
        return self.pods[key].info if key is not None else None

    def move_unit(self, ident: Hashable, now: float) -> QueuedPod | None:
        """A hint said Queue: the unit's first pod goes to activeQ or backoffQ (gated
        pods are returned for the caller to re-run PreEnqueue)."""
        unit = self._units.get(ident)
        if unit is None:
            return None
        if unit.gated is not None:
            key = unit.head()
            self._drop_unit(unit)
            if key is None:
                return None
            self._unit_of.pop(key, None)
            queued = self.pods[key]
            queued.where = ""
            return queued
        self._move_head(unit, now)
        return None

    def move_pod(self, key: str, now: float) -> QueuedPod | None:
        """A hint named this pod: it leaves its unit for activeQ/backoffQ (a gated pod
        is returned for PreEnqueue)."""
        queued = self.pods.get(key)
        if queued is None or queued.where not in ("unschedulable", "gated"):
            return None
        gated = queued.where == "gated"
        self._detach(queued)
        if gated:
            return queued
        self._to_backoff(queued, now)
        return None

    def _move_head(self, unit: _Unit, now: float) -> None:
        if not unit.members:
            self._drop_unit(unit)
            return
        _, _, key = heapq.heappop(unit.members)
        self._unit_of.pop(key, None)
        if not unit.members:
            self._drop_unit(unit)
        elif isinstance(unit.ident, tuple) and unit.ident[0] == "class":
            self._open[unit.ident[1]] = key
        queued = self.pods[key]
        if now == -math.inf:  # the class's previous pod was placed: straight on
            self._to_active(queued)
        else:
            self._to_backoff(queued, now)

    def flush_leftover(self, now: float) -> int:
        """Units unschedulable for longer than MAX_IN_UNSCHEDULABLE go back (the
        safety net for events no hint covers)."""
        due = [u.ident for u in self._units.values()
               if u.gated is None and now - u.since > MAX_IN_UNSCHEDULABLE]
        for ident in due:
            unit = self._units[ident]
            unit.since = now  # the members staying behind start a new wait
            self._move_head(unit, now)
        return len(due)

    def next_wakeup(self, now: float) -> float:
        """When something in the queue next becomes due on its own: an error back-off
        running out, or the leftover flush (at its 30 s tick). +inf when never."""
        times = [self._errors[0][0]] if self._errors else []
        waiting = [u.since for u in self._units.values() if u.gated is None]
        if waiting:
            due = min(waiting) + MAX_IN_UNSCHEDULABLE
            times.append(math.floor(due / FLUSH_INTERVAL + 1) * FLUSH_INTERVAL)
        later = [t for t in times if t > now]
        return min(later) if later else math.inf
