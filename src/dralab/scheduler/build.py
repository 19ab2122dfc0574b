"""Building the ClusterState of a run from loaded API objects.

Nodes, PriorityClasses, DeviceClasses, ResourceSlices, DeviceTaintRules,
ResourceClaims and ResourceClaimTemplates go into the state; Pods are added in
input order, each workload (Job, CronJob, Deployment, ReplicaSet, StatefulSet,
DaemonSet) expanded in place into its pods (see ``expand``). Pods get namespace
"default" when they have none, a name when they only have generateName, and a
UID when they have none. Pure apart from the seeded RNG; objects are never mutated.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import msgspec

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.core import Node, Pod, PriorityClass
from dralab.api.features import FeatureGates
from dralab.api.resource import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)

from .cluster import ClusterState, PodInfo
from .expand import Expander

__all__ = ["build_cluster"]


def _key(obj: KubeObject) -> str:
    return f"{obj.metadata.namespace or 'default'}/{obj.name}"


def _normalise_pod(pod: Pod, expander: Expander) -> Pod:
    meta = pod.metadata
    changes: dict[str, str] = {}
    if not meta.namespace:
        changes["namespace"] = "default"
    if not meta.name and meta.generate_name:
        changes["name"] = expander.generate_name(changes.get("namespace", meta.namespace or ""),
                                                 meta.generate_name)
    if not meta.uid:
        changes["uid"] = expander.uid()
    if not changes:
        return pod
    return msgspec.structs.replace(pod, metadata=msgspec.structs.replace(meta, **changes))


def build_cluster(objects: Iterable[KubeObject], features: FeatureGates | None = None,
                  seed: int = 0) -> tuple[ClusterState, list[PodInfo]]:
    """The cluster and its pending pods (no spec.nodeName), in arrival order."""
    objects = list(objects)
    cluster = ClusterState(features=features or FeatureGates())
    for obj in objects:
        if isinstance(obj, PriorityClass):
            cluster.priority_classes[obj.name] = obj
        elif isinstance(obj, Node):
            cluster.add_node(obj)
        elif isinstance(obj, DeviceClass):
            cluster.classes[obj.name] = obj
        elif isinstance(obj, ResourceSlice):
            cluster.slices.append(obj)
        elif isinstance(obj, DeviceTaintRule):
            cluster.taint_rules.append(obj)
        elif isinstance(obj, ResourceClaim):
            cluster.add_claim(obj)
        elif isinstance(obj, ResourceClaimTemplate):
            cluster.templates[_key(obj)] = obj

    rng = random.Random(seed)
    taken = {_key(o) for o in objects if isinstance(o, Pod) and o.name}
    expander = Expander(rng, [n.node for n in cluster.nodes.values()], taken)
    pending: list[PodInfo] = []
    for obj in objects:
        if isinstance(obj, Pod):
            pods: Iterable[Pod] = [_normalise_pod(obj, expander)]
        else:
            pods = [p for doc in expander.expand(obj) if isinstance(p := decode(doc), Pod)]
        for pod in pods:
            info = cluster.add_pod(pod)
            if not pod.spec.node_name:
                pending.append(info)
    return cluster, pending
