"""Run one DRA scheduling scenario on the real control plane and in dralab, side by side.

A scenario is a list of API objects as a user writes them: Nodes (``status.allocatable`` is
copied onto the real Node, which is made Ready and untainted as the node lifecycle controller
would), DeviceClasses, ResourceSlices, DeviceTaintRules, ResourceClaims, ResourceClaimTemplates
and Pods. Cluster-scoped names are the caller's business: prefix them with the test's namespace
so that scenarios of one session never see each other's nodes or devices.

``run_on_server`` creates the objects (pods one at a time, each waited for until kube-scheduler
bound it or reported it unschedulable, so that the real queue order is creation order, as
dralab's is for pods of one priority) and returns what the server then holds: pods, claims and
the FailedScheduling events. ``run_in_dralab`` schedules the same objects with the given gates
and returns the same shapes. ``Outcome`` reduces both to what the comparison is about.
"""

from __future__ import annotations

import copy
import functools
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from dralab.api.features import FeatureGates
from dralab.api.io import Document, dumps, load_documents, to_list
from dralab.scheduler import schedule
from dralab.validation import validate_documents

from .api import ApiError, Client

__all__ = ["CLUSTER_SCOPED", "RUNNING", "Observed", "ServerRun", "Tracker", "claim_key", "observe",
           "run_in_dralab", "run_on_server"]

Obj = dict[str, Any]
# Bounds a hang of the real scheduler; it measures nothing (the CPU budget is checked apart).
_SETTLE_TIMEOUT_S = 90.0
_POLL_S = 0.1
_INFORMER_SETTLE_S = 1.0
# A key a scenario puts on a Pod (taken off before it is created): the pod is running before
# the others arrive (see run_on_server).
RUNNING = "x-dralab-running"
CLUSTER_SCOPED = ("Node", "DeviceClass", "ResourceSlice", "DeviceTaintRule", "PriorityClass",
                  "PersistentVolume", "StorageClass", "CSINode", "VolumeAttachment")


@dataclass
class Tracker:
    """Cluster-scoped objects a test created, deleted at its end (namespaced ones go with the
    namespace)."""

    kube: Client
    made: list[tuple[str, str, str]] = field(default_factory=list)

    def created(self, obj: Obj) -> None:
        self.made.append((obj["apiVersion"], obj["kind"], obj["metadata"]["name"]))

    def cleanup(self) -> None:
        for api_version, kind, name in reversed(self.made):
            try:
                self.kube.delete(api_version, kind, name)
            except ApiError as err:
                if err.status != 404:
                    raise
        self.made.clear()


def _scheduled_or_failed(pod: Obj) -> bool:
    if (pod.get("spec") or {}).get("nodeName"):
        return True
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return True
    return False


def _wait(what: str, probe: Callable[[], bool]) -> None:
    deadline = time.monotonic() + _SETTLE_TIMEOUT_S
    while not probe():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(_POLL_S)


def _make_node(kube: Client, tracker: Tracker, node: Obj) -> Obj:
    meta = node["metadata"]
    created = kube.create({"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": meta["name"],
                                        "labels": dict(meta.get("labels") or {})}})
    tracker.created(created)
    # NodeTaint admission put node.kubernetes.io/not-ready on it; the node lifecycle controller
    # takes it off once the node is Ready. Nodes here have no kubelet, so the test does both.
    kube.patch("v1", "Node", meta["name"], {"spec": {"taints": (node.get("spec") or {})
                                                     .get("taints") or None}})
    resources = dict((node.get("status") or {}).get("allocatable")
                     or {"cpu": "8", "memory": "32Gi", "pods": "110"})
    return kube.patch_status("v1", "Node", meta["name"], {"status": {
        "capacity": resources, "allocatable": resources,
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "set by the dralab test tier"}]}})


@dataclass
class ServerRun:
    """``stored``: every scenario object as the server stored it on create (defaults applied,
    fields of disabled gates dropped, uids set); pods as created, before any scheduling, so
    this is the cluster a ``dralab snapshot`` taken just then would hold. ``after``: the
    scenario's Nodes, the namespace's Pods and ResourceClaims and FailedScheduling Events once
    kube-scheduler and the resourceclaim controller are done. ``running``: the pods marked
    ``RUNNING`` and their claims as the server held them before the other pods came (also in
    ``stored``)."""

    stored: list[Obj]
    after: list[Obj]
    running: list[Obj] = field(default_factory=list)


