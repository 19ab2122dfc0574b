"""GangScheduling (Permit, Reserve): the pods of a gang bind all together or not at all.

Upstream's plugin of this name (KEP-4671, gate ``GenericWorkload``) reads a pod's
PodGroup through ``spec.schedulingGroup``; dralab does not model PodGroups (input
that uses them with the gate on is refused, see ``dralab.validation``), so a gang
is named by labels instead:

* ``dralab.dev/gang: NAME`` with ``dralab.dev/gang-size: N`` (label or annotation), or
* Kueue's plain pod groups: label ``kueue.x-k8s.io/pod-group-name`` with annotation
  ``kueue.x-k8s.io/pod-group-total-count``.

A gang is ``namespace/NAME``. Each member that passes Reserve waits at Permit until
``N`` members hold a node (waiting, or already bound); the member that completes
the gang allows the others, and all bind. A member that waits longer than the
timeout (``permitWaitingTimeSeconds``, default 300 s: upstream's five-minute gang
timeout) is rejected; its Unreserve rejects every other waiting member, so all of
them release their nodes and devices. Rejected members go back to the queue and
are retried with the queue's periodic flush (no event says the gang became
complete before its members are tried again).

Not in the default profile: enable it in a KubeSchedulerConfiguration
(``multiPoint``, or ``permit`` and ``reserve``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dralab.api.core import Pod

from ..cluster import ClusterState, PodInfo
from ..framework import CycleState, Handle, PluginArgsError, Status

__all__ = ["DEFAULT_TIMEOUT", "GANG_LABEL", "GANG_SIZE", "NAME", "GangScheduling", "gang_of"]

NAME = "GangScheduling"
GANG_LABEL = "dralab.dev/gang"
GANG_SIZE = "dralab.dev/gang-size"
KUEUE_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
KUEUE_GROUP_COUNT = "kueue.x-k8s.io/pod-group-total-count"
DEFAULT_TIMEOUT = 300.0
MAX_TIMEOUT = 900.0  # kube-scheduler caps a Permit wait at 15 minutes
_SUCCESS = Status.success()


def gang_of(pod: Pod) -> tuple[str, int] | None:
    """(``namespace/name``, size) of the pod's gang; None when it is in none (or the
    size is missing or not a positive integer: such a pod is scheduled alone)."""
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

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        return _SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """A member failed after Reserve (rejected, timed out, deleted): the gang
        cannot complete now, so every other waiting member lets go of its node."""
        gang = gang_of(pod.pod)
        if gang is None:
            return
        for waiting in self.handle.waiting_pods:
            if waiting.key != pod.key and gang_of(waiting.pod.pod) == gang:
                waiting.reject(NAME, f"pod {pod.key} of gang {gang[0]} was rejected; "
                                     "the gang binds all together or not at all")

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        gang = gang_of(pod.pod)
        if gang is None:
            return _SUCCESS
        size = gang[1]
        waiting = [w for w in self.handle.waiting_pods
                   if w.key != pod.key and w.rejected is None and gang_of(w.pod.pod) == gang]
        held = len(waiting) + 1
        if held < size:
            held += _bound_members(self.handle.cluster, gang, pod.key)
        if held < size:
            return Status.wait(NAME, self.timeout)
        # Allowing a waiting pod is not something a store fork can undo: a what-if
        # (placement checks on a fork) must not release real waiting pods.
        if not self.handle.cluster.forks:
            for member in waiting:
                member.allow(NAME)
        return _SUCCESS


def _bound_members(cluster: ClusterState, gang: tuple[str, int], own: str) -> int:
    """Members of ``gang`` already bound to a node (they passed Permit before)."""
    return sum(1 for info in cluster.pods.values()
               if info.key != own and info.pod.spec.node_name and gang_of(info.pod) == gang)
