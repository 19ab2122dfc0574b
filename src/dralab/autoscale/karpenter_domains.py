"""Karpenter's topology domains for new NodeClaims.

Karpenter's provisioner spreads pods over every domain its NodePools can launch into,
not only over the domains of nodes that exist: a topology spread constraint's domains
are the values its key takes in each NodePool's requirements and instance types'
offerings (topology.go, TopologyDomainGroup, with the NodePool's taints), and for
``kubernetes.io/hostname`` the global minimum is zero, since a new node is always a new,
empty domain (TopologyGroup.domainMinCount). kube-scheduler's PodTopologySpread, which
the model's estimates run, counts the domains of nodes only.

So while a loop provisions pods with a hard (DoNotSchedule) spread constraint, each
instance type has, on the loop's fork, an empty stand-in node: its template node's
labels and taints, a hostname of its own, no room for any pod (``pods`` 0, cordoned).
Each is a domain with no matching pod for every key its labels carry, counted for a pod
or not as the scheduler counts nodes (nodeAffinityPolicy, nodeTaintsPolicy) -- as
Karpenter counts a domain only when the pod's requirements allow it and, under Honor,
it tolerates a NodePool's taints there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from dralab.api.core import Node, Pod
from dralab.api.quantity import parse_quantity
from dralab.cluster.records import raw_spec_field
from dralab.scheduler import Scheduler

from .groups import TemplateNodes
from .units import PodUnit

__all__ = ["add_domain_nodes", "spreads_hard"]

HOSTNAME = "kubernetes.io/hostname"
PREFIX = "karpenter-domain-"


def spreads_hard(pod: Pod) -> bool:
    """Whether the pod has a DoNotSchedule topology spread constraint."""
    constraints = raw_spec_field(pod, "topologySpreadConstraints")
    return isinstance(constraints, list) and any(
        isinstance(c, dict) and c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"
        for c in constraints)


def _stand_in(template: Node, name: str) -> Node:
    labels = {**(template.metadata.labels or {}), HOSTNAME: name}
    zero = parse_quantity("0")
    status = msgspec.structs.replace(
        template.status, allocatable={**template.status.allocatable, "pods": zero})
    return msgspec.structs.replace(
        template, metadata=msgspec.structs.replace(template.metadata, name=name,
                                                   uid=f"uid-{name}", labels=labels),
        spec=msgspec.structs.replace(template.spec, unschedulable=True), status=status)


def add_domain_nodes(scheduler: Scheduler, templates: TemplateNodes, pools: Iterable[str],
                     units: Sequence[PodUnit]) -> list[str]:
    """On the open fork: one stand-in node per pool (instance type) when a unit's pod
    spreads hard; their names (none otherwise)."""
    if not any(spreads_hard(p.pod) for u in units for p in u.pods):
        return []
    cluster = scheduler.cluster
    out = []
    for pool in pools:
        name = f"{PREFIX}{pool}"
        while name in cluster.nodes:
            name += "-x"
        cluster.add_node(_stand_in(templates.node(pool, 0)[0], name))
        out.append(name)
    return out
