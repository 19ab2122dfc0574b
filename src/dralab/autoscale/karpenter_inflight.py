"""Karpenter's capacity in flight: NodeClaims launched whose nodes are not ready yet.

Karpenter's cluster state (state.Cluster) holds a NodeClaim from its launch on, and the
provisioner's scheduler counts every such NodeClaim as an existing node: a pending pod
that fits one is nominated to it and gets no new node. Two kinds of such capacity here:

- nodes of the input that Karpenter has not initialized (``karpenter_disruption.
  initialized``: the ``karpenter.sh/unregistered`` taint, or ``karpenter.sh/registered``
  without ``karpenter.sh/initialized``) and are not being deleted: their well-known
  ephemeral taints and their NodePool's ``startupTaints`` are ignored, as
  StateNode.Taints does until initialization (a taint that comes back after it counts);
- the model's own launches of earlier loops, until the caller reports their nodes
  joined (``Karpenter.nodes_ready``): the template nodes launched, with the pods they
  were launched for placed on them first;
- the input's NodeClaims without a node yet, and nodes whose NodeClaim is not
  Initialized (``karpenter_claims``).

A pending pod is placed on the first such node that takes it (existing nodes are
tried in order before any new NodeClaim); a unit is placed whole or not at all.

An input node in flight counts, for a resource its status shows zero or lacks, its
instance type's (its pool's template node's) allocatable, as StateNode.Allocatable takes
the NodeClaim's until initialization: a kubelet reports extended resources as zero until
their device plugin registers.

An input node in flight keeps room for the DaemonSet pods that will run there
(ExistingNode's remaining daemon resources): what the DaemonSets whose pods the node
takes (its labels, its taints as eased) request, less what the DaemonSet pods bound to
it already request, never below zero per resource -- held by a stand-in pod on the
loop's fork.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import msgspec

from dralab.api.codec import decode
from dralab.api.core import Node, Pod
from dralab.api.quantity import Quantity
from dralab.api.workloads import DaemonSet
from dralab.cluster import ClusterState
from dralab.cluster.records import pod_requests
from dralab.scheduler import Scheduler

from .groups import TemplateNode, TemplateNodes, daemon_pods, pool_of
from .karpenter_daemons import daemon_set_owner
from .karpenter_disruption import EPHEMERAL_TAINTS, initialized
from .placement import place_pod
from .units import PodUnit

__all__ = ["Launch", "in_flight_names", "place_in_flight"]

NODEPOOL_LABEL = "karpenter.sh/nodepool"


@dataclass(frozen=True, slots=True)
class Launch:
    """Nodes the model launched in an earlier loop for ``pods``, not joined yet."""

    pool: str
    nodes: tuple[TemplateNode, ...]
    pods: tuple[str, ...]


def in_flight_names(launches: Sequence[Launch]) -> list[str]:
    return [node.metadata.name or "" for launch in launches for node, _ in launch.nodes]


def _matches(taint: Mapping[str, str], key: str, effect: str) -> bool:
    # corev1.Taint.MatchTaint: key and effect (the value does not matter).
    return taint.get("key") == key and taint.get("effect") == effect


def _as_in_flight(node: Node, startup: Sequence[Mapping[str, str]],
                  claimed: Node | None = None) -> Node:
    """``node`` with the taints Karpenter ignores until it is initialized, and the
    resources its status shows zero taken from ``claimed`` (its type's template node)."""
    taints = [t for t in node.spec.taints if (t.key, t.effect) not in EPHEMERAL_TAINTS
              and not any(_matches(s, t.key, t.effect) for s in startup)]
    status = node.status
    if claimed is not None:
        status = msgspec.structs.replace(
            status, capacity=_unzeroed(status.capacity, claimed.status.capacity),
            allocatable=_unzeroed(status.allocatable, claimed.status.allocatable))
    return msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, taints=taints),
                                   status=status)


def _unzeroed(reported: Mapping[str, Quantity], claimed: Mapping[str, Quantity]
              ) -> dict[str, Quantity]:
    out = dict(reported)
    for name, quantity in claimed.items():
        if name not in out or out[name].is_zero():
            out[name] = quantity
    return out


