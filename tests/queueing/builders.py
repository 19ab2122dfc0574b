"""Small builders for admission scenarios: quantities in Kubernetes notation."""

from __future__ import annotations

from collections.abc import Mapping

from dralab.api.quantity import parse_quantity
from dralab.queueing.model import (
    ClusterQueueSpec,
    CohortSpec,
    FlavorFungibility,
    FlavorQuotas,
    FlavorSpec,
    PodSetRequest,
    PreemptionPolicy,
    QueueingState,
    QueueingStrategy,
    ResourceGroup,
    ResourceQuota,
    StopPolicy,
    WorkloadSpec,
)


def milli(text: str | int) -> int:
    return parse_quantity(str(text)).milli_value()


def quota(nominal: str | int, borrowing: str | int | None = None,
          lending: str | int | None = None) -> ResourceQuota:
    return ResourceQuota(milli(nominal), None if borrowing is None else milli(borrowing),
                         None if lending is None else milli(lending))


def group(covered: tuple[str, ...], *flavors: tuple[str, Mapping[str, ResourceQuota]]
          ) -> ResourceGroup:
    return ResourceGroup(covered, tuple(FlavorQuotas(name, dict(res)) for name, res in flavors))


NO_PREEMPTION = PreemptionPolicy()
DEFAULT_FUNGIBILITY = FlavorFungibility()


def cq(name: str, *groups: ResourceGroup, cohort: str | None = None,
       strategy: QueueingStrategy = "BestEffortFIFO",
       preemption: PreemptionPolicy = NO_PREEMPTION, weight: float = 1.0,
       fungibility: FlavorFungibility = DEFAULT_FUNGIBILITY,
       stop: StopPolicy = "None") -> ClusterQueueSpec:
    return ClusterQueueSpec(name, tuple(groups), cohort=cohort, queueing_strategy=strategy,
                            preemption=preemption, fair_weight=weight,
                            flavor_fungibility=fungibility, stop_policy=stop)


def wl(key: str, cluster_queue: str, created: float, priority: int = 0, count: int = 1,
       node_selector: Mapping[str, str] | None = None,
       tolerations: tuple[tuple[str, str, str, str], ...] = (),
       **per_pod: str | int) -> WorkloadSpec:
    requests = {name.replace("_", "/").replace("nvidia/com", "nvidia.com"): milli(v)
                for name, v in per_pod.items()}
    pod_set = PodSetRequest("main", count, requests, dict(node_selector or {}), tolerations)
    return WorkloadSpec(key, "lq", cluster_queue, priority, created, (pod_set,))


def state(*queues: ClusterQueueSpec, workloads: tuple[WorkloadSpec, ...] = (),
          flavors: tuple[FlavorSpec, ...] = (), cohorts: tuple[CohortSpec, ...] = ()
          ) -> QueueingState:
    out = QueueingState()
    names = {f.flavor for q in queues for g in q.resource_groups for f in g.flavors}
    out.flavors = {name: FlavorSpec(name) for name in sorted(names)}
    out.flavors.update({f.name: f for f in flavors})
    out.cluster_queues = {q.name: q for q in queues}
    out.cohorts = {c.name: c for c in cohorts}
    out.workloads = {w.key: w for w in workloads}
    return out


def cq_usage(st: QueueingState, name: str, resource: str = "cpu") -> int:
    total = 0
    for admission in st.admitted.values():
        if admission.cluster_queue != name:
            continue
        for pod_set in admission.pod_sets:
            total += pod_set.usage.get(resource, 0)
    return total
