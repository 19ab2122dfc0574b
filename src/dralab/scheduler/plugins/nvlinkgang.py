"""NVLinkDomainGang (Filter, PreScore, Score, Reserve, Permit): a ComputeDomain's pods
bind all together, on nodes of ONE NVLink domain, or not at all.

Beyond upstream, opt-in, named. Upstream (NVIDIA's k8s-dra-driver-gpu at
22407113785e78c7763b4637689a201eb39c6199 plus kube-scheduler) gives a ComputeDomain's
workload channel claim no node constraint: pods are placed one by one and a job can
span NVLink domains (``nvidia.com/gpu.clique``) unless they carry required pod
affinity on that label. This plugin is in no default profile; a
KubeSchedulerConfiguration profile enables it by naming it (``multiPoint`` or its
extension points), as for GangScheduling's label gangs.

A pod is in a ComputeDomain when one of its claims comes from a ResourceClaimTemplate
labelled ``resource.nvidia.com/computeDomain`` (the controller writes the CD's uid
there), when its claim carries that label, or when the pod does. The gang's size is
the ComputeDomain's ``numNodes`` when the run's input holds the ComputeDomain
(``sizes``, keyed by uid or name), else the number of the CD's pods in the cluster.

* Filter: once a pod of the CD holds a node (bound, or waiting here), nodes of other
  NVLink domains are rejected; a node without the clique label is rejected for a CD
  of more than one node (it shares NVLink with none).
* PreScore/Score (domain packing): per NVLink domain, the nodes the CD could have
  (feasible nodes plus those its pods hold); domains with room for the whole gang
  score above those without, the fullest (least room) first.
* Permit: the first pod is rejected when its domain cannot hold the gang, with
  "needs N nodes in one NVLink domain; the largest free domain has M"; otherwise
  each pod waits (``permitWaitingTimeSeconds``, default 300 s) until the gang's
  pods all hold a node, then all are allowed. Unreserve rejects the other waiting
  members, so they let go of their nodes and devices.
Pods per node are not limited: with ``sizes`` unknown and several pods per node,
the room asked for (nodes >= pods) is more than the job needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dralab.api.nvlink import CLIQUE_LABEL, COMPUTE_DOMAIN_LABEL, clique_of
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.cluster.events import (
    ClusterEvent,
    NodeAdded,
    NodeUpdated,
    PodAdded,
    PodForgotten,
    PodRemoved,
    SlicesChanged,
)

from ..framework import CycleState, Handle, Plugin, PluginArgsError, Registry, Status
from ..hints import QUEUE, SKIP, EventHint, HintResult
from .nvlink import compute_domains, room_by_domain

__all__ = ["NAME", "NVLinkDomainGang", "compute_domain_key", "sizes_of", "with_sizes"]

NAME = "NVLinkDomainGang"
DEFAULT_TIMEOUT = 300.0
MAX_TIMEOUT = 900.0  # kube-scheduler caps a Permit wait at 15 minutes
_STATE = NAME + "/room"
_SUCCESS = Status.success()


def compute_domain_key(cluster: ClusterState, info: PodInfo) -> str | None:
    """``namespace/<uid or name>`` of the pod's ComputeDomain, None when it has none."""
    pod = info.pod
    namespace = pod.metadata.namespace or "default"
    for ref in pod.spec.resource_claims:
        if ref.resource_claim_template_name:
            template = cluster.template(namespace, ref.resource_claim_template_name)
            value = template.metadata.labels.get(COMPUTE_DOMAIN_LABEL) if template else None
        elif ref.resource_claim_name:
            claim = cluster.claims.get(f"{namespace}/{ref.resource_claim_name}")
            value = claim.metadata.labels.get(COMPUTE_DOMAIN_LABEL) if claim else None
        else:
            value = None
        if value:
            return f"{namespace}/{value}"
    label = pod.metadata.labels.get(COMPUTE_DOMAIN_LABEL)
    return f"{namespace}/{label}" if label else None


@dataclass(slots=True)
class _Room:
    """PreScore's answer for one pod: nodes per NVLink domain the CD could have."""

    size: int
    rooms: dict[str, int] = field(default_factory=dict)
    largest: tuple[str, int] | None = None
    tightest: int = 0  # the least room among domains that hold the gang

    def clone(self) -> _Room:
        return self  # read-only once written


