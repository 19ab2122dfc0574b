"""Node groups: the Fleet pools that carry ``autoscaling``, and their template nodes.

A pool's template node is, as Cluster Autoscaler builds it
(processors/nodeinfosprovider/mixed_nodeinfos_processor.go, simulator/
node_info_utils.go):

* when the pool has a node in the cluster that is a good example (schedulable,
  not being deleted by CA; the first in the cluster's order): a copy of that
  node -- labels (the hostname set to the new name), taints without CA's own,
  node-condition, startup and status taints, capacity -- with copies of its
  ResourceSlices (pools renamed to the new node), and the pods that come with a
  fresh node: the example's DaemonSet and mirror pods (``example_pods``);
* otherwise what ``dralab fleet`` publishes for one more node of the pool
  (``dralab.fleet.generate.grown_pool_nodes``): the next name by the pool's
  naming, its labels, taints and topology, and the node's ResourceSlices; with
  it, the pods of the input's DaemonSets that would run there (CA's template
  from the node group, forceDaemonSets).

The k-th new node of a scale-up is named as the pool k nodes larger (so names
never clash with the Fleet's). Templates are built lazily and cached: an
estimate that needs 40 nodes of a pool builds them once per run.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import msgspec

from dralab.api.base import ObjectMeta
from dralab.api.codec import decode
from dralab.api.core import Node, Pod
from dralab.api.resource import ResourceClaim, ResourceSlice
from dralab.api.workloads import DaemonSet
from dralab.cluster import ClusterState
from dralab.controllers.generatednames import NameGenerator
from dralab.controllers.workloadobjects import PodFactory
from dralab.controllers.workloads import Controllers
from dralab.fleet import Fleet
from dralab.fleet.generate import grown_pool_nodes
from dralab.fleet.spec import TopologySpec

__all__ = ["POOL_LABEL", "NodeExample", "NodeGroup", "TemplateNodes", "claims_of", "daemon_pods",
           "example_of", "node_groups", "pool_of", "template_signatures"]

# The label dralab fleet puts on every node of a pool: the node's group.
POOL_LABEL = "dralab.dev/pool"

TemplateNode = tuple[Node, tuple[ResourceSlice, ...]]
# A pod that comes with a template node, and the claims it owns (not yet allocated).
TemplatePod = tuple[Pod, tuple[ResourceClaim, ...]]

HOSTNAME = "kubernetes.io/hostname"
# Taints a template never carries (utils/taints/taints.go, SanitizeTaints): CA's own,
# the node-condition taints, and the startup/status taint prefixes.
_SANITIZED_TAINTS = frozenset({
    "ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler",
    "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable", "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure", "node.kubernetes.io/network-unavailable",
    "node.kubernetes.io/pid-pressure", "node.cloudprovider.kubernetes.io/uninitialized",
    "node.cloudprovider.kubernetes.io/shutdown", "cloud.google.com/impending-node-termination",
    "NodeWithImpairedVolumes"})
_SANITIZED_PREFIXES = ("ignore-taint.cluster-autoscaler.kubernetes.io/",
                       "startup-taint.cluster-autoscaler.kubernetes.io/",
                       "status-taint.cluster-autoscaler.kubernetes.io/")


@dataclass(frozen=True, slots=True)
class NodeExample:
    """A real node of a group that its template nodes copy, with its slices and the
    pods a fresh node would have (its DaemonSet and mirror pods)."""

    node: Node
    slices: tuple[ResourceSlice, ...] = ()
    pods: tuple[Pod, ...] = ()
    # The claims those pods own (made for them from a template): each new node gets
    # its own copies, as CA's SanitizedPodResourceClaims makes them.
    claims: tuple[ResourceClaim, ...] = ()
    # A template the cloud provider gives (TemplateNodeInfo) rather than a real node:
    # the DaemonSets' pods are added to it (CA's forceDaemonSets).
    from_provider: bool = False


def _good_example(node: Node) -> bool:
    # isNodeGoodTemplateCandidate: schedulable and not being deleted by CA (readiness
    # and its one-minute stabilisation are not modelled: dralab's nodes are Ready).
    return not node.spec.unschedulable and not any(
        t.key == "ToBeDeletedByClusterAutoscaler" for t in node.spec.taints)


def claims_of(cluster: ClusterState, pod: Pod) -> list[ResourceClaim]:
    """The claims ``pod`` uses: named in its spec, or made for it from a template."""
    namespace = pod.metadata.namespace or "default"
    names = [e.resource_claim_name for e in pod.spec.resource_claims if e.resource_claim_name]
    names += [s.resource_claim_name for s in pod.status.resource_claim_statuses
              if s.resource_claim_name]
    return [c for n in names if (c := cluster.claim(namespace, n)) is not None]


def example_of(nodes: Iterable[Node], pool: str) -> Node | None:
    """The node of ``pool`` CA would build its template from: the first good one."""
    for node in nodes:
        if pool_of(node) == pool and _good_example(node):
            return node
    return None


@dataclass(frozen=True, slots=True)
class NodeGroup:
    """One autoscaled pool. ``size`` is its current number of nodes."""

    name: str
    size: int
    min_size: int
    max_size: int
    price_per_hour: float
    provisioning_delay: float  # seconds
    priority: int
    # CA's ZeroOrMaxNodeScaling: scale-up to max at once, scale-down of the whole group.
    zero_or_max: bool = False

    @property
    def room(self) -> int:
        """How many nodes a scale-up may add now."""
        return max(0, self.max_size - self.size)


def node_groups(fleet: Fleet, sizes: Mapping[str, int]) -> dict[str, NodeGroup]:
    """The fleet's autoscaled pools by name; ``sizes``: the current node count per pool
    (from the cluster), default the pool's ``count``."""
    out: dict[str, NodeGroup] = {}
    for pool in fleet.spec.pools:
        spec = pool.autoscaling
        if spec is None:
            continue
        out[pool.name] = NodeGroup(pool.name, sizes.get(pool.name, pool.size), spec.min,
                                   spec.max, spec.price_per_hour,
                                   spec.provisioning_delay_seconds, spec.priority,
                                   spec.zero_or_max_node_scaling)
    return out


