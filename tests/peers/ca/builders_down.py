"""Builders for the Cluster Autoscaler scale-down ports: CA's test helpers
(utils/test ``BuildTestNode``, ``BuildTestPod``, the DRA test files' slice, claim
and pod builders) as plain documents decoded into dralab's objects, so that the
ported cases read like upstream's. Written for dralab; CA's builders are read for
what they produce (names, capacities, pool generations), not copied.

Upstream: kubernetes/autoscaler, branch cluster-autoscaler-release-1.37 at
a16f0ae8b5578f09604371c75e0cad29ed794e59.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.api.resource import CounterSet, Device, ResourceClaim, ResourceSlice
from dralab.autoscale.groups import POOL_LABEL
from dralab.cluster import ClusterState
from dralab.scheduler import Scheduler, build_cluster

Doc = dict[str, Any]

CA_REPO = "kubernetes/autoscaler"
CA_COMMIT = "a16f0ae8b5578f09604371c75e0cad29ed794e59"


def obj(doc: Doc) -> KubeObject:
    out = decode(doc)
    assert isinstance(out, KubeObject)
    return out


# --- nodes and pods (utils/test) -------------------------------------------------------

def node(name: str, milli_cpu: int, memory: int, *, group: str | None = None,
         labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
         taints: Sequence[Doc] = (), ready: bool | None = None,
         extra: dict[str, str] | None = None) -> Doc:
    """BuildTestNode: capacity = allocatable = ``milli_cpu`` m CPU, ``memory`` bytes
    and 100 pods (a negative value leaves the resource out); ``group``: the node group
    (dralab's pool label); ``ready``: SetNodeReadyState (None: no conditions)."""
    resources: dict[str, str] = {"pods": "100"}
    if milli_cpu >= 0:
        resources["cpu"] = f"{milli_cpu}m"
    if memory >= 0:
        resources["memory"] = str(memory)
    resources.update(extra or {})
    meta: Doc = {"name": name, "labels": dict(labels or {})}
    if group is not None:
        meta["labels"][POOL_LABEL] = group
    if annotations:
        meta["annotations"] = dict(annotations)
    status: Doc = {"capacity": dict(resources), "allocatable": dict(resources)}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta,
            "spec": {"taints": list(taints)}, "status": status}


def pod(name: str, milli_cpu: int, memory: int, *, node_name: str | None = None,
        owner: tuple[str, str] | None = None, claims: Sequence[str] = (),
        annotations: dict[str, str] | None = None, extra: dict[str, str] | None = None,
        deletion: str | None = None) -> Doc:
    """BuildTestPod in namespace default: one container requesting ``milli_cpu`` m and
    ``memory`` bytes (negative: not requested); ``owner``: (kind, name) of its
    controller; ``claims``: ResourceClaim names it uses (all in its container)."""
    requests: dict[str, str] = {}
    if milli_cpu >= 0:
        requests["cpu"] = f"{milli_cpu}m"
    if memory >= 0:
        requests["memory"] = str(memory)
    requests.update(extra or {})
    container: Doc = {"name": "c", "image": "busybox", "resources": {"requests": requests}}
    if extra:
        container["resources"]["limits"] = dict(extra)
    spec: Doc = {"containers": [container]}
    if claims:
        spec["resourceClaims"] = [{"name": f"claim-ref-{i}", "resourceClaimName": c}
                                  for i, c in enumerate(claims)]
        container["resources"]["claims"] = [{"name": f"claim-ref-{i}"}
                                            for i in range(len(claims))]
    if node_name is not None:
        spec["nodeName"] = node_name
    meta: Doc = {"name": name, "namespace": "default", "uid": name}
    if owner is not None:
        api = "apps/v1" if owner[0] in ("ReplicaSet", "DaemonSet") else "v1"
        meta["ownerReferences"] = [{"apiVersion": api, "kind": owner[0], "name": owner[1],
                                    "uid": owner[1], "controller": True}]
    if annotations:
        meta["annotations"] = dict(annotations)
    if deletion is not None:
        meta["deletionTimestamp"] = deletion
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


# --- DRA objects -------------------------------------------------------------------------

def device_doc(name: str, counter_set: str | None = None, counters: dict[str, str] | None
               = None, attributes: dict[str, str] | None = None) -> Doc:
    out: Doc = {"name": name}
    if counter_set is not None:
        out["consumesCounters"] = [{"counterSet": counter_set, "counters": {
            k: {"value": v} for k, v in (counters or {}).items()}}]
    if attributes:
        out["attributes"] = {k: {"string": v} for k, v in attributes.items()}
    return out


