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

import msgspec

from dralab.api.core import Pod
from dralab.api.quantity import Quantity
from dralab.cluster.records import raw_spec_field
from dralab.scheduler.cluster import PodInfo
from dralab.scheduler.plugins.gangscheduling import gang_of

__all__ = ["PodUnit", "equivalence_key", "is_daemon_pod", "is_movable", "pod_units",
           "topology_sensitive"]

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"


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


def equivalence_key(pod: Pod) -> Hashable:
    """Pods with one key are interchangeable for placement."""
    meta = pod.metadata
    labels = tuple(sorted((meta.labels or {}).items()))
    spec = msgspec.structs.replace(pod.spec, node_name=None)
    return (meta.namespace or "default", labels, _ENCODER.encode(spec))


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


def is_daemon_pod(pod: Pod) -> bool:
    """Owned by a DaemonSet: it goes with its node and never blocks a scale-down."""
    return any(ref.kind == "DaemonSet" and ref.controller
               for ref in pod.metadata.owner_references)


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
