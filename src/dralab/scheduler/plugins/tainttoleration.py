"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score.

Score counts the PreferNoSchedule taints the pod does not tolerate; NormalizeScore
reverses it, so the node with the fewest such taints gets 100.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from dralab.api.core import Taint, Toleration
from dralab.cluster import NodeInfo, PodInfo

from ..framework import (
    MAX_NODE_SCORE,
    Code,
    CycleState,
    Handle,
    MissingStateError,
    NodeScore,
    Status,
)
from ..hints import EventHint
from .eventhints import NODE_HINTS
from .helpers import Mask, NodeMasks, default_normalize_score, find_untolerated_taint, tolerates

NAME = "TaintToleration"
ERR_REASON = "node(s) had untolerated taint(s)"
_STATE_KEY = "PreScore" + NAME
_SUCCESS = Status.success()

I64 = npt.NDArray[np.int64]
Positions = npt.NDArray[np.int64]


def _blocks_scheduling(taint: Taint) -> bool:
    return taint.effect in ("NoSchedule", "NoExecute")


class _PreScoreState:
    __slots__ = ("tolerations",)

    def __init__(self, tolerations: tuple[Toleration, ...]) -> None:
        self.tolerations = tolerations

    def clone(self) -> _PreScoreState:
        return self  # read-only after PreScore


