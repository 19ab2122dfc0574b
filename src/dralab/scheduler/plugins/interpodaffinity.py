"""InterPodAffinity (PreFilter, Filter, PreScore, Score, NormalizeScore, AddPod/RemovePod),
as kube-scheduler v1.36.2 computes it (pkg/scheduler/framework/plugins/interpodaffinity).

Filter: PreFilter counts, per (topology key, value), the placed pods that match all of the
incoming pod's required affinity terms, those matching each required anti-affinity term,
and the placed pods whose required anti-affinity terms match the incoming pod. A node
fails

* ``node(s) didn't match pod affinity rules`` (UnschedulableAndUnresolvable: evicting pods
  cannot help) when a term's topology key is missing from it or no matching pod is in its
  domain, unless no pod matches anywhere and the pod matches its own terms (the first pod
  of a group);
* ``node(s) didn't match pod anti-affinity rules`` (Unschedulable) when a pod its
  anti-affinity selects is in the node's domain of that term;
* ``node(s) didn't satisfy existing pods anti-affinity rules`` (Unschedulable) when a placed
  pod's anti-affinity selects the incoming pod in a domain the node is in.

Preemption keeps the counts right through AddPod/RemovePod.

Score: per (topology key, value), the weights of the incoming pod's preferred terms that
match placed pods (anti-affinity negative), ``hardPodAffinityWeight`` for placed pods whose
required affinity selects the incoming pod, and the placed pods' preferred terms that select
it (unless ``ignorePreferredTermsOfExistingPods``); a node scores the sum over its labels,
normalised to 0..100 between the lowest and the highest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.cluster.events import (
    ClusterEvent,
    NodeAdded,
    NodeUpdated,
    PodAdded,
    PodAssumed,
    PodBound,
    PodForgotten,
    PodRemoved,
)

from ..framework import MAX_NODE_SCORE, CycleState, Handle, NodeScore, PreFilterResult, Status
from ..hints import QUEUE, SKIP, EventHint, HintResult
from .interpodaffinity_terms import (
    AffinityArgs,
    AffinityIndex,
    AffinityTerm,
    PodTerms,
    WeightedTerm,
    matches_all,
    parse_args,
)

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "InterPodAffinity",
]

NAME = "InterPodAffinity"
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = \
    "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_SUCCESS = Status.success()
_AFFINITY = Status.unresolvable(NAME, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
_ANTI_AFFINITY = Status.unschedulable(NAME, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
_EXISTING = Status.unschedulable(NAME, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)

Pair = tuple[str, str]


def _bump(counts: dict[Pair, int], labels: Mapping[str, str], key: str, delta: int) -> None:
    """topologyToMatchedTermCount.update: a pair that reaches 0 is dropped."""
    value = labels.get(key)
    if value is None:
        return
    pair = (key, value)
    total = counts.get(pair, 0) + delta
    if total == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = total


class _FilterState:
    __slots__ = ("affinity", "anti_affinity", "existing", "namespace_labels", "pod", "terms")

    def __init__(self, pod: PodInfo, terms: PodTerms,
                 namespace_labels: Mapping[str, str]) -> None:
        self.pod = pod
        self.terms = terms
        # The labels of the incoming pod's namespace (placed pods' selectors read them).
        self.namespace_labels = namespace_labels
        self.existing: dict[Pair, int] = {}
        self.affinity: dict[Pair, int] = {}
        self.anti_affinity: dict[Pair, int] = {}

    def clone(self) -> _FilterState:
        copy = _FilterState(self.pod, self.terms, self.namespace_labels)
        copy.existing = dict(self.existing)
        copy.affinity = dict(self.affinity)
        copy.anti_affinity = dict(self.anti_affinity)
        return copy

    def count_existing(self, other: PodTerms, labels: Mapping[str, str], delta: int) -> None:
        """The placed pod's required anti-affinity terms that select the incoming pod."""
        for term in other.anti_affinity:
            if term.matches(self.pod, self.namespace_labels):
                _bump(self.existing, labels, term.topology_key, delta)

    def count_incoming(self, other: PodInfo, labels: Mapping[str, str], delta: int) -> None:
        """The incoming pod's required terms against the placed pod."""
        affinity = self.terms.affinity
        if matches_all(affinity, other):
            for term in affinity:
                _bump(self.affinity, labels, term.topology_key, delta)
        for term in self.terms.anti_affinity:
            if term.matches(other, None):
                _bump(self.anti_affinity, labels, term.topology_key, delta)


