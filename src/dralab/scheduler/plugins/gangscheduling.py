"""GangScheduling (PreEnqueue, Reserve, Permit): the pods of a gang bind all together or not at all.

Upstream's plugin (KEP-4671, gate ``GenericWorkload``, beta and off by default in
1.37) reads a pod's gang from its PodGroup: ``spec.schedulingGroup.podGroupName``
names a PodGroup whose ``schedulingPolicy.gang.minCount`` pods must be placed
together; a ``basic`` PodGroup is no gang. With the gate on the plugin is in the
default profile. dralab also names gangs by labels (any gate setting; the plugin
must then be enabled in the profile):

* ``dralab.dev/gang: NAME`` with ``dralab.dev/gang-size: N`` (label or annotation), or
* Kueue's plain pod groups: label ``kueue.x-k8s.io/pod-group-name`` with annotation
  ``kueue.x-k8s.io/pod-group-total-count``.

PreEnqueue (PodGroups only, as upstream): a pod whose PodGroup does not exist, or
whose gang has fewer than ``minCount`` pods, stays out of the queue with
upstream's message; a new pod of the group re-checks it. Each member that passes
Reserve waits at Permit until ``N`` members hold a node (waiting, or already
bound); the member that completes the gang allows the others, and all bind. The
Scheduler tries a PodGroup's queued pods in one go (its PodGroup cycle) and
rejects the waiting members at once when the gang cannot be completed; a gang
whose members arrive one by one waits at most the timeout
(``permitWaitingTimeSeconds``, default 300 s: upstream's five-minute gang
timeout). A rejected or timed-out member's Unreserve rejects every other waiting
member, so all of them release their nodes and devices.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dralab.api.core import Pod
from dralab.cluster import ClusterState, PodInfo
from dralab.cluster.events import (
    ClusterEvent,
    NodeAdded,
    NodeUpdated,
    PodAdded,
    PodForgotten,
    PodRemoved,
    SlicesChanged,
)
from dralab.controllers.podgroups import GroupIndex, group_key, pod_group_of

from ..framework import CycleState, Handle, PluginArgsError, Status
from ..hints import QUEUE, SKIP, EventHint, HintResult

__all__ = ["DEFAULT_TIMEOUT", "GANG_LABEL", "GANG_SIZE", "NAME", "GangScheduling", "gang_of",
           "gang_of_pod", "group_unplaceable"]

NAME = "GangScheduling"
GANG_LABEL = "dralab.dev/gang"
GANG_SIZE = "dralab.dev/gang-size"
KUEUE_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
KUEUE_GROUP_COUNT = "kueue.x-k8s.io/pod-group-total-count"
DEFAULT_TIMEOUT = 300.0
MAX_TIMEOUT = 900.0  # kube-scheduler caps a Permit wait at 15 minutes
_SUCCESS = Status.success()
_GROUP_PREFIX = "podgroup:"  # gang keys of PodGroups (label gangs are namespace/name)


def gang_of_pod(cluster: ClusterState, pod: Pod) -> tuple[str, int] | None:
    """(gang key, size) of the pod's gang: its PodGroup's (``podgroup:namespace/name``,
    ``minCount``) when it names one (gate GenericWorkload), else ``gang_of`` (labels).
    None when it is in none: a basic PodGroup, or a PodGroup that does not exist
    (PreEnqueue keeps such a pod out of the queue)."""
    key = group_key(cluster, pod)
    if key is not None:
        group = cluster.pod_groups.get(key)
        count = group.min_count if group is not None else None
        return (f"{_GROUP_PREFIX}{key}", count) if count is not None and count > 0 else None
    return gang_of(pod)


def group_unplaceable(min_count: int, scheduled: int) -> str:
    """Upstream's message when a PodGroup cycle ends with too few members placed."""
    return f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, 0 remaining"


def gang_of(pod: Pod) -> tuple[str, int] | None:
    """(``namespace/name``, size) of the pod's label-named gang; None when it is in none
    (or the size is missing or not a positive integer: such a pod is scheduled alone)."""
    meta = pod.metadata
    labels = meta.labels or {}
    annotations = meta.annotations or {}
    for name_key, size_key in ((GANG_LABEL, GANG_SIZE), (KUEUE_GROUP_LABEL, KUEUE_GROUP_COUNT)):
        name = labels.get(name_key)
        if not name:
            continue
        text = labels.get(size_key) or annotations.get(size_key) or ""
        try:
            size = int(text)
        except ValueError:
            return None
        return (f"{meta.namespace or 'default'}/{name}", size) if size > 0 else None
    return None


