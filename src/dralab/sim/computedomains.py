"""ComputeDomain jobs in a Scenario (``computeDomain: true`` on a job kind, issue 36).

Each job of such a kind creates its own ComputeDomain (``<job>-cd``, numNodes = the
job's pods, allocationMode Single) and, as NVIDIA's compute-domain controller does, the
workload channel ResourceClaimTemplate ``<job>-cd-channel``
(``controllers.computedomain.workload_claim_template``); every pod of the job claims a
channel from it (claim ``compute-domain-channel``, as the driver's demos name it) besides
its GPUs. The job's pods share one drawn run time, and its work starts when its last
pod is placed: pods placed before hold their nodes and wait (``stages.completion``).
When the job's last pod has run its time the template goes. Behind Kueue, the channel
claim counts as Kueue's deviceClassMappings say (unmapped: the job is inadmissible).

Upstream default (NVIDIA/k8s-dra-driver-gpu 22407113785e78c7763b4637689a201eb39c6199 and
kube-scheduler as is): the channel request has no node constraint and the pods are placed
one by one, so a job may span NVLink domains (``nvidia.com/gpu.clique``); the report says
how many did. Only a profile naming dralab's opt-in NVLinkDomainGang keeps each job in one
domain; ``gang_sizes`` gives that plugin every job's numNodes.

The compute-domain driver publishes one channel device (channel-0) per node
(driver.go), so at most one ComputeDomain pod runs on a node at a time, whatever GPUs it
leaves free. The IMEX daemons (DaemonSet, daemon claim) are not simulated: they follow
the workload's pods and never decide where those go.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dralab.api.computedomain import ComputeDomain, compute_domain_uid
from dralab.api.core import ContainerResourceClaim, Pod, PodResourceClaim
from dralab.api.nvlink import CLIQUE_LABEL, clique_of
from dralab.api.resource import ResourceClaimTemplate
from dralab.cluster import ClusterState
from dralab.controllers.computedomain import workload_claim_template
from dralab.fleet import Fleet
from dralab.scheduler.plugins.nvlinkgang import NAME as GANG

from .computedomain_metrics import CdJob
from .jobs import NAMESPACE, Arrival
from .nvlink import compute_domain
from .spec import JobKind, ScenarioError

__all__ = [
    "CHANNEL_CLAIM",
    "ComputeDomainSampler",
    "cd_jobs",
    "check_compute_domains",
    "check_template_channels",
    "clique_affinity",
    "gang_profile",
    "gang_sizes",
    "job_compute_domain",
    "job_template",
    "placement_label",
    "with_channel_claim",
]

# The pod's claim name for its channel, as the driver's demos write it
# (demo/specs/imex/nvbandwidth-test-job-1.yaml).
CHANNEL_CLAIM = "compute-domain-channel"


def job_compute_domain(arrival: Arrival) -> ComputeDomain:
    """The ComputeDomain job ``arrival`` creates: ``<job>-cd``, numNodes its pods, its
    uid a stable UUID of namespace and name (``compute_domain_uid``)."""
    return compute_domain(f"{arrival.name}-cd", NAMESPACE, arrival.kind.pods_per_job)


def job_template(arrival: Arrival) -> ResourceClaimTemplate:
    """The workload channel template the controller writes for the job's ComputeDomain."""
    return workload_claim_template(job_compute_domain(arrival))


def with_channel_claim(pod: Pod, template: str) -> Pod:
    """``pod`` also claiming a channel from ``template``, in every container (as the
    driver's demos do for the containers that use NVLink)."""
    ref = PodResourceClaim(name=CHANNEL_CLAIM, resource_claim_template_name=template)
    containers = [msgspec.structs.replace(c, resources=msgspec.structs.replace(
        c.resources, claims=[*c.resources.claims, ContainerResourceClaim(name=CHANNEL_CLAIM)]))
        for c in pod.spec.containers]
    spec = msgspec.structs.replace(pod.spec, containers=containers,
                                   resource_claims=[*pod.spec.resource_claims, ref])
    return msgspec.structs.replace(pod, spec=spec)