def run_on_server(kube: Client, tracker: Tracker, namespace: str,
                  objects: Iterable[Obj], *, wait_for_scheduler: bool = True) -> ServerRun:
    """Create ``objects`` (namespaced ones in ``namespace``) and let the real components act.

    ``wait_for_scheduler=False`` is for pods no running scheduler serves (their
    ``schedulerName``): they are created without waiting for a verdict."""
    objects = [copy.deepcopy(o) for o in objects]
    stored: list[Obj] = []
    for obj in objects:
        if obj["kind"] == "Node":
            stored.append(_typed(_make_node(kube, tracker, obj), "v1", "Node"))
    for obj in objects:
        if obj["kind"] in ("Node", "Pod"):
            continue
        if obj["kind"] in CLUSTER_SCOPED:
            made = kube.create(obj)
            tracker.created(made)
        else:
            made = kube.create(obj, namespace)
        stored.append(made)
    # kube-scheduler learns of slices, classes and rules through its informers; give them a
    # moment before the first pod, or a pod may be tried against a partial picture (it would be
    # retried, but possibly after a later pod took its device, changing the queue order).
    time.sleep(_INFORMER_SETTLE_S)
    # The ServiceAccount admission plugin refuses pods until the namespace's default
    # ServiceAccount exists; the serviceaccount controller makes it shortly after the namespace.
    _wait(f"ServiceAccount {namespace}/default", lambda: _exists(kube, "ServiceAccount",
                                                                 "default", namespace))
    pods = [o for o in objects if o["kind"] == "Pod"]
    running = [o for o in pods if o.pop(RUNNING, False)]
    before: list[Obj] = []
    if running:
        # Pods already running when the others come: scheduled first, then taken into the
        # stored state as the server holds them (bound, their claims allocated), as a
        # snapshot taken just before the other pods arrive would have them.
        for pod in running:
            kube.create(pod, namespace)
            _wait(f"pod {namespace}/{pod['metadata']['name']} to be scheduled",
                  functools.partial(_pod_settled, kube, pod["metadata"]["name"], namespace))
        _wait("generated claims", lambda: _claims_settled(kube, namespace, running))
        before = _listed(kube, "v1", "Pod", namespace)
        before += _listed(kube, "resource.k8s.io/v1", "ResourceClaim", namespace)
        stored += before
    for pod in pods:
        if pod in running:
            continue
        name = pod["metadata"]["name"]
        stored.append(kube.create(pod, namespace))
        if not wait_for_scheduler:
            continue
        _wait(f"pod {namespace}/{name} to be scheduled or found unschedulable",
              functools.partial(_pod_settled, kube, name, namespace))
    # A bound pod's claims were allocated and reserved in PreBind, before the binding: nothing
    # more to wait for. The claims of a pod left pending may still be created by the
    # controller; wait until every template claim a pod names exists.
    _wait("generated claims", lambda: _claims_settled(kube, namespace, pods))
    names = {o["metadata"]["name"] for o in objects if o["kind"] == "Node"}
    after = [n for n in _listed(kube, "v1", "Node") if n["metadata"]["name"] in names]
    after += _listed(kube, "v1", "Pod", namespace)
    after += _listed(kube, "resource.k8s.io/v1", "ResourceClaim", namespace)
    after += [e for e in _listed(kube, "v1", "Event", namespace)
              if e.get("reason") == "FailedScheduling"]
    return ServerRun(stored, after, before)


def _pod_settled(kube: Client, name: str, namespace: str) -> bool:
    return _scheduled_or_failed(kube.get("v1", "Pod", name, namespace))


def _exists(kube: Client, kind: str, name: str, namespace: str) -> bool:
    try:
        kube.get("v1", kind, name, namespace)
    except ApiError as err:
        if err.status == 404:
            return False
        raise
    return True


