"""VolumeRestrictions (PreFilter, Filter, AddPod/RemovePod), as kube-scheduler v1.36.2
checks volumes that cannot be shared (pkg/scheduler/framework/plugins/volumerestrictions).

* ReadWriteOncePod: a claim with that access mode that a pod placed anywhere in the
  cluster already uses fails every node, Unschedulable (preemption may evict the user):
  ``node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode
  already in-use by another pod``. A missing claim fails PreFilter
  UnschedulableAndUnresolvable with the API's message.
* Inline disks: the same GCE PD (unless both read-only), AWS EBS volume, ISCSI IQN
  (unless both read-only) or RBD image (a shared monitor, same pool and image, unless
  both read-only) as a pod on the node: ``node(s) had no available disk``, Unschedulable.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from dralab.api.storage import PersistentVolumeClaim
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.cluster.events import NodeAdded, PodForgotten, PodRemoved

from ..framework import CycleState, Handle, PreFilterResult, Status
from ..hints import EventHint
from .volumeclaims import NotFound, claim_volumes, find_claim, pod_volumes

__all__ = ["ERR_REASON_DISK_CONFLICT", "ERR_REASON_RWOP_CONFLICT", "NAME",
           "VolumeRestrictions", "is_volume_conflict"]

NAME = "VolumeRestrictions"
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with "
                            "ReadWriteOncePod access mode already in-use by another pod")
_RWOP = "ReadWriteOncePod"
_RESTRICTED = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
_PRE_FILTER_KEY = "PreFilter" + NAME
_SUCCESS = Status.success()
_SKIP = Status.skip(NAME)
_HINTS = (EventHint((PodRemoved, PodForgotten)), EventHint((NodeAdded,)))
_DISK_CONFLICT = Status.unschedulable(NAME, ERR_REASON_DISK_CONFLICT)
_RWOP_CONFLICT = Status.unschedulable(NAME, ERR_REASON_RWOP_CONFLICT)


def _source(volume: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    found = volume.get(key)
    return found if isinstance(found, Mapping) else None


def _read_only(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return bool(a.get("readOnly")) and bool(b.get("readOnly"))


def is_volume_conflict(volume: Mapping[str, Any], existing: Sequence[Mapping[str, Any]]) -> bool:
    """isVolumeConflict: ``volume`` against the volumes of one pod already on the node."""
    for other in existing:
        a, b = _source(volume, "gcePersistentDisk"), _source(other, "gcePersistentDisk")
        if a is not None and b is not None and a.get("pdName") == b.get("pdName") \
                and not _read_only(a, b):
            return True
        a, b = _source(volume, "awsElasticBlockStore"), _source(other, "awsElasticBlockStore")
        if a is not None and b is not None and a.get("volumeID") == b.get("volumeID"):
            return True
        a, b = _source(volume, "iscsi"), _source(other, "iscsi")
        if a is not None and b is not None and a.get("iqn") == b.get("iqn") \
                and not _read_only(a, b):
            return True
        a, b = _source(volume, "rbd"), _source(other, "rbd")
        if a is not None and b is not None:
            monitors = set(a.get("monitors") or ()) & set(b.get("monitors") or ())
            if monitors and a.get("pool", "rbd") == b.get("pool", "rbd") \
                    and a.get("image") == b.get("image") and not _read_only(a, b):
                return True
    return False


def _restricted(pod: PodInfo) -> list[Mapping[str, Any]]:
    return [v for v in pod_volumes(pod) if any(_source(v, key) is not None for key in _RESTRICTED)]


def _claim_keys(pod: PodInfo) -> list[str]:
    """namespace/claim of every PVC volume of a placed pod (ephemeral ones by their name)."""
    namespace = pod.pod.metadata.namespace or "default"
    return [f"{namespace}/{volume.claim_name}" for volume in claim_volumes(pod)]


class _State:
    __slots__ = ("conflicts", "rwop")

    def __init__(self, rwop: frozenset[str], conflicts: int) -> None:
        self.rwop = rwop  # namespace/name of the pod's ReadWriteOncePod claims
        self.conflicts = conflicts  # placed pods' references to them

    def clone(self) -> _State:
        return _State(self.rwop, self.conflicts)


class VolumeRestrictions:
    def __init__(self, handle: Handle | None = None) -> None:
        self._handle = handle

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> VolumeRestrictions:
        return cls(handle)

    @property
    def name(self) -> str:
        return NAME

    def filter_relevant(self, pod: PodInfo) -> bool:
        return bool(pod_volumes(pod))

    def pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                   ) -> tuple[PreFilterResult | None, Status]:
        # Only persistentVolumeClaim volumes (readWriteOncePodPVCsForPod reads no
        # ephemeral ones).
        volumes = [v for v in claim_volumes(pod) if not v.ephemeral]
        needs_check = bool(_restricted(pod))
        if not volumes and not needs_check:
            return None, _SKIP
        namespace = pod.pod.metadata.namespace or "default"
        rwop: set[str] = set()
        for volume in volumes:
            try:
                claim: PersistentVolumeClaim = find_claim(cluster, pod, volume)
            except NotFound as missing:
                return None, Status.unresolvable(NAME, str(missing))
            if _RWOP in claim.spec.access_modes:
                rwop.add(f"{namespace}/{claim.name}")
        conflicts = 0
        if rwop:
            for node in cluster.node_infos():
                for placed in node.pods:
                    if placed.pod.metadata.uid and placed.pod.metadata.uid == pod.pod.metadata.uid:
                        continue
                    conflicts += sum(key in rwop for key in _claim_keys(placed))
        if not needs_check and conflicts == 0:
            return None, _SKIP
        state.write(_PRE_FILTER_KEY, _State(frozenset(rwop), conflicts))
        return None, _SUCCESS

    def pre_filter_extensions(self) -> VolumeRestrictions:
        return self

    def _update(self, state: CycleState, other: PodInfo, delta: int) -> Status:
        data = state.get(_PRE_FILTER_KEY)
        if isinstance(data, _State) and data.rwop:
            data.conflicts += delta * sum(key in data.rwop for key in _claim_keys(other))
        return _SUCCESS

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo,
                node: NodeInfo) -> Status:
        return self._update(state, to_add, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo,
                   node: NodeInfo) -> Status:
        return self._update(state, to_remove, -1)

    def dry_run_key(self, state: CycleState, pod: PodInfo) -> Hashable | None:
        """The ReadWriteOncePod count lives in the cycle state and changes with AddPod/
        RemovePod; no promise for such pods."""
        data = state.get(_PRE_FILTER_KEY)
        if isinstance(data, _State) and data.rwop:
            return None
        return NAME

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        restricted = _restricted(pod)
        if restricted:
            for placed in node.pods:
                existing = pod_volumes(placed)
                if existing and any(is_volume_conflict(v, existing) for v in restricted):
                    return _DISK_CONFLICT
        data = state.get(_PRE_FILTER_KEY)
        if isinstance(data, _State) and data.conflicts > 0:
            return _RWOP_CONFLICT
        return _SUCCESS

    def events_to_register(self) -> Sequence[EventHint]:
        # A pod leaving frees its disks and ReadWriteOncePod claims; a new node may hold
        # none of the conflicting disks. (Upstream also queues on PVC events.)
        return _HINTS
