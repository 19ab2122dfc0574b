"""PrioritySort (QueueSort): higher priority first, then earlier arrival."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dralab.cluster import PodInfo

from ..framework import Handle

NAME = "PrioritySort"


class PrioritySort:
    """Orders the active queue. ``sort_key`` is the same order as a tuple, which lets
    the queue use a heap of plain keys instead of calling ``less``."""

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> PrioritySort:
        return cls()

    @property
    def name(self) -> str:
        return NAME

    def less(self, a: PodInfo, b: PodInfo) -> bool:
        return self.sort_key(a) < self.sort_key(b)

    @staticmethod
    def sort_key(pod: PodInfo) -> tuple[int, int]:
        return (-pod.priority, pod.sequence)
