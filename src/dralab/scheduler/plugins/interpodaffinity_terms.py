"""InterPodAffinity's inputs: a pod's affinity terms, the plugin's args, and an index of
the placed pods that have affinity.

``spec.affinity.podAffinity`` / ``podAntiAffinity`` are read from the document the pod
was decoded from (dralab's typed Affinity keeps node affinity only). A term is upstream's
AffinityTerm (kube-scheduler framework types.go, v1.36.2): a label selector (missing:
matches nothing; ``{}``: every pod), the namespaces it looks in (the pod's own when it
names neither ``namespaces`` nor a ``namespaceSelector``) and a namespace selector.
``matchLabelKeys`` / ``mismatchLabelKeys`` (gate MatchLabelKeysInPodAffinity, GA and
locked on since 1.33) are merged into the selector as the API server merges them on
create (``key In (value)`` / ``key NotIn (value)`` for the pod's own label values;
pkg/registry/core/pod/strategy.go mutatePodAffinity): a pod read from a live cluster
already carries the merged requirements and merging again changes nothing.

A ``namespaceSelector`` selects among the Namespace objects the cluster store was given
(``ClusterState.namespace_labels``); a namespace without such an object has no labels, as
upstream's lister answers for a namespace it does not know. ``namespaceSelector: {}``
selects every namespace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dralab.api.core import Pod
from dralab.api.errors import ErrorType, FieldError
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.validation._formats import is_label_value

from ..framework import PluginArgsError
from .podtopologyspread_constraints import SpreadSelector, parse_selector

__all__ = [
    "AffinityArgs",
    "AffinityIndex",
    "AffinityTerm",
    "PodTerms",
    "WeightedTerm",
    "matches_all",
    "parse_args",
    "pod_terms",
]

_ARGS_FIELDS = frozenset({"apiVersion", "kind", "hardPodAffinityWeight",
                          "ignorePreferredTermsOfExistingPods"})


@dataclass(frozen=True, slots=True)
class AffinityArgs:
    """InterPodAffinityArgs (defaults of v1.36.2 config/v1 defaults.go)."""

    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


def parse_args(args: Mapping[str, Any]) -> AffinityArgs:
    """Decoded strictly and validated as kube-scheduler does
    (ValidateInterPodAffinityArgs: hardPodAffinityWeight in [0, 100])."""
    for key in args:
        if key not in _ARGS_FIELDS:
            raise PluginArgsError(str(key), f'unknown field "{key}"')
    weight = args.get("hardPodAffinityWeight", 1)
    if weight is None:
        weight = 1
    if isinstance(weight, bool) or not isinstance(weight, int):
        raise PluginArgsError("hardPodAffinityWeight", FieldError(
            path="hardPodAffinityWeight", type=ErrorType.TYPE_INVALID, value=weight,
            detail="must be an integer").body())
    if weight < 0 or weight > 100:
        raise PluginArgsError("hardPodAffinityWeight", FieldError(
            path="hardPodAffinityWeight", type=ErrorType.INVALID, value=weight,
            detail="not in valid range [0, 100]").body())
    ignore = args.get("ignorePreferredTermsOfExistingPods", False)
    if ignore is None:
        ignore = False
    if not isinstance(ignore, bool):
        raise PluginArgsError("ignorePreferredTermsOfExistingPods", FieldError(
            path="ignorePreferredTermsOfExistingPods", type=ErrorType.TYPE_INVALID,
            value=ignore, detail="must be a boolean").body())
    return AffinityArgs(weight, ignore)


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """One processed PodAffinityTerm. ``namespace_selector`` None: selects no namespace
    (upstream's labels.Nothing() for a missing one, or after it was resolved into
    ``namespaces``)."""

    selector: SpreadSelector
    namespaces: frozenset[str]
    namespace_selector: SpreadSelector | None
    topology_key: str

    def matches(self, pod: PodInfo, namespace_labels: Mapping[str, str] | None) -> bool:
        meta = pod.pod.metadata
        if meta.namespace in self.namespaces or (
                self.namespace_selector is not None
                and self.namespace_selector.matches(namespace_labels or {})):
            return self.selector.matches(meta.labels)
        return False

    def resolved(self, namespaces: Mapping[str, Mapping[str, str]]) -> AffinityTerm:
        """mergeAffinityTermNamespacesIfNotEmpty: a non-empty namespace selector becomes the
        namespaces it selects among ``namespaces`` (name -> labels)."""
        ns = self.namespace_selector
        if ns is None or (not ns.nothing and not ns.requirements):
            return self
        picked = {name for name, labels in namespaces.items() if ns.matches(labels)}
        return AffinityTerm(self.selector, self.namespaces | picked, None, self.topology_key)


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    weight: int
    term: AffinityTerm


@dataclass(frozen=True, slots=True)
class PodTerms:
    """A pod's required and preferred affinity and anti-affinity terms."""

    affinity: tuple[AffinityTerm, ...] = ()
    anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedTerm, ...] = ()
    # podAffinity or podAntiAffinity set at all (upstream's podWithAffinity).
    has_affinity: bool = False
    # The pod's own preferred terms (PreScore looks at every pod then).
    has_preferred: bool = False
    # Why a selector of the pod does not parse (upstream's NewPodInfo error), or "".
    error: str = ""

    @property
    def scores_others(self) -> bool:
        """Whether, as a placed pod, its terms can score an incoming pod (required affinity
        through hardPodAffinityWeight, preferred terms)."""
        return bool(self.affinity or self.preferred_affinity or self.preferred_anti_affinity)

    def resolved(self, namespaces: Mapping[str, Mapping[str, str]]) -> PodTerms:
        """The terms with their namespace selectors resolved (AffinityTerm.resolved)."""
        if not self.has_affinity:
            return self
        return PodTerms(
            tuple(t.resolved(namespaces) for t in self.affinity),
            tuple(t.resolved(namespaces) for t in self.anti_affinity),
            tuple(WeightedTerm(w.weight, w.term.resolved(namespaces))
                  for w in self.preferred_affinity),
            tuple(WeightedTerm(w.weight, w.term.resolved(namespaces))
                  for w in self.preferred_anti_affinity),
            self.has_affinity, self.has_preferred, self.error)


