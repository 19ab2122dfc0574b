"""PodTopologySpread's inputs: the pod's constraints, label selectors, the plugin's args.

A pod's ``spec.topologySpreadConstraints`` is read from the document it was decoded
from (dralab's typed PodSpec does not carry it). Constraints are kept per
``whenUnsatisfiable``: DoNotSchedule ones filter, ScheduleAnyway ones score
(upstream's filterTopologySpreadConstraints, v1.36.2 podtopologyspread/common.go):
``minDomains`` defaults to 1, ``nodeAffinityPolicy`` to Honor, ``nodeTaintsPolicy`` to
Ignore, and the values of the pod's labels named in ``matchLabelKeys`` are added to the
selector.

A pod without constraints of its own gets the profile's default constraints
(``PodTopologySpreadArgs``; ``defaultingType: System`` gives hostname maxSkew 3 and zone
maxSkew 5, both ScheduleAnyway) with a selector deduced from what selects and controls the
pod (upstream's helper.DefaultSelector, v1.36.2 plugins/helper/spread.go): the labels of the
``spec.selector`` of every Service of the pod's namespace that selects it, merged, and the
selector of its controlling ReplicationController (``v1``, a label map, merged too),
ReplicaSet or StatefulSet (``apps/v1``, a LabelSelector whose requirements are added), as the
cluster store holds them (``ClusterState.service_selectors`` / ``controller_selectors``:
the objects of the input and the ReplicaSets the Deployment controller creates). A
controller the store does not hold adds nothing, as upstream when its lister does not find
it; a pod that ends up with an empty selector gets no default constraints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dralab.allocator.nodes import CompiledNodeSelector, NodeSelectorError, compile_node_selector
from dralab.api.core import Taint, Toleration
from dralab.api.errors import ErrorType, FieldError
from dralab.cluster import ClusterState, NodeInfo, PodInfo

from ..framework import PluginArgsError
from .helpers import find_untolerated_taint

__all__ = [
    "DO_NOT_SCHEDULE",
    "HOSTNAME",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "ZONE",
    "DefaultConstraint",
    "SpreadArgs",
    "SpreadConstraint",
    "SpreadSelector",
    "parse_args",
    "pod_constraints",
]

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM = "System"
LIST = "List"
# The controllers DefaultSelector reads, by the owner reference's (apiVersion, kind).
_LABEL_MAP_OWNERS = frozenset({("v1", "ReplicationController")})
_LABEL_SELECTOR_OWNERS = frozenset({("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")})


@dataclass(frozen=True, slots=True)
class SpreadSelector:
    """A parsed metav1.LabelSelector. ``nothing``: a missing selector, which matches no
    pod (labels.Nothing()); no requirements: ``{}``, which matches every pod but counts
    none (countPodsMatchSelector returns 0 for an empty selector)."""

    requirements: tuple[tuple[str, str, frozenset[str]], ...] = ()
    nothing: bool = False

    @property
    def empty(self) -> bool:
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for key, operator, values in self.requirements:
            if operator == "In":
                if labels.get(key) not in values:
                    return False
            elif operator == "NotIn":
                if key in labels and labels[key] in values:
                    return False
            elif operator == "Exists":
                if key not in labels:
                    return False
            elif key in labels:  # DoesNotExist
                return False
        return True

    def with_labels(self, labels: Mapping[str, str]) -> SpreadSelector:
        extra = tuple((k, "In", frozenset({v})) for k, v in sorted(labels.items()))
        return SpreadSelector(extra + self.requirements, self.nothing)


def parse_selector(raw: Any) -> SpreadSelector:
    """A label selector document; one the API would refuse matches nothing (upstream
    returns the parse error, which fails the pod; such a pod never reaches a cluster)."""
    if raw is None:
        return SpreadSelector(nothing=True)
    if not isinstance(raw, Mapping):
        return SpreadSelector(nothing=True)
    requirements: list[tuple[str, str, frozenset[str]]] = []
    for key, value in sorted((raw.get("matchLabels") or {}).items()):
        requirements.append((str(key), "In", frozenset({str(value)})))
    for expr in raw.get("matchExpressions") or []:
        if not isinstance(expr, Mapping):
            return SpreadSelector(nothing=True)
        operator = expr.get("operator")
        values = frozenset(str(v) for v in expr.get("values") or [])
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return SpreadSelector(nothing=True)
        if (operator in ("In", "NotIn")) != bool(values):
            return SpreadSelector(nothing=True)
        requirements.append((str(expr.get("key", "")), str(operator), values))
    return SpreadSelector(tuple(requirements))


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One constraint as the plugin applies it (upstream's topologySpreadConstraint)."""

    max_skew: int
    topology_key: str
    selector: SpreadSelector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


