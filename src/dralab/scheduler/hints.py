"""Queueing hints: which cluster events may make a rejected pod schedulable.

kube-scheduler keeps a pod that a plugin rejected out of the active queue until
a cluster event arrives for which that plugin's queueing hint says "Queue"
(``EnqueueExtensions.EventsToRegister``). Plugins declare the same here:
``events_to_register()`` returns ``EventHint`` values, one per event type the
plugin cares about. The hint function sees the event and the store and answers
for every pod the plugin rejected at once:

* ``True``: queue them all (the event may help any of them);
* ``False``: skip (it cannot help);
* a frozenset of pod keys: only those pods (e.g. the pod whose claim changed);
* a predicate on ``PodInfo``: ask per pod (e.g. does the new node match its affinity).

A pod rejected by a plugin that registered no hint for an event is not moved
by it; a pod that failed with an error (no rejecting plugin) is moved by any
event. Answering for all pods at once keeps a cluster event's cost proportional
to the plugins that care, not to the length of the backlog.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

from dralab.cluster.events import ClusterEvent

if TYPE_CHECKING:
    from dralab.cluster import ClusterState, PodInfo

__all__ = ["QUEUE", "SKIP", "EnqueueExtensions", "EventHint", "HintFn", "HintResult",
           "queue_always"]

HintResult: TypeAlias = "bool | frozenset[str] | Callable[[PodInfo], bool]"
HintFn: TypeAlias = "Callable[[ClusterEvent, ClusterState], HintResult]"

QUEUE = True
SKIP = False


def queue_always(event: ClusterEvent, cluster: ClusterState) -> HintResult:
    """The hint of an event that may help every pod the plugin rejected."""
    return QUEUE


@dataclass(frozen=True, slots=True)
class EventHint:
    """One registration: events of these types, answered by ``hint``."""

    events: tuple[type[ClusterEvent], ...]
    hint: HintFn = queue_always


@runtime_checkable
class EnqueueExtensions(Protocol):
    """A plugin that can reject a pod (PreEnqueue, PreFilter, Filter, Reserve, Permit)
    declares the events after which it is worth trying the pod again."""

    def events_to_register(self) -> Sequence[EventHint]: ...