def _claims_settled(kube: Client, namespace: str, pods: list[Obj]) -> bool:
    wanted = sum(1 for pod in pods for rc in (pod.get("spec") or {}).get("resourceClaims") or []
                 if rc.get("resourceClaimTemplateName"))
    made = sum(1 for c in kube.list("resource.k8s.io/v1", "ResourceClaim", namespace)
               if (c.get("metadata") or {}).get("ownerReferences"))
    return made >= wanted


def _typed(obj: Obj, api_version: str, kind: str) -> Obj:
    return {"apiVersion": api_version, "kind": kind, **obj}


def _listed(kube: Client, api_version: str, kind: str, namespace: str | None = None
            ) -> list[Obj]:
    """A list's items with the apiVersion and kind a GET of each would carry."""
    return [_typed(item, api_version, kind) for item in kube.list(api_version, kind, namespace)]


def run_in_dralab(objects: Iterable[Obj], gates: FeatureGates) -> list[Obj]:
    """dralab's ``schedule`` on ``objects`` (a server's stored objects), validated as
    ``dralab schedule -f`` does; the items of the List it prints."""
    docs = [Document("<scenario>", n, copy.deepcopy(obj)) for n, obj in enumerate(objects, 1)]
    problems = validate_documents(docs, gates, stored=True)
    assert not problems, [str(p) for p in problems]
    result = schedule(load_documents(docs), None, gates, 0)
    listed = json.loads(dumps(to_list(result.objects()), "json"))
    return list(listed["items"])


@dataclass(frozen=True)
class Observed:
    """What one side did: per pod its node (or None) and PodScheduled message; per claim its
    allocated devices ``(request, driver, pool, device)`` and reservedFor pod names."""

    nodes: Mapping[str, str | None]
    messages: Mapping[str, str]
    devices: Mapping[str, tuple[tuple[str, str, str, str], ...]]
    reserved: Mapping[str, tuple[str, ...]]
    events: Mapping[str, str]

    def lines(self) -> Iterator[str]:
        for pod in sorted(self.nodes):
            yield f"pod {pod}: node={self.nodes[pod]} message={self.messages.get(pod, '')!r}"
        for claim in sorted(self.devices):
            yield (f"claim {claim}: devices={list(self.devices[claim])} "
                   f"reservedFor={list(self.reserved.get(claim, ()))}")


def claim_key(claim: Obj) -> str:
    """Generated claims have random suffixes on the server (and seeded ones in dralab): name
    them by owner pod and pod claim name instead (the scheduler's extended-resource claim by
    its owner), as the pod's status does."""
    meta = claim["metadata"]
    annotations = meta.get("annotations") or {}
    owner = [o["name"] for o in meta.get("ownerReferences") or [] if o.get("kind") == "Pod"]
    pod_claim = annotations.get("resource.kubernetes.io/pod-claim-name")
    if owner and pod_claim:
        return f"{owner[0]}/{pod_claim}"
    if owner and annotations.get("resource.kubernetes.io/extended-resource-claim") == "true":
        return f"{owner[0]}/<extended resources>"
    return str(meta["name"])


def observe(objects: Iterable[Obj]) -> Observed:
    nodes: dict[str, str | None] = {}
    messages: dict[str, str] = {}
    devices: dict[str, tuple[tuple[str, str, str, str], ...]] = {}
    reserved: dict[str, tuple[str, ...]] = {}
    events: dict[str, str] = {}
    for obj in objects:
        kind, meta = obj.get("kind"), obj.get("metadata") or {}
        if kind == "Pod":
            nodes[meta["name"]] = (obj.get("spec") or {}).get("nodeName")
            for cond in (obj.get("status") or {}).get("conditions") or []:
                if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                    messages[meta["name"]] = f"{cond.get('reason')}: {cond.get('message')}"
        elif kind == "ResourceClaim":
            status = obj.get("status") or {}
            results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
            key = claim_key(obj)
            devices[key] = tuple(sorted((r["request"], r["driver"], r["pool"], r["device"])
                                        for r in results))
            reserved[key] = tuple(sorted(r.get("name", "") for r in
                                         status.get("reservedFor") or []))
        elif kind == "Event":
            events[obj["involvedObject"]["name"]] = str(obj.get("message"))
    return Observed(nodes, messages, devices, reserved, events)
