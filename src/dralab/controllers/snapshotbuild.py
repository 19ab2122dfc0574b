"""Building the ClusterState of a run from loaded API objects: a cluster snapshot.

1. Repeated objects (same kind, namespace and name) are reduced as ``kubectl
   apply`` would leave them (``applyorder.apply_order``: first place, last content).
2. Every object with ``generateName`` and no name gets a name as the API server
   would make it (``generatednames``): Nodes, slices, claims, templates, workloads, pods.
3. Nodes, PriorityClasses, DeviceClasses, ResourceSlices, DeviceTaintRules,
   ResourceClaims (allocated ones keep their devices and reservedFor),
   ResourceClaimTemplates and PodGroups (with a namespace and a UID) go into the state;
   claims and templates with the API server's defaults (``api.resourcedefaults``).
   So do the selectors of Services, ReplicaSets and StatefulSets (and of the ReplicaSets
   Deployments create here), which PodTopologySpread's default constraints read.
   Each valid NVIDIA ComputeDomain adds the workload channel ResourceClaimTemplate its
   controller creates (``computedomain``), unless the snapshot already holds one.
4. Pods are added in input order; each workload (Job, CronJob, Deployment,
   ReplicaSet, StatefulSet, DaemonSet) adds, in its place, only the pods its
   controller is missing (``workloads``). Pods get namespace "default" when they
   have none and a UID when they have none; ResourceClaims get the namespace too.
   A pod without status.phase is created as the API server creates it
   (``dralab.cluster.prepare_for_create``: generation 1, phase Pending, qosClass).
5. The run's clock starts at the newest creationTimestamp of the input
   (``ClusterState.clock``): what the run writes is stamped from there.

Bound pods (spec.nodeName) keep their node and its resources; pods that Succeeded
or Failed hold nothing (the claims only they used are released as the claim
controller releases them); pods being deleted are not scheduled. The pending pods
are the rest. Pure apart from the seeded RNG; objects are never mutated.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import msgspec

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.core import Namespace, Node, Pod, PriorityClass
from dralab.api.features import FeatureGates
from dralab.api.resource import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from dralab.api.resourcedefaults import default_claim_spec
from dralab.api.scheduling import PodGroup
from dralab.api.service import Service
from dralab.api.storage import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from dralab.api.workloads import ReplicaSet, StatefulSet
from dralab.cluster import ClusterState, PodInfo, prepare_for_create, snapshot_moment

from .applyorder import apply_order
from .computedomain import compute_domains, workload_claim_template
from .generatednames import NameGenerator
from .owners import is_being_deleted, is_terminal
from .resourceclaims import release_pod_claims
from .workloadobjects import PodFactory
from .workloads import Controllers

__all__ = ["build_cluster"]


def _with_namespace(claim: ResourceClaim) -> ResourceClaim:
    # The API server stores every namespaced object with its namespace; output names it.
    if claim.metadata.namespace:
        return claim
    meta = msgspec.structs.replace(claim.metadata, namespace="default")
    return msgspec.structs.replace(claim, metadata=meta)


def _with_api_defaults(claim: ResourceClaim) -> ResourceClaim:
    # A claim written by hand lacks what kube-apiserver fills in on create (allocationMode,
    # count, toleration operators); the claims a run writes read as the cluster stores them.
    spec = default_claim_spec(claim.spec)
    return claim if spec is claim.spec else msgspec.structs.replace(claim, spec=spec)


def _template_with_api_defaults(template: ResourceClaimTemplate) -> ResourceClaimTemplate:
    # The API server defaults a template's claim spec too, and the resourceclaim controller
    # copies the stored spec into the claims it makes.
    spec = default_claim_spec(template.spec.spec)
    if spec is template.spec.spec:
        return template
    return msgspec.structs.replace(template, spec=msgspec.structs.replace(template.spec,
                                                                          spec=spec))


def _normalise_pod(pod: Pod, names: NameGenerator, now: str) -> Pod:
    meta = pod.metadata
    changes: dict[str, str] = {}
    if not meta.namespace:
        changes["namespace"] = "default"
    if not meta.uid:
        changes["uid"] = names.uid()
    if changes:
        pod = msgspec.structs.replace(pod, metadata=msgspec.structs.replace(meta, **changes))
    # A pod without a phase never went through the API server: it is created now.
    return prepare_for_create(pod, now) if pod.status.phase is None else pod


def _normalise_pod_group(group: PodGroup, names: NameGenerator) -> PodGroup:
    # Claims reserved for the group name it by UID, as they name pods.
    meta = group.metadata
    if meta.namespace and meta.uid:
        return group
    meta = msgspec.structs.replace(meta, namespace=meta.namespace or "default",
                                   uid=meta.uid or names.uid())
    return msgspec.structs.replace(group, metadata=meta)


def _release_finished(cluster: ClusterState, finished: list[PodInfo]) -> None:
    """What the claim controller does for pods that are done: they stop being
    consumers; claims nobody uses any more are deallocated, generated ones deleted."""
    for info in finished:
        release_pod_claims(cluster, info)


def build_cluster(objects: Iterable[KubeObject], features: FeatureGates | None = None,
                  seed: int = 0) -> tuple[ClusterState, list[PodInfo]]:
    """The cluster and its pending pods (no spec.nodeName), in arrival order."""
    objects, _ = apply_order(list(objects))
    # The API server's names and UIDs: a stream of their own, not the scheduler's
    # (``Scheduler.build`` seeds random.Random(seed)), or the claims the scheduler's
    # claim controller creates would draw the UIDs of the pods made here.
    rng = random.Random(f"{seed}:names")
    names = NameGenerator(rng, objects)
    objects = [names.name_object(o) for o in objects]
    cluster = ClusterState(features=features or FeatureGates(),
                           moment=snapshot_moment(objects))
    now = cluster.clock.now()
    for obj in objects:
        if isinstance(obj, PriorityClass):
            cluster.add_priority_class(obj)
        elif isinstance(obj, Node):
            cluster.add_node(obj)
        elif isinstance(obj, DeviceClass):
            cluster.add_class(obj)
        elif isinstance(obj, ResourceSlice):
            cluster.put_slice(obj)
        elif isinstance(obj, DeviceTaintRule):
            cluster.add_taint_rule(obj)
        elif isinstance(obj, ResourceClaim):
            cluster.add_claim(_with_namespace(_with_api_defaults(obj)))
        elif isinstance(obj, ResourceClaimTemplate):
            cluster.add_template(_template_with_api_defaults(obj))
        elif isinstance(obj, PodGroup):
            cluster.add_pod_group(_normalise_pod_group(obj, names))
        elif isinstance(obj, Namespace):
            cluster.add_namespace(obj)
        elif isinstance(obj, PersistentVolumeClaim | PersistentVolume | StorageClass | CSINode
                        | VolumeAttachment | CSIDriver):
            cluster.put_volume_object(obj)
        elif isinstance(obj, Service):
            cluster.set_service_selector(obj.metadata.namespace or "default", obj.name,
                                         obj.spec.selector)
        elif isinstance(obj, ReplicaSet | StatefulSet):
            cluster.set_controller_selector(obj.KIND, obj.metadata.namespace or "default",
                                            obj.name, obj.spec.selector)

    for cd in compute_domains(objects):
        # NVIDIA's compute-domain controller creates the workload channel template the
        # CD names; one already in the snapshot (written by that controller) is kept.
        template = workload_claim_template(cd)
        if cluster.template(template.metadata.namespace or "default", template.name) is None:
            cluster.add_template(_template_with_api_defaults(template))

    controllers = Controllers(objects, [n.node for n in cluster.nodes.values()])
    factory = PodFactory(names)
    pending: list[PodInfo] = []
    finished: list[PodInfo] = []
    for obj in objects:
        if isinstance(obj, Pod):
            if controllers.replaced(obj):
                continue
            pods: Iterable[Pod] = [_normalise_pod(obj, names, now)]
        else:
            pods = [prepare_for_create(p, now) for doc in controllers.create(obj, factory)
                    if isinstance(p := decode(doc), Pod)]
        for pod in pods:
            info = cluster.add_pod(pod)
            if is_terminal(pod):
                finished.append(info)
            elif not pod.spec.node_name and not is_being_deleted(pod):
                pending.append(info)
    for kind, namespace, name, selector in controllers.created_controllers:
        cluster.set_controller_selector(kind, namespace, name, selector)
    _release_finished(cluster, finished)
    return cluster, pending