@dataclass(frozen=True, slots=True)
class DefaultConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str


SYSTEM_DEFAULT_CONSTRAINTS = (
    DefaultConstraint(3, HOSTNAME, SCHEDULE_ANYWAY),
    DefaultConstraint(5, ZONE, SCHEDULE_ANYWAY),
)


@dataclass(frozen=True, slots=True)
class SpreadArgs:
    """PodTopologySpreadArgs: the default constraints and whether they are the system's;
    ``match_label_keys``: gate MatchLabelKeysInPodTopologySpread (off: matchLabelKeys ignored)."""

    defaults: tuple[DefaultConstraint, ...] = SYSTEM_DEFAULT_CONSTRAINTS
    system_defaulted: bool = True
    match_label_keys: bool = True


def _invalid(path: str, value: Any, detail: str) -> PluginArgsError:
    return PluginArgsError(path, FieldError(path=path, type=ErrorType.INVALID, value=value,
                                            detail=detail).body())


def parse_args(args: Mapping[str, Any]) -> SpreadArgs:
    """Defaulted and validated as kube-scheduler v1.36.2 does (SetDefaults_PodTopologySpreadArgs,
    ValidatePodTopologySpreadArgs)."""
    kind = args.get("defaultingType") or SYSTEM
    raw = args.get("defaultConstraints") or []
    if kind not in (SYSTEM, LIST):
        raise PluginArgsError("defaultingType", FieldError(
            path="defaultingType", type=ErrorType.NOT_SUPPORTED, value=kind,
            detail=f'supported values: "{SYSTEM}", "{LIST}"').body())
    if not isinstance(raw, list):
        raise PluginArgsError("defaultConstraints", FieldError(
            path="defaultConstraints", type=ErrorType.TYPE_INVALID, value=raw,
            detail="must be a list").body())
    if kind == SYSTEM and raw:
        raise _invalid("defaultingType", kind, "when .defaultConstraints are not empty")
    out: list[DefaultConstraint] = []
    for i, item in enumerate(raw):
        path = f"defaultConstraints[{i}]"
        entry = item if isinstance(item, Mapping) else {}
        skew = entry.get("maxSkew", 0)
        if isinstance(skew, bool) or not isinstance(skew, int) or skew <= 0:
            raise _invalid(f"{path}.maxSkew", skew, "not in valid range (0, inf)")
        key = entry.get("topologyKey") or ""
        if not isinstance(key, str) or not key:
            raise PluginArgsError(f"{path}.topologyKey", "Required value: can not be empty")
        action = entry.get("whenUnsatisfiable") or ""
        if not action:
            raise PluginArgsError(f"{path}.whenUnsatisfiable",
                                  "Required value: can not be empty")
        if action not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            raise PluginArgsError(f"{path}.whenUnsatisfiable", FieldError(
                path=f"{path}.whenUnsatisfiable", type=ErrorType.NOT_SUPPORTED, value=action,
                detail=f'supported values: "{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"').body())
        if entry.get("labelSelector") is not None:
            raise PluginArgsError(f"{path}.labelSelector", "Forbidden: constraint must not "
                                  "define a selector, as they deduced for each pod")
        constraint = DefaultConstraint(skew, key, action)
        if any(c.topology_key == key and c.when_unsatisfiable == action for c in out):
            raise PluginArgsError(f"defaultConstraints[{i}]", FieldError(
                path=f"defaultConstraints[{i}]", type=ErrorType.DUPLICATE,
                value=f"{{{key}, {action}}}").body())
        out.append(constraint)
    if kind == SYSTEM:
        return SpreadArgs()
    return SpreadArgs(tuple(out), False)


def own_constraints(info: PodInfo) -> list[Any]:
    """The pod's ``spec.topologySpreadConstraints`` as written (empty when none)."""
    raw = info.pod.raw
    spec = raw.get("spec") if isinstance(raw, dict) else None
    value = spec.get("topologySpreadConstraints") if isinstance(spec, dict) else None
    return value if isinstance(value, list) else []


def _policy(value: Any, default: str) -> str:
    return value if value in (HONOR, IGNORE) else default


def _from_spec(raw: Sequence[Any], labels: Mapping[str, str], action: str,
               match_label_keys: bool = True) -> list[SpreadConstraint]:
    out: list[SpreadConstraint] = []
    for item in raw:
        if not isinstance(item, Mapping) or item.get("whenUnsatisfiable") != action:
            continue
        selector = parse_selector(item.get("labelSelector"))
        keys = (item.get("matchLabelKeys") or []) if match_label_keys else []
        if keys and not selector.nothing:
            picked = {k: labels[k] for k in keys if isinstance(k, str) and k in labels}
            if picked:
                selector = selector.with_labels(picked)
        min_domains = item.get("minDomains")
        out.append(SpreadConstraint(
            max_skew=int(item.get("maxSkew") or 0), topology_key=str(item.get("topologyKey")),
            selector=selector,
            min_domains=min_domains if isinstance(min_domains, int) and min_domains > 0 else 1,
            node_affinity_policy=_policy(item.get("nodeAffinityPolicy"), HONOR),
            node_taints_policy=_policy(item.get("nodeTaintsPolicy"), IGNORE)))
    return out