def counter_set_doc(name: str, counters: dict[str, str]) -> Doc:
    return {"name": name, "counters": {k: {"value": v} for k, v in counters.items()}}


def slice_doc(name: str, driver: str, pool: str, node_name: str | None, generation: int,
              count: int, devices: Sequence[Doc] = (),
              counter_sets: Sequence[Doc] = ()) -> Doc:
    spec: Doc = {"driver": driver, "pool": {"name": pool, "generation": generation,
                                            "resourceSliceCount": count}}
    if node_name is not None:
        spec["nodeName"] = node_name
    else:
        spec["allNodes"] = True
    if devices:
        spec["devices"] = list(devices)
    if counter_sets:
        spec["sharedCounters"] = list(counter_sets)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name, "uid": name}, "spec": spec}


def resource_slice(doc: Doc) -> ResourceSlice:
    out = obj(doc)
    assert isinstance(out, ResourceSlice)
    return out


def devices(docs: Iterable[Doc]) -> list[Device]:
    """Device objects, decoded as a slice decodes them."""
    return list(resource_slice(slice_doc("d", "d", "d", "n", 0, 1, list(docs))).spec.devices)


def counter_sets(docs: Iterable[Doc]) -> list[CounterSet]:
    return list(resource_slice(slice_doc("d", "d", "d", "n", 0, 1, (), list(docs)))
                .spec.shared_counters)


