"""DRA ResourceClaims as KAI Scheduler handles them (issue 35).

KAI (pkg/scheduler/plugins/dynamicresources, pkg/common/resources/dra.go,
api/resource_info/dra_resource_utils.go at 72de64fc) treats DRA in three places:

* **GPU counting.** A device class whose name contains ``gpu`` (any case) is a GPU
  class. A pod's claims add, per request of a GPU class, its ``count`` (ExactCount; 1
  when unset) or 1 (``All``) to the pod's GPUs; a node gains one GPU per device of a
  ResourceSlice of its own (``nodeName``) whose *driver* contains ``gpu``. From then
  on they are whole GPUs like any other: fit, node books, queue usage, quota and
  limit checks. :func:`with_dra_gpus` folds them into the snapshot once, at session
  open, so the rest of the session needs no DRA special case.
* **The pre-filter** (KAI's plugin) and the **filter** (Kubernetes' DynamicResources
  plugin, which KAI's predicates run): the gate must be on when a pod has claims;
  every claim must exist; a claim already reserved for 256 consumers
  (ResourceClaimReservedForMaxSize) takes no more; a *shared* GPU claim (not made from
  a template) must carry the pod's queue in its queue label. On a node, an allocated
  claim's node selector must select the node, and the pod's unallocated claims must
  all be allocatable there together (dralab's allocator, device by device).
* **Allocation and release** (the plugin's event handlers, run on every statement
  operation): placing or pipelining a pod reserves each claim for it and allocates an
  unallocated one on the node (or takes back the allocation the pod had before a
  virtual eviction); evicting it, or undoing its placement, removes the reservation and
  frees the allocation once no consumer is left. Later filters see those devices taken
  or free, as the DRA manager's assumed claims make them in KAI.

:func:`predicate_error`, :func:`on_place` and :func:`on_release` are the hooks the
session calls; :func:`final_claims` is the claims as the session leaves them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import msgspec

from dralab.allocator import Allocated, AllocatedState, Allocator
from dralab.allocator.nodes import NodeSelectorError, NodeView, compile_node_selector
from dralab.api.core import Pod, PodResourceClaim
from dralab.api.resource import (
    AllocationResult,
    ResourceClaim,
    ResourceClaimConsumerReference,
)
from dralab.queueing.kai.model import KaiConfig, KaiJob, KaiNode, KaiState, KaiTask

__all__ = [
    "POD_OWNER_KIND",
    "RESERVED_FOR_MAX",
    "DraBook",
    "DraError",
    "claim_entries",
    "claim_gpu_count",
    "claim_key",
    "claims_by_pod",
    "dra_gpus_by_node",
    "extract_dra_gpus",
    "final_claims",
    "gpus_by_class",
    "is_gpu_device_class",
    "node_dra_gpus",
    "on_place",
    "on_release",
    "pod_claims",
    "pre_filter_error",
    "predicate_error",
    "remembered_allocations",
    "remove_reserved_for",
    "resource_claim_name",
    "task_dra_gpus",
    "upsert_reserved_for",
    "with_dra_gpus",
]

# resourceapi.ResourceClaimReservedForMaxSize
RESERVED_FOR_MAX = 256
_PODS = "pods"
_STATE_KEY = "dra"


def claim_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


class DraError(ValueError):
    """A pod's claim that cannot be resolved or found (one line, KAI's words)."""


# --- a pod's claims and their consumers (pkg/common/resources/dra.go) -------------------------

def resource_claim_name(pod: Pod, entry: PodResourceClaim) -> str:
    """GetResourceClaimName: the entry's resourceClaimName, or for a template entry the
    claim the pod's status names for it; DraError when there is neither."""
    if entry.resource_claim_name is not None:
        return entry.resource_claim_name
    if entry.resource_claim_template_name is not None:
        for status in pod.status.resource_claim_statuses:
            if status.name == entry.name and status.resource_claim_name is not None:
                return status.resource_claim_name
    raise DraError(f"no resource claim name found for pod {pod.namespace}/{pod.name} and "
                   f"claim reference {entry.name}")