def default_selector(info: PodInfo, cluster: ClusterState) -> SpreadSelector:
    """helper.DefaultSelector over the store's Services and controllers (module docstring)."""
    meta = info.pod.metadata
    namespace = meta.namespace or ""
    labels = meta.labels
    merged: dict[str, str] = {}
    for selector in cluster.service_selectors.get(namespace, {}).values():
        if all(labels.get(k) == v for k, v in selector.items()):
            merged.update(selector)
    added: tuple[tuple[str, str, frozenset[str]], ...] = ()
    owner = next((r for r in meta.owner_references if r.controller), None)
    if owner is not None:
        kind = (owner.api_version, owner.kind)
        key = (owner.kind, namespace, owner.name)
        if kind in _LABEL_MAP_OWNERS and key in cluster.controller_selectors:
            found = cluster.controller_selectors[key]
            if isinstance(found, Mapping):
                merged.update({str(k): str(v) for k, v in found.items()})
        elif kind in _LABEL_SELECTOR_OWNERS and key in cluster.controller_selectors:
            # A selector that does not parse, or none at all (labels.Nothing()), adds nothing.
            parsed = parse_selector(cluster.controller_selectors[key])
            if not parsed.nothing:
                added = parsed.requirements
    return SpreadSelector(added).with_labels(merged)


def pod_constraints(info: PodInfo, args: SpreadArgs, action: str,
                    cluster: ClusterState) -> list[SpreadConstraint]:
    """The constraints of ``action`` (DoNotSchedule or ScheduleAnyway) that apply to the pod;
    ``cluster`` holds the Services' and controllers' selectors the default ones read."""
    own = own_constraints(info)
    labels = info.pod.metadata.labels
    if own:
        return _from_spec(own, labels, action, args.match_label_keys)
    wanted = [c for c in args.defaults if c.when_unsatisfiable == action]
    if not wanted:
        return []
    selector = default_selector(info, cluster)
    if selector.empty:
        return []
    return [SpreadConstraint(c.max_skew, c.topology_key, selector) for c in wanted]


# --- which nodes count ---------------------------------------------------------------

_NEVER = CompiledNodeSelector(())


class RequiredAffinity:
    """The pod's nodeSelector and required node affinity (GetRequiredNodeAffinity)."""

    __slots__ = ("pairs", "terms")

    def __init__(self, info: PodInfo) -> None:
        spec = info.pod.spec
        self.pairs = tuple(spec.node_selector.items())
        affinity = spec.affinity.node_affinity if spec.affinity else None
        required = affinity.required_during_scheduling_ignored_during_execution \
            if affinity else None
        self.terms: CompiledNodeSelector | None = None
        if required is not None:
            try:
                self.terms = compile_node_selector(required)
            except NodeSelectorError:
                self.terms = _NEVER

    def matches(self, node: NodeInfo) -> bool:
        labels = node.node.metadata.labels
        for key, value in self.pairs:
            if labels.get(key) != value:
                return False
        return self.terms is None or self.terms.matches(node.view)


def _blocks(taint: Taint) -> bool:
    return taint.effect in ("NoSchedule", "NoExecute")


def node_counts(constraint: SpreadConstraint, affinity: RequiredAffinity,
                tolerations: Sequence[Toleration], node: NodeInfo) -> bool:
    """matchNodeInclusionPolicies: whether the node's pods count for the constraint."""
    if constraint.node_affinity_policy == HONOR and not affinity.matches(node):
        return False
    return not (constraint.node_taints_policy == HONOR and find_untolerated_taint(
        node.node.spec.taints, tolerations, _blocks) is not None)


def has_all_keys(labels: Mapping[str, str], constraints: Sequence[SpreadConstraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints."""
    return all(c.topology_key in labels for c in constraints)


def count_matching(pods: Sequence[PodInfo], selector: SpreadSelector, namespace: str) -> int:
    """countPodsMatchSelector: pods of the namespace, not being deleted, selected."""
    if selector.empty:
        return 0
    count = 0
    for info in pods:
        meta = info.pod.metadata
        if meta.deletion_timestamp is not None or meta.namespace != namespace:
            continue
        if selector.matches(meta.labels):
            count += 1
    return count