NO_TERMS = PodTerms()


def _list(value: Any) -> list[Any]:
    """A list field as written; anything else (the API would refuse it) as empty."""
    return value if isinstance(value, list) else []


def _with_label_keys(raw: Mapping[str, Any], labels: Mapping[str, str]) -> SpreadSelector:
    selector = parse_selector(raw.get("labelSelector"))
    if selector.nothing:
        return selector  # a missing selector stays match-none (strategy.go does the same)
    extra: list[tuple[str, str, frozenset[str]]] = []
    for field, operator in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")):
        for key in _list(raw.get(field)):
            if isinstance(key, str) and key in labels:
                extra.append((key, operator, frozenset({labels[key]})))
    if not extra:
        return selector
    return SpreadSelector(selector.requirements + tuple(extra))


def _term(raw: Any, pod: PodInfo) -> AffinityTerm | None:
    if not isinstance(raw, Mapping):
        return None
    meta = pod.pod.metadata
    names = [str(n) for n in _list(raw.get("namespaces"))]
    raw_ns_selector = raw.get("namespaceSelector")
    if not names and raw_ns_selector is None:
        namespaces = frozenset({meta.namespace or ""})
    else:
        namespaces = frozenset(names)
    ns_selector = None if raw_ns_selector is None else parse_selector(raw_ns_selector)
    return AffinityTerm(_with_label_keys(raw, meta.labels), namespaces, ns_selector,
                        str(raw.get("topologyKey") or ""))


def _required(section: Any, pod: PodInfo) -> tuple[AffinityTerm, ...]:
    if not isinstance(section, Mapping):
        return ()
    out = (_term(t, pod)
           for t in _list(section.get("requiredDuringSchedulingIgnoredDuringExecution")))
    return tuple(t for t in out if t is not None)


def _preferred(section: Any, pod: PodInfo) -> tuple[WeightedTerm, ...]:
    if not isinstance(section, Mapping):
        return ()
    out: list[WeightedTerm] = []
    for item in _list(section.get("preferredDuringSchedulingIgnoredDuringExecution")):
        if not isinstance(item, Mapping):
            continue
        term = _term(item.get("podAffinityTerm"), pod)
        weight = item.get("weight")
        if term is not None and isinstance(weight, int):
            out.append(WeightedTerm(weight, term))
    return tuple(out)


def _affinity_doc(pod: PodInfo) -> Mapping[str, Any] | None:
    raw = pod.pod.raw
    spec = raw.get("spec") if isinstance(raw, dict) else None
    affinity = spec.get("affinity") if isinstance(spec, dict) else None
    return affinity if isinstance(affinity, Mapping) else None


def _selector_error(raw: Any) -> str:
    """labels.NewRequirement's check of In/NotIn values (the API server refuses such a
    pod, so only hand-made objects get here)."""
    selector = raw.get("labelSelector") if isinstance(raw, Mapping) else None
    if not isinstance(selector, Mapping):
        return ""
    for expr in _list(selector.get("matchExpressions")):
        if not isinstance(expr, Mapping) or expr.get("operator") not in ("In", "NotIn"):
            continue
        for i, value in enumerate(_list(expr.get("values"))):
            problems = is_label_value(str(value))
            if problems:
                return (f'values[{i}][{expr.get("key")}]: Invalid value: "{value}": '
                        + "; ".join(problems))
    return ""