def _is_pod_ref(ref: ResourceClaimConsumerReference, name: str, uid: str) -> bool:
    return (ref.name == name and ref.uid == uid and ref.resource == _PODS
            and not ref.api_group)


def upsert_reserved_for(reserved: Iterable[ResourceClaimConsumerReference], name: str,
                        uid: str) -> list[ResourceClaimConsumerReference]:
    """UpsertReservedFor: the pod (core group, ``pods``, name and UID) added unless there."""
    out = list(reserved)
    if not any(_is_pod_ref(r, name, uid) for r in out):
        out.append(ResourceClaimConsumerReference(api_group="", resource=_PODS, name=name,
                                                  uid=uid))
    return out


def remove_reserved_for(reserved: Iterable[ResourceClaimConsumerReference], name: str,
                        uid: str) -> list[ResourceClaimConsumerReference]:
    """RemoveReservedFor: every reference to the pod dropped."""
    return [r for r in reserved if not _is_pod_ref(r, name, uid)]


def extract_dra_gpus(pod: Pod, claims: Mapping[str, ResourceClaim]) -> dict[str, int]:
    """ExtractDRAGPUResources (the pod-group controller's count): GPUs per device class
    over the claims the pod's entries name (``claims`` by "namespace/name"); DraError for
    an entry without a claim name or a claim not found."""
    found: list[ResourceClaim] = []
    for entry in pod.spec.resource_claims:
        try:
            name = resource_claim_name(pod, entry)
        except DraError as err:
            raise DraError(f"failed to get resource claim name for pod {pod.namespace}/"
                           f"{pod.name}, claim {entry.name}: {err}") from None
        claim = claims.get(claim_key(pod.namespace, name))
        if claim is None:
            raise DraError(f"failed to get resource claim {pod.namespace}/{name} for pod "
                           f"{pod.namespace}/{pod.name}: not found")
        found.append(claim)
    return gpus_by_class(found)


# What the hooks read of framework's Session / SessionTask (framework imports this
# module, so it is not imported back).
class _Job(Protocol):
    @property
    def spec(self) -> KaiJob: ...


class _Pod(Protocol):
    @property
    def job(self) -> str: ...
    @property
    def spec(self) -> KaiTask: ...
    @property
    def node(self) -> str | None: ...
    @property
    def key(self) -> tuple[str, str]: ...


class _Session(Protocol):
    @property
    def state(self) -> KaiState: ...
    @property
    def config(self) -> KaiConfig: ...
    @property
    def jobs(self) -> Mapping[str, _Job]: ...
    @property
    def plugin_state(self) -> dict[str, object]: ...


# --- GPU counting (pkg/common/resources/dra.go) ----------------------------------------------

def is_gpu_device_class(name: str) -> bool:
    """IsGPUDeviceClass: the name contains "gpu" in any case."""
    return "gpu" in name.lower()


def claim_gpu_count(claim: ResourceClaim) -> int:
    """countGPUDevicesFromClaim: ExactCount requests of GPU classes add their count (1
    when unset), All requests 1 (KAI cannot know "all" before allocation);
    firstAvailable requests (no ``exactly``) and other classes add nothing."""
    total = 0
    for request in claim.spec.devices.requests:
        exact = request.exactly
        if exact is None or not is_gpu_device_class(exact.device_class_name):
            continue
        # unset reads as the API server's default (KAI reads stored, defaulted claims)
        mode = exact.allocation_mode or "ExactCount"
        if mode == "ExactCount":
            total += exact.count if exact.count and exact.count > 0 else 1
        elif mode == "All":
            total += 1
    return total


def _is_gpu_claim(claim: ResourceClaim) -> bool:
    """IsGpuResourceClaim."""
    return any(r.exactly is not None and is_gpu_device_class(r.exactly.device_class_name)
               for r in claim.spec.devices.requests)


