"""Pending pods as scale-up units, and which bound pods can move.

A unit is one pod, or a whole gang (pods labelled ``dralab.dev/gang`` or a Kueue
pod group, see ``gang_of``): a gang's nodes are added all or nothing. Units of
identical pods share an equivalence key (namespace, labels, the pod spec), as
Cluster Autoscaler's pod equivalence groups do: what one cannot use, its
equivalents cannot either.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from dralab.api.core import Pod
from dralab.api.quantity import Quantity
from dralab.cluster import PodInfo
from dralab.cluster.records import raw_spec_field
from dralab.scheduler.plugins.gangscheduling import gang_of

__all__ = ["PodUnit", "equivalence_key", "is_daemon_pod", "is_mirror_pod", "is_movable",
           "not_for_scale_up", "pod_units", "topology_sensitive"]

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def _quantity_text(obj: object) -> object:
    if isinstance(obj, Quantity):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj)!r}")


_ENCODER = msgspec.json.Encoder(enc_hook=_quantity_text, order="deterministic")


@dataclass(frozen=True, slots=True)
class PodUnit:
    """Pods that scale up together; ``name`` is the first pod's (or the gang's) key."""

    name: str
    pods: tuple[PodInfo, ...]
    key: Hashable

    @property
    def keys(self) -> list[str]:
        return [p.key for p in self.pods]


def _sanitized(spec: dict[str, Any]) -> dict[str, Any]:
    """The raw pod spec without what Cluster Autoscaler's PodSpecSemanticallyEqual drops
    (utils/utils.go, sanitizePodSpec): the hostname, every container's env, projected
    volumes and their mounts. And without nodeName, which a pending pod has not got."""
    out = {k: v for k, v in spec.items() if k not in ("hostname", "nodeName")}
    volumes = spec.get("volumes")
    projected: set[Any] = set()
    if isinstance(volumes, list):
        projected = {v.get("name") for v in volumes if isinstance(v, dict) and "projected" in v}
        out["volumes"] = [v for v in volumes
                          if not (isinstance(v, dict) and v.get("name") in projected)]
    for field_name in ("containers", "initContainers"):
        containers = spec.get(field_name)
        if not isinstance(containers, list):
            continue
        kept = []
        for c in containers:
            if isinstance(c, dict):
                c = {k: v for k, v in c.items() if k != "env"}
                mounts = c.get("volumeMounts")
                if isinstance(mounts, list) and projected:
                    c["volumeMounts"] = [m for m in mounts if not (
                        isinstance(m, dict) and m.get("name") in projected)]
            kept.append(c)
        out[field_name] = kept
    return out


def equivalence_key(pod: Pod) -> Hashable:
    """Pods with one key are interchangeable for placement.

    As Cluster Autoscaler's pod equivalence groups (core/scaleup/equivalence/groups.go,
    BuildPodGroups): one controller, equal labels, and equal specs once the fields
    that differ pod by pod and never matter to scheduling are dropped (``_sanitized``;
    the whole spec as written, so that affinity and topology spread count too).
    Labels count: the pods of an Indexed Job or a StatefulSet differ in their index
    label, so each is a group of its own, as in CA. One departure: CA never groups
    pods without a controller (its groups are buckets per controller, at most ten
    each), while identical bare pods share a key here. The key only saves work --
    what one pod of a key cannot use its equivalents cannot either -- so no decision
    depends on it."""
    meta = pod.metadata
    labels = tuple(sorted((meta.labels or {}).items()))
    controller = next(((ref.kind, ref.name, ref.uid) for ref in meta.owner_references
                       if ref.controller), None)
    raw = pod.raw.get("spec") if isinstance(pod.raw, dict) else None
    if isinstance(raw, dict):
        spec = _ENCODER.encode(_sanitized(raw))
    else:
        spec = _ENCODER.encode(msgspec.structs.replace(pod.spec, node_name=None))
    return (meta.namespace or "default", controller, labels, spec)


def pod_units(pods: Iterable[PodInfo]) -> list[PodUnit]:
    """``pods`` as units, in arrival order (a gang where its first member arrived)."""
    units: list[PodUnit] = []
    gangs: dict[str, list[PodInfo]] = {}
    order: list[tuple[int, str | PodInfo]] = []
    for info in sorted(pods, key=lambda p: p.sequence):
        gang = gang_of(info.pod)
        if gang is None:
            order.append((info.sequence, info))
            continue
        if gang[0] not in gangs:
            gangs[gang[0]] = []
            order.append((info.sequence, gang[0]))
        gangs[gang[0]].append(info)
    for _, item in order:
        if isinstance(item, str):
            members = tuple(gangs[item])
            key = ("gang", tuple(equivalence_key(p.pod) for p in members))
            units.append(PodUnit(f"gang {item}", members, key))
        else:
            units.append(PodUnit(item.key, (item,), equivalence_key(item.pod)))
    return units


def topology_sensitive(pod: Pod, topology_keys: Iterable[str]) -> bool:
    """Whether where a node sits can matter to the pod: affinity, topology spread, or a
    nodeSelector on a topology label (zone, block, rack, hostname)."""
    spec = pod.spec
    if spec.affinity is not None or raw_spec_field(pod, "topologySpreadConstraints"):
        return True
    keys = {*topology_keys, "kubernetes.io/hostname"}
    return any(k in keys for k in spec.node_selector)


def has_persistent_volumes(pod: Pod) -> bool:
    """Whether the pod mounts a PersistentVolumeClaim (named or ephemeral): its volume's
    node affinity, or its StorageClass's allowed topologies, may pin it to a zone
    (kube-scheduler's VolumeBinding and VolumeZone), so where a node sits can matter."""
    volumes = raw_spec_field(pod, "volumes")
    return isinstance(volumes, list) and any(
        isinstance(v, dict) and ("persistentVolumeClaim" in v or "ephemeral" in v)
        for v in volumes)


def is_daemon_pod(pod: Pod) -> bool:
    """Owned by a DaemonSet: it goes with its node and never blocks a scale-down."""
    return any(ref.kind == "DaemonSet" and ref.controller
               for ref in pod.metadata.owner_references)


def not_for_scale_up(info: PodInfo, expendable_cutoff: int) -> str | None:
    """Why Cluster Autoscaler's pod list processors drop a pending pod before scale-up
    (core/podlistprocessor: filter_out_daemon_sets.go, filter_out_expendable.go), or
    None: a DaemonSet pod needs its own node, and an expendable pod (priority below
    --expendable-pods-priority-cutoff) never causes a scale-up."""
    if is_daemon_pod(info.pod):
        return "a DaemonSet pod: scale-up cannot help it (it needs a specific node)"
    # The pod's priority as admission sets it (from its class, or the global default).
    if info.priority < expendable_cutoff:
        return (f"expendable: priority {info.priority} is below "
                f"--expendable-pods-priority-cutoff {expendable_cutoff}")
    return None


def is_mirror_pod(pod: Pod) -> bool:
    """A static pod's mirror (the kubelet's ``kubernetes.io/config.mirror`` annotation):
    it comes with its node."""
    return MIRROR_ANNOTATION in (pod.metadata.annotations or {})


def is_movable(pod: Pod) -> bool:
    """Whether scale-down may evict the pod (Cluster Autoscaler's default rules): it is
    replicated (has a controller owner) or annotated safe-to-evict, and not annotated
    safe-to-evict: "false"."""
    annotation = (pod.metadata.annotations or {}).get(SAFE_TO_EVICT)
    if annotation == "false":
        return False
    if annotation == "true":
        return True
    return any(ref.controller for ref in pod.metadata.owner_references)


def unit_pod_keys(units: Sequence[PodUnit]) -> list[str]:
    return [key for unit in units for key in unit.keys]