def claim_doc(name: str, results: Sequence[tuple[str, str, str, str]] = (), *,
              admin: Sequence[bool] = (), requests: Sequence[Doc] = (),
              node_name: str | None = None, reserved_for: str | None = None,
              allocated: bool = True) -> Doc:
    """A ResourceClaim in namespace default; ``results``: (request, driver, pool, device)
    of its allocation (``admin[i]``: adminAccess of result i); ``requests``: its spec's
    device requests (default: one per result request, count 1)."""
    if not requests:
        names = list(dict.fromkeys(r[0] for r in results)) or ["req"]
        requests = [{"name": n, "exactly": {"deviceClassName": "default-class"}}
                    for n in names]
    doc: Doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default", "uid": name},
                "spec": {"devices": {"requests": list(requests)}}}
    if allocated and results:
        out = []
        for i, (request, driver, pool, device) in enumerate(results):
            item: Doc = {"request": request, "driver": driver, "pool": pool, "device": device}
            if i < len(admin) and admin[i]:
                item["adminAccess"] = True
            out.append(item)
        allocation: Doc = {"devices": {"results": out}}
        if node_name is not None:
            allocation["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [{
                "key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
        status: Doc = {"allocation": allocation}
        if reserved_for is not None:
            status["reservedFor"] = [{"resource": "pods", "name": reserved_for,
                                      "uid": reserved_for}]
        doc["status"] = status
    return doc


def resource_claim(doc: Doc) -> ResourceClaim:
    out = obj(doc)
    assert isinstance(out, ResourceClaim)
    return out


# utilization_test.go's builders -----------------------------------------------------------

def util_test_slices(driver: str, pool: str, node_name: str, generation: int, device_count: int,
                     per_slice: int) -> list[Doc]:
    """utilization_test.go testResourceSlices: ``device_count`` devices named
    driver-pool-dev-i, ``per_slice`` per slice, the pool's slice count their number."""
    count = device_count // per_slice
    return [slice_doc(f"{driver}-{pool}-slice-{s}", driver, pool, node_name, generation, count,
                      [device_doc(f"{driver}-{pool}-dev-{s * per_slice + d}")
                       for d in range(per_slice)])
            for s in range(count)]


def util_test_partitionable_slices(driver: str, pool: str, node_name: str, generation: int,
                                   partitions: int, slice_count: int, *names: str) -> list[Doc]:
    """utilization_test.go testResourceSlicesWithPartitionableDevices: per name,
    ``partitions`` partitions (10Gi memory, 100m cpu counters each) and the whole
    device, in one slice; their counter sets in a second slice."""
    devs: list[Doc] = []
    for name in names:
        for i in range(partitions):
            devs.append(device_doc(f"{name}-partition-{i}", f"{name}-counter-set",
                                   {"memory": "10Gi", "cpu": "100m"}))
        devs.append(device_doc(name, f"{name}-counter-set",
                               {"memory": f"{10 * partitions}Gi",
                                "cpu": f"{100 * partitions}m"}))
    sets = [counter_set_doc(f"{name}-counter-set", {"memory": f"{10 * partitions}Gi",
                                                    "cpu": f"{100 * partitions}m"})
            for name in names]
    base = f"{driver}-{pool}-slice"
    return [slice_doc(base, driver, pool, node_name, generation, slice_count, devs),
            slice_doc(f"{base}-counters", driver, pool, node_name, generation, slice_count,
                      (), sets)]


def util_test_pod_claims(driver: str, pool: str, device_count: int, per_pod: int,
                         admin: bool | Sequence[bool] = False, offset: int = 0) -> list[Doc]:
    """utilization_test.go testPodsWithClaims (and the mixed admin-access variant): the
    claims of ``device_count / per_pod`` pods, one device each, the devices
    driver-pool-dev-0.. in order; ``admin``: adminAccess for all, or per claim of a pod."""
    out = []
    device = 0
    for p in range(device_count // per_pod):
        pod_name = f"{driver}-{pool}-pod-{p + offset}"
        for c in range(per_pod):
            flag = admin if isinstance(admin, bool) else admin[c]
            out.append(claim_doc(f"{pod_name}-claim-{c}",
                                 [(f"request-{c}", driver, pool, f"{driver}-{pool}-dev-{device}")],
                                 admin=[flag]))
            device += 1
    return out


def util_test_custom_claim(pod_name: str, driver: str, pool: str, devs: Sequence[str]) -> Doc:
    """utilization_test.go testPodsWithCustomClaims: one claim holding ``devs``."""
    return claim_doc(f"{pod_name}-{driver}-{pool}-pod-claim",
                     [(f"request-{i}", driver, pool, d) for i, d in enumerate(devs)])


# static_autoscaler_dra_test.go's builders --------------------------------------------------

def dra_test_slices(driver: str, pool: str, node_name: str, slice_count: int, generation: int,
                    devs: Sequence[Doc]) -> list[Doc]:
    """static_autoscaler_dra_test.go testResourceSlices for one node: the devices spread
    over ``slice_count`` slices, ceil(devices / slices) per slice."""
    per_slice = math.ceil(len(devs) / slice_count) if devs else 0
    out = []
    for s in range(slice_count):
        chunk = list(devs[s * per_slice:(s + 1) * per_slice]) if per_slice else []
        out.append(slice_doc(f"{driver}-{pool}-gen{generation}-slice{s}", driver, pool,
                             node_name, generation, slice_count, chunk))
    return out


def cluster_of(docs: Iterable[Doc]) -> tuple[ClusterState, Scheduler]:
    """A cluster of ``docs`` (bound pods only) and its scheduler."""
    cluster, pending = build_cluster([obj(d) for d in docs])
    scheduler = Scheduler.build(cluster)
    assert not pending, "these ports bind every pod"
    return cluster, scheduler


# drainability tests' pods ----------------------------------------------------------------

TEST_TIME = 1608310800.0  # time.Date(2020, time.December, 18, 17, 0, 0, 0, time.UTC)


def at(offset: float) -> str:
    """TEST_TIME + ``offset`` seconds as an RFC 3339 time."""
    return datetime.fromtimestamp(TEST_TIME + offset, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def drain_pod(name: str = "bar", namespace: str = "default",
              owner: tuple[str, str, str] | None = None,
              annotations: dict[str, str] | None = None, labels: dict[str, str] | None = None,
              deleted: float | None = None, created: float | None = None,
              restart: str | None = None, phase: str | None = None, grace: int | None = None,
              volumes: Sequence[Doc] = ()) -> Pod:
    """A pod as upstream's cases write them; ``owner``: (name, kind, apiVersion) as
    GenerateOwnerReferences (a controller); times: seconds from TEST_TIME."""
    meta: Doc = {"name": name, "namespace": namespace}
    if owner is not None:
        meta["ownerReferences"] = [{"name": owner[0], "kind": owner[1], "apiVersion": owner[2],
                                    "uid": "", "controller": True, "blockOwnerDeletion": True}]
    if annotations:
        meta["annotations"] = annotations
    if labels:
        meta["labels"] = labels
    if deleted is not None:
        meta["deletionTimestamp"] = at(deleted)
    if created is not None:
        meta["creationTimestamp"] = at(created)
    spec: Doc = {"nodeName": "node", "containers": [{"name": "c", "image": "busybox"}]}
    if restart is not None:
        spec["restartPolicy"] = restart
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    if volumes:
        spec["volumes"] = list(volumes)
    doc: Doc = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if phase is not None:
        doc["status"] = {"phase": phase}
    out = obj(doc)
    assert isinstance(out, Pod)
    return out


def empty_dir(name: str) -> Doc:
    return {"name": name, "emptyDir": {"medium": ""}}