def task_dra_gpus(state: KaiState, job: KaiJob, task: KaiTask) -> int:
    """The pod's GPUs from its claims (ExtractDRAGPUResourcesFromClaims summed over
    classes); claims not found count nothing."""
    total = 0
    for name in dict.fromkeys(task.claims):
        claim = state.resource_claims.get(claim_key(job.namespace, name))
        if claim is not None:
            total += claim_gpu_count(claim)
    return total


def gpus_by_class(claims: Iterable[ResourceClaim]) -> dict[str, int]:
    """ExtractDRAGPUResourcesFromClaims: GPUs per device class over the pod's claims (a
    claim's GPUs go to its first GPU class)."""
    out: dict[str, int] = {}
    for claim in claims:
        count = claim_gpu_count(claim)
        if count <= 0:
            continue
        cls = next(r.exactly.device_class_name for r in claim.spec.devices.requests
                   if r.exactly is not None and is_gpu_device_class(r.exactly.device_class_name))
        out[cls] = out.get(cls, 0) + count
    return out


# --- which claims are a pod's (api/resource_info/dra_resource_utils.go) ----------------------

POD_OWNER_KIND = "Pod"


def claims_by_pod(claims: Iterable[ResourceClaim]) -> dict[str, dict[str, ResourceClaim]]:
    """CalcClaimsToPodsBaseMap: pod UID -> claim UID -> claim, for claims owned by a pod
    (the first Pod owner reference) or else reserved for one (the first ``pods``
    consumer)."""
    out: dict[str, dict[str, ResourceClaim]] = {}
    for claim in claims:
        uid = claim.metadata.uid or ""
        owner = next((o.uid for o in claim.metadata.owner_references
                      if o.kind == POD_OWNER_KIND), None)
        if owner is None:
            owner = next((r.uid for r in claim.status.reserved_for if r.resource == _PODS),
                         None)
        if owner is not None:
            out.setdefault(owner, {})[uid] = claim
    return out


def pod_claims(namespace: str, pod_uid: str, claim_names: Iterable[str | None],
               claims: Mapping[str, ResourceClaim],
               by_pod: Mapping[str, Mapping[str, ResourceClaim]]) -> list[ResourceClaim]:
    """GetDraPodClaims: the pod's claims -- those ``by_pod`` gives its UID, and those its
    spec names (``resourceClaimName``; a template entry has none and is found only as
    an owned or reserved claim) found in ``claims`` ("namespace/name") in its own
    namespace; each once (by claim UID)."""
    mine = dict(by_pod.get(pod_uid, {}))
    for name in claim_names:
        if name is None:
            continue
        claim = claims.get(claim_key(namespace, name))
        if claim is None or claim.namespace != namespace:
            continue
        mine[claim.metadata.uid or ""] = claim
    return list(mine.values())


def node_dra_gpus(state: KaiState, node: str) -> int:
    """The node's DRA GPUs: devices of its own slices whose driver is a GPU driver
    (cluster_info.populateDRAGPUs; a slice shared by node selector counts for none)."""
    return dra_gpus_by_node(state).get(node, 0)


def dra_gpus_by_node(state: KaiState) -> dict[str, int]:
    """:func:`node_dra_gpus` of every node that has any, in one pass over the slices."""
    out: dict[str, int] = {}
    for s in state.resource_slices:
        node = s.spec.node_name
        if node and s.spec.devices and is_gpu_device_class(s.spec.driver):
            out[node] = out.get(node, 0) + len(s.spec.devices)
    return out