class GangScheduling:
    """See the module docstring. ``timeout``: seconds a member waits at Permit."""

    def __init__(self, handle: Handle, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.handle = handle
        self.timeout = timeout
        self._groups = GroupIndex(handle.cluster)

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> GangScheduling:
        value = args.get("permitWaitingTimeSeconds", DEFAULT_TIMEOUT)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise PluginArgsError("permitWaitingTimeSeconds",
                                  f"Invalid value: {value!r}: must be a number")
        if not 0 < value <= MAX_TIMEOUT:
            raise PluginArgsError("permitWaitingTimeSeconds",
                                  f"Invalid value: {value!r}: must be in (0, {MAX_TIMEOUT:g}]")
        return cls(handle, float(value))

    @property
    def name(self) -> str:
        return NAME

    def events_to_register(self) -> tuple[EventHint, ...]:
        # A new pod of the group may complete the gang's count (upstream: Pod/Add). A
        # gang rejected for want of room is retried, all members together, when room
        # may have appeared (its members' own rejectors are not kept with them); claims
        # are left out: the gang's own members change them when they let go.
        return (EventHint((PodAdded,), self._pod_added),
                EventHint((PodRemoved, PodForgotten), _room_freed),
                EventHint((NodeAdded, NodeUpdated, SlicesChanged)))

    def _pod_added(self, event: ClusterEvent, cluster: ClusterState) -> HintResult:
        assert isinstance(event, PodAdded)
        added = cluster.pods.get(event.key)
        group = group_key(cluster, added.pod) if added is not None else None
        if group is None:
            return SKIP
        return lambda pod: group_key(cluster, pod.pod) == group

    def pre_enqueue(self, pod: PodInfo) -> Status:
        """A PodGroup's pod waits outside the queue until its group exists and, for a
        gang, has ``minCount`` pods (upstream's wording)."""
        cluster = self.handle.cluster
        key = group_key(cluster, pod.pod)
        if key is None:
            return _SUCCESS
        group = pod_group_of(cluster, pod.pod)
        if group is None:
            name = pod.pod.spec.scheduling_group.pod_group_name \
                if pod.pod.spec.scheduling_group is not None else ""
            return Status.unresolvable(
                NAME, f'waiting for pods\'s pod group "{name}" to appear in scheduling queue')
        count = group.min_count
        if count is None:
            return _SUCCESS
        if len(self._groups.members(key)) < count:
            return Status.unresolvable(
                NAME, "waiting for minCount pods from a gang to appear in scheduling queue")
        return _SUCCESS

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        return _SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """A member failed after Reserve (rejected, timed out, deleted): the gang
        cannot complete now, so every other waiting member lets go of its node."""
        cluster = self.handle.cluster
        gang = gang_of_pod(cluster, pod.pod)
        if gang is None:
            return
        for waiting in self.handle.waiting_pods:
            if waiting.key != pod.key and gang_of_pod(cluster, waiting.pod.pod) == gang:
                waiting.reject(NAME, f"pod {pod.key} of gang {gang[0]} was rejected; "
                                     "the gang binds all together or not at all")

    def _bound_members(self, gang: tuple[str, int], own: str) -> int:
        """Members of ``gang`` already bound to a node (they passed Permit before)."""
        cluster = self.handle.cluster
        if gang[0].startswith(_GROUP_PREFIX):
            pods = self._groups.members(gang[0].removeprefix(_GROUP_PREFIX))
        else:
            pods = list(cluster.pods.values())
        return sum(1 for info in pods if info.key != own and info.pod.spec.node_name
                   and gang_of_pod(cluster, info.pod) == gang)

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        cluster = self.handle.cluster
        gang = gang_of_pod(cluster, pod.pod)
        if gang is None:
            return _SUCCESS
        size = gang[1]
        waiting = [w for w in self.handle.waiting_pods
                   if w.key != pod.key and w.rejected is None
                   and gang_of_pod(cluster, w.pod.pod) == gang]
        held = len(waiting) + 1
        if held < size:
            held += self._bound_members(gang, pod.key)
        if held < size:
            return Status.wait(NAME, self.timeout)
        # Allowing a waiting pod is not something a store fork can undo: a what-if
        # (placement checks on a fork) must not release real waiting pods.
        if not self.handle.cluster.forks:
            for member in waiting:
                member.allow(NAME)
        return _SUCCESS


def _room_freed(event: ClusterEvent, cluster: ClusterState) -> HintResult:
    """A pod that held a node is gone, or its assumption was undone: worth a retry for
    every gang but the pod's own (a gang that let go of its nodes has no use for them)."""
    assert isinstance(event, PodRemoved | PodForgotten)
    if event.node is None:
        return SKIP
    freed = cluster.pods.get(event.key)
    gang = gang_of_pod(cluster, freed.pod) if freed is not None else None
    if gang is None:
        return QUEUE
    return lambda pod: gang_of_pod(cluster, pod.pod) != gang