def gang_sizes(arrivals: Iterable[Arrival]) -> dict[str, int]:
    """``namespace/uid`` and ``namespace/name`` -> numNodes of every ComputeDomain job's
    ComputeDomain: what NVLinkDomainGang reads (``with_sizes``), known before the run
    since the arrivals are drawn first."""
    out: dict[str, int] = {}
    for arrival in arrivals:
        if arrival.kind.compute_domain:
            cd = job_compute_domain(arrival)
            for ident in (compute_domain_uid(cd), cd.name):
                out[f"{NAMESPACE}/{ident}"] = cd.num_nodes
    return out


def check_compute_domains(workload: Sequence[JobKind], fleet: Fleet,
                          compare: Sequence[str], source: str) -> None:
    """ScenarioError naming the field: a ``computeDomain`` kind needs a fleet pool with
    ``computeDomains: true`` (the channel devices), the dra mode only (the channel is a
    DRA claim; the device plugin has no equivalent), and at most as many pods as the
    fleet has such nodes (one channel per node)."""
    nodes = sum(p.autoscaling.max if p.autoscaling is not None else p.size
                for p in fleet.spec.pools if p.compute_domains)
    for i, job in enumerate(workload):
        if not job.compute_domain:
            continue
        path = f"spec.workload[{i}].computeDomain"
        if nodes == 0:
            raise ScenarioError(source, path, "the fleet has no pool with computeDomains: "
                                "true (no compute-domain.nvidia.com channel devices)")
        others = [m for m in compare if m != "dra"]
        if others:
            raise ScenarioError(source, path, (
                f"a ComputeDomain's channel is a DRA claim: compare dra only, not {others[0]}"))
        if job.pods_per_job > nodes:
            raise ScenarioError(source, f"spec.workload[{i}].podsPerJob", (
                f"{job.pods_per_job} pods of a ComputeDomain need {job.pods_per_job} nodes "
                f"(one channel each); the fleet has {nodes} with computeDomains"))


def check_template_channels(workload: Sequence[JobKind], pods: Mapping[str, Pod],
                            source: str) -> None:
    """ScenarioError when a ``computeDomain`` kind's manifest pod (``pods``: kind name ->
    its template's pod) already has a claim named ``compute-domain-channel``: the job's
    ComputeDomain brings that claim, the manifest must not name its own."""
    for i, job in enumerate(workload):
        pod = pods.get(job.name)
        if job.compute_domain and pod is not None and any(
                ref.name == CHANNEL_CLAIM for ref in pod.spec.resource_claims):
            raise ScenarioError(source, f"spec.workload[{i}].template", (
                f"its pod already claims {CHANNEL_CLAIM!r}; with computeDomain: true the "
                "job's ComputeDomain adds that claim (remove it from the manifest)"))


def gang_profile(config: Mapping[str, Any] | None) -> str:
    """``NVLinkDomainGang`` when a profile of the scenario's KubeSchedulerConfiguration
    enables dralab's opt-in plugin (at any extension point), else ``default``: what the
    report names the placement it measured."""
    for profile in (config or {}).get("profiles") or ():
        plugins = profile.get("plugins") if isinstance(profile, Mapping) else None
        for point in (plugins or {}).values():
            enabled = point.get("enabled") if isinstance(point, Mapping) else None
            if any(isinstance(p, Mapping) and p.get("name") == GANG for p in enabled or ()):
                return GANG
    return "default"


def clique_affinity(pod: Pod | None) -> bool:
    """Whether ``pod`` (a manifest's, as written) carries required pod affinity with the
    NVLink domain label as its topology key: NVIDIA's advice to keep a ComputeDomain's
    pods in one domain with kube-scheduler as it is."""
    found: Any = pod.raw if pod is not None else None
    for key in ("spec", "affinity", "podAffinity",
                "requiredDuringSchedulingIgnoredDuringExecution"):
        found = found.get(key) if isinstance(found, dict) else None
    terms = found if isinstance(found, list) else []
    return any(isinstance(t, dict) and t.get("topologyKey") == CLIQUE_LABEL
               for t in terms)