class _ScoreState:
    __slots__ = ("scores",)

    def __init__(self, scores: dict[str, dict[str, int]]) -> None:
        self.scores = scores

    def clone(self) -> _ScoreState:
        return self  # read-only after PreScore


class InterPodAffinity:
    """The plugin; ``args`` are InterPodAffinityArgs."""

    def __init__(self, args: AffinityArgs, handle: Handle) -> None:
        self._args = args
        self._handle = handle
        self._index = AffinityIndex()

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> InterPodAffinity:
        return cls(parse_args(args), handle)

    @property
    def name(self) -> str:
        return NAME

    @property
    def args(self) -> AffinityArgs:
        return self._args

    # --- filtering ----------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                   ) -> tuple[PreFilterResult | None, Status]:
        index = self._index
        own = index.terms(pod)
        placed = index.with_affinity(cluster)
        if not placed and not own.has_affinity:
            return None, Status.skip(NAME)  # the common case, decided cheaply
        terms = own.resolved(cluster.namespace_labels)
        if terms.error:
            return None, Status.unresolvable(NAME, f"parsing pod: {terms.error}")
        data = _FilterState(pod, terms, cluster.namespace_labels.get(
            pod.pod.metadata.namespace or "", {}))
        for node, found in placed:
            labels = node.node.metadata.labels
            for _, other in found:
                if other.anti_affinity:
                    data.count_existing(other, labels, 1)
        if terms.affinity or terms.anti_affinity:
            for node in cluster.node_infos():
                labels = node.node.metadata.labels
                for other_pod in node.pods:
                    data.count_incoming(other_pod, labels, 1)
        elif not data.existing:
            return None, Status.skip(NAME)
        state.write(_PRE_FILTER_KEY, data)
        return None, _SUCCESS

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo,
                node: NodeInfo) -> Status:
        return self._update(state, to_add, node, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo,
                   node: NodeInfo) -> Status:
        return self._update(state, to_remove, node, -1)

    def _update(self, state: CycleState, changed: PodInfo, node: NodeInfo,
                delta: int) -> Status:
        data = state.get(_PRE_FILTER_KEY)
        if not isinstance(data, _FilterState):
            return Status.error(NAME, f"reading {_PRE_FILTER_KEY!r} from cycleState: not found")
        labels = node.node.metadata.labels
        data.count_existing(self._index.terms(changed), labels, delta)
        data.count_incoming(changed, labels, delta)
        return _SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        data = state.get(_PRE_FILTER_KEY)
        if not isinstance(data, _FilterState):
            return Status.error(NAME, f"reading {_PRE_FILTER_KEY!r} from cycleState: not found")
        labels = node.node.metadata.labels
        if not _satisfies_affinity(data, labels):
            return _AFFINITY
        if data.anti_affinity:
            for term in data.terms.anti_affinity:
                value = labels.get(term.topology_key)
                if value is not None and data.anti_affinity.get(
                        (term.topology_key, value), 0) > 0:
                    return _ANTI_AFFINITY
        if data.existing:
            existing = data.existing
            for pair in labels.items():
                if existing.get(pair, 0) > 0:
                    return _EXISTING
        return _SUCCESS

    # --- scoring ------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        index = self._index
        own = index.terms(pod)
        if own.error:
            return Status.error(NAME, own.error)
        has_constraints = own.has_preferred
        if self._args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status.skip(NAME)
        cluster = self._handle.cluster
        placed = [] if has_constraints else [
            (node, scoring) for node, found in index.with_affinity(cluster)
            if (scoring := [(p, t) for p, t in found if t.scores_others])]
        if not has_constraints and not placed:
            # No placed pod has a term that could score (upstream walks them all and finds
            # its score map empty: Skip as well).
            return Status.skip(NAME)
        terms = own.resolved(cluster.namespace_labels)
        namespace_labels = cluster.namespace_labels.get(pod.pod.metadata.namespace or "", {})
        scores: dict[str, dict[str, int]] = {}
        if has_constraints:
            for node in cluster.node_infos():
                labels = node.node.metadata.labels
                if not labels:
                    continue
                for other in node.pods:
                    self._score_pair(scores, pod, terms, namespace_labels, other,
                                     index.terms(other), labels)
        else:
            for node, found in placed:
                labels = node.node.metadata.labels
                if not labels:
                    continue
                for other, other_terms in found:
                    self._score_pair(scores, pod, terms, namespace_labels, other, other_terms,
                                     labels)
        if not scores:
            return Status.skip(NAME)
        state.write(_PRE_SCORE_KEY, _ScoreState(scores))
        return _SUCCESS

    def _score_pair(self, scores: dict[str, dict[str, int]], pod: PodInfo, terms: PodTerms,
                    namespace_labels: Mapping[str, str], other: PodInfo, other_terms: PodTerms,
                    labels: Mapping[str, str]) -> None:
        """processExistingPod: the placed pod ``other`` on a node with ``labels``; its terms
        see the incoming pod's ``namespace_labels``."""
        _add_weighted(scores, terms.preferred_affinity, other, None, labels, 1)
        _add_weighted(scores, terms.preferred_anti_affinity, other, None, labels, -1)
        weight = self._args.hard_pod_affinity_weight
        if weight > 0:
            for term in other_terms.affinity:
                _add_term(scores, term, weight, pod, namespace_labels, labels)
        # Upstream adds the placed pods' preferred terms even with
        # ignorePreferredTermsOfExistingPods (that arg only lets PreScore skip pods without
        # preferred terms of their own).
        _add_weighted(scores, other_terms.preferred_affinity, pod, namespace_labels, labels, 1)
        _add_weighted(scores, other_terms.preferred_anti_affinity, pod, namespace_labels,
                      labels, -1)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        data = state.get(_PRE_SCORE_KEY)
        if not isinstance(data, _ScoreState):
            return 0, Status.error(NAME, f"reading {_PRE_SCORE_KEY!r} from cycleState: "
                                         "not found")
        labels = node.node.metadata.labels
        total = 0
        for key, values in data.scores.items():
            value = labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        return total, _SUCCESS

    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]
                        ) -> Status:
        data = state.get(_PRE_SCORE_KEY)
        if not isinstance(data, _ScoreState) or not data.scores or not scores:
            return _SUCCESS
        low = min(s.score for s in scores)
        spread = max(s.score for s in scores) - low
        # Go's int64(float64(MaxNodeScore) * (float64(s - min) / float64(max - min))).
        scores[:] = [NodeScore(s.name, int(MAX_NODE_SCORE * ((s.score - low) / spread))
                               if spread > 0 else 0) for s in scores]
        return _SUCCESS

    # --- queueing hints -----------------------------------------------------------------
    def events_to_register(self) -> Sequence[EventHint]:
        # A placed pod's label update (UpdatePodLabel) is not registered: dralab's PodUpdated
        # carries no old labels (as PodTopologySpread). A node's taint change is not either:
        # with queueing hints on, upstream registers Add and UpdateNodeLabel only.
        return (EventHint((PodAdded, PodAssumed, PodBound), self._pod_placed),
                EventHint((PodRemoved, PodForgotten), self._pod_gone),
                EventHint((NodeAdded, NodeUpdated), self._node_changed))

    def _pod_placed(self, event: ClusterEvent, cluster: ClusterState) -> HintResult:
        """isSchedulableAfterPodChange for an added pod: queue a pod whose required affinity
        the placed (or nominated) pod matches."""
        assert isinstance(event, PodAdded | PodAssumed | PodBound)
        info = cluster.pods.get(event.key)
        if info is None:
            return QUEUE
        if info.assumed_node is None and not info.pod.status.nominated_node_name:
            return SKIP
        index = self._index
        return lambda pod: matches_all(index.terms(pod).affinity, info)

    def _pod_gone(self, event: ClusterEvent, cluster: ClusterState) -> HintResult:
        """isSchedulableAfterPodChange for a deleted placed pod: queue a pod whose required
        anti-affinity terms all match it, or that all of its anti-affinity terms match. The
        deleted pod is read as the plugin last saw it; one it never read queues."""
        assert isinstance(event, PodRemoved | PodForgotten)
        if event.node is None:
            return SKIP
        seen = self._index.placed_pod(event.key)
        if seen is None:
            return QUEUE
        gone = PodInfo(seen[0])
        gone_anti = seen[1].anti_affinity
        index = self._index
        return lambda pod: (matches_all(index.terms(pod).anti_affinity, gone)
                            or matches_all(gone_anti, pod))

    def _node_changed(self, event: ClusterEvent, cluster: ClusterState) -> HintResult:
        """isSchedulableAfterNodeChange. Affinity: a node added with a term's topology key,
        or updated to get the key or a new value for it. Anti-affinity: any node added, or
        one updated to lose a term's key or change its value. An updated node's labels before
        the update are those the plugin last read; for a node it never read, an update queues
        when the node has an affinity key, or always for anti-affinity."""
        assert isinstance(event, NodeAdded | NodeUpdated)
        node = cluster.nodes.get(event.name)
        if node is None:
            return QUEUE
        new = node.node.metadata.labels
        index = self._index
        old = None if isinstance(event, NodeAdded) else index.node_labels(event.name)
        added = isinstance(event, NodeAdded)

        def helps(pod: PodInfo) -> bool:
            terms = index.terms(pod)
            for term in terms.affinity:
                key = term.topology_key
                if added or old is None:
                    if key in new:
                        return True
                elif key in new and old.get(key) != new[key]:
                    return True
            for term in terms.anti_affinity:
                if added or old is None:
                    return True
                key = term.topology_key
                if key in old and old[key] != new.get(key):
                    return True
            return False
        return helps




