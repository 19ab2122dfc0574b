"""PodTopologySpread (PreFilter, Filter, PreScore, Score, NormalizeScore), as kube-scheduler
v1.36.2 computes it (pkg/scheduler/framework/plugins/podtopologyspread).

Filter (DoNotSchedule constraints): PreFilter counts, per topology value, the pods the
constraint's selector matches on the nodes that count (all topology keys present, and
the node inclusion policies); a node passes when ``count(its domain) + (1 if the pod
matches itself) - min count`` is at most ``maxSkew``. The minimum is 0 while fewer than
``minDomains`` domains exist. Rejections: ``node(s) didn't match pod topology spread
constraints`` (Unschedulable: evicting pods may help) and ``... (missing required label)``
(UnschedulableAndUnresolvable). Preemption updates the counts through AddPod/RemovePod.

Score (ScheduleAnyway constraints, or the default constraints): per node the sum over
constraints of ``count * log(domains + 2) + maxSkew - 1``, normalised so the node with
the fewest matching pods scores 100 (``100 * (max + min - score) / max``). Nodes missing
a topology key score 0 when the pod has its own constraints (or List defaulting).

Constraints, selectors and the args live in ``podtopologyspread_constraints``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from dralab.api.features import Gate
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.cluster.events import (
    ClusterEvent,
    NodeAdded,
    NodeRemoved,
    NodeUpdated,
    PodAdded,
    PodAssumed,
    PodBound,
    PodForgotten,
    PodRemoved,
)

from ..framework import (
    MAX_NODE_SCORE,
    CycleState,
    Handle,
    NodeScore,
    PreFilterResult,
    Status,
)
from ..hints import QUEUE, SKIP, EventHint, HintResult
from .podtopologyspread_constraints import (
    DO_NOT_SCHEDULE,
    HOSTNAME,
    SCHEDULE_ANYWAY,
    RequiredAffinity,
    SpreadArgs,
    SpreadConstraint,
    count_matching,
    has_all_keys,
    node_counts,
    own_constraints,
    parse_args,
    pod_constraints,
)

__all__ = ["ERR_REASON_CONSTRAINTS_NOT_MATCH", "ERR_REASON_NODE_LABEL_NOT_MATCH", "NAME",
           "PodTopologySpread"]

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_SUCCESS = Status.success()
_SKEW = Status.unschedulable(NAME, ERR_REASON_CONSTRAINTS_NOT_MATCH)
_MISSING_LABEL = Status.unresolvable(NAME, ERR_REASON_NODE_LABEL_NOT_MATCH)
_MAX_INT32 = (1 << 31) - 1


class _CriticalPaths:
    """The two domains with the fewest matching pods, kept as upstream keeps them
    (criticalPaths.update): after AddPod/RemovePod the pair may miss a third domain,
    exactly as in kube-scheduler."""

    __slots__ = ("paths",)

    def __init__(self, paths: list[list[Any]] | None = None) -> None:
        self.paths = paths or [["", _MAX_INT32], ["", _MAX_INT32]]

    def copy(self) -> _CriticalPaths:
        return _CriticalPaths([list(self.paths[0]), list(self.paths[1])])

    def update(self, value: str, num: int) -> None:
        p = self.paths
        i = 0 if value == p[0][0] else 1 if value == p[1][0] else -1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [value, num]
        elif num < p[1][1]:
            p[1] = [value, num]


class _FilterState:
    __slots__ = ("constraints", "counts", "paths")

    def __init__(self, constraints: list[SpreadConstraint], counts: list[dict[str, int]],
                 paths: list[_CriticalPaths]) -> None:
        self.constraints = constraints
        self.counts = counts
        self.paths = paths

    def clone(self) -> _FilterState:
        return _FilterState(self.constraints, [dict(c) for c in self.counts],
                            [p.copy() for p in self.paths])

    def min_match(self, i: int) -> int:
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return int(self.paths[i].paths[0][1])


class _ScoreState:
    __slots__ = ("constraints", "counts", "ignored", "weights")

    def __init__(self, constraints: list[SpreadConstraint]) -> None:
        self.constraints = constraints
        self.ignored: set[str] = set()
        self.counts: list[dict[str, int]] = [{} for _ in constraints]
        self.weights: list[float] = []

    def clone(self) -> _ScoreState:
        return self  # read-only after PreScore


class PodTopologySpread:
    """The plugin; ``args`` are PodTopologySpreadArgs (defaultConstraints, defaultingType)."""

    def __init__(self, args: SpreadArgs, handle: Handle) -> None:
        self._args = args
        self._handle = handle
        # The last pod object's (DoNotSchedule, ScheduleAnyway) constraints: PreFilter and
        # PreScore of one cycle ask for the same pod, and most pods have none.
        self._last: tuple[object, list[SpreadConstraint], list[SpreadConstraint]] | None = None

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> PodTopologySpread:
        parsed = parse_args(args)
        if not handle.features.is_enabled(Gate.MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD):
            parsed = dataclasses.replace(parsed, match_label_keys=False)
        return cls(parsed, handle)

    @property
    def name(self) -> str:
        return NAME

    # --- filtering ----------------------------------------------------------------------
    def _both(self, pod: PodInfo) -> tuple[list[SpreadConstraint], list[SpreadConstraint]]:
        last = self._last
        if last is not None and last[0] is pod.pod:
            return last[1], last[2]
        cluster = self._handle.cluster
        meta = pod.pod.metadata
        if not meta.owner_references and not own_constraints(pod) \
                and (meta.namespace or "") not in cluster.service_selectors:
            hard: list[SpreadConstraint] = []
            soft: list[SpreadConstraint] = []  # nothing to spread: the common case, cheaply
        else:
            hard = pod_constraints(pod, self._args, DO_NOT_SCHEDULE, cluster)
            soft = pod_constraints(pod, self._args, SCHEDULE_ANYWAY, cluster)
        self._last = (pod.pod, hard, soft)
        return hard, soft

    def pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                   ) -> tuple[PreFilterResult | None, Status]:
        constraints = self._both(pod)[0]
        if not constraints:
            return None, Status.skip(NAME)
        counts: list[dict[str, int]] = [{} for _ in constraints]
        affinity = RequiredAffinity(pod)
        tolerations = pod.pod.spec.tolerations
        namespace = pod.pod.metadata.namespace or ""
        for node in cluster.node_infos():
            labels = node.node.metadata.labels
            if not has_all_keys(labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not node_counts(c, affinity, tolerations, node):
                    continue
                value = labels[c.topology_key]
                counts[i][value] = counts[i].get(value, 0) + count_matching(
                    node.pods, c.selector, namespace)
        paths = []
        for domain_counts in counts:
            path = _CriticalPaths()
            for value, num in domain_counts.items():
                path.update(value, num)
            paths.append(path)
        state.write(_PRE_FILTER_KEY, _FilterState(constraints, counts, paths))
        return None, _SUCCESS

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo,
                node: NodeInfo) -> Status:
        self._update(state, pod, to_add, node, 1)
        return _SUCCESS

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo,
                   node: NodeInfo) -> Status:
        self._update(state, pod, to_remove, node, -1)
        return _SUCCESS

    def _update(self, state: CycleState, preemptor: PodInfo, changed: PodInfo, node: NodeInfo,
                delta: int) -> None:
        data = state.get(_PRE_FILTER_KEY)
        if not isinstance(data, _FilterState):
            return
        if changed.pod.metadata.namespace != preemptor.pod.metadata.namespace:
            return
        labels = node.node.metadata.labels
        if not has_all_keys(labels, data.constraints):
            return
        affinity = RequiredAffinity(preemptor)
        tolerations = preemptor.pod.spec.tolerations
        pod_labels = changed.pod.metadata.labels
        for i, c in enumerate(data.constraints):
            if not c.selector.matches(pod_labels):
                continue
            if not node_counts(c, affinity, tolerations, node):
                continue
            value = labels[c.topology_key]
            data.counts[i][value] = data.counts[i].get(value, 0) + delta
            data.paths[i].update(value, data.counts[i][value])

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        data = state.get(_PRE_FILTER_KEY)
        if not isinstance(data, _FilterState):
            return Status.error(NAME, f"reading {_PRE_FILTER_KEY!r} from cycleState: not found")
        labels = node.node.metadata.labels
        pod_labels = pod.pod.metadata.labels
        for i, c in enumerate(data.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                return _MISSING_LABEL
            own = 1 if c.selector.matches(pod_labels) else 0
            if data.counts[i].get(value, 0) + own - data.min_match(i) > c.max_skew:
                return _SKEW
        return _SUCCESS

    # --- scoring ------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        constraints = self._both(pod)[1]
        if not constraints:
            return Status.skip(NAME)
        all_nodes = self._handle.cluster.node_infos()
        if not all_nodes:
            return Status.skip(NAME)
        require_all = bool(own_constraints(pod)) or not self._args.system_defaulted
        data = _ScoreState(constraints)
        sizes = [0] * len(constraints)
        for node in nodes:
            labels = node.node.metadata.labels
            if require_all and not has_all_keys(labels, constraints):
                data.ignored.add(node.name)
                continue
            for i, c in enumerate(constraints):
                if c.topology_key == HOSTNAME:
                    continue
                value = labels.get(c.topology_key, "")
                if value not in data.counts[i]:
                    data.counts[i][value] = 0
                    sizes[i] += 1
        for i, c in enumerate(constraints):
            size = len(nodes) - len(data.ignored) if c.topology_key == HOSTNAME else sizes[i]
            data.weights.append(math.log(size + 2))
        affinity = RequiredAffinity(pod)
        tolerations = pod.pod.spec.tolerations
        namespace = pod.pod.metadata.namespace or ""
        for node in all_nodes:
            labels = node.node.metadata.labels
            if require_all and not has_all_keys(labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if c.topology_key == HOSTNAME:
                    continue  # counted per node in Score
                if not node_counts(c, affinity, tolerations, node):
                    continue
                value = labels.get(c.topology_key, "")
                if value in data.counts[i]:
                    data.counts[i][value] += count_matching(node.pods, c.selector, namespace)
        state.write(_PRE_SCORE_KEY, data)
        return _SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        data = state.get(_PRE_SCORE_KEY)
        if not isinstance(data, _ScoreState):
            return 0, Status.error(NAME, f"reading {_PRE_SCORE_KEY!r} from cycleState: "
                                         "not found")
        if node.name in data.ignored:
            return 0, _SUCCESS
        labels = node.node.metadata.labels
        namespace = pod.pod.metadata.namespace or ""
        total = 0.0
        for i, c in enumerate(data.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == HOSTNAME:
                count = count_matching(node.pods, c.selector, namespace)
            else:
                count = data.counts[i][value]
            total += count * data.weights[i] + (c.max_skew - 1)
        return _round(total), _SUCCESS

    def score_extensions(self) -> PodTopologySpread:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        data = state.get(_PRE_SCORE_KEY)
        if not isinstance(data, _ScoreState):
            return _SUCCESS
        ignored = data.ignored
        counted = [s.score for s in scores if s.name not in ignored]
        low = min(counted) if counted else 0
        high = max(counted, default=0)
        if high < 0:
            high = 0
        out: list[NodeScore] = []
        for s in scores:
            if s.name in ignored:
                out.append(NodeScore(s.name, 0))
            elif high == 0:
                out.append(NodeScore(s.name, MAX_NODE_SCORE))
            else:
                out.append(NodeScore(s.name, MAX_NODE_SCORE * (high + low - s.score) // high))
        scores[:] = out
        return _SUCCESS

    # --- queueing hints -----------------------------------------------------------------
    def events_to_register(self) -> Sequence[EventHint]:
        # A placed pod's label update (upstream's UpdatePodLabel) is not registered: dralab's
        # PodUpdated carries no old labels, and its status writes would requeue every pod.
        return (EventHint((PodAdded, PodAssumed, PodBound), self._pod_placed),
                EventHint((PodRemoved, PodForgotten), _pod_gone),
                EventHint((NodeAdded, NodeUpdated), self._node_changed),
                EventHint((NodeRemoved,)))

    def _constraints(self, pod: PodInfo) -> list[SpreadConstraint]:
        return self._both(pod)[0]

    def _pod_placed(self, event: ClusterEvent, cluster: ClusterState) -> HintResult:
        """isSchedulableAfterPodChange for a pod placed: only a placed (or nominated) pod of
        the same namespace that a rejected pod's constraints select can change its counts."""
        assert isinstance(event, PodAdded | PodAssumed | PodBound)
        info = cluster.pods.get(event.key)
        if info is None:
            return QUEUE
        if info.assumed_node is None and not info.pod.status.nominated_node_name:
            return SKIP
        meta = info.pod.metadata

        def involved(pod: PodInfo) -> bool:
            if pod.pod.metadata.namespace != meta.namespace:
                return False
            return any(c.selector.matches(meta.labels) for c in self._constraints(pod))
        return involved

    def _node_changed(self, event: ClusterEvent, cluster: ClusterState) -> HintResult:
        """isSchedulableAfterNodeChange: a node that has every topology key of the pod's
        constraints (its old labels are not kept, so any change to such a node queues)."""
        assert isinstance(event, NodeAdded | NodeUpdated)
        node = cluster.nodes.get(event.name)
        if node is None:
            return QUEUE
        labels = node.node.metadata.labels
        return lambda pod: has_all_keys(labels, self._constraints(pod))


def _pod_gone(event: ClusterEvent, cluster: ClusterState) -> HintResult:
    """A placed pod left: it may have been one the counts held (its labels are gone with it)."""
    assert isinstance(event, PodRemoved | PodForgotten)
    return QUEUE if event.node is not None else SKIP


def _round(value: float) -> int:
    """Go's math.Round (half away from zero) for the non-negative sums here."""
    return math.floor(value + 0.5)