def placement_label(config: Mapping[str, Any] | None,
                    affinity: Sequence[bool]) -> str:
    """What the report calls the placement a run measured: ``NVLinkDomainGang`` (the
    opt-in plugin), ``default, clique pod affinity`` when the ComputeDomain kinds' pods
    carry it (``affinity``: per multi-node kind; ``on some kinds`` when not all do),
    else ``default``."""
    gang = gang_profile(config)
    if gang != "default" or not any(affinity):
        return gang
    return "default, clique pod affinity" + ("" if all(affinity) else " on some kinds")


_EPS = 1e-9


@dataclass(slots=True)
class ComputeDomainSampler:
    """Samples NVLink fragmentation during a run. ``use`` gives, per GPU node present,
    the used share of each GPU (the run's accounting); ``kinds`` are the ComputeDomain
    job kinds (their running pods hold their node's one channel); ``smallest`` is
    (pods, GPUs per pod) of the smallest multi-node kind; ``held`` the GPUs held by
    placed pods of jobs not all placed yet."""

    cluster: ClusterState
    use: Callable[[], Mapping[str, Sequence[float]]]
    kinds: frozenset[str]
    smallest: tuple[int, int]
    held: Callable[[], int] = lambda: 0
    samples: list[tuple[float, int, int, int]] = field(default_factory=list)
    # node -> its NVLink domain when a ComputeDomain pod was placed on it (nodes an
    # autoscaler or an event removes later are still known by the report)
    cliques: dict[str, str | None] = field(default_factory=dict)

    def placed(self, node: str) -> None:
        """A pod was bound to ``node``: remember the node's NVLink domain."""
        if node not in self.cliques:
            info = self.cluster.nodes.get(node)
            self.cliques[node] = clique_of(info.node.metadata.labels) \
                if info is not None else None

    def sample(self, t: float) -> None:
        pods, gpus = self.smallest
        channel_held = {info.assumed_node for info in self.cluster.pods.values()
                        if info.assumed_node
                        and info.pod.metadata.labels.get("dralab.dev/kind") in self.kinds}
        free: dict[str, int] = {}
        room: dict[str, int] = {}
        for node, shares in self.use().items():
            info = self.cluster.nodes.get(node)
            clique = clique_of(info.node.metadata.labels) if info is not None else None
            if clique is None:
                continue
            idle = sum(1 for s in shares if s <= _EPS)
            free[clique] = free.get(clique, 0) + idle
            fits = node not in channel_held and idle >= gpus
            room[clique] = room.get(clique, 0) + (1 if fits else 0)
        stranded = sum(n for c, n in free.items() if pods > 1 and room[c] < pods)
        self.samples.append((t, sum(free.values()), stranded, self.held()))


def cd_jobs(arrivals: Iterable[tuple[str, str, int, float]],
            starts: Iterable[tuple[str, int, float, str]],
            clique: Callable[[str], str | None]) -> tuple[CdJob, ...]:
    """The jobs from ``arrivals`` (name, kind, pods, arrival time) and their pods'
    ``starts`` (job, replica, start time, node) in any order: per replica its first
    start counts (a re-created pod's later start does not move the job's wait)."""
    first: dict[tuple[str, int], tuple[float, str]] = {}
    for job, replica, t, node in starts:
        seen = first.get((job, replica))
        if seen is None or (t, node) < seen:
            first[(job, replica)] = (t, node)
    out = []
    for name, kind, pods, arrived in arrivals:
        placed = [first[(name, r)] for r in range(pods) if (name, r) in first]
        domains = {clique(node) or f"node:{node}" for _, node in placed}
        out.append(CdJob(name, kind, pods, arrived,
                         max(t for t, _ in placed) if len(placed) == pods else None,
                         len(domains)))
    return tuple(out)
