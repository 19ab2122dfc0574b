"""NodeAffinity: spec.nodeSelector and required node affinity filter; preferred terms score.

PreFilter narrows the node set when every required term names nodes with
``matchFields metadata.name In`` (how DaemonSet pods are pinned); terms are
ORed, so their node sets are united. ``addedAffinity`` (plugin args) applies to
every pod on top of its own affinity. A selector the API would reject matches
no node, as upstream ignores its parse error.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from dralab.allocator.nodes import (
    CompiledNodeSelector,
    NodeSelectorError,
    compile_node_selector,
)
from dralab.api.core import NodeAffinity as NodeAffinitySpec
from dralab.api.core import NodeSelector, NodeSelectorTerm
from dralab.cluster import ClusterState, NodeInfo, PodInfo

from ..framework import (
    MAX_NODE_SCORE,
    Code,
    CycleState,
    Handle,
    MissingStateError,
    NodeScore,
    PluginArgsError,
    PreFilterResult,
    Status,
)
from ..hints import EventHint
from .eventhints import NODE_HINTS
from .helpers import Mask, NodeMasks, default_normalize_score

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_SUCCESS = Status.success()
_POD_REJECTION = Status.unresolvable(NAME, ERR_REASON_POD)
_NEVER = CompiledNodeSelector(())

I64 = npt.NDArray[np.int64]
Positions = npt.NDArray[np.int64]


def _compile(selector: NodeSelector) -> CompiledNodeSelector:
    try:
        return compile_node_selector(selector)
    except NodeSelectorError:
        return _NEVER


class _Required:
    """nodeSelector pairs plus compiled required terms (None: no required affinity)."""

    __slots__ = ("pairs", "terms")

    def __init__(self, pairs: tuple[tuple[str, str], ...],
                 terms: CompiledNodeSelector | None) -> None:
        self.pairs = pairs
        self.terms = terms

    def clone(self) -> _Required:
        return self  # read-only

    def matches(self, node: NodeInfo) -> bool:
        if self.pairs:
            labels = node.node.metadata.labels
            for key, value in self.pairs:
                if labels.get(key) != value:
                    return False
        return self.terms is None or self.terms.matches(node.view)


class _Preferred:
    __slots__ = ("terms",)

    def __init__(self, terms: tuple[tuple[int, CompiledNodeSelector], ...]) -> None:
        self.terms = terms

    def clone(self) -> _Preferred:
        return self


def _preferred(terms: Sequence[Any]) -> list[tuple[int, CompiledNodeSelector]]:
    return [(t.weight, _compile(NodeSelector(node_selector_terms=[t.preference])))
            for t in terms if t.weight]


def _names_of(term: NodeSelectorTerm) -> set[str] | None:
    """Node names a term allows via matchFields metadata.name In (None: not restricted)."""
    names: set[str] | None = None
    for req in term.match_fields:
        if req.key == "metadata.name" and req.operator == "In":
            values = set(req.values)
            names = values if names is None else names & values
    return names


class NodeAffinityPlugin:
    def __init__(self, added: NodeAffinitySpec | None, handle: Handle | None = None) -> None:
        self._handle = handle  # for the cluster's nodes; without it no masks
        self._added_required = None
        self._added_preferred: tuple[tuple[int, CompiledNodeSelector], ...] = ()
        if added is not None:
            required = added.required_during_scheduling_ignored_during_execution
            if required is not None:
                self._added_required = _compile(required)
            self._added_preferred = tuple(
                _preferred(added.preferred_during_scheduling_ignored_during_execution))
        self._cache: dict[bytes, tuple[_Required, _Preferred]] = {}
        # Keyed by the parsed objects (one per distinct spec, kept alive by _cache).
        self._masks = NodeMasks()
        self._raw_scores: dict[int, tuple[int, I64, Mask]] = {}

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> NodeAffinityPlugin:
        raw = args.get("addedAffinity")
        added = None
        if raw is not None:
            try:
                added = msgspec.convert(raw, NodeAffinitySpec)
            except msgspec.ValidationError as exc:
                raise PluginArgsError("addedAffinity", str(exc)) from None
            required = added.required_during_scheduling_ignored_during_execution
            if required is not None:
                try:
                    compile_node_selector(required)
                except NodeSelectorError as exc:
                    raise PluginArgsError(
                        "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                        str(exc)) from None
        return cls(added, handle)

    @property
    def name(self) -> str:
        return NAME

    def events_to_register(self) -> Sequence[EventHint]:
        return NODE_HINTS

    def _parsed(self, pod: PodInfo) -> tuple[_Required, _Preferred]:
        spec = pod.pod.spec
        key = msgspec.json.encode((spec.node_selector, spec.affinity))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        affinity = spec.affinity.node_affinity if spec.affinity else None
        required = affinity.required_during_scheduling_ignored_during_execution \
            if affinity else None
        parsed = (_Required(tuple(spec.node_selector.items()),
                            _compile(required) if required is not None else None),
                  _Preferred(tuple(_preferred(
                      affinity.preferred_during_scheduling_ignored_during_execution
                      if affinity else ())) + self._added_preferred))
        self._cache[key] = parsed
        return parsed

    # --- filtering --------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                   ) -> tuple[PreFilterResult | None, Status]:
        spec = pod.pod.spec
        affinity = spec.affinity.node_affinity if spec.affinity else None
        required = affinity.required_during_scheduling_ignored_during_execution \
            if affinity else None
        if required is None and self._added_required is None and not spec.node_selector:
            return None, Status.skip(NAME)
        state.write(_PRE_FILTER_KEY, self._parsed(pod)[0])
        if required is None or not required.node_selector_terms:
            return None, _SUCCESS
        union: set[str] = set()
        for term in required.node_selector_terms:
            names = _names_of(term)
            if names is None:
                return None, _SUCCESS  # an unrestricted term allows every node
            union |= names
        if not union:
            return None, Status.unresolvable(NAME, ERR_REASON_CONFLICT)
        return PreFilterResult(frozenset(union)), _SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def _required(self, state: CycleState, pod: PodInfo) -> _Required:
        """The pod's required affinity: PreFilter's, or parsed here when PreFilter is
        disabled in this profile."""
        try:
            return state.read(_PRE_FILTER_KEY, _Required)
        except MissingStateError:
            return self._parsed(pod)[0]

    def dry_run_key(self, state: CycleState, pod: PodInfo) -> Hashable | None:
        """Filter reads the pod's required affinity (and the profile's addedAffinity)
        and the node's labels only."""
        return NAME

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if self._added_required is not None and not self._added_required.matches(node.view):
            return Status.unresolvable(NAME, ERR_REASON_ENFORCED)
        required = self._required(state, pod)
        if required.matches(node):
            return _SUCCESS
        return _POD_REJECTION

    def filter_mask(self, state: CycleState, pod: PodInfo) -> Mask | None:
        """The nodes the pod's required affinity (and ``addedAffinity``) match, once
        the same affinity has been asked for before (all unknown the first time)."""
        if self._handle is None:
            return None
        cluster = self._handle.cluster
        required = self._required(state, pod)
        mask = self._masks.get(cluster, id(required), lambda n: self.filter(state, pod, n)
                               .code is Code.SUCCESS)
        if mask is None:
            return np.zeros(len(cluster.node_infos()), np.bool_)
        return mask

    def filter_rejections(self, state: CycleState, pod: PodInfo
                          ) -> tuple[Mask, Callable[[list[int]], list[Status]]] | None:
        """The nodes outside ``filter_mask`` once that mask is built (it is exact), so
        a pod kept to a few nodes by its selector (a topology domain) costs no Filter
        call on the others. Without ``addedAffinity`` every rejection is the same."""
        if self._handle is None:
            return None
        cluster = self._handle.cluster
        required = self._required(state, pod)
        mask = self._masks.peek(cluster, id(required))
        if mask is None:
            return None
        if self._added_required is None:
            return ~mask, lambda positions: [_POD_REJECTION] * len(positions)
        nodes = cluster.node_infos()
        return ~mask, lambda positions: [self.filter(state, pod, nodes[p]) for p in positions]

    # --- scoring ----------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        preferred = self._parsed(pod)[1]
        if not preferred.terms:
            return Status.skip(NAME)
        state.write(_PRE_SCORE_KEY, preferred)
        return _SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        try:
            preferred = state.read(_PRE_SCORE_KEY, _Preferred)
        except MissingStateError:
            preferred = self._parsed(pod)[1]
        view = node.view
        return sum(w for w, sel in preferred.terms if sel.matches(view)), _SUCCESS

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
                    ) -> tuple[list[int], Status]:
        """Score and NormalizeScore for all nodes at once."""
        raw = [self.score(state, pod, node)[0] for node in nodes]
        highest = max(raw, default=0)
        if highest == 0:
            return raw, _SUCCESS
        return [MAX_NODE_SCORE * v // highest for v in raw], _SUCCESS

    def score_positions(self, state: CycleState, pod: PodInfo, positions: Positions
                        ) -> tuple[I64, Status] | None:
        """``score_nodes`` with raw scores remembered per node for this pod's
        preferred terms (they depend on labels only)."""
        if self._handle is None:
            return None
        cluster = self._handle.cluster
        try:
            preferred = state.read(_PRE_SCORE_KEY, _Preferred)
        except MissingStateError:
            preferred = self._parsed(pod)[1]
        nodes = cluster.node_infos()
        found = self._raw_scores.get(id(preferred))
        if found is None or found[0] != cluster.node_version or len(found[1]) != len(nodes):
            if len(self._raw_scores) >= 64:  # an int64 and a bool per node each
                self._raw_scores.clear()
            found = (cluster.node_version, np.zeros(len(nodes), np.int64),
                     np.zeros(len(nodes), np.bool_))
            self._raw_scores[id(preferred)] = found
        _, raw, known = found
        for position in positions[~known[positions]].tolist():
            raw[position] = self.score(state, pod, nodes[position])[0]
            known[position] = True
        values = raw[positions]
        highest = int(values.max()) if len(values) else 0
        if highest == 0:
            return values, _SUCCESS
        return MAX_NODE_SCORE * values // highest, _SUCCESS

    def score_extensions(self) -> NodeAffinityPlugin:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        default_normalize_score(scores)
        return _SUCCESS