def _parse_error(affinity: Mapping[str, Any]) -> str:
    """NewPodInfo's aggregated parse errors, one per term list (the first bad term)."""
    errors = []
    for section, field, label in (
            ("podAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
             "requiredAffinityTerms"),
            ("podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
             "requiredAntiAffinityTerms"),
            ("podAffinity", "preferredDuringSchedulingIgnoredDuringExecution",
             "preferredAffinityTerms"),
            ("podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution",
             "preferredAntiAffinityTerms")):
        part = affinity.get(section)
        items = part.get(field) if isinstance(part, Mapping) else None
        for item in _list(items):
            raw = item.get("podAffinityTerm") if "preferred" in field and isinstance(
                item, Mapping) else item
            problem = _selector_error(raw)
            if problem:
                errors.append(f"{label}: {problem}")
                break
    if len(errors) > 1:
        return "[" + ", ".join(errors) + "]"
    return errors[0] if errors else ""


def pod_terms(pod: PodInfo) -> PodTerms:
    """The pod's terms as written (namespace selectors not yet resolved)."""
    affinity = _affinity_doc(pod)
    if affinity is None:
        return NO_TERMS
    pa = affinity.get("podAffinity")
    paa = affinity.get("podAntiAffinity")
    if pa is None and paa is None:
        return NO_TERMS
    preferred_affinity = _preferred(pa, pod)
    preferred_anti = _preferred(paa, pod)
    return PodTerms(_required(pa, pod), _required(paa, pod), preferred_affinity,
                    preferred_anti, True, bool(preferred_affinity or preferred_anti),
                    _parse_error(affinity))


def matches_all(terms: Sequence[AffinityTerm], pod: PodInfo) -> bool:
    """podMatchesAllAffinityTerms: false for no terms."""
    if not terms:
        return False
    return all(t.matches(pod, None) for t in terms)


class AffinityIndex:
    """The placed pods with affinity, per node, with their terms (upstream's NodeInfo
    PodsWithAffinity / PodsWithRequiredAntiAffinity), kept up to date from the nodes'
    generations so a cycle does not parse every pod of the cluster again."""

    __slots__ = ("_cluster", "_cursor", "_nodes", "_terms", "_version", "_with")

    def __init__(self) -> None:
        # The nodes holding pods with affinity, kept from the store's node journal (the names
        # of nodes whose pods changed) so that a cycle looks at the nodes that changed only.
        self._cluster: ClusterState | None = None
        self._version = -1
        self._cursor = 0
        self._with: dict[str, tuple[NodeInfo, list[tuple[PodInfo, PodTerms]]]] = {}
        # node name -> (NodeInfo, generation, [(pod, terms)] of the pods with affinity);
        # the NodeInfo object too: a what-if clone may share a name and a generation.
        self._nodes: dict[str, tuple[NodeInfo, int, list[tuple[PodInfo, PodTerms]]]] = {}
        # pod key -> (pod object, terms): a pod object is replaced when the pod changes
        self._terms: dict[str, tuple[object, PodTerms]] = {}

    def terms(self, pod: PodInfo) -> PodTerms:
        key = pod.key
        cached = self._terms.get(key)
        if cached is not None and cached[0] is pod.pod:
            return cached[1]
        terms = pod_terms(pod)
        self._terms[key] = (pod.pod, terms)
        return terms

    def placed_pod(self, key: str) -> tuple[Pod, PodTerms] | None:
        """The pod object and terms last read for ``key`` (a pod the store no longer holds
        is still here: queueing hints read a deleted pod's labels and terms from it)."""
        cached = self._terms.get(key)
        if cached is None or not isinstance(cached[0], Pod):
            return None
        return cached[0], cached[1]

    def node_labels(self, name: str) -> Mapping[str, str] | None:
        """The labels the node had when its pods were last read (before an update the
        store has since applied), None when it was never read."""
        cached = self._nodes.get(name)
        return cached[0].node.metadata.labels if cached is not None else None

    def on_node(self, node: NodeInfo) -> list[tuple[PodInfo, PodTerms]]:
        """The node's pods with affinity (a NodeInfo clone of preemption is read afresh)."""
        cached = self._nodes.get(node.name)
        if cached is not None and cached[0] is node and cached[1] == node.generation:
            return cached[2]
        found = []
        for info in node.pods:
            terms = self.terms(info)
            if terms.has_affinity:
                found.append((info, terms))
        self._nodes[node.name] = (node, node.generation, found)
        return found

    def with_affinity(self, cluster: ClusterState
                      ) -> list[tuple[NodeInfo, list[tuple[PodInfo, PodTerms]]]]:
        """Every node holding a pod with affinity, with those pods."""
        log = cluster.node_log()
        changed = None
        if cluster is self._cluster and cluster.node_version == self._version:
            changed = log.since(self._cursor)
        if changed is None:
            self._cluster, self._version = cluster, cluster.node_version
            self._with = {}
            for node in cluster.node_infos():
                self._refresh(node)
        else:
            nodes = cluster.nodes
            for name in set(changed):
                info = nodes.get(name)
                if info is None:
                    self._with.pop(name, None)
                else:
                    self._refresh(info)
        self._cursor = log.end
        return list(self._with.values())

    def _refresh(self, node: NodeInfo) -> None:
        found = self.on_node(node)
        if found:
            self._with[node.name] = (node, found)
        else:
            self._with.pop(node.name, None)