def template_signatures(fleet: Fleet, examples: Mapping[str, NodeExample] | None = None
                        ) -> dict[str, bytes]:
    """Per autoscaled pool, what its template nodes are made of apart from names and
    topology: pools with one signature give pods the same nodes wherever they are
    (for pods that do not look at topology). A pool whose template copies a node
    (``examples``) is signed by that node's content."""
    out: dict[str, bytes] = {}
    examples = examples or {}
    labels = fleet.spec.topology_labels
    topology = frozenset({labels.zone, labels.block, labels.rack, HOSTNAME, POOL_LABEL,
                          "topology.kubernetes.io/region"})
    for pool in fleet.spec.pools:
        if pool.autoscaling is None:
            continue
        example = examples.get(pool.name)
        if example is not None:
            out[pool.name] = b"example:" + _example_signature(example, topology)
            continue
        bare = msgspec.structs.replace(pool, name="", name_prefix=None, count=0,
                                       topology=TopologySpec(), autoscaling=None)
        out[pool.name] = msgspec.json.encode(bare)
    return out


def _example_signature(example: NodeExample, topology: frozenset[str]) -> bytes:
    """What a copied node gives pods apart from its name and place: labels but the
    topology ones, taints, resources, its slices' devices (without the per-device
    UUIDs), the pods that come with it."""
    node = example.node
    labels = {k: v for k, v in (node.metadata.labels or {}).items() if k not in topology}
    slices = [msgspec.structs.replace(
        s.spec, node_name=None, pool=msgspec.structs.replace(s.spec.pool, name=""),
        devices=[msgspec.structs.replace(d, attributes={
            k: v for k, v in d.attributes.items() if not k.lower().endswith("uuid")})
            for d in s.spec.devices])
        for s in example.slices]
    pods = [msgspec.structs.replace(p.spec, node_name=None) for p in example.pods]
    return msgspec.json.encode((sorted(labels.items()), node.spec, node.status, slices, pods),
                               enc_hook=str, order="deterministic")


def pool_of(node: Node) -> str | None:
    """The pool (node group) a node belongs to, by its ``dralab.dev/pool`` label."""
    return node.metadata.labels.get(POOL_LABEL) if node.metadata.labels else None