def _satisfies_affinity(data: _FilterState, labels: Mapping[str, str]) -> bool:
    """satisfyPodAffinity, with the first-pod-of-a-group exception."""
    terms = data.terms.affinity
    pods_exist = True
    for term in terms:
        value = labels.get(term.topology_key)
        if value is None:
            return False
        if data.affinity.get((term.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    return not data.affinity and matches_all(terms, data.pod)


def _add_term(scores: dict[str, dict[str, int]], term: AffinityTerm, weight: int,
              pod: PodInfo, namespace_labels: Mapping[str, str] | None,
              labels: Mapping[str, str]) -> None:
    """scoreMap.processTerm: ``weight`` for the node's domain when ``term`` selects ``pod``."""
    if not term.matches(pod, namespace_labels):
        return
    value = labels.get(term.topology_key)
    if value is None:
        return
    values = scores.setdefault(term.topology_key, {})
    values[value] = values.get(value, 0) + weight


def _add_weighted(scores: dict[str, dict[str, int]], terms: Sequence[WeightedTerm],
                  pod: PodInfo, namespace_labels: Mapping[str, str] | None,
                  labels: Mapping[str, str], sign: int) -> None:
    for weighted in terms:
        _add_term(scores, weighted.term, weighted.weight * sign, pod, namespace_labels, labels)
