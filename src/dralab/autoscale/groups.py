"""Node groups: the Fleet pools that carry ``autoscaling``, and their template nodes.

A pool's template node is exactly what ``dralab fleet`` publishes for one more
node of the pool (``dralab.fleet.generate.grown_pool_nodes``): the next name by
the pool's naming, its labels, taints and topology, and the node's
ResourceSlices. The k-th new node of a scale-up is the pool k nodes larger.
Templates are built lazily and cached: an estimate that needs 40 nodes of a pool
builds them once per run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import msgspec

from dralab.api.core import Node
from dralab.api.resource import ResourceSlice
from dralab.fleet import Fleet
from dralab.fleet.generate import grown_pool_nodes
from dralab.fleet.spec import TopologySpec

__all__ = ["POOL_LABEL", "NodeGroup", "TemplateNodes", "node_groups", "pool_of",
           "template_signatures"]

# The label dralab fleet puts on every node of a pool: the node's group.
POOL_LABEL = "dralab.dev/pool"

TemplateNode = tuple[Node, tuple[ResourceSlice, ...]]


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
                                   spec.provisioning_delay_seconds, spec.priority)
    return out


def template_signatures(fleet: Fleet) -> dict[str, bytes]:
    """Per autoscaled pool, what its template nodes are made of apart from names and
    topology: pools with one signature give pods the same nodes wherever they are
    (for pods that do not look at topology)."""
    out: dict[str, bytes] = {}
    for pool in fleet.spec.pools:
        if pool.autoscaling is None:
            continue
        bare = msgspec.structs.replace(pool, name="", name_prefix=None, count=0,
                                       topology=TopologySpec(), autoscaling=None)
        out[pool.name] = msgspec.json.encode(bare)
    return out


def pool_of(node: Node) -> str | None:
    """The pool (node group) a node belongs to, by its ``dralab.dev/pool`` label."""
    return node.metadata.labels.get(POOL_LABEL) if node.metadata.labels else None


class TemplateNodes:
    """The next nodes of each pool, built on demand. ``taken``: node names already in
    the cluster (a template never reuses one)."""

    def __init__(self, fleet: Fleet, sizes: Mapping[str, int], taken: Iterable[str],
                 seed: int | None = None) -> None:
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

    def node(self, pool: str, index: int) -> TemplateNode:
        """The ``index``-th (0-based) new node of ``pool``."""
        built = self._built.setdefault(pool, [])
        want = max(4, 2 * (index + 1))
        while len(built) <= index:
            # Names taken by input nodes are skipped; there are finitely many of them.
            built[:] = [t for t in grown_pool_nodes(self._fleet, pool, want, self._seed)
                        if t[0].metadata.name not in self._taken]
            want *= 2
        return built[index]


def pool_sizes(fleet: Fleet, nodes: Iterable[Node]) -> dict[str, int]:
    """How many of ``nodes`` each of the Fleet's pools has (by the pool label); pools
    with none are 0."""
    sizes = {p.name: 0 for p in fleet.spec.pools}
    for node in nodes:
        pool = pool_of(node)
        if pool is not None:
            sizes[pool] = sizes.get(pool, 0) + 1
    return sizes