def with_dra_gpus(state: KaiState) -> KaiState:
    """The snapshot with DRA GPUs folded in: nodes' allocatable GPUs and pods' whole-GPU
    requests grow by their DRA GPUs (``state`` itself is not changed). A pod sharing a
    GPU by fraction or memory keeps its request: KAI's accepted resource for such a
    pod drops the DRA GPUs too (node_info.setAcceptedResources)."""
    if not state.resource_slices and not state.resource_claims:
        return state
    nodes = dict(state.nodes)
    for name, extra in dra_gpus_by_node(state).items():
        node = state.nodes.get(name)
        if node is not None:
            nodes[name] = dataclasses.replace(node, gpus=node.gpus + extra)
    jobs = dict(state.jobs)
    for name, job in state.jobs.items():
        tasks = tuple(_with_claim_gpus(state, job, t) for t in job.tasks)
        if any(a is not b for a, b in zip(tasks, job.tasks, strict=True)):
            jobs[name] = dataclasses.replace(job, tasks=tasks)
    return dataclasses.replace(state, nodes=nodes, jobs=jobs)


def _with_claim_gpus(state: KaiState, job: KaiJob, task: KaiTask) -> KaiTask:
    if not task.claims or task.gpu_memory_mib or task.gpus != int(task.gpus):
        return task
    extra = task_dra_gpus(state, job, task)
    return dataclasses.replace(task, gpus=task.gpus + extra) if extra else task


# --- the session's claims (the DRA manager's assumed state) ----------------------------------

@dataclass(slots=True)
class DraBook:
    """The claims as the session has them now, the devices they hold, and each pod's
    remembered allocations (KAI's PodInfo.ResourceClaimInfo)."""

    state: KaiState
    claims: dict[str, ResourceClaim]
    allocator: Allocator
    # nodes KAI marks HasDRAGPUs (they refuse device-plugin GPU requests)
    dra_gpu_nodes: frozenset[str] = frozenset()
    memory: dict[tuple[str, str], dict[str, AllocationResult | None]] = field(
        default_factory=dict)

    @classmethod
    def of(cls, state: KaiState) -> DraBook:
        claims = dict(state.resource_claims)
        allocated = AllocatedState.from_claims(claims.values())
        marked = frozenset(n for n in dra_gpus_by_node(state) if n in state.nodes) \
            if state.dra_nodes_refuse_device_plugin_gpus else frozenset()
        return cls(state, claims, Allocator(state.resource_slices, state.device_classes,
                                            allocated), marked)

    def put(self, key: str, claim: ResourceClaim) -> None:
        """Store ``claim``, keeping the allocated devices in step."""
        old = self.claims.get(key)
        self.claims[key] = claim
        if old is not None and old.status.allocation is not None:
            self.allocator.state.remove_claim(old)
        if claim.status.allocation is not None:
            self.allocator.state.add_claim(claim)

    def remembered(self, pod: tuple[str, str], namespace: str,
                   names: Iterable[str]) -> dict[str, AllocationResult | None]:
        """The pod's claim allocations as it remembers them; at session open, each
        claim's own (NewTaskInfo's resourceClaimInfoFromPodClaims)."""
        found = self.memory.get(pod)
        if found is None:
            found = {}
            for name in names:
                claim = self.state.resource_claims.get(claim_key(namespace, name))
                found[name] = claim.status.allocation if claim is not None else None
            self.memory[pod] = found
        return found


def book(session: _Session) -> DraBook:
    found = session.plugin_state.get(_STATE_KEY)
    if isinstance(found, DraBook):
        return found
    made = DraBook.of(session.state)
    session.plugin_state[_STATE_KEY] = made
    return made


def remembered_allocations(session: _Session,
                           pod: _Pod) -> dict[str, AllocationResult | None]:
    """The pod's claim allocations as it remembers them now (KAI's
    PodInfo.ResourceClaimInfo), by claim name."""
    namespace = session.jobs[pod.job].spec.namespace
    return dict(book(session).remembered(pod.key, namespace, pod.spec.claims))


