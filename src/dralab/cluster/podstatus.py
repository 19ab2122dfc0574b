"""Pod status as the API server and kube-scheduler write it (no kubelet runs).

* **Create** (kube-apiserver's pod strategy, PrepareForCreate, v1.36.2
  pkg/registry/core/pod/strategy.go): ``metadata.generation`` 1 (and the
  creationTimestamp every created object gets), a status of
  ``phase: Pending`` and the ``qosClass`` (pkg/apis/core/helper/qos/qos.go,
  ComputePodQOS, after the v1 defaulting that copies limits into missing
  requests), and, for a pod with scheduling gates, PodScheduled=False with
  reason SchedulingGated (applySchedulingGatedCondition).
* **Conditions** change as podutil.UpdatePodCondition changes them: the new
  condition replaces the old one of its type whole; ``lastTransitionTime`` is now,
  or the old one's when the status did not change.
* **observedGeneration** on the conditions kube-scheduler writes (PodScheduled=False
  after a failed cycle, DisruptionTarget on a preemption victim) is the pod's
  generation: PodObservedGenerationTracking is GA and locked on since 1.35
  (pkg/api/v1/pod/util.go, CalculatePodConditionObservedGeneration). The binding
  (pods/binding, BindingREST.setPodNodeAndMetadata) writes PodScheduled=True
  without it.

Pure functions on immutable objects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import msgspec

from dralab.api.core import Container, Pod, PodCondition
from dralab.api.quantity import Quantity

from .apitime import api_time

__all__ = [
    "BEST_EFFORT",
    "BURSTABLE",
    "GUARANTEED",
    "POD_PENDING",
    "SCHEDULING_GATED_MESSAGE",
    "aggregate_requests",
    "delete_gracefully",
    "is_pod_level_resource",
    "observed_generation",
    "pod_level_requests",
    "prepare_for_create",
    "qos_class",
    "update_condition",
]

POD_PENDING = "Pending"
GUARANTEED = "Guaranteed"
BURSTABLE = "Burstable"
BEST_EFFORT = "BestEffort"
SCHEDULING_GATED = "SchedulingGated"
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
POD_SCHEDULED = "PodScheduled"

# Only these count for the QoS class (qos.go: supportedQoSComputeResources).
_QOS_RESOURCES = ("cpu", "memory")


def _positive(resources: Mapping[str, Quantity]) -> dict[str, int]:
    """The QoS resources of ``resources`` with a quantity above zero, in nano-units."""
    return {name: q.nano for name, q in resources.items()
            if name in _QOS_RESOURCES and q.nano > 0}


def _defaulted_requests(container: Container) -> dict[str, Quantity]:
    """The container's requests after v1 defaulting (SetDefaults_Pod): a limit
    without a request becomes the request."""
    requests = dict(container.resources.requests)
    for name, quantity in container.resources.limits.items():
        requests.setdefault(name, quantity)
    return requests


def _add(total: dict[str, int], amounts: Mapping[str, int]) -> None:
    for name, amount in amounts.items():
        total[name] = total.get(name, 0) + amount


def _container_qos(containers: Iterable[Container]) -> tuple[dict[str, int], dict[str, int],
                                                             bool]:
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    limits_everywhere = True
    for container in containers:
        _add(requests, _positive(_defaulted_requests(container)))
        found = _positive(container.resources.limits)
        _add(limits, found)
        if not all(name in found for name in _QOS_RESOURCES):
            limits_everywhere = False
    return requests, limits, limits_everywhere


def aggregate_requests(pod: Pod, amounts: Callable[[Container], Mapping[str, int]]
                       ) -> dict[str, int]:
    """The containers' requests summed as the pod needs them (component-helpers
    AggregateContainerRequests): the app containers and sidecars (init containers
    with restartPolicy Always) add up; an ordinary init container needs its own
    requests plus the sidecars started before it; the pod needs the larger."""
    total: dict[str, int] = {}
    for container in pod.spec.containers:
        _add(total, amounts(container))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in pod.spec.init_containers:
        own = amounts(container)
        if container.restart_policy == "Always":
            _add(total, own)
            _add(sidecars, own)
            during = sidecars
        else:
            during = dict(own)
            _add(during, sidecars)
        for name, amount in during.items():
            init_peak[name] = max(init_peak.get(name, 0), amount)
    for name, amount in init_peak.items():
        total[name] = max(total.get(name, 0), amount)
    return total


def is_pod_level_resource(name: str) -> bool:
    """cpu, memory and hugepages-* may be set at pod level (IsSupportedPodLevelResource)."""
    return name in _QOS_RESOURCES or name.startswith("hugepages-")


def pod_level_requests(pod: Pod) -> dict[str, Quantity]:
    """spec.resources.requests after the API server's defaulting (defaultPodRequests):
    with pod-level limits, a missing cpu or memory request is the containers'
    aggregated request, else (any pod-level resource) the pod-level limit. Empty
    without pod-level resources."""
    resources = pod.spec.resources
    if resources is None:
        return {}
    requests = dict(resources.requests)
    if resources.limits:
        aggregated = aggregate_requests(
            pod, lambda c: {n: q.nano for n, q in _defaulted_requests(c).items()})
        for name in _QOS_RESOURCES:  # the overcommittable pod-level resources
            if name not in requests and name in aggregated:
                requests[name] = Quantity(aggregated[name])
        for name, quantity in resources.limits.items():
            if is_pod_level_resource(name):
                requests.setdefault(name, quantity)
    return requests


def _pod_level_qos(pod: Pod) -> tuple[dict[str, int], dict[str, int], bool]:
    """Pod-level resources (PodLevelResources, beta and on by default since 1.34):
    the defaulted pod-level requests against the pod-level limits."""
    resources = pod.spec.resources
    assert resources is not None
    limits = _positive(resources.limits)
    limited = not resources.limits or all(name in limits for name in _QOS_RESOURCES)
    return _positive(pod_level_requests(pod)), limits, limited


def qos_class(pod: Pod) -> str:
    """The pod's QoS class as ComputePodQOS decides it: BestEffort without cpu or
    memory requests and limits; Guaranteed when every container (or the pod level,
    when the pod has spec.resources) limits both and every request equals its
    limit; Burstable otherwise."""
    if pod.spec.resources is not None:
        requests, limits, guaranteed = _pod_level_qos(pod)
    else:
        requests, limits, guaranteed = _container_qos(
            [*pod.spec.containers, *pod.spec.init_containers])
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed and all(limits.get(name) == amount for name, amount in requests.items()) \
            and len(requests) == len(limits):
        return GUARANTEED
    return BURSTABLE


def update_condition(pod: Pod, condition: PodCondition, now: str) -> Pod:
    """``pod`` with ``condition`` in place of the condition of its type (appended
    if there is none), stamped ``now`` unless the status stays the same, when the
    old transition time is kept."""
    conditions = pod.status.conditions
    old = next((c for c in conditions if c.type == condition.type), None)
    since = old.last_transition_time if old is not None and old.status == condition.status \
        else now
    new = msgspec.structs.replace(condition, last_transition_time=since)
    updated = [*conditions, new] if old is None else \
        [new if c is old else c for c in conditions]
    return msgspec.structs.replace(
        pod, status=msgspec.structs.replace(pod.status, conditions=updated))


def observed_generation(pod: Pod) -> int | None:
    """What kube-scheduler writes as a condition's observedGeneration: the pod's
    generation (None, i.e. omitted, for a pod that has none)."""
    return pod.metadata.generation or None


def prepare_for_create(pod: Pod, now: str) -> Pod:
    """``pod`` as the API server stores it on create: creationTimestamp ``now``,
    generation 1, phase Pending, the QoS class, and PodScheduled=False
    (SchedulingGated) when it has scheduling gates and no PodScheduled condition yet.

    Upstream also drops any status a create request carries; here a status given
    in the input (a hand-written snapshot: a nomination, conditions) is kept, and
    only what the API server always sets is filled in."""
    metadata = pod.metadata
    if metadata.generation is None or metadata.creation_timestamp is None:
        metadata = msgspec.structs.replace(
            metadata, generation=metadata.generation or 1,
            creation_timestamp=metadata.creation_timestamp or now)
    status = msgspec.structs.replace(pod.status, phase=pod.status.phase or POD_PENDING,
                                     qos_class=pod.status.qos_class or qos_class(pod))
    created = msgspec.structs.replace(pod, metadata=metadata, status=status)
    if pod.spec.scheduling_gates and not any(
            c.type == POD_SCHEDULED for c in status.conditions):
        created = update_condition(created, PodCondition(
            type=POD_SCHEDULED, status="False", reason=SCHEDULING_GATED,
            message=SCHEDULING_GATED_MESSAGE), now)
    return created


# spec.terminationGracePeriodSeconds when the pod does not set it (v1 defaults).
DEFAULT_GRACE_PERIOD = 30


def delete_gracefully(pod: Pod, now: float) -> Pod:
    """``pod`` as a delete without options leaves it (apiserver rest.BeforeDelete, the
    pod strategy's CheckGracefulDelete): a pod on a node gets deletionTimestamp
    ``now`` plus its grace period (spec.terminationGracePeriodSeconds, default 30),
    deletionGracePeriodSeconds, and its generation raised by one."""
    raw = pod.raw.get("spec") if isinstance(pod.raw, dict) else None
    grace = raw.get("terminationGracePeriodSeconds") if isinstance(raw, dict) else None
    if isinstance(grace, bool) or not isinstance(grace, int) or grace < 0:
        grace = DEFAULT_GRACE_PERIOD
    metadata = msgspec.structs.replace(
        pod.metadata, deletion_timestamp=api_time(now + grace),
        deletion_grace_period_seconds=grace,
        generation=pod.metadata.generation + 1 if pod.metadata.generation else None)
    return msgspec.structs.replace(pod, metadata=metadata)
