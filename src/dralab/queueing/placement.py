"""Can the whole pod set be placed? The real scheduler answers, pod by pod, on a fork.

Kueue admits by quota; whether the admitted pods then fit on nodes with the
devices they claim is left to kube-scheduler, so a workload can be admitted and
stay pending (Kueue #4329, #5243). Its alpha feasibility check (PR #15577) asks
whether *one* pod of a pod set fits on some node. Here every pod of the set goes
through the scheduler's own cycle (``Cycle.schedule_one`` with the pod's profile:
PreEnqueue creates the claims from templates, Filter and Score run the DRA
allocator, Reserve writes the allocations) on a fork of the cluster, each pod
seeing the room the previous ones took. ``place_pod_sets`` then reverts, so
nothing changes; ``commit_pod_sets`` keeps a complete placement and reverts an
incomplete one (all or nothing).

Topology (Kueue's TAS, paraphrasing its BestFit algorithm, KEP-2724): a
``TopologyRequest`` names a level of a ``NodeTopology``. Required: all pods in one
domain of that level. Preferred: the tightest level first, then each broader
level, then anywhere. Among the domains of a level in which the whole set fits,
the one with the least free capacity left wins (ties: the first by name), as
BestFit picks the fitting domain with the least room. Both the fit and the room
are measured with the real scheduler, not from resource totals: a domain is tried
by restricting the pods to it with node selectors (the domain's labels, as Kueue's
TAS writes node selectors into the pods it admits), so node resources and DRA
devices both count; Kueue cannot combine TAS with DRA claims (#10548). The room
left is counted in pods: how many more copies of the set's last pod fit in the
domain after the set, counted up to the size of the set (beyond that, domains
count as equally roomy). Nodes without a label of the levels are in no domain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import msgspec

from dralab.api.core import Pod, PodStatus
from dralab.api.keys import key_of
from dralab.cluster import PodInfo
from dralab.controllers.resourceclaims import resolve_pod_claims
from dralab.scheduler.cycle import Attempt
from dralab.scheduler.scheduler import Scheduler

from .model import NodeTopology, TopologyRequest

__all__ = [
    "GangFailure",
    "GangPlacement",
    "PodPlacement",
    "TopologyDomain",
    "commit_pod_sets",
    "place_pod_sets",
    "topology_domains",
]

PROBE_SUFFIX = "-capacity-probe-"


@dataclass(frozen=True, slots=True)
class PodPlacement:
    """Where one pod went: its node and, per claim (``namespace/name``), the
    devices allocated (``driver/pool/device``)."""

    pod: str
    node: str
    devices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TopologyDomain:
    """One domain of a topology level: ``labels`` are (key, value) for that level
    and every broader one, broadest first."""

    level: str
    labels: tuple[tuple[str, str], ...]

    @property
    def name(self) -> str:
        return "/".join(value for _, value in self.labels)


@dataclass(frozen=True, slots=True)
class GangPlacement:
    """Every pod of the set placed; ``domain``: the topology domain that holds them
    all (None without a topology request, or when a preferred one spilled over)."""

    pods: tuple[PodPlacement, ...]
    domain: TopologyDomain | None = None

    def nodes(self) -> dict[str, str]:
        return {p.pod: p.node for p in self.pods}


@dataclass(frozen=True, slots=True)
class GangFailure:
    """The set cannot be placed: ``pod`` is the first pod that did not fit (after
    ``placed`` others had) and ``message`` the scheduler's diagnosis of it. For a
    topology request ``message`` says which level and why each domain failed, and
    ``pod`` is empty."""

    message: str
    pod: str = ""
    placed: int = 0


Outcome = GangPlacement | GangFailure


def place_pod_sets(scheduler: Scheduler, pods: Sequence[Pod],
                   topology: NodeTopology | None = None,
                   request: TopologyRequest | None = None) -> Outcome:
    """Would all ``pods`` fit now, together (and within a topology domain as
    ``request`` asks)? Tried on a fork that is reverted: the cluster, the run's RNG
    and the scheduler's state are as before. ``pods`` may be new (a workload's pods
    before admission) or pending pods of the store."""
    scheduler.fork()
    try:
        return _placement(scheduler, pods, topology, request)
    finally:
        scheduler.revert()


def commit_pod_sets(scheduler: Scheduler, pods: Sequence[Pod],
                    topology: NodeTopology | None = None,
                    request: TopologyRequest | None = None) -> Outcome:
    """``place_pod_sets`` that keeps a full placement: every pod is bound (a pod a
    Permit plugin held back included: the set is complete) and leaves the queue.
    On failure nothing changes."""
    scheduler.fork()
    try:
        outcome = _placement(scheduler, pods, topology, request, keep=True)
    except BaseException:
        scheduler.revert()
        raise
    if isinstance(outcome, GangFailure):
        scheduler.revert()
    else:
        scheduler.commit()
    return outcome


def topology_domains(scheduler: Scheduler, topology: NodeTopology, level: str
                     ) -> list[TopologyDomain]:
    """The domains of ``level``, in name order: nodes grouped by their values of that
    level's label and every broader level's."""
    depth = topology.levels.index(level) + 1
    keys = topology.levels[:depth]
    seen: set[tuple[str, ...]] = set()
    for info in scheduler.cluster.nodes.values():
        labels = info.node.metadata.labels or {}
        if all(k in labels for k in keys):
            seen.add(tuple(labels[k] for k in keys))
    return [TopologyDomain(level, tuple(zip(keys, values, strict=True)))
            for values in sorted(seen)]


# --- the search ------------------------------------------------------------------------

def _placement(scheduler: Scheduler, pods: Sequence[Pod], topology: NodeTopology | None,
               request: TopologyRequest | None, keep: bool = False) -> Outcome:
    if not pods:
        return GangPlacement(())
    if topology is None or request is None or request.unconstrained or not request.level:
        return _place(scheduler, pods, None, keep)
    if request.level not in topology.levels:
        return GangFailure(f"topology {topology.name!r} has no level {request.level!r}")
    start = topology.levels.index(request.level)
    levels = [request.level] if request.required else list(reversed(topology.levels[:start + 1]))
    reasons: list[str] = []
    for level in levels:
        domain, why = _best_fit(scheduler, pods, topology_domains(scheduler, topology, level))
        if domain is not None:
            return _place(scheduler, pods, domain, keep)
        reasons.append(why)
    if request.required:
        return GangFailure(reasons[0])
    return _place(scheduler, pods, None, keep)  # preferred: anywhere at last


def _best_fit(scheduler: Scheduler, pods: Sequence[Pod], domains: Sequence[TopologyDomain]
              ) -> tuple[TopologyDomain | None, str]:
    """The domain where the whole set fits with the least room left, or None and
    why none fits (each domain's first failing pod, three at most)."""
    best: TopologyDomain | None = None
    best_room = len(pods) + 1  # more than any counted room
    failures: list[str] = []
    for domain in domains:
        scheduler.fork()
        try:
            outcome = _place(scheduler, pods, domain, keep=False)
            if isinstance(outcome, GangFailure):
                failures.append(f"{domain.name}: {outcome.message}")
                continue
            room = _room(scheduler, pods[-1], domain, best_room)
        finally:
            scheduler.revert()
        if room < best_room:
            best, best_room = domain, room
            if room == 0:
                break  # an exact fit: nothing can be tighter
    if best is not None:
        return best, ""
    level = domains[0].level if domains else "?"
    shown = "; ".join(failures[:3]) + ("; ..." if len(failures) > 3 else "")
    what = f"no {level} domain can hold all {len(pods)} pods"
    return None, f"{what}: {shown}" if shown else f"{what}: no node has the level's labels"


def _room(scheduler: Scheduler, pod: Pod, domain: TopologyDomain, limit: int) -> int:
    """How many more copies of ``pod`` fit in ``domain`` now, counted up to ``limit``."""
    room = 0
    while room < limit:
        meta = pod.metadata
        probe = msgspec.structs.replace(
            pod, metadata=msgspec.structs.replace(
                meta, name=f"{meta.name}{PROBE_SUFFIX}{room}", uid=None),
            spec=msgspec.structs.replace(pod.spec, node_name=None), status=PodStatus())
        if isinstance(_place(scheduler, [probe], domain, keep=False), GangFailure):
            break
        room += 1
    return room


def _place(scheduler: Scheduler, pods: Sequence[Pod], domain: TopologyDomain | None,
           keep: bool) -> Outcome:
    """Schedule ``pods`` one after another on the open fork, each restricted to
    ``domain``; stop at the first that does not fit. With ``keep``, pods a Permit
    plugin holds back are bound and queued pods leave the queue."""
    cluster = scheduler.cluster
    done: list[tuple[PodInfo, Attempt]] = []
    for index, pod in enumerate(pods):
        key = key_of(pod)
        info = cluster.pods.get(key)
        if info is not None and (info.assumed_node is not None or info.pod.spec.node_name):
            return GangFailure(f"pod {key} is already on node "
                               f"{info.assumed_node or info.pod.spec.node_name}", key, index)
        # A pod of the store is scheduled as the store has it.
        restricted = _restricted(pod if info is None else info.pod, domain)
        if restricted is None:
            assert domain is not None
            return GangFailure(f"pod {key}: its node selector excludes {domain.level} "
                               f"{domain.name}", key, index)
        if info is None:
            info = cluster.add_pod(restricted)
        elif restricted is not info.pod:
            cluster.update_pod(info, restricted)
        framework = scheduler.framework_for(info)
        if framework is None:
            name = info.pod.spec.scheduler_name
            return GangFailure(f"pod {key}: no profile for scheduler name {name!r}", key, index)
        status = framework.run_pre_enqueue(info)
        if not status.is_success():
            return GangFailure(f"pod {key}: {status.message}", key, index)
        attempt = scheduler.cycle.schedule_one(framework, info)
        if attempt.node is None:
            return GangFailure(f"pod {key}: {_why(attempt)}", key, index)
        done.append((info, attempt))
    if keep:
        for info, attempt in done:
            if attempt.waiting:
                assert attempt.state is not None and attempt.node is not None
                status = scheduler.cycle.bind(attempt.framework, attempt.state, info,
                                              attempt.node)
                if not status.is_success():
                    return GangFailure(f"pod {info.key}: {status.message}", info.key,
                                       len(done))
            scheduler.queue.forget(info.key)
            scheduler.cycle.set_nomination(info, None)
    return GangPlacement(tuple(_placed(scheduler, info, attempt) for info, attempt in done),
                         domain)


def _why(attempt: Attempt) -> str:
    if attempt.error is not None:
        return attempt.error.message
    assert attempt.diagnosis is not None
    return attempt.diagnosis.message()


def _restricted(pod: Pod, domain: TopologyDomain | None) -> Pod | None:
    """``pod`` with the domain's labels added to its node selector; None when the
    selector already asks for another value of one of them."""
    if domain is None:
        return pod
    selector = dict(pod.spec.node_selector or {})
    for key, value in domain.labels:
        if selector.setdefault(key, value) != value:
            return None
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(
        pod.spec, node_selector=selector))


def _placed(scheduler: Scheduler, info: PodInfo, attempt: Attempt) -> PodPlacement:
    assert attempt.node is not None
    found = resolve_pod_claims(scheduler.cluster, info.pod)
    devices: dict[str, tuple[str, ...]] = {}
    if not isinstance(found, str):
        for key, claim in zip(found.keys, found.claims, strict=True):
            allocation = claim.status.allocation
            devices[key] = tuple(f"{r.driver}/{r.pool}/{r.device}"
                                 for r in allocation.devices.results) if allocation else ()
    return PodPlacement(info.key, attempt.node, devices)
