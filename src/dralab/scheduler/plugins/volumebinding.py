"""VolumeBinding (PreFilter, Filter), as kube-scheduler v1.36.2 checks a pod's
PersistentVolumeClaims (pkg/scheduler/framework/plugins/volumebinding), on a snapshot:
nothing is bound, provisioned or written back.

PreFilter: a pod without PVC volumes skips the plugin. A missing claim, a Lost one or one
being deleted make the pod UnschedulableAndUnresolvable with the API's message
(``persistentvolumeclaim "x" not found``); a claim not yet bound whose class binds
Immediate (or that has no class) gives ``pod has unbound immediate
PersistentVolumeClaims``. A claim counts as bound when it names its volume and either
carries ``pv.kubernetes.io/bind-completed`` (as the PV controller writes) or has
``status.phase: Bound`` (as a claim written in a file may say; upstream would wait for the
PV controller to add the annotation).

Filter, per node (UnschedulableAndUnresolvable, upstream's reasons and order):
* a bound claim's PersistentVolume must exist (``node(s) unavailable due to one or more
  pvc(s) bound to non-existent pv(s)``) and its ``nodeAffinity`` match the node
  (``node(s) didn't match PersistentVolume's node affinity``);
* a WaitForFirstConsumer claim binds to an available PersistentVolume of its class that
  fits (access modes, volume mode, capacity, node affinity; the smallest first, one per
  claim) or else is provisioned: the class must name a provisioner other than
  ``kubernetes.io/no-provisioner`` and its ``allowedTopologies`` match the node, else
  ``node(s) didn't find available persistent volumes to bind``. Dynamic provisioning is
  an approximation: storage capacity (CSIStorageCapacity) is not modelled, so
  ``node(s) did not have enough free storage`` is never given.

Score: upstream scores only static bindings' utilisation with the StorageCapacityScoring
gate's default shape; dralab does not score (PreScore would skip for provisioned claims,
and the static case is listed as a known difference).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from dralab.api.quantity import QuantityError, parse_quantity
from dralab.api.storage import PersistentVolume, PersistentVolumeClaim
from dralab.cluster import ClusterState, NodeInfo, PodInfo

from ..framework import CycleState, Handle, PreFilterResult, Status
from ..hints import EventHint
from .eventhints import NODE_HINTS
from .volumeclaims import (
    ANN_BIND_COMPLETED,
    NotFound,
    NotOwned,
    claim_class,
    claim_volumes,
    find_claim,
    find_class,
    find_volume,
    is_delay_binding,
    node_selector_matches,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT", "ERR_REASON_NODE_CONFLICT", "ERR_REASON_PV_NOT_EXIST",
    "ERR_UNBOUND_IMMEDIATE", "NAME", "VolumeBinding",
]

NAME = "VolumeBinding"
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_PV_NOT_EXIST = ("node(s) unavailable due to one or more pvc(s) bound to "
                           "non-existent pv(s)")
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
_PRE_FILTER_KEY = "PreFilter" + NAME
_SUCCESS = Status.success()
_SKIP = Status.skip(NAME)


def claim_is_bound(claim: PersistentVolumeClaim) -> bool:
    if not claim.spec.volume_name:
        return False
    return (ANN_BIND_COMPLETED in claim.metadata.annotations
            or claim.status.phase == "Bound")


class _Claims:
    """PreFilter's state: the bound claims and the WaitForFirstConsumer claims."""

    __slots__ = ("bound", "delayed")

    def __init__(self, bound: list[PersistentVolumeClaim],
                 delayed: list[PersistentVolumeClaim]) -> None:
        self.bound = bound
        self.delayed = delayed

    def clone(self) -> _Claims:
        return self


def _storage(raw: Any, *path: str) -> int | None:
    """A storage quantity at ``path`` in a document, in bytes (None: unset or unparsable)."""
    value = raw
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(parse_quantity(str(value)).value())
    except (QuantityError, ValueError, TypeError, AttributeError):
        return None


def _volume_mode(raw: Any) -> str:
    spec = raw.get("spec") if isinstance(raw, Mapping) else None
    mode = spec.get("volumeMode") if isinstance(spec, Mapping) else None
    return mode if isinstance(mode, str) and mode else "Filesystem"


def _phase(raw: Any) -> str:
    status = raw.get("status") if isinstance(raw, Mapping) else None
    phase = status.get("phase") if isinstance(status, Mapping) else None
    return phase if isinstance(phase, str) else ""


def _fits(pv: PersistentVolume, claim: PersistentVolumeClaim, class_name: str,
          node: NodeInfo) -> bool:
    """pvutil.FindMatchingVolume's checks for one volume (snapshot level)."""
    ref = pv.spec.claim_ref
    if ref is not None and (ref.name != claim.name
                            or (ref.namespace or "default") != (claim.namespace or "default")):
        return False  # pre-bound to another claim
    if ref is None and (pv.metadata.deletion_timestamp or _phase(pv.raw) not in ("", "Available")):
        return False
    if pv.spec.storage_class_name != class_name:
        return False
    if not set(claim.spec.access_modes) <= set(pv.spec.access_modes):
        return False
    if _volume_mode(pv.raw) != _volume_mode(claim.raw):
        return False
    wanted = _storage(claim.raw, "spec", "resources", "requests", "storage") or 0
    held = _storage(pv.raw, "spec", "capacity", "storage") or 0
    if held < wanted:
        return False
    return node_selector_matches(pv.spec.node_affinity.required
                                 if pv.spec.node_affinity else None, node)


