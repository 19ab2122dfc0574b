"""Small pieces several plugins share: score normalisation, taint tolerations, args."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from dralab.api.core import Taint, Toleration
from dralab.api.taints import tolerates

from ..framework import MAX_NODE_SCORE, NodeScore

if TYPE_CHECKING:
    from dralab.cluster import ClusterState, NodeInfo

__all__ = [
    "NodeMasks",
    "default_normalize_score",
    "find_untolerated_taint",
    "tolerates",
]

Mask = npt.NDArray[np.bool_]


class NodeMasks:
    """Per key, a bool per node (``node_infos()`` order) computed from the node
    objects alone (labels, taints, spec), so valid until the set of nodes changes.

    ``get`` computes a mask only the second time a key is asked for: a key seen
    once (a one-off selector) would cost a pass over every node where the plain
    search might visit only a few. At most ``limit`` keys are kept.
    """

    __slots__ = ("_limit", "_masks", "_seen", "_version")

    def __init__(self, limit: int = 256) -> None:
        self._limit = limit
        self._version = -1
        self._masks: dict[Hashable, Mask] = {}
        self._seen: set[Hashable] = set()

    def peek(self, cluster: ClusterState, key: Hashable) -> Mask | None:
        """The mask of ``key`` if one is built for the current nodes (never builds)."""
        return self._masks.get(key) if self._version == cluster.node_version else None

    def get(self, cluster: ClusterState, key: Hashable,
            predicate: Callable[[NodeInfo], bool], eager: bool = False) -> Mask | None:
        """``predicate`` of every node; None on a first sighting unless ``eager``."""
        if self._version != cluster.node_version:
            self._version = cluster.node_version
            self._masks.clear()
            self._seen.clear()
        mask = self._masks.get(key)
        if mask is not None:
            return mask
        if not eager and key not in self._seen:
            if len(self._seen) >= self._limit:
                self._seen.clear()
            self._seen.add(key)
            return None
        if len(self._masks) >= self._limit:
            self._masks.clear()
        nodes = cluster.node_infos()
        mask = self._masks[key] = np.fromiter(map(predicate, nodes), np.bool_, len(nodes))
        return mask


def default_normalize_score(scores: list[NodeScore], reverse: bool = False,
                            max_priority: int = MAX_NODE_SCORE) -> None:
    """Scale ``scores`` in place so the best is ``max_priority`` (kube-scheduler's
    DefaultNormalizeScore); ``reverse`` turns high raw values into low scores. All
    zero stays zero, or becomes ``max_priority`` when reversed."""
    highest = max((s.score for s in scores), default=0)
    if highest == 0:
        if reverse:
            scores[:] = [NodeScore(s.name, max_priority) for s in scores]
        return
    out: list[NodeScore] = []
    for s in scores:
        value = max_priority * s.score // highest
        out.append(NodeScore(s.name, max_priority - value if reverse else value))
    scores[:] = out




def find_untolerated_taint(taints: Iterable[Taint], tolerations: Sequence[Toleration],
                           relevant: Callable[[Taint], bool]) -> Taint | None:
    """The first relevant taint no toleration tolerates, or None."""
    for taint in taints:
        if not relevant(taint):
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None