class NVLinkDomainGang:
    """See the module docstring. ``sizes``: ComputeDomain ``namespace/uid`` or
    ``namespace/name`` -> numNodes, from the run's input."""

    def __init__(self, handle: Handle, timeout: float = DEFAULT_TIMEOUT,
                 sizes: Mapping[str, int] | None = None) -> None:
        self.handle = handle
        self.timeout = timeout
        self.sizes = dict(sizes or {})

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle,
               sizes: Mapping[str, int] | None = None) -> NVLinkDomainGang:
        value = args.get("permitWaitingTimeSeconds", DEFAULT_TIMEOUT)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise PluginArgsError("permitWaitingTimeSeconds",
                                  f"Invalid value: {value!r}: must be a number")
        if not 0 < value <= MAX_TIMEOUT:
            raise PluginArgsError("permitWaitingTimeSeconds",
                                  f"Invalid value: {value!r}: must be in (0, {MAX_TIMEOUT:g}]")
        return cls(handle, float(value), sizes)

    @property
    def name(self) -> str:
        return NAME

    def events_to_register(self) -> tuple[EventHint, ...]:
        # A new pod of the CD may complete the gang; room in a domain appears when
        # another CD's pods let go of nodes, or nodes and devices change. A CD's own
        # pods letting go (its gang was rejected) is no reason to retry it at once.
        return (EventHint((PodAdded,), self._pod_added),
                EventHint((PodRemoved, PodForgotten), self._room_freed),
                EventHint((NodeAdded, NodeUpdated, SlicesChanged)))

    def _pod_added(self, event: ClusterEvent, cluster: ClusterState) -> HintResult:
        assert isinstance(event, PodAdded)
        added = cluster.pods.get(event.key)
        key = compute_domain_key(cluster, added) if added is not None else None
        if key is None:
            return SKIP
        return lambda pod: compute_domain_key(cluster, pod) == key

    def _room_freed(self, event: ClusterEvent, cluster: ClusterState) -> HintResult:
        assert isinstance(event, PodRemoved | PodForgotten)
        if event.node is None:
            return SKIP
        freed = cluster.pods.get(event.key)
        key = compute_domain_key(cluster, freed) if freed is not None else None
        if key is None:
            return QUEUE
        return lambda pod: compute_domain_key(cluster, pod) != key

    def pre_enqueue(self, pod: PodInfo) -> Status:
        """A pod of a ComputeDomain whose numNodes is known waits outside the queue
        until the CD has that many pods: fewer could never complete the gang."""
        cluster = self.handle.cluster
        key = compute_domain_key(cluster, pod)
        if key is None:
            return _SUCCESS
        size = self.sizes.get(key)
        if size is None or size <= 1:
            return _SUCCESS
        count = sum(1 for info in cluster.pods.values()
                    if compute_domain_key(cluster, info) == key)
        if count < size:
            return Status.unresolvable(
                NAME, f"waiting for {size} pods of ComputeDomain {key} (numNodes {size}) "
                      f"to appear in scheduling queue; {count} so far")
        return _SUCCESS

    # --- the gang ---------------------------------------------------------------------
    def _size(self, key: str) -> int:
        size = self.sizes.get(key)
        if size is not None and size > 0:
            return size
        cluster = self.handle.cluster
        return sum(1 for info in cluster.pods.values()
                   if compute_domain_key(cluster, info) == key)

    def _held(self, key: str, own: str) -> dict[str, str]:
        """Pod key -> node of the CD's other pods holding a node (bound or assumed)."""
        cluster = self.handle.cluster
        return {info.key: info.assumed_node for info in cluster.pods.values()
                if info.key != own and info.assumed_node
                and compute_domain_key(cluster, info) == key}

    def _labels(self, node: str) -> Mapping[str, str]:
        info = self.handle.cluster.nodes.get(node)
        return info.node.metadata.labels if info is not None else {}

    def _domain(self, held: Mapping[str, str]) -> str | None:
        """The NVLink domain the CD is bound to: the one holding most of its pods."""
        count: dict[str, int] = {}
        for node in held.values():
            clique = clique_of(self._labels(node))
            if clique is not None:
                count[clique] = count.get(clique, 0) + 1
        return min(count, key=lambda c: (-count[c], c)) if count else None

    # --- Filter -----------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        cluster = self.handle.cluster
        key = compute_domain_key(cluster, pod)
        if key is None:
            return _SUCCESS
        clique = clique_of(node.node.metadata.labels)
        if clique is None:
            if self._size(key) > 1:
                return Status.unresolvable(
                    NAME, f"node has no NVLink domain ({CLIQUE_LABEL}) for a multi-node "
                          "ComputeDomain")
            return _SUCCESS
        domain = self._domain(self._held(key, pod.key))
        if domain is not None and clique != domain:
            return Status.unschedulable(
                NAME, f"ComputeDomain {key}'s pods are in NVLink domain {domain}")
        return _SUCCESS

    # --- PreScore / Score ---------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        cluster = self.handle.cluster
        key = compute_domain_key(cluster, pod)
        if key is None:
            return Status.skip(NAME)
        held = self._held(key, pod.key)
        used: dict[str, list[str]] = {}
        for node in held.values():
            clique = clique_of(self._labels(node))
            if clique is not None:
                used.setdefault(clique, []).append(node)
        names = [n.node.metadata.name or "" for n in nodes]
        labels: dict[str, Mapping[str, str]] = {
            name: n.node.metadata.labels for name, n in zip(names, nodes, strict=True)}
        labels.update({n: self._labels(n) for n in held.values()})
        rooms = room_by_domain(names, used, labels)
        size = self._size(key)
        fits = [r.nodes for r in rooms if r.nodes >= size]
        state.write(_STATE, _Room(size, {r.clique: r.nodes for r in rooms},
                                  (rooms[0].clique, rooms[0].nodes) if rooms else None,
                                  min(fits) if fits else 0))
        return _SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        found = state.get(_STATE)
        if not isinstance(found, _Room):
            return 0, _SUCCESS
        clique = clique_of(node.node.metadata.labels)
        room = found.rooms.get(clique, 0) if clique is not None else 0
        if room < found.size:
            return 0, _SUCCESS
        # Domain packing: the fullest domain that still holds the gang scores 100, a
        # roomier one less (in proportion), so the choice outweighs small differences
        # in the default plugins' scores.
        return max(1, 100 * found.tightest // room), _SUCCESS

    def score_extensions(self) -> None:
        return None

    # --- Reserve / Permit ---------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        return _SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """A member failed after Reserve: the others waiting let go of their nodes."""
        cluster = self.handle.cluster
        key = compute_domain_key(cluster, pod)
        if key is None:
            return
        for waiting in self.handle.waiting_pods:
            if waiting.key != pod.key and compute_domain_key(cluster, waiting.pod) == key:
                waiting.reject(NAME, f"pod {pod.key} of ComputeDomain {key} was rejected; "
                                     "its pods bind in one NVLink domain all together")

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        cluster = self.handle.cluster
        key = compute_domain_key(cluster, pod)
        if key is None:
            return _SUCCESS
        size = self._size(key)
        held = self._held(key, pod.key)
        found = state.get(_STATE)
        clique = clique_of(self._labels(node_name))
        if not held and size > 1 and isinstance(found, _Room) \
                and found.rooms.get(clique or "", 0) < size:
            largest = found.largest
            where = f" ({largest[0]})" if largest else ""
            return Status.unschedulable(
                NAME, f"needs {size} nodes in one NVLink domain; the largest free domain "
                      f"has {largest[1] if largest else 0}{where}")
        if len(held) + 1 < size:
            return Status.wait(NAME, self.timeout)
        if not cluster.forks:  # a what-if must not release real waiting pods
            for waiting in self.handle.waiting_pods:
                if waiting.key != pod.key and waiting.rejected is None \
                        and compute_domain_key(cluster, waiting.pod) == key:
                    waiting.allow(NAME)
        return _SUCCESS


def sizes_of(objects: Iterable[Any]) -> dict[str, int]:
    """``namespace/uid`` and ``namespace/name`` -> numNodes of the ComputeDomains among
    ``objects`` (numNodes 0, "any number", is left out: the pods count instead)."""
    out: dict[str, int] = {}
    for cd in compute_domains(objects):
        if cd.num_nodes > 0:
            for ident in (cd.uid, cd.name):
                if ident:
                    out[f"{cd.namespace}/{ident}"] = cd.num_nodes
    return out


def with_sizes(registry: Registry, sizes: Mapping[str, int]) -> Registry:
    """``registry`` whose NVLinkDomainGang knows the ComputeDomains' numNodes."""
    if not sizes:
        return registry

    def create(args: Mapping[str, Any], handle: Handle) -> Plugin:
        return NVLinkDomainGang.create(args, handle, sizes)

    return Registry({**registry, NAME: create})