class VolumeBinding:
    def __init__(self, handle: Handle | None = None) -> None:
        self._handle = handle

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> VolumeBinding:
        return cls(handle)

    @property
    def name(self) -> str:
        return NAME

    def filter_relevant(self, pod: PodInfo) -> bool:
        return bool(claim_volumes(pod))

    def pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                   ) -> tuple[PreFilterResult | None, Status]:
        volumes = claim_volumes(pod)
        if not volumes:
            return None, _SKIP
        bound: list[PersistentVolumeClaim] = []
        delayed: list[PersistentVolumeClaim] = []
        immediate = False
        for volume in volumes:
            try:
                claim = find_claim(cluster, pod, volume)
            except NotFound as missing:
                message = str(missing)
                if volume.ephemeral:
                    message = ("waiting for ephemeral volume controller to create the "
                               f'persistentvolumeclaim "{volume.claim_name}"')
                return None, Status.unresolvable(NAME, message)
            except NotOwned as foreign:
                return None, Status.unresolvable(NAME, str(foreign))
            if claim.status.phase == "Lost":
                return None, Status.unresolvable(
                    NAME, f'persistentvolumeclaim "{claim.name}" bound to non-existent '
                          f'persistentvolume "{claim.spec.volume_name}"')
            if claim.metadata.deletion_timestamp:
                return None, Status.unresolvable(
                    NAME, f'persistentvolumeclaim "{claim.name}" is being deleted')
            if claim_is_bound(claim):
                bound.append(claim)
            elif is_delay_binding(cluster, claim) and not claim.spec.volume_name:
                delayed.append(claim)
            else:
                immediate = True
        if immediate:
            return None, Status.unresolvable(NAME, ERR_UNBOUND_IMMEDIATE)
        state.write(_PRE_FILTER_KEY, _Claims(bound, delayed))
        return None, _SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def dry_run_key(self, state: CycleState, pod: PodInfo) -> Hashable | None:
        """Filter reads the node's labels and the store's volume objects, never its pods."""
        return (NAME, pod.key)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        data = state.get(_PRE_FILTER_KEY)
        if not isinstance(data, _Claims):
            if not claim_volumes(pod):
                return _SUCCESS
            return Status.error(NAME, f"reading {_PRE_FILTER_KEY!r} from cycleState: not found")
        cluster = self._cluster()
        bound_ok, found = True, True
        for claim in data.bound:
            try:
                pv = find_volume(cluster, claim.spec.volume_name)
            except NotFound:
                found = False
                break
            affinity = pv.spec.node_affinity.required if pv.spec.node_affinity else None
            if not node_selector_matches(affinity, node):
                bound_ok = False
                break
        unbound_ok = True
        if data.delayed:
            unbound_ok, error = self._delayed_fit(cluster, data.delayed, node)
            if error is not None:
                return Status.error(NAME, error)
        reasons = [reason for ok, reason in (
            (bound_ok, ERR_REASON_NODE_CONFLICT), (unbound_ok, ERR_REASON_BIND_CONFLICT),
            (found, ERR_REASON_PV_NOT_EXIST)) if not ok]
        if reasons:
            return Status.unresolvable(NAME, *reasons)
        return _SUCCESS

    def _cluster(self) -> ClusterState:
        if self._handle is None:
            raise RuntimeError("VolumeBinding needs a handle")
        return self._handle.cluster

    def _delayed_fit(self, cluster: ClusterState, claims: Sequence[PersistentVolumeClaim],
                     node: NodeInfo) -> tuple[bool, str | None]:
        """Static binding first (the smallest fitting available volume, one per claim),
        then provisioning for the rest (checkVolumeProvisions, without capacity)."""
        taken: set[str] = set()
        to_provision: list[PersistentVolumeClaim] = []
        volumes = [obj for kind, _, name in cluster.volume_keys() if kind == "PersistentVolume"
                   if isinstance(obj := cluster.volume_object(kind, name), PersistentVolume)]
        for claim in claims:
            class_name = claim_class(cluster, claim)
            best: tuple[int, str] | None = None
            for pv in volumes:
                if pv.name in taken or not _fits(pv, claim, class_name, node):
                    continue
                rank = (_storage(pv.raw, "spec", "capacity", "storage") or 0, pv.name)
                if best is None or rank < best:
                    best = rank
            if best is not None:
                taken.add(best[1])
            else:
                to_provision.append(claim)
        for claim in to_provision:
            class_name = claim_class(cluster, claim)
            if not class_name:
                return False, f'no class for claim "{claim.namespace}/{claim.name}"'
            try:
                sc = find_class(cluster, class_name)
            except NotFound:
                return False, f'failed to find storage class "{class_name}"'
            if sc.provisioner in ("", NOT_SUPPORTED_PROVISIONER):
                return False, None
            if sc.allowed_topologies and not _topology_matches(sc, node):
                return False, None
        return True, None

    def events_to_register(self) -> Sequence[EventHint]:
        # Upstream also queues on PVC, PV, StorageClass, CSINode, CSIDriver and
        # CSIStorageCapacity events; dralab's store raises none for volume objects.
        return NODE_HINTS


def _topology_matches(sc: Any, node: NodeInfo) -> bool:
    """MatchTopologySelectorTerms: any term whose every requirement's key is a node
    label with one of the listed values."""
    labels = node.node.metadata.labels
    for term in sc.allowed_topologies:
        if not term.match_label_expressions:
            continue  # an empty term selects nothing
        if all(req.key in labels and labels[req.key] in req.values
               for req in term.match_label_expressions):
            return True
    return False
