"""What a ClusterState holds, as plain values, to compare two stores (or one store
before and after a what-if). ``identity`` compares objects by identity (a revert
must give back the very objects), otherwise by value (a commit against the same
changes applied to another store)."""

from __future__ import annotations

from typing import Any

from dralab.cluster import ClusterState, slice_owner


def fingerprint(cluster: ClusterState, identity: bool = True) -> dict[str, Any]:
    def obj(o: object) -> object:
        return id(o) if identity else o

    def record(o: object) -> object:
        # NodeInfo and PodInfo compare by identity; by value, their fields say it all.
        return id(o) if identity else None

    nodes = [(name, record(n), obj(n.node), n.allocatable, [record(p) for p in n.pods],
              [p.key for p in n.pods], dict(n.requested), n.non_zero_cpu, n.non_zero_memory)
             for name, n in cluster.nodes.items()]
    pods = [(key, record(p), obj(p.pod), p.priority, p.requests, p.sequence, p.non_zero,
             p.preemption_policy, p.assumed_node) for key, p in cluster.pods.items()]
    allocated = cluster.allocated
    owners = {slice_owner(s) for s in cluster.slices}
    return {
        "features": cluster.features,
        "nodes": nodes,
        "node_infos": [n.name for n in cluster.node_infos()],
        "node_index": dict(cluster.node_index()),
        "pods": pods,
        "pending": [p.key for p in cluster.pending_pods()],
        "claims": [(k, obj(c)) for k, c in cluster.claims.items()],
        "templates": [(k, obj(t)) for k, t in cluster.templates.items()],
        "classes": [(k, obj(c)) for k, c in cluster.classes.items()],
        "priority_classes": [(k, obj(c)) for k, c in cluster.priority_classes.items()],
        "slices": [obj(s) for s in cluster.slices],
        "owned": {repr(o): [obj(s) for s in cluster.slices_of(o)] for o in owners},
        "taint_rules": [obj(r) for r in cluster.taint_rules],
        "exclusive": dict(allocated.exclusive),
        "shares": dict(allocated.shares),
        "capacity": {k: dict(v) for k, v in allocated.capacity.items()},
        "allocated_claims": sorted(allocated.claims()),
        # Open forks matter when comparing a store with itself, not with another one.
        "forks": cluster.forks if identity else None,
    }
