"""Karpenter's disruption budgets per NodePool (sigs.k8s.io/karpenter
pkg/controllers/disruption helpers.go BuildDisruptionBudgetMapping).

Each NodePool's budgets are counted on its own nodes (the nodes its
``karpenter.sh/nodepool`` label names): per disruption reason the NodePool allows
the least any of its budgets allows, less its nodes already being disrupted, never
below 0. A candidate uses up one disruption of its own NodePool's allowance, so
one NodePool's blocking budget leaves the others' nodes free.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from .karpenter_nodepool import NodePoolSettings

__all__ = ["NodePoolBudgets", "OfNodePool", "within_budgets"]


class OfNodePool(Protocol):
    @property
    def nodepool(self) -> str: ...


C = TypeVar("C", bound=OfNodePool)


@dataclass(frozen=True, slots=True)
class NodePoolBudgets:
    """The NodePools by name, each one's nodes and those of them being disrupted
    (deleting)."""

    nodepools: Mapping[str, NodePoolSettings]
    nodes: Mapping[str, int] = field(default_factory=dict)
    disrupting: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def count(cls, nodepools: Iterable[NodePoolSettings],
              nodes: Iterable[tuple[str, bool]]) -> NodePoolBudgets:
        """From each node's NodePool name and whether it is being disrupted."""
        total: dict[str, int] = {}
        disrupting: dict[str, int] = {}
        for name, deleting in nodes:
            total[name] = total.get(name, 0) + 1
            if deleting:
                disrupting[name] = disrupting.get(name, 0) + 1
        return cls({n.name: n for n in nodepools}, total, disrupting)

    def settings(self, name: str) -> NodePoolSettings | None:
        return self.nodepools.get(name)

    def mapping(self, reason: str) -> dict[str, int]:
        """Per NodePool, how many more of its nodes may be disrupted for ``reason``."""
        return {name: max(0, n.allowed_disruptions(self.nodes.get(name, 0), reason)
                          - self.disrupting.get(name, 0))
                for name, n in self.nodepools.items()}


def within_budgets(candidates: Sequence[C], allowed: dict[str, int]) -> list[C]:
    """The candidates, in order, each while its NodePool still allows one more (the
    mapping is used up as it goes, as the disruption methods do)."""
    out = []
    for c in candidates:
        if allowed.get(c.nodepool, 0) <= 0:
            continue
        allowed[c.nodepool] -= 1
        out.append(c)
    return out