def final_claims(session: _Session) -> Mapping[str, ResourceClaim]:
    """The claims as the session leaves them (what KAI's assumed claims hold)."""
    found = session.plugin_state.get(_STATE_KEY)
    if isinstance(found, DraBook):
        return dict(found.claims)
    return dict(session.state.resource_claims)


# --- pre-filter and filter ----------------------------------------------------------------

def claim_entries(task: KaiTask) -> list[str]:
    """The names of the pod's ``spec.resourceClaims`` entries: a claim by name is its own
    entry, a claim made from a template is the template's entry."""
    made = set(task.template_claims.values())
    return [c for c in dict.fromkeys(task.claims) if c not in made] + list(task.template_claims)


def pre_filter_error(config: KaiConfig, claims: Mapping[str, ResourceClaim], job: KaiJob,
                     task: KaiTask) -> str | None:
    """KAI's dynamicresources plugin preFilter: the gate, then each claim found, below
    its consumer limit and, shared and of a GPU class, labelled with the pod's queue."""
    namespace = job.namespace
    if not task.claims and not task.template_claims:
        return None
    if not config.dynamic_resource_allocation:
        return (f"pod {namespace}/{task.name} cannot be scheduled, it references resource "
                f"claims <{', '.join(claim_entries(task))}> while dynamic resource "
                f"allocation feature is not enabled in cluster")
    for name in dict.fromkeys(task.claims):
        claim = claims.get(claim_key(namespace, name))
        if claim is None:
            return (f"failed to get resource claim {namespace}/{name}: could not find "
                    f"ResourceClaim \"{namespace}/{name}\"")
        error = _claim_error(config, job, task, name, claim)
        if error is not None:
            return error
    return None


def predicate_error(session: _Session, job: KaiJob, task: KaiTask, node: KaiNode) -> str | None:
    """Why ``task`` cannot go to ``node`` for DRA, or None: a device-plugin GPU request
    on a node with DRA GPUs (PredicateByNodeResourcesType), then for a pod with claims
    the pre-filter and Kubernetes' DynamicResources filter on the node."""
    dra = book(session)
    if node.name in dra.dra_gpu_nodes and _device_plugin_gpus(session.state, job, task) > 0:
        return "device-plugin GPU requests cannot be scheduled on DRA-only nodes"
    if not task.claims:
        return None
    claims = dra.claims
    error = pre_filter_error(session.config, claims, job, task)
    if error is not None:
        return error
    pending: list[ResourceClaim] = []
    view = NodeView(node.name, dict(node.labels))
    for name in dict.fromkeys(task.claims):
        claim = claims[claim_key(job.namespace, name)]
        allocation = claim.status.allocation
        if allocation is None:
            pending.append(claim)
            continue
        if allocation.node_selector is not None:
            try:
                ok = compile_node_selector(allocation.node_selector).matches(view)
            except NodeSelectorError as err:
                return str(err)
            if not ok:
                return "cannot allocate all claims"
    if pending:
        outcome = book(session).allocator.allocate(pending, view, explain_failure=False)
        if not isinstance(outcome, Allocated):
            return getattr(outcome, "reason", None) or "cannot allocate all claims"
    return None


def _device_plugin_gpus(state: KaiState, job: KaiJob, task: KaiTask) -> float:
    """ResReq.GPUs(): the task's GPUs without those :func:`with_dra_gpus` folded in."""
    if task.claims and not task.gpu_memory_mib and task.gpus == int(task.gpus):
        return task.gpus - task_dra_gpus(state, job, task)
    return task.gpus


