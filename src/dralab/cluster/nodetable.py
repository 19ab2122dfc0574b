"""Per-node resource numbers as numpy columns, for Filter masks and batch scoring.

Rows follow ``ClusterState.node_infos()`` (a node's *position*). The table is
rebuilt when the set of nodes changes (``node_version``) and otherwise catches
up from the cluster's node journal, refreshing only the rows of nodes whose
pods changed since it last looked: a scheduled pod costs one row update, not a
pass over the fleet.

All values are integers in milli-units, as on ``NodeInfo``. Arithmetic on the
columns must give exactly what the per-node Python code gives, so amounts
are kept only while they fit comfortably in int64 (``usable``), and ``exact``
says whether they are also below 2**52, so that sums with a pod's (equally
bounded) request stay below 2**53, where int64 -> float64 conversion is
lossless (float formulas such as BalancedAllocation need that).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from dralab.allocator.changelog import ChangeFeed

from .records import CPU, MEMORY, PODS, NodeInfo

__all__ = ["NodeSource", "NodeTable", "pick"]


class NodeSource(Protocol):
    """What the table reads of the cluster (``store.ClusterState``, which owns the
    table): named here so that this module does not import the store back."""

    @property
    def node_version(self) -> int: ...
    def node_infos(self) -> list[NodeInfo]: ...
    def node_index(self) -> dict[str, int]: ...
    def node_log(self) -> ChangeFeed[str]: ...

I64 = npt.NDArray[np.int64]
T = TypeVar("T")
# Beyond this an amount times 100 (the score formulas) could overflow int64.
_INT_LIMIT = 1 << 56
_EXACT_LIMIT = 1 << 52


class NodeTable:
    """See the module docstring. Columns are read-only for callers."""

    def __init__(self, cluster: NodeSource) -> None:
        self.cluster = cluster
        self._version = -1
        self._cursor = 0
        self.usable = False
        self.exact = False
        self.size = 0
        self.pods_room: I64 = np.zeros(0, np.int64)  # allocatable pods - pods on the node
        self.alloc_cpu: I64 = np.zeros(0, np.int64)
        self.alloc_memory: I64 = np.zeros(0, np.int64)
        self.non_zero_cpu: I64 = np.zeros(0, np.int64)
        self.non_zero_memory: I64 = np.zeros(0, np.int64)
        self.req_cpu: I64 = np.zeros(0, np.int64)
        self.req_memory: I64 = np.zeros(0, np.int64)
        # allocatable - requested per resource, built on first use.
        self._free: dict[str, I64] = {}

    # --- keeping up -------------------------------------------------------------------
    def sync(self) -> bool:
        """Bring the table up to date; False when it cannot be used (huge amounts)."""
        cluster = self.cluster
        if self._version != cluster.node_version:
            self._rebuild()
            return self.usable
        log = cluster.node_log()
        if log.end == self._cursor:
            return self.usable
        changed = log.since(self._cursor)
        self._cursor = log.end
        if changed is None or not self.usable:
            self._rebuild()
            return self.usable
        index = cluster.node_index()
        nodes = cluster.node_infos()
        for name in set(changed):
            position = index.get(name)
            if position is not None and not self._refresh(position, nodes[position]):
                self._rebuild()
                break
        return self.usable

    def _rebuild(self) -> None:
        cluster = self.cluster
        nodes = cluster.node_infos()
        self._version = cluster.node_version
        self._cursor = cluster.node_log().end
        self.size = len(nodes)
        resources = list(self._free)
        self._free = {}
        try:
            self.pods_room = _column(n.allocatable.get(PODS, 0) // 1000 - len(n.pods)
                                     for n in nodes)
            self.alloc_cpu = _column(n.alloc_cpu for n in nodes)
            self.alloc_memory = _column(n.alloc_memory for n in nodes)
            self.non_zero_cpu = _column(n.non_zero_cpu for n in nodes)
            self.non_zero_memory = _column(n.non_zero_memory for n in nodes)
            self.req_cpu = _column(n.requested.get(CPU, 0) for n in nodes)
            self.req_memory = _column(n.requested.get(MEMORY, 0) for n in nodes)
            for resource in resources:
                self._free[resource] = _free_column(nodes, resource)
        except OverflowError:
            self.usable = self.exact = False
            return
        self.usable = True
        columns = (self.alloc_cpu, self.alloc_memory, self.non_zero_cpu,
                   self.non_zero_memory, self.req_cpu, self.req_memory)
        self.exact = all(_below(c, _EXACT_LIMIT) for c in columns)

    def _refresh(self, position: int, node: NodeInfo) -> bool:
        """Rewrite one row; False if an amount got too large (the caller rebuilds)."""
        requested = node.requested
        allocatable = node.allocatable
        values = (node.non_zero_cpu, node.non_zero_memory,
                  requested.get(CPU, 0), requested.get(MEMORY, 0))
        if any(abs(v) >= _INT_LIMIT for v in values):
            return False
        if any(abs(v) >= _EXACT_LIMIT for v in values):
            self.exact = False
        self.pods_room[position] = allocatable.get(PODS, 0) // 1000 - len(node.pods)
        self.non_zero_cpu[position] = values[0]
        self.non_zero_memory[position] = values[1]
        self.req_cpu[position] = values[2]
        self.req_memory[position] = values[3]
        for resource, column in self._free.items():
            free = allocatable.get(resource, 0) - requested.get(resource, 0)
            if abs(free) >= _INT_LIMIT:
                return False
            column[position] = free
        return True

    # --- queries ------------------------------------------------------------------------
    def free(self, resource: str) -> I64 | None:
        """allocatable - requested of ``resource`` per node (0 allocatable when the node
        does not list it); None if an amount is too large."""
        column = self._free.get(resource)
        if column is None:
            try:
                column = _free_column(self.cluster.node_infos(), resource)
            except OverflowError:
                return None
            self._free[resource] = column
        return column


def _column(values: Iterable[int]) -> I64:
    column: I64 = np.fromiter(values, np.int64)
    if not _below(column, _INT_LIMIT):
        raise OverflowError("amount too large for the node table")
    return column


def _free_column(nodes: list[NodeInfo], resource: str) -> I64:
    return _column(n.allocatable.get(resource, 0) - n.requested.get(resource, 0)
                   for n in nodes)


def _below(column: I64, limit: int) -> bool:
    if not len(column):
        return True
    return int(column.max()) < limit and int(column.min()) > -limit


def pick(items: Sequence[T], positions: I64) -> list[T]:
    """``[items[p] for p in positions]``, the loop done in C."""
    if len(positions) == 1:
        return [items[int(positions[0])]]
    return list(itemgetter(*positions.tolist())(items)) if len(positions) else []
