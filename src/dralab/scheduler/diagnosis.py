"""Why a pod did not fit: per-node statuses and kube-scheduler's aggregated message.

The message has upstream's exact shape::

    0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s).
    preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.

(one line; the preemption part only when a PostFilter plugin said something).
Reasons are counted per node across plugins, rendered "<count> <reason>", sorted
as text and joined with ", ". When PreFilter rejected the pod, its message
replaces the per-node histogram.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .framework import Code, Status

__all__ = ["NO_NODE_AVAILABLE", "Diagnosis", "NodeToStatus", "fit_error_message"]

NO_NODE_AVAILABLE = "0/{} nodes are available"
_DEFAULT_ABSENT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


class NodeToStatus(Mapping[str, Status]):
    """Statuses of rejected nodes: explicit ones, and one shared status for every other
    node of ``all_nodes`` ("absent" nodes, e.g. those a PreFilterResult excluded)."""

    def __init__(self, all_nodes: Sequence[str], explicit: dict[str, Status] | None = None,
                 absent: Status = _DEFAULT_ABSENT) -> None:
        self.all_nodes = all_nodes
        self.explicit: dict[str, Status] = explicit if explicit is not None else {}
        self.absent = absent

    def __getitem__(self, name: str) -> Status:
        status = self.explicit.get(name)
        return status if status is not None else self.absent

    def __iter__(self) -> Iterator[str]:
        return iter(self.all_nodes)

    def __len__(self) -> int:
        return len(self.all_nodes)

    def nodes_with_code(self, code: Code) -> list[str]:
        """Every node (in ``all_nodes`` order) whose status has ``code``."""
        return [n for n in self.all_nodes if self[n].code is code]

    def reasons_histogram(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        # Plugins hand out shared Status objects: count each object once, then its reasons.
        alike: dict[int, list[Any]] = {}
        for status in self.explicit.values():
            seen = alike.get(id(status))
            if seen is None:
                alike[id(status)] = [status, 1]
            else:
                seen[1] += 1
        for status, times in alike.values():
            for reason in status.reasons:
                counts[reason] += times
        missing = len(self.all_nodes) - len(self.explicit)
        if missing > 0:
            for reason in self.absent.reasons:
                counts[reason] += missing
        return counts


def fit_error_message(num_all_nodes: int, statuses: NodeToStatus, pre_filter_msg: str = "",
                      post_filter_msg: str = "") -> str:
    """``0/N nodes are available: <PreFilter msg or reasons>. <PostFilter msg>``."""
    message = NO_NODE_AVAILABLE.format(num_all_nodes) + ":"
    if pre_filter_msg:
        message += f" {pre_filter_msg}."
    else:
        histogram = sorted(f"{count} {reason}"
                           for reason, count in statuses.reasons_histogram().items())
        if histogram:
            message += f" {', '.join(histogram)}."
    if post_filter_msg:
        message += f" {post_filter_msg}"
    return message


@dataclass(slots=True)
class Diagnosis:
    """What one failed scheduling attempt learned (upstream's Diagnosis)."""

    statuses: NodeToStatus
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    override: str = ""  # a message that is not a fit error (no nodes at all)
    # Rejected nodes counted but not recorded (a pod that fits, Cycle.record_rejections off).
    unrecorded: int = 0

    def add_plugin_status(self, status: Status) -> None:
        if status.plugin and status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)

    def reasons(self) -> list[str]:
        """The reason phrases of ``message()``, in its order, without node counts:
        kube-scheduler's own phrases ("Insufficient cpu", "node(s) had untolerated
        taint(s)"), as typed values a caller can count without parsing the message."""
        if self.override:
            return [self.override]
        if self.pre_filter_msg:
            absent = self.statuses.absent.reasons
            # PreFilter's status is the absent one; its message joins its reasons.
            if ", ".join(absent) == self.pre_filter_msg:
                return list(absent)
            return [self.pre_filter_msg]
        return [reason for _, reason in sorted(
            (f"{count} {reason}", reason)
            for reason, count in self.statuses.reasons_histogram().items())]

    def message(self) -> str:
        if self.override:
            return self.override
        return fit_error_message(len(self.statuses.all_nodes), self.statuses,
                                 self.pre_filter_msg, self.post_filter_msg)
