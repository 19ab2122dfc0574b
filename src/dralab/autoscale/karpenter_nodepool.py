"""The NodePool settings the Karpenter model reads, with Karpenter's field names and
defaults (sigs.k8s.io/karpenter pkg/apis/v1/nodepool.go):

    spec.disruption.consolidationPolicy   WhenEmptyOrUnderutilized (or WhenEmpty)
    spec.disruption.consolidateAfter      0s ("Never": no consolidation at all)
    spec.disruption.budgets               [{nodes: "10%"}] (reasons: Empty, Underutilized, Drifted)
    spec.limits                           none (cpu, memory, nodes, any resource)
    spec.template.metadata.labels         labels every node of the NodePool carries
    spec.template.spec.taints             taints every node of the NodePool carries
    spec.template.spec.requirements       which instance types (Fleet pools) are the
                                          NodePool's (In, NotIn, Exists, DoesNotExist,
                                          Gt, Lt, Gte, Lte)
    spec.template.metadata.annotations    annotations of its NodeClaims and nodes
    spec.template.spec.startupTaints      taints its nodes start with (not on the
                                          NodeClaim's scheduling: pods need not tolerate)
    spec.template.spec.nodeClassRef       written on its NodeClaims
    spec.template.spec.terminationGracePeriod   written on its NodeClaims
    spec.weight                           0 (1..100): NodePools are tried heaviest first,
                                          equal weights by name, later first
    spec.replicas                         none; set, the NodePool is static (provisioning
                                          creates no NodeClaims for it)
    metadata.deletionTimestamp, status.conditions Ready
                                          a deleting NodePool, or one whose Ready
                                          condition is there and not "True", is not used
                                          (without status, an input NodePool is Ready)

and the ``karpenter.sh/do-not-disrupt`` annotation (pods: "true" or a positive Go
duration; nodes: "true"). Budgets with a ``schedule`` need a wall clock and cron:
they are refused here (an offline model has neither).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dralab.api.core import Node, Pod, PodSpec
from dralab.api.durations import parse_go_duration
from dralab.api.errors import InputError
from dralab.api.quantity import Quantity, parse_quantity

__all__ = [
    "DISRUPTION_REASONS",
    "DO_NOT_DISRUPT",
    "DRA_NOT_SUPPORTED",
    "MIN_VALUES_BEST_EFFORT",
    "MIN_VALUES_POLICIES",
    "MIN_VALUES_STRICT",
    "REASON_EMPTY",
    "REASON_UNDERUTILIZED",
    "WHEN_EMPTY",
    "WHEN_EMPTY_OR_UNDERUTILIZED",
    "Budget",
    "NodePoolSettings",
    "Requirement",
    "do_not_disrupt_node",
    "do_not_disrupt_pod",
    "dynamic_nodepools",
    "has_dra_requirements",
    "min_values_error",
    "parse_go_duration",
    "parse_nodepool",
    "unmet_min_values",
]

DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
WHEN_EMPTY = "WhenEmpty"
WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"
REASON_EMPTY = "Empty"
REASON_UNDERUTILIZED = "Underutilized"
DISRUPTION_REASONS = (REASON_EMPTY, REASON_UNDERUTILIZED, "Drifted")

_PERCENT = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")  # nodepool.go's Budget.Nodes pattern


@dataclass(frozen=True, slots=True)
class Budget:
    """One disruption budget: at most ``nodes`` ("N" or "N%" of the NodePool's nodes,
    a percentage rounded up as Karpenter does) disrupted at once, for ``reasons``
    (None: every reason)."""

    nodes: str = "10%"
    reasons: tuple[str, ...] | None = None

    def allowed(self, num_nodes: int) -> int:
        if self.nodes.endswith("%"):
            return math.ceil(int(self.nodes[:-1]) * num_nodes / 100)
        return int(self.nodes)


_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte")
_NUMERIC = {"Gt": int.__gt__, "Lt": int.__lt__, "Gte": int.__ge__, "Lte": int.__le__}


@dataclass(frozen=True, slots=True)
class Requirement:
    """One of ``spec.template.spec.requirements``. ``min_values``: its minValues (read by
    consolidation's replacement choice, ``karpenter_offerings``)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    min_values: int | None = None

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with ``labels`` satisfies the requirement. A key the node does
        not carry satisfies NotIn and DoesNotExist only (as a node selector)."""
        value = labels.get(self.key)
        if self.operator == "Exists":
            return value is not None
        if self.operator == "DoesNotExist":
            return value is None
        if self.operator == "NotIn":
            return value is None or value not in self.values
        if value is None:
            return False
        if self.operator == "In":
            return value in self.values
        try:
            return _NUMERIC[self.operator](int(value), int(self.values[0]))
        except ValueError:
            return False


@dataclass(frozen=True, slots=True)
class NodePoolSettings:
    """The NodePool's disruption block, limits and node template. ``consolidate_after``:
    seconds, None for "Never"."""

    consolidation_policy: str = WHEN_EMPTY_OR_UNDERUTILIZED
    consolidate_after: float | None = 0.0
    budgets: tuple[Budget, ...] = (Budget(),)
    limits: Mapping[str, Quantity] = field(default_factory=dict)
    name: str = "default"
    labels: Mapping[str, str] = field(default_factory=dict)
    # Each {key, value?, effect} as a Node's taint.
    taints: tuple[Mapping[str, str], ...] = ()
    requirements: tuple[Requirement, ...] = ()
    annotations: Mapping[str, str] = field(default_factory=dict)
    startup_taints: tuple[Mapping[str, str], ...] = ()
    weight: int = 0
    replicas: int | None = None  # spec.replicas: a static NodePool
    ready: bool = True  # status.conditions Ready (absent: ready)
    deleting: bool = False  # metadata.deletionTimestamp set
    uid: str = ""
    node_class_ref: Mapping[str, str] | None = None
    termination_grace_period: str | None = None  # the Go duration text, as written

    @property
    def dynamic(self) -> bool:
        """Whether provisioning uses the NodePool (NewScheduler's filter): not static,
        Ready and not being deleted."""
        return self.replicas is None and self.ready and not self.deleting

    def admits(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with ``labels`` (an instance type's) meets every requirement."""
        return all(r.matches(labels) for r in self.requirements)

    def allowed_disruptions(self, num_nodes: int, reason: str) -> int:
        """GetAllowedDisruptionsByReason: the least any budget for ``reason`` allows."""
        allowed = 2**31 - 1
        for budget in self.budgets:
            if budget.reasons is None or reason in budget.reasons:
                allowed = min(allowed, budget.allowed(num_nodes))
        return allowed


def dynamic_nodepools(nodepools: Sequence[NodePoolSettings]) -> list[NodePoolSettings]:
    """The NodePools provisioning uses, in Karpenter's order (OrderByWeight): heavier
    first, equal weights by name with the later name first."""
    usable = [n for n in nodepools if n.dynamic]
    usable.sort(key=lambda n: n.name, reverse=True)
    usable.sort(key=lambda n: n.weight, reverse=True)
    return usable


# Karpenter's --min-values-policy: Strict (its default) refuses a NodeClaim whose
# instance type options do not meet a requirement's minValues; BestEffort relaxes them.
MIN_VALUES_STRICT = "Strict"
MIN_VALUES_BEST_EFFORT = "BestEffort"
MIN_VALUES_POLICIES = (MIN_VALUES_STRICT, MIN_VALUES_BEST_EFFORT)


def unmet_min_values(nodepool: NodePoolSettings,
                     options: Sequence[Mapping[str, str]]) -> dict[str, int]:
    """Per requirement key whose minValues the instance type options (their labels, one
    mapping per offering) do not meet, how many distinct values they do have
    (SatisfiesMinValues; the count is the minValues BestEffort relaxes to)."""
    out = {}
    for req in nodepool.requirements:
        if req.min_values is None:
            continue
        have = len({o[req.key] for o in options if req.key in o})
        if have < req.min_values:
            out[req.key] = have
    return out


def min_values_error(keys: Sequence[str]) -> str:
    """Karpenter's error for a pod whose NodePool's options do not meet minValues."""
    return f"minValues requirement is not met for label(s) ({', '.join(sorted(keys))})"


def do_not_disrupt_pod(pod: Pod) -> bool:
    """Whether the pod's ``karpenter.sh/do-not-disrupt`` blocks its node's disruption:
    "true", or a positive duration (the model has no pod start times against its
    clock, so a duration counts as still running -- upstream's answer for a pod
    without a start time). Any other value is ignored, as Karpenter ignores it (with
    an event)."""
    value = (pod.metadata.annotations or {}).get(DO_NOT_DISRUPT)
    if value is None:
        return False
    if value == "true":
        return True
    try:
        return parse_go_duration(value) > 0
    except ValueError:
        return False


# Karpenter's error for a DRA pod while --ignore-dra-requests is on (its default).
DRA_NOT_SUPPORTED = ("pod has Dynamic Resource Allocation requirements that are not yet "
                     "supported by Karpenter")


def has_dra_requirements(pod: Pod | PodSpec) -> bool:
    """pod.HasDRARequirements: resource claims on the pod or any (init) container."""
    spec = pod.spec if isinstance(pod, Pod) else pod
    return bool(spec.resource_claims) or any(
        c.resources.claims for c in (*spec.init_containers, *spec.containers))


def do_not_disrupt_node(node: Node) -> bool:
    return (node.metadata.annotations or {}).get(DO_NOT_DISRUPT) == "true"


def _fail(where: str, path: str, message: str) -> InputError:
    return InputError(f"{where}: {path}: {message}")


def _budget(item: Any, where: str, path: str) -> Budget:
    if not isinstance(item, dict):
        raise _fail(where, path, "must be an object")
    unknown = set(item) - {"nodes", "reasons", "schedule", "duration"}
    if unknown:
        raise _fail(where, f"{path}.{sorted(unknown)[0]}", "unknown field")
    if "schedule" in item or "duration" in item:
        raise _fail(where, f"{path}.schedule", "scheduled budgets are not modelled "
                    "(they need a wall clock)")
    nodes = str(item.get("nodes", "10%"))
    if not _PERCENT.match(nodes):
        raise _fail(where, f"{path}.nodes", f"must match {_PERCENT.pattern}: {nodes!r}")
    reasons = item.get("reasons")
    if reasons is not None:
        if not isinstance(reasons, list) or any(r not in DISRUPTION_REASONS for r in reasons):
            raise _fail(where, f"{path}.reasons",
                        f"must be a list of {', '.join(DISRUPTION_REASONS)}")
        return Budget(nodes, tuple(reasons))
    return Budget(nodes)


_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _taint(item: Any, where: str, path: str) -> dict[str, str]:
    if not isinstance(item, dict):
        raise _fail(where, path, "must be an object")
    unknown = set(item) - {"key", "value", "effect", "timeAdded"}
    if unknown:
        raise _fail(where, f"{path}.{sorted(unknown)[0]}", "unknown field")
    key, effect = item.get("key"), item.get("effect")
    if not isinstance(key, str) or not key:
        raise _fail(where, f"{path}.key", "required")
    if effect not in _TAINT_EFFECTS:
        raise _fail(where, f"{path}.effect", f"must be {', '.join(_TAINT_EFFECTS)}: {effect!r}")
    out = {"key": key, "effect": str(effect)}
    if item.get("value") is not None:
        out["value"] = str(item["value"])
    return out


def _requirement(item: Any, where: str, path: str) -> Requirement:
    if not isinstance(item, dict):
        raise _fail(where, path, "must be an object")
    unknown = set(item) - {"key", "operator", "values", "minValues"}
    if unknown:
        raise _fail(where, f"{path}.{sorted(unknown)[0]}", "unknown field")
    min_values = item.get("minValues")
    if min_values is not None and (isinstance(min_values, bool) or not isinstance(
            min_values, int) or not 1 <= min_values <= 50):
        # The CRD's bounds (minimum 1, maximum 50).
        raise _fail(where, f"{path}.minValues", f"must be an integer from 1 to 50: "
                    f"{min_values!r}")
    key, operator = item.get("key"), item.get("operator")
    if not isinstance(key, str) or not key:
        raise _fail(where, f"{path}.key", "required")
    if operator not in _OPERATORS:
        raise _fail(where, f"{path}.operator", f"must be one of {', '.join(_OPERATORS)}: "
                    f"{operator!r}")
    values = item.get("values") or []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise _fail(where, f"{path}.values", "must be a list of strings")
    if operator in ("In", "NotIn") and not values:
        raise _fail(where, f"{path}.values", f"{operator} needs at least one value")
    if operator in ("Exists", "DoesNotExist") and values:
        raise _fail(where, f"{path}.values", f"must be empty for {operator}")
    if operator in _NUMERIC and (len(values) != 1 or not values[0].isdigit()):
        # The CRD's rule, in its words.
        raise _fail(where, f"{path}.values", "requirements operator 'Gt', 'Lt', 'Gte', or "
                    "'Lte' must have a single positive integer value")
    return Requirement(key, str(operator), tuple(values), min_values)


def _string_map(value: Any, where: str, path: str) -> dict[str, str]:
    value = value or {}
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise _fail(where, path, "must map strings to strings")
    return dict(value)


def _taints(body: Mapping[str, Any], name: str, where: str) -> tuple[dict[str, str], ...]:
    raw = body.get(name) or []
    if not isinstance(raw, list):
        raise _fail(where, f"spec.template.spec.{name}", "must be a list")
    return tuple(_taint(t, where, f"spec.template.spec.{name}[{i}]") for i, t in enumerate(raw))


def _node_class_ref(body: Mapping[str, Any], where: str) -> dict[str, str] | None:
    ref = body.get("nodeClassRef")
    if ref is None:
        return None
    path = "spec.template.spec.nodeClassRef"
    out = _string_map(ref, where, path)
    for key in out:
        if key not in ("group", "kind", "name"):
            raise _fail(where, f"{path}.{key}", "unknown field")
    return out


def _template(spec: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``spec.template``: NodePoolSettings' template fields by name."""
    template = spec.get("template") or {}
    if not isinstance(template, dict):
        raise _fail(where, "spec.template", "must be an object")
    meta = template.get("metadata") or {}
    if not isinstance(meta, dict):
        raise _fail(where, "spec.template.metadata", "must be an object")
    body = template.get("spec") or {}
    if not isinstance(body, dict):
        raise _fail(where, "spec.template.spec", "must be an object")
    raw_reqs = body.get("requirements") or []
    if not isinstance(raw_reqs, list):
        raise _fail(where, "spec.template.spec.requirements", "must be a list")
    grace = body.get("terminationGracePeriod")
    if grace is not None:
        try:
            parse_go_duration(str(grace))
        except ValueError:
            raise _fail(where, "spec.template.spec.terminationGracePeriod",
                        f"must be a duration: {grace!r}") from None
    return {
        "labels": _string_map(meta.get("labels"), where, "spec.template.metadata.labels"),
        "annotations": _string_map(meta.get("annotations"), where,
                                   "spec.template.metadata.annotations"),
        "taints": _taints(body, "taints", where),
        "startup_taints": _taints(body, "startupTaints", where),
        "requirements": tuple(_requirement(r, where, f"spec.template.spec.requirements[{i}]")
                              for i, r in enumerate(raw_reqs)),
        "node_class_ref": _node_class_ref(body, where),
        "termination_grace_period": None if grace is None else str(grace),
    }


def _ready(data: Mapping[str, Any], where: str) -> bool:
    """status.conditions' Ready: False when it is there and not "True"."""
    status = data.get("status") or {}
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if conditions is None:
        return True
    if not isinstance(conditions, list):
        raise _fail(where, "status.conditions", "must be a list")
    for cond in conditions:
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return True


def _bounded_int(spec: Mapping[str, Any], name: str, low: int, high: int | None,
                 where: str) -> int | None:
    value = spec.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (
            high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise _fail(where, f"spec.{name}", f"must be an integer {bound}: {value!r}")
    return value


def parse_nodepool(data: Mapping[str, Any], where: str) -> NodePoolSettings:
    """A karpenter.sh/v1 NodePool's ``spec.disruption``, ``spec.limits`` and
    ``spec.template`` (labels, taints, requirements). InputError naming ``where`` and the
    field path for a bad value."""
    spec = data.get("spec") or {}
    if not isinstance(spec, dict):
        raise _fail(where, "spec", "must be an object")
    meta = data.get("metadata") or {}
    pool_name = meta.get("name") if isinstance(meta, dict) else None
    disruption = spec.get("disruption") or {}
    if not isinstance(disruption, dict):
        raise _fail(where, "spec.disruption", "must be an object")
    policy = disruption.get("consolidationPolicy", WHEN_EMPTY_OR_UNDERUTILIZED)
    if policy not in (WHEN_EMPTY, WHEN_EMPTY_OR_UNDERUTILIZED):
        raise _fail(where, "spec.disruption.consolidationPolicy",
                    f"must be {WHEN_EMPTY} or {WHEN_EMPTY_OR_UNDERUTILIZED}: {policy!r}")
    after_text = disruption.get("consolidateAfter", "0s")
    after: float | None
    if after_text == "Never":
        after = None
    else:
        try:
            after = parse_go_duration(str(after_text))
        except ValueError:
            raise _fail(where, "spec.disruption.consolidateAfter",
                        f"must be a duration or Never: {after_text!r}") from None
    raw_budgets = disruption.get("budgets", [{"nodes": "10%"}])
    if not isinstance(raw_budgets, list):
        raise _fail(where, "spec.disruption.budgets", "must be a list")
    budgets = tuple(_budget(b, where, f"spec.disruption.budgets[{i}]")
                    for i, b in enumerate(raw_budgets))
    raw_limits = spec.get("limits") or {}
    if not isinstance(raw_limits, dict):
        raise _fail(where, "spec.limits", "must be an object")
    limits: dict[str, Quantity] = {}
    for name, value in raw_limits.items():
        try:
            limits[str(name)] = parse_quantity(str(value))
        except (ValueError, InputError):
            raise _fail(where, f"spec.limits.{name}", f"not a quantity: {value!r}") from None
    uid = meta.get("uid") if isinstance(meta, dict) else None
    deleting = isinstance(meta, dict) and bool(meta.get("deletionTimestamp"))
    return NodePoolSettings(policy, after, budgets, limits,
                            pool_name if isinstance(pool_name, str) and pool_name
                            else "default",
                            weight=_bounded_int(spec, "weight", 1, 100, where) or 0,
                            # The CRD: replicas >= 0.
                            replicas=_bounded_int(spec, "replicas", 0, None, where),
                            ready=_ready(data, where), deleting=deleting,
                            uid=uid if isinstance(uid, str) else "",
                            **_template(spec, where))