def _claim_error(config: KaiConfig, job: KaiJob, task: KaiTask, name: str,
                 claim: ResourceClaim) -> str | None:
    """The plugin's preFilter for one claim: consumers, and a shared GPU claim's queue."""
    namespace = job.namespace
    if len(claim.status.reserved_for) >= RESERVED_FOR_MAX:
        return (f"resource claim {namespace}/{name} has reached its maximum number of "
                f"consumers ({RESERVED_FOR_MAX})")
    if name in task.template_claims.values() or not _is_gpu_claim(claim):
        return None
    label = config.queue_label
    queue = claim.metadata.labels.get(label, "")
    if not queue:
        return (f"pod {namespace}/{task.name} cannot be scheduled: DRA claim {name} is a "
                f"shared GPU claim but does not have a queue label ({label})")
    if queue != job.queue:
        return (f"pod {namespace}/{task.name} cannot be scheduled: DRA claim {name} is a "
                f"shared GPU claim with wrong queue label (expected queue: {job.queue}, "
                f"claim queue label: {queue})")
    return None


# --- the event handlers -------------------------------------------------------------------

def _with_status(claim: ResourceClaim, allocation: AllocationResult | None,
                 reserved: list[ResourceClaimConsumerReference]) -> ResourceClaim:
    status = msgspec.structs.replace(claim.status, allocation=allocation, reserved_for=reserved)
    return msgspec.structs.replace(claim, status=status)


def on_place(session: _Session, pod: _Pod, node: str,
             undo: list[Callable[[], None]]) -> None:
    """allocateHandlerFn: the pod's claims reserved for it on ``node``, an unallocated
    one allocated there (or given back the allocation the pod remembers). A claim that
    cannot be allocated is left as it was (KAI logs it and goes on); the filter has
    already refused such nodes."""
    task = pod.spec
    if not task.claims:
        return
    dra = book(session)
    namespace = session.jobs[pod.job].spec.namespace
    memory = dra.remembered(pod.key, namespace, task.claims)
    before = dict(memory)
    view = NodeView(node, dict(session.state.nodes[node].labels)
                    if node in session.state.nodes else {})
    for name in dict.fromkeys(task.claims):
        key = claim_key(namespace, name)
        claim = dra.claims.get(key)
        if claim is None:
            continue
        # the pod's UID is its name here: the snapshot has no UIDs of its own
        reserved = upsert_reserved_for(claim.status.reserved_for, task.name, task.name)
        allocation = memory.get(name) or claim.status.allocation
        if allocation is None:
            outcome = dra.allocator.allocate([_with_status(claim, None, [])], view,
                                             explain_failure=False)
            if not isinstance(outcome, Allocated):
                continue
            allocation = outcome.claims[0].status.allocation
        dra.put(key, _with_status(claim, allocation, reserved))
        memory[name] = allocation

    def back() -> None:
        # KAI's unallocate / unpipeline: the deallocate handler, then the pod's
        # remembered allocations as they were
        _release(session, pod)
        memory.clear()
        memory.update(before)
    undo.append(back)


def on_release(session: _Session, pod: _Pod, undo: list[Callable[[], None]]) -> None:
    """deallocateHandlerFn (an eviction): the pod's reservations removed, an allocation
    without consumers freed; undone as KAI's unevict does it, by placing the pod again
    with the allocations it remembered before."""
    task = pod.spec
    if not task.claims:
        return
    dra = book(session)
    namespace = session.jobs[pod.job].spec.namespace
    memory = dra.remembered(pod.key, namespace, task.claims)
    before = dict(memory)
    node = pod.node
    _release(session, pod)

    def back() -> None:
        memory.clear()
        memory.update(before)
        if node is not None:
            on_place(session, pod, node, [])
    undo.append(back)


def _release(session: _Session, pod: _Pod) -> None:
    task = pod.spec
    dra = book(session)
    namespace = session.jobs[pod.job].spec.namespace
    memory = dra.remembered(pod.key, namespace, task.claims)
    for name in dict.fromkeys(task.claims):
        key = claim_key(namespace, name)
        claim = dra.claims.get(key)
        if claim is None:
            continue
        reserved = remove_reserved_for(claim.status.reserved_for, task.name, task.name)
        allocation = claim.status.allocation if reserved else None
        dra.put(key, _with_status(claim, allocation, reserved))
        memory[name] = allocation