class TemplateNodes:
    """The next nodes of each pool, built on demand. ``taken``: node names already in
    the cluster (a template never reuses one). ``examples``: per pool, the real node
    its templates copy (else the Fleet's generator makes them). ``daemon_sets``: the
    DaemonSets whose pods go on a generated template node."""

    def __init__(self, fleet: Fleet, sizes: Mapping[str, int], taken: Iterable[str],
                 seed: int | None = None, examples: Mapping[str, NodeExample] | None = None,
                 daemon_sets: Sequence[DaemonSet] = ()) -> None:
        pools = {p.name: p for p in fleet.spec.pools}
        # The pool at its current size, so that the next names follow the nodes it has.
        resized = [msgspec.structs.replace(p, count=sizes.get(p.name, p.size))
                   if p.autoscaling is not None and not p.names else p
                   for p in pools.values()]
        self._fleet = msgspec.structs.replace(
            fleet, spec=msgspec.structs.replace(fleet.spec, pools=resized))
        self._seed = seed
        self._taken = frozenset(taken)
        self._built: dict[str, list[TemplateNode]] = {}
        self.examples = dict(examples or {})
        self._daemon_sets = tuple(daemon_sets)
        self._original = fleet
        self._signatures: dict[str, bytes] | None = None
        self._pods: dict[tuple[str, int], tuple[TemplatePod, ...]] = {}

    @property
    def cluster_size(self) -> int:
        """How many nodes the cluster has (those the templates' names must avoid)."""
        return len(self._taken)

    def signatures(self) -> dict[str, bytes]:
        """``template_signatures`` of the Fleet with these examples (worked out once:
        a loop every 10 s asks again)."""
        if self._signatures is None:
            self._signatures = template_signatures(self._original, self.examples)
        return self._signatures

    def _generated(self, pool: str, index: int) -> TemplateNode:
        built = self._built.setdefault(pool, [])
        want = max(4, 2 * (index + 1))
        while len(built) <= index:
            # Names taken by input nodes are skipped; there are finitely many of them.
            built[:] = [t for t in grown_pool_nodes(self._fleet, pool, want, self._seed)
                        if t[0].metadata.name not in self._taken]
            want *= 2
        return built[index]

    def node(self, pool: str, index: int) -> TemplateNode:
        """The ``index``-th (0-based) new node of ``pool``."""
        generated = self._generated(pool, index)
        example = self.examples.get(pool)
        if example is None:
            return generated
        return _copy_example(example, generated[0].metadata.name or "")

    def pods(self, pool: str, index: int) -> tuple[TemplatePod, ...]:
        """The pods that come with the ``index``-th new node of ``pool``, with the claims
        they own (not bound, not allocated: the caller places them on the node)."""
        key = (pool, index)
        if key not in self._pods:
            node, _ = self.node(pool, index)
            example = self.examples.get(pool)
            if example is not None:
                # forceDaemonSets is off for a template from a real node: the example's
                # pods only.
                made = tuple(_fresh_pod(p, node.metadata.name or "", example.claims)
                             for p in example.pods)
                if example.from_provider:
                    made += tuple((p, ()) for p in
                                  _daemon_pods(self._daemon_sets, node, self._seed or 0))
            else:
                made = tuple((p, ()) for p in
                             _daemon_pods(self._daemon_sets, node, self._seed or 0))
            self._pods[key] = made
        return self._pods[key]


def _copy_example(example: NodeExample, name: str) -> TemplateNode:
    old = example.node.metadata.name or ""
    labels = dict(example.node.metadata.labels or {})
    labels[HOSTNAME] = name
    meta = ObjectMeta(name=name, labels=labels,
                      annotations=dict(example.node.metadata.annotations or {}))
    taints = [t for t in example.node.spec.taints if t.key not in _SANITIZED_TAINTS
              and not t.key.startswith(_SANITIZED_PREFIXES)]
    node = msgspec.structs.replace(
        example.node, metadata=meta,
        spec=msgspec.structs.replace(example.node.spec, taints=taints, unschedulable=None))
    slices = []
    for i, s in enumerate(example.slices):
        # drautils.SanitizedNodeResourceSlices: a node-local pool is the new node's own.
        pool_name = s.spec.pool.name.replace(old, name) if old and old in s.spec.pool.name \
            else f"{s.spec.pool.name}-{name}"
        spec = msgspec.structs.replace(
            s.spec, node_name=name if s.spec.node_name else s.spec.node_name,
            pool=msgspec.structs.replace(s.spec.pool, name=pool_name))
        slices.append(msgspec.structs.replace(
            s, metadata=ObjectMeta(name=f"{name}-{s.spec.driver}-{i}"), spec=spec))
    return node, tuple(slices)


