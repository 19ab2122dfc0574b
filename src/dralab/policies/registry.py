"""Policies by name, built from what a run knows before the first pod arrives."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .base import Policy
from .bestfit import BestFitPolicy
from .clustering import GpuClusteringPolicy
from .dotprod import DotProdPolicy
from .fgd import FgdPolicy
from .fgdfs import FgdFsPolicy
from .frag import TargetWorkload
from .packing import GpuPackingPolicy
from .randompick import RandomPolicy
from .scarcity import Scarcity
from .state import NodeArrays

__all__ = ["PAPER_POLICIES", "POLICIES", "PolicyContext", "make_policy"]


@dataclass(frozen=True, slots=True, eq=False)
class PolicyContext:
    """Inputs a policy may be built from.

    ``target``: M, the popular shapes (paper §3.3); ``shapes``: every shape of the
    workload, weighted by pod count; ``cluster``: the empty cluster (capacities).
    """

    target: TargetWorkload
    shapes: TargetWorkload
    cluster: NodeArrays


# The paper's six, in the order of its tables.
PAPER_POLICIES: tuple[str, ...] = (
    "Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD")

POLICIES: Mapping[str, Callable[[PolicyContext], Policy]] = MappingProxyType({
    "Random": lambda _c: RandomPolicy(),
    "DotProd": lambda _c: DotProdPolicy(),
    "GpuClustering": lambda _c: GpuClusteringPolicy(),
    "GpuPacking": lambda _c: GpuPackingPolicy(),
    "BestFit": lambda _c: BestFitPolicy(),
    "FGD": lambda c: FgdPolicy(c.target),
    "FGD-FS": lambda c: FgdFsPolicy(c.target, Scarcity.of(c.shapes, c.cluster)),
})


def make_policy(name: str, context: PolicyContext) -> Policy:
    """The policy called ``name``; ValueError naming the known ones otherwise."""
    factory = POLICIES.get(name)
    if factory is None:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICIES)}")
    return factory(context)
