"""The scheduling queue: active heap, unschedulable pool, and pods PreEnqueue holds back.

Order comes from the QueueSort plugin. When it offers ``sort_key`` (PrioritySort
does) the heap holds plain tuples; otherwise ``less`` is called through a wrapper.
Nothing here knows about time: "backoff" is simply the unschedulable pool, which
``move_all_to_active`` empties when the cluster changed in a way that may help
(kube-scheduler's AssignedPodDelete event).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from functools import total_ordering
from typing import Any

from .cluster import PodInfo
from .framework import QueueSortPlugin, Status

__all__ = ["SchedulingQueue"]


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


class SchedulingQueue:
    """Pods waiting to be scheduled. Not thread-safe; owned by one Scheduler."""

    def __init__(self, sort: QueueSortPlugin) -> None:
        key = getattr(sort, "sort_key", None)
        self._key: Callable[[PodInfo], Any]
        if callable(key):
            self._key = key
        else:
            less = sort.less
            self._key = lambda pod: _Ordered(pod, less)
        self._heap: list[tuple[Any, int, PodInfo]] = []
        self._counter = 0  # heap tie-break: insertion order, never PodInfo comparison
        self._queued: set[str] = set()
        self.unschedulable: dict[str, PodInfo] = {}
        self.gated: dict[str, tuple[PodInfo, Status]] = {}

    def __len__(self) -> int:
        return len(self._heap)

    def push(self, pod: PodInfo) -> None:
        """Into the active queue (no-op if it is already there)."""
        key = pod.key
        if key in self._queued:
            return
        self.unschedulable.pop(key, None)
        self._queued.add(key)
        self._counter += 1
        heapq.heappush(self._heap, (self._key(pod), self._counter, pod))

    def pop(self) -> PodInfo | None:
        """The next pod in QueueSort order, or None when the active queue is empty."""
        if not self._heap:
            return None
        _, _, pod = heapq.heappop(self._heap)
        self._queued.discard(pod.key)
        return pod

    def hold(self, pod: PodInfo, status: Status) -> None:
        """A pod PreEnqueue rejected (scheduling gates): it never enters the queue."""
        self.gated[pod.key] = (pod, status)

    def add_unschedulable(self, pod: PodInfo) -> None:
        self.unschedulable[pod.key] = pod

    def move_all_to_active(self) -> int:
        """Retry every unschedulable pod; returns how many moved."""
        pods = list(self.unschedulable.values())
        self.unschedulable.clear()
        for pod in pods:
            self.push(pod)
        return len(pods)

    def forget(self, key: str) -> None:
        """Drop a deleted pod from every pool."""
        self.unschedulable.pop(key, None)
        self.gated.pop(key, None)
        if key in self._queued:
            self._heap = [e for e in self._heap if e[2].key != key]
            heapq.heapify(self._heap)
            self._queued.discard(key)

    def pending(self) -> Iterator[PodInfo]:
        yield from (e[2] for e in self._heap)
        yield from self.unschedulable.values()