def _fresh_pod(pod: Pod, node: str, claims: Sequence[ResourceClaim]) -> TemplatePod:
    """A copy of an example's pod for a new node: its own name and UID, no binding, and
    copies of the claims it owns (``claims``: the example's), unallocated, under names
    of its own; shared claims stay shared."""
    namespace = pod.metadata.namespace or "default"
    name = f"{pod.metadata.name}-{node}"
    uid = f"{pod.metadata.uid or pod.metadata.name}-{node}"
    owned = {c.metadata.name: c for c in claims
             if (c.metadata.namespace or "default") == namespace and any(
                 r.kind == "Pod" and r.name == pod.metadata.name
                 for r in c.metadata.owner_references)}
    doc = copy.deepcopy(pod.raw) if isinstance(pod.raw, dict) else \
        msgspec.to_builtins(pod)
    meta = doc.setdefault("metadata", {})
    meta.update(name=name, uid=uid, namespace=namespace)
    meta.pop("resourceVersion", None)
    spec = doc.setdefault("spec", {})
    spec.pop("nodeName", None)
    statuses = []
    copies: list[ResourceClaim] = []

    def copy_claim(old: str) -> str:
        claim = owned[old]
        fresh = f"{old}-{node}"
        refs = [msgspec.structs.replace(r, name=name, uid=uid) if r.kind == "Pod" else r
                for r in claim.metadata.owner_references]
        cmeta = msgspec.structs.replace(claim.metadata, name=fresh, uid=None,
                                        resource_version=None, owner_references=refs)
        copies.append(msgspec.structs.replace(claim, metadata=cmeta,
                                              status=type(claim.status)(), raw=None))
        return fresh

    by_entry = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
    for entry in spec.get("resourceClaims") or []:
        if not isinstance(entry, dict):
            continue
        if entry.get("resourceClaimName") in owned:
            entry["resourceClaimName"] = copy_claim(entry["resourceClaimName"])
        elif entry.get("resourceClaimTemplateName"):
            made = by_entry.get(entry.get("name", ""))
            if made is not None and made in owned:
                statuses.append({"name": entry["name"], "resourceClaimName": copy_claim(made)})
    doc["status"] = {"resourceClaimStatuses": statuses} if statuses else {}
    fresh_pod = decode(doc)
    assert isinstance(fresh_pod, Pod)
    return fresh_pod, tuple(copies)


def daemon_pods(daemon_sets: Sequence[DaemonSet], node: Node, seed: int) -> tuple[Pod, ...]:
    """The pods the DaemonSet controller would create for ``node``."""
    return _daemon_pods(daemon_sets, node, seed)


def _daemon_pods(daemon_sets: Sequence[DaemonSet], node: Node, seed: int) -> tuple[Pod, ...]:
    """The pods the DaemonSet controller would create for ``node`` (those whose selector,
    affinity and tolerations let them run there)."""
    if not daemon_sets:
        return ()
    controllers = Controllers(list(daemon_sets), [node])
    factory = PodFactory(NameGenerator(random.Random(f"{seed}:daemons:{node.metadata.name}")))
    out: list[Pod] = []
    for ds in daemon_sets:
        for doc in controllers.create(ds, factory):
            pod = decode(doc)
            if isinstance(pod, Pod):
                out.append(pod)
    return tuple(out)


def pool_sizes(fleet: Fleet, nodes: Iterable[Node]) -> dict[str, int]:
    """How many of ``nodes`` each of the Fleet's pools has (by the pool label); pools
    with none are 0."""
    sizes = {p.name: 0 for p in fleet.spec.pools}
    for node in nodes:
        pool = pool_of(node)
        if pool is not None:
            sizes[pool] = sizes.get(pool, 0) + 1
    return sizes