class TaintToleration:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._blocking: tuple[int, bool] = (-1, False)
        # Per toleration list (as JSON): the nodes it lets through. Key None: nodes
        # without a blocking taint, which every pod passes; key "": nodes with a
        # PreferNoSchedule taint (the only ones scoring looks at).
        self._masks = NodeMasks()
        # Filter's rejection per (toleration list, the node's taints): most tainted nodes
        # share their taints (a pool's), so the statuses of known rejections are reused.
        self._statuses: dict[tuple[bytes, tuple[Taint, ...]], Status] = {}
        # Per toleration list: the statuses by node position, for one cluster and
        # node_version (nodes and their taints unchanged).
        self._by_position: dict[bytes, tuple[object, int, list[Status | None]]] = {}

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> TaintToleration:
        return cls(handle)

    def filter_relevant(self, pod: PodInfo) -> bool:
        """Only clusters with a NoSchedule/NoExecute taint somewhere can reject anything."""
        cluster = self._handle.cluster
        version, blocking = self._blocking
        if version != cluster.node_version:
            blocking = any(_blocks_scheduling(t) for n in cluster.nodes.values()
                           for t in n.node.spec.taints)
            self._blocking = (cluster.node_version, blocking)
        return blocking

    @property
    def name(self) -> str:
        return NAME

    def events_to_register(self) -> Sequence[EventHint]:
        return NODE_HINTS

    def dry_run_key(self, state: CycleState, pod: PodInfo) -> Hashable | None:
        """Filter reads the pod's tolerations and the Node object's taints only."""
        return NAME

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        taints = node.node.spec.taints
        if not taints:
            return _SUCCESS
        taint = find_untolerated_taint(taints, pod.pod.spec.tolerations, _blocks_scheduling)
        if taint is None:
            return _SUCCESS
        shown = f"{taint.key}={taint.value}" if taint.value else taint.key
        # The reason stays generic (it is aggregated across nodes); details name the taint.
        return Status.unresolvable(NAME, ERR_REASON, details=(
            f"untolerated taint {shown}:{taint.effect}",))

    def filter_mask(self, state: CycleState, pod: PodInfo) -> Mask | None:
        """Untainted nodes, plus the tainted ones this pod's tolerations let through
        once that list of tolerations has been seen before."""
        cluster = self._handle.cluster
        clean = self._masks.get(cluster, None, _unblocked, eager=True)
        assert clean is not None
        tolerations = pod.pod.spec.tolerations
        if not tolerations:
            return clean
        key = msgspec.json.encode(tolerations)
        passes = self._masks.get(cluster, key, lambda n: self.filter(state, pod, n)
                                 .code is Code.SUCCESS)
        return clean if passes is None else passes

    def filter_rejections(self, state: CycleState, pod: PodInfo
                          ) -> tuple[Mask, Callable[[list[int]], list[Status]]] | None:
        """The nodes ``filter_mask`` does not let through are rejected (the mask is exact
        for a toleration list seen before), with Filter's statuses."""
        cluster = self._handle.cluster
        tolerations = pod.pod.spec.tolerations
        key = msgspec.json.encode(tolerations) if tolerations else b""
        if tolerations:
            passes = self._masks.get(cluster, key, lambda n: self.filter(state, pod, n)
                                     .code is Code.SUCCESS)
            if passes is None:
                return None
        else:
            passes = self._masks.get(cluster, None, _unblocked, eager=True)
            assert passes is not None
        nodes = cluster.node_infos()
        memo = self._statuses
        if len(memo) > 4096:
            memo.clear()
        known = self._by_position.get(key)
        if known is None or known[0] is not cluster or known[1] != cluster.node_version:
            if len(self._by_position) > 256:
                self._by_position.clear()
            known = self._by_position[key] = (cluster, cluster.node_version,
                                              [None] * len(nodes))
        by_position = known[2]

        def statuses(positions: list[int]) -> list[Status]:
            out = []
            for position in positions:
                status = by_position[position]
                if status is None:
                    node = nodes[position]
                    taints = tuple(node.node.spec.taints)
                    status = memo.get((key, taints))
                    if status is None:
                        status = memo[(key, taints)] = self.filter(state, pod, node)
                    by_position[position] = status
                out.append(status)
            return out

        return ~passes, statuses

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        tolerations = tuple(t for t in pod.pod.spec.tolerations
                            if not t.effect or t.effect == "PreferNoSchedule")
        state.write(_STATE_KEY, _PreScoreState(tolerations))
        return _SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        taints = node.node.spec.taints
        if not taints:
            return 0, _SUCCESS
        try:
            tolerations = state.read(_STATE_KEY, _PreScoreState).tolerations
        except MissingStateError as exc:
            return 0, Status.error(NAME, str(exc))
        count = sum(1 for t in taints if t.effect == "PreferNoSchedule"
                    and not any(tolerates(tol, t) for tol in tolerations))
        return count, _SUCCESS

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
                    ) -> tuple[list[int], Status]:
        """Score and NormalizeScore for all nodes at once (most nodes have no taints)."""
        raw: list[int] = []
        for node in nodes:
            if node.node.spec.taints:
                value, status = self.score(state, pod, node)
                if not status.is_success():
                    return [], status
                raw.append(value)
            else:
                raw.append(0)
        highest = max(raw, default=0)
        if highest == 0:
            return [MAX_NODE_SCORE] * len(raw), _SUCCESS
        return [MAX_NODE_SCORE - MAX_NODE_SCORE * v // highest for v in raw], _SUCCESS

    def score_positions(self, state: CycleState, pod: PodInfo, positions: Positions
                        ) -> tuple[I64, Status] | None:
        """``score_nodes`` where only nodes with a PreferNoSchedule taint are scored
        one by one (usually none)."""
        preferring = self._masks.get(self._handle.cluster, "", _prefers, eager=True)
        assert preferring is not None
        raw = np.zeros(len(positions), np.int64)
        for k in np.flatnonzero(preferring[positions]).tolist():
            node = self._handle.cluster.node_infos()[int(positions[k])]
            value, status = self.score(state, pod, node)
            if not status.is_success():
                return raw, status
            raw[k] = value
        highest = int(raw.max()) if len(raw) else 0
        if highest == 0:
            return np.full(len(positions), MAX_NODE_SCORE, np.int64), _SUCCESS
        return MAX_NODE_SCORE - MAX_NODE_SCORE * raw // highest, _SUCCESS

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        default_normalize_score(scores, reverse=True)
        return _SUCCESS


def _unblocked(node: NodeInfo) -> bool:
    return not any(_blocks_scheduling(t) for t in node.node.spec.taints)


def _prefers(node: NodeInfo) -> bool:
    return any(t.effect == "PreferNoSchedule" for t in node.node.spec.taints)
