"""What one autoscaler loop decides, and its JSON form (``dralab autoscale``'s contract)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .eligibility import Unremovable

__all__ = ["LoopDecisions", "PendingPod", "ScaleDown", "ScaleUp"]


@dataclass(frozen=True, slots=True)
class ScaleUp:
    """Add ``add`` nodes to ``pool`` for ``pods`` (namespace/name); the nodes are Ready
    at ``ready_at`` (the loop's time plus the pool's provisioning delay)."""

    pool: str
    add: int
    pods: tuple[str, ...]
    ready_at: float = 0.0
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PendingPod:
    """A pod no node group can help, and why."""

    pod: str
    reason: str


@dataclass(frozen=True, slots=True)
class ScaleDown:
    """A node that can go: its pool and CA's utilisation of it. ``since``: when it
    became unneeded (the loop's clock); ``on_completion``: it runs safe-to-evict
    "on-completion" pods, so it is deleted only once they end."""

    node: str
    pool: str
    utilization: float
    since: float = 0.0
    on_completion: bool = False


@dataclass(frozen=True, slots=True)
class LoopDecisions:
    """``unneeded``: nodes unneeded now (report-only); ``scale_downs``: those unneeded
    for the unneeded time and outside the delay after a scale-up (to remove now)."""

    scale_ups: tuple[ScaleUp, ...] = ()
    pending: tuple[PendingPod, ...] = ()
    unneeded: tuple[ScaleDown, ...] = ()
    scale_downs: tuple[ScaleDown, ...] = ()
    helped_by_upcoming: tuple[str, ...] = ()  # pods the nodes in flight will take
    # Nodes of autoscaled pools that scale-down keeps, with CA's reason (none in a
    # loop that scaled up: CA skips scale-down then).
    unremovable: tuple[Unremovable, ...] = ()
    # The Karpenter model's launches as karpenter.sh/v1 NodeClaim documents (one per
    # node; none from the Cluster Autoscaler model).
    node_claims: tuple[dict[str, Any], ...] = ()

    @property
    def all_helped(self) -> bool:
        return not self.pending

    def to_dict(self) -> dict[str, Any]:
        """The CLI's document: scaleUp by pool, pending by pod, scaleDown (the unneeded
        nodes) by node, and when there are any, unremovable (the other nodes of
        autoscaled pools, with Cluster Autoscaler's reason) by node and nodeClaims (the
        Karpenter model's NodeClaims, in launch order)."""
        ups: dict[str, list[ScaleUp]] = {}
        for up in self.scale_ups:
            ups.setdefault(up.pool, []).append(up)
        doc: dict[str, Any] = {
            "scaleUp": [{"pool": pool, "add": sum(u.add for u in items),
                         "pods": sorted(p for u in items for p in u.pods)}
                        for pool, items in sorted(ups.items())],
            "pending": [{"pod": p.pod, "reason": p.reason}
                        for p in sorted(self.pending, key=lambda p: p.pod)],
            "scaleDown": [{"node": d.node, "pool": d.pool,
                           "utilization": round(d.utilization, 4)}
                          for d in sorted(self.unneeded, key=lambda d: d.node)],
        }
        if self.unremovable:  # left out when empty, as Kubernetes omits empty fields
            doc["unremovable"] = [{"node": u.node, "pool": u.pool, "reason": u.reason,
                                   "detail": u.detail}
                                  for u in sorted(self.unremovable, key=lambda u: u.node)]
        if self.node_claims:
            doc["nodeClaims"] = [dict(c) for c in self.node_claims]
        return doc