def _reserve_daemon_overhead(cluster: ClusterState, node: Node,
                             daemon_sets: Sequence[DaemonSet]) -> None:
    """Hold on ``node`` the DaemonSet requests not yet bound there (in milli-units)."""
    name = node.metadata.name or ""
    wanted: dict[str, int] = {}
    pods = 0  # RequestsForPods counts the pods too
    for pod in daemon_pods(daemon_sets, node, 0):
        pods += 1
        for resource, milli in pod_requests(pod).items():
            wanted[resource] = wanted.get(resource, 0) + milli
    for info in cluster.nodes[name].pods:
        if daemon_set_owner(info.pod) is not None:
            pods -= 1
            for resource, milli in info.requests.items():
                wanted[resource] = wanted.get(resource, 0) - milli
    left = {r: f"{m}m" for r, m in sorted(wanted.items()) if m > 0 and r != "pods"}
    # One stand-in pod per DaemonSet pod still to come, the first holding the resources
    # (one at least while resources are left: a pod always takes a pod slot here).
    for i in range(max(pods, 1 if left else 0)):
        requests = left if i == 0 else {}
        stand_in = decode({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"karpenter-daemon-overhead-{name}-{i}", "namespace": "default"},
            "spec": {"containers": [{"name": "overhead", "image": "none",
                                     "resources": {"requests": requests}}]}})
        assert isinstance(stand_in, Pod)
        cluster.assume_pod(cluster.add_pod(stand_in), name)


def place_in_flight(scheduler: Scheduler, launches: Sequence[Launch],
                    startup_taints: Mapping[str, Sequence[Mapping[str, str]]],
                    units: Sequence[PodUnit], before_units: Callable[[], object] | None = None,
                    daemon_sets: Sequence[DaemonSet] = (), templates: TemplateNodes | None = None,
                    pools: Collection[str] = (), claimed: Sequence[Node] = (),
                    unready: Collection[str] = ()) -> tuple[list[str], set[str]]:
    """On the open fork: the in-flight nodes added (or their taints eased, and their
    DaemonSet overhead held, ``daemon_sets``; the resources they report zero those of
    their pool's template node, when ``pools`` has it), and the ``units`` placed on them
    that fit. ``claimed``: the nodes of input NodeClaims without one, in flight too;
    ``unready``: nodes whose NodeClaim is not Initialized (in flight whatever their
    labels say; ``karpenter_claims``).
    ``startup_taints``: per NodePool name, its startupTaints; ``before_units``: called
    once the launches' own pods are back on their nodes (they are bound upstream),
    before any unit is tried. Returns the pods placed and the names of the units
    taken."""
    cluster = scheduler.cluster
    names: list[str] = []
    placed: set[str] = set()  # the launches' own pods, on their nodes
    for name in list(cluster.node_names()):
        node = cluster.nodes[name].node
        if (initialized(node) and name not in unready) or node.metadata.deletion_timestamp:
            continue
        nodepool = (node.metadata.labels or {}).get(NODEPOOL_LABEL, "")
        pool = pool_of(node) or ""
        typical = templates.node(pool, 0)[0] if templates is not None and pool in pools \
            else None
        eased = _as_in_flight(node, startup_taints.get(nodepool, ()), typical)
        cluster.add_node(eased)
        if daemon_sets:
            _reserve_daemon_overhead(cluster, eased, daemon_sets)
        names.append(name)
    for launch in launches:
        own = []
        for node, slices in launch.nodes:
            cluster.add_node(node, slices)
            own.append(node.metadata.name or "")
        for key in launch.pods:
            info = cluster.pods.get(key)
            if info is not None and info.assumed_node is None and \
                    place_pod(scheduler, info, own).node is not None:
                placed.add(key)
        names += own
    for node in claimed:
        cluster.add_node(node)
        names.append(node.metadata.name or "")
    if before_units is not None:
        before_units()
    helped: list[str] = []
    taken: set[str] = set()
    if not names:
        return helped, taken
    for unit in units:
        if all(key in placed for key in unit.keys):
            # Pending again while the node launched for it is in flight (#2011).
            helped += unit.keys
            taken.add(unit.name)
            continue
        scheduler.fork()
        if all(place_pod(scheduler, p, names).node is not None for p in unit.pods):
            scheduler.commit()
            helped += unit.keys
            taken.add(unit.name)
        else:
            scheduler.revert()
    return helped, taken
