"""Cluster Autoscaler's CapacityQuota objects (autoscaling.x-k8s.io/v1beta1, and the
deprecated v1alpha1; cluster-autoscaler/apis/capacityquota, resourcequotas/
capacityquota), read when --capacity-quotas-enabled (off by default, as CA's flag).

A CapacityQuota caps what the nodes its ``spec.selector`` matches (every node when
there is none) may add up to: ``spec.limits.resources`` -- ``cpu`` (cores),
``memory`` (bytes), ``nodes`` and extended resources a node has in its capacity
(GPUs) -- non-negative integers. Scale-up checks the template node of a group against
every quota whose selector matches its labels, as it checks CA's "cluster-wide"
quota of --cores-total and --memory-total (``limits.ScaleUpBudget``): a group with
no room under some quota is left out ('exceeded quota: "CapacityQuota/NAME",
resources: cpu'), an option larger than the room is capped. CapacityQuotas cap
scale-up only (CA's scale-down minimum comes from the cloud provider alone).

CA enforces a quota once its own controller has set the quota's valid condition,
which it does when the selector parses; dralab plays that controller. What the API
server's schema refuses (a negative or fractional limit, more than 20 resources, a
name over 63 characters, a selector that does not parse) is a one-line input error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dralab.api.errors import InputError
from dralab.api.io import Document
from dralab.api.quantity import Quantity

__all__ = ["CAPACITY_QUOTA_API_VERSIONS", "CAPACITY_QUOTA_KIND", "CapacityQuota",
           "is_capacity_quota", "parse_capacity_quota", "read_capacity_quotas"]

CAPACITY_QUOTA_KIND = "CapacityQuota"
CAPACITY_QUOTA_API_VERSIONS = ("autoscaling.x-k8s.io/v1beta1", "autoscaling.x-k8s.io/v1alpha1")
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_MAX_RESOURCES = 20


@dataclass(frozen=True, slots=True)
class CapacityQuota:
    """One quota: ``requirements`` (key, operator, values) all must hold of a node's
    labels; ``limits`` by resource name."""

    id: str
    requirements: tuple[tuple[str, str, frozenset[str]], ...]
    limits: Mapping[str, int]

    def applies_to(self, labels: Mapping[str, str]) -> bool:
        for key, operator, values in self.requirements:
            if operator == "In" and labels.get(key) not in values:
                return False
            if operator == "NotIn" and key in labels and labels[key] in values:
                return False
            if operator == "Exists" and key not in labels:
                return False
            if operator == "DoesNotExist" and key in labels:
                return False
        return True


def is_capacity_quota(doc: Document) -> bool:
    data = doc.data
    return isinstance(data, dict) and data.get("kind") == CAPACITY_QUOTA_KIND and \
        data.get("apiVersion") in CAPACITY_QUOTA_API_VERSIONS


def _selector(raw: Any, where: str) -> tuple[tuple[str, str, frozenset[str]], ...]:
    field = f"{where}: spec.selector"
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise InputError(f"{field}: expected a label selector, not {type(raw).__name__}")
    out: list[tuple[str, str, frozenset[str]]] = []
    labels = raw.get("matchLabels") or {}
    if not isinstance(labels, dict):
        raise InputError(f"{field}.matchLabels: expected a map of labels")
    for key, value in sorted(labels.items()):
        out.append((str(key), "In", frozenset({str(value)})))
    exprs = raw.get("matchExpressions") or []
    if not isinstance(exprs, list):
        raise InputError(f"{field}.matchExpressions: expected a list")
    for i, expr in enumerate(exprs):
        path = f"{field}.matchExpressions[{i}]"
        if not isinstance(expr, dict):
            raise InputError(f"{path}: expected a requirement")
        operator = expr.get("operator")
        values = expr.get("values") or []
        if operator not in _OPERATORS:
            raise InputError(f"{path}.operator: {operator!r} is not a valid label selector "
                             f"operator")
        if not isinstance(values, list):
            raise InputError(f"{path}.values: expected a list")
        if operator in ("In", "NotIn") and not values:
            raise InputError(f"{path}.values: for 'in', 'notin' operators, values set "
                             "can't be empty")
        if operator in ("Exists", "DoesNotExist") and values:
            raise InputError(f"{path}.values: values set must be empty for exists and "
                             "does not exist")
        out.append((str(expr.get("key", "")), str(operator), frozenset(str(v) for v in values)))
    return tuple(out)


def _limit(raw: Any, path: str) -> int:
    if isinstance(raw, bool):
        raise InputError(f"{path}: All resource quantities must be non-negative integers.")
    if isinstance(raw, int):
        value = raw
    else:
        text = str(raw)
        try:
            quantity = Quantity.parse(text)
        except ValueError:
            raise InputError(f"{path}: {text!r} is not a quantity") from None
        if text.startswith("-") or not quantity.is_integer() or text.endswith("m"):
            raise InputError(f"{path}: All resource quantities must be non-negative "
                             "integers.")
        value = quantity.value()
    if value < 0:
        raise InputError(f"{path}: All resource quantities must be non-negative integers.")
    return value


def parse_capacity_quota(data: Mapping[str, Any], where: str) -> CapacityQuota:
    """One CapacityQuota document; InputError naming ``where`` and the field."""
    meta = data.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        raise InputError(f"{where}: metadata.name: required")
    where = f"{where} {CAPACITY_QUOTA_KIND} {name}"
    spec = data.get("spec")
    if not isinstance(spec, dict):
        raise InputError(f"{where}: spec: required")
    limits = spec.get("limits")
    resources = limits.get("resources") if isinstance(limits, dict) else None
    if not isinstance(resources, dict):
        raise InputError(f"{where}: spec.limits.resources: required (a map of resource "
                         "name to limit)")
    if len(resources) > _MAX_RESOURCES:
        raise InputError(f"{where}: spec.limits.resources: must have at most "
                         f"{_MAX_RESOURCES} items")
    parsed: dict[str, int] = {}
    for key, raw in resources.items():
        path = f"{where}: spec.limits.resources[{key}]"
        if len(str(key)) > 63:
            raise InputError(f"{path}: Resource names must be 63 characters or less.")
        parsed[str(key)] = _limit(raw, path)
    return CapacityQuota(f"CapacityQuota/{name}", _selector(spec.get("selector"), where),
                         parsed)


def read_capacity_quotas(docs: Sequence[Document]) -> tuple[CapacityQuota, ...]:
    """The CapacityQuotas among ``docs``, by name (as CA lists them)."""
    quotas = [parse_capacity_quota(d.data, d.where) for d in docs if is_capacity_quota(d)]
    return tuple(sorted(quotas, key=lambda q: q.id))
