"""NodePools' node templates on the Fleet's autoscaled pools.

The Karpenter model's instance types are the Fleet's autoscaled pools. A NodePool's
``spec.template`` reaches their nodes here, on the Fleet document, so that template
nodes, the nodes a run adds and the pools' current generated nodes agree:

- ``spec.template.metadata.labels`` and ``karpenter.sh/nodepool: NAME`` are added to
  each autoscaled pool's labels, ``spec.template.spec.taints`` to its taints;
- a requirement on a custom key (not one of Karpenter's well-known labels, nor the
  hostname, nor a key the Fleet sets itself) is a label when it resolves to a value, as
  Karpenter labels a NodeClaim (NodeClaimTemplate.resolveCustomLabelsFromRequirements):
  ``In`` its value; ``NotIn``, ``Exists`` and the numeric operators a number within their
  bounds (Karpenter draws one at random; here the least allowed, so runs repeat);
  ``DoesNotExist`` none. ``In`` with several values gives the pool once per value (the
  first keeps the pool's name, the others are ``POOL-v2``, ``POOL-v3``, ...): Karpenter
  labels each NodeClaim with the value its pods select, and a pool's nodes carry one.

Several NodePools: every autoscaled pool is each NodePool's instance type, so it is
copied once per NodePool, named ``NODEPOOL-POOL``, with that NodePool's template (the
pool's current nodes stay with the first NodePool's copy). A pool whose labels already
name one of the NodePools (``karpenter.sh/nodepool``) is that NodePool's only, and keeps
its name. Which pools a NodePool's requirements admit is the model's to decide
(``Karpenter``, on each template node's labels), not this document's.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from .karpenter_nodepool import NodePoolSettings, Requirement

__all__ = [
    "NODEPOOL_LABEL",
    "custom_label_value",
    "nodepool_fleet_document",
    "nodepools_fleet_document",
    "resolves_custom_label",
]

NODEPOOL_LABEL = "karpenter.sh/nodepool"
# Karpenter's WellKnownLabels and RestrictedLabels (pkg/apis/v1/labels.go), which a
# NodeClaim is not labelled with from requirements.
_WELL_KNOWN = frozenset({
    NODEPOOL_LABEL, "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type", "kubernetes.io/arch", "kubernetes.io/os",
    "karpenter.sh/capacity-type", "node.kubernetes.io/windows-build",
    "kubernetes.io/hostname"})
# Labels the Fleet generator sets from a pool's platform, topology or GPUs.
_FLEET_SET = ("dralab.dev/", "nvidia.com/")
_NO_VALUE = None


def resolves_custom_label(key: str) -> bool:
    return key not in _WELL_KNOWN and not key.startswith(_FLEET_SET)


def custom_label_value(requirement: Requirement) -> str | None:
    """The value a node gets for a requirement's custom key (Requirement.Any): None for
    DoesNotExist; for the open operators the least non-negative integer allowed."""
    op, values = requirement.operator, requirement.values
    if op == "In":
        return values[0]
    if op == "DoesNotExist":
        return _NO_VALUE
    low = 0
    if op in ("Gt", "Gte"):
        low = int(values[0]) + (1 if op == "Gt" else 0)
    high = None
    if op in ("Lt", "Lte"):
        high = int(values[0]) - (1 if op == "Lt" else 0)
        if high < 0:
            return _NO_VALUE
    value = low
    while op == "NotIn" and str(value) in values:
        value += 1
    if high is not None and value > high:
        return _NO_VALUE
    return str(value)


def _label_choices(nodepool: NodePoolSettings) -> list[list[tuple[str, str]]]:
    """Per custom requirement key, the (key, value) labels a node may carry; keys with
    several In values give several choices."""
    out = []
    for req in nodepool.requirements:
        if not resolves_custom_label(req.key):
            continue
        if req.operator == "In":
            out.append([(req.key, v) for v in dict.fromkeys(req.values)])
            continue
        value = custom_label_value(req)
        if value is not None:
            out.append([(req.key, value)])
    return out


def _templated(pool: dict[str, Any], nodepool: NodePoolSettings, name: str,
               resolved: Sequence[tuple[str, str]]) -> dict[str, Any]:
    labels = pool.get("labels")
    labels = dict(labels) if isinstance(labels, dict) else {}
    for key, value in resolved:
        labels.setdefault(key, value)
    out = {**pool, "name": name,
           "labels": {**labels, **nodepool.labels, NODEPOOL_LABEL: nodepool.name}}
    if nodepool.taints:
        taints = pool.get("taints")
        out["taints"] = [*(taints if isinstance(taints, list) else []),
                         *(dict(t) for t in nodepool.taints)]
    return out


def _pool_copies(pool: dict[str, Any], nodepool: NodePoolSettings, base: str,
                 keep_count: bool) -> list[dict[str, Any]]:
    """``pool`` as ``nodepool``'s instance type: one copy per combination of its
    requirements' label values (the first named ``base``)."""
    out = []
    for i, resolved in enumerate(itertools.product(*_label_choices(nodepool))):
        copied = _templated(pool, nodepool, base if i == 0 else f"{base}-v{i + 1}",
                            resolved)
        if i > 0 or not keep_count:
            copied["count"] = 0
        out.append(copied)
    return out


def nodepools_fleet_document(doc: Mapping[str, Any], nodepools: Sequence[NodePoolSettings]
                             ) -> dict[str, Any]:
    """A copy of the Fleet document ``doc`` whose autoscaled pools are ``nodepools``'
    instance types, each with its NodePool's template labels and taints. Malformed
    parts are left as they are (``parse_fleet`` reports them)."""
    out = copy.deepcopy(dict(doc))
    spec = out.get("spec")
    if not isinstance(spec, dict):
        return out
    pools = spec.get("pools")
    if not isinstance(pools, list) or not nodepools:
        return out
    by_name = {n.name: n for n in nodepools}
    several = len(nodepools) > 1
    result: list[Any] = []
    for pool in pools:
        if not isinstance(pool, dict) or pool.get("autoscaling") is None:
            result.append(pool)
            continue
        name = str(pool.get("name", ""))
        labels = pool.get("labels")
        owner = labels.get(NODEPOOL_LABEL) if isinstance(labels, dict) else None
        if several and owner in by_name:
            result.extend(_pool_copies(pool, by_name[owner], name, True))
            continue
        for i, nodepool in enumerate(nodepools if several else nodepools[:1]):
            base = f"{nodepool.name}-{name}" if several else name
            result.extend(_pool_copies(pool, nodepool, base, i == 0))
    spec["pools"] = result
    return out


def nodepool_fleet_document(doc: Mapping[str, Any], nodepool: NodePoolSettings
                            ) -> dict[str, Any]:
    """``nodepools_fleet_document`` for one NodePool (pool names unchanged)."""
    return nodepools_fleet_document(doc, (nodepool,))
