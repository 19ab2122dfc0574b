"""The NodeClaims the Karpenter model's launches are: what Karpenter writes.

One ``karpenter.sh/v1`` NodeClaim per launched node, as Karpenter's NodeClaimTemplate
makes it (pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go ToNodeClaim):

- ``metadata.generateName`` ``NODEPOOL-``; ``labels`` the NodePool's template labels,
  ``karpenter.sh/nodepool``, the nodeClass label (``GROUP/kind: NAME``) and the custom
  labels its requirements resolve to (``karpenter_template``); ``annotations`` the
  template's; ``ownerReferences`` the NodePool (blockOwnerDeletion);
- ``spec.requirements`` the NodePool's requirements (with their minValues), one ``In``
  per label above, ``node.kubernetes.io/instance-type In`` the instance type options
  (the NodePool's types one fresh node of which takes the NodeClaim's pods, cheapest
  first, at most 600 as MaxInstanceTypes) and ``karpenter.sh/capacity-type In`` their
  capacity types; requirements on one key are intersected, as Karpenter's
  Requirements are a map by key;
- ``spec.taints``, ``spec.startupTaints``, ``spec.nodeClassRef`` the template's;
  ``spec.terminationGracePeriod`` the template's, else the global default (Karpenter's
  DefaultTerminationGracePeriod, none unless set);
- ``spec.resources.requests`` what the node's pods request, DaemonSet pods included,
  and ``pods`` their count.

The pods' own requirements, which Karpenter adds to the NodeClaim's, are not written
(the instance type options already reflect them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dralab.api.quantity import Quantity, QuantityFormat

from .karpenter_nodepool import NodePoolSettings, Requirement
from .karpenter_template import NODEPOOL_LABEL, resolves_custom_label

__all__ = ["CAPACITY_TYPE", "INSTANCE_TYPE", "MAX_INSTANCE_TYPES", "LaunchedNode",
           "NodeClaimPlan", "cheapest_first", "node_claim_labels"]

INSTANCE_TYPE = "node.kubernetes.io/instance-type"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
MAX_INSTANCE_TYPES = 600  # scheduling.MaxInstanceTypes
_BINARY = ("memory", "ephemeral-storage")


def node_claim_labels(nodepool: NodePoolSettings, node_labels: Mapping[str, str]
                      ) -> dict[str, str]:
    """The NodeClaim's labels: the template's, the NodePool's, the nodeClass's, and the
    custom keys of its requirements with the value the node got."""
    out = {**nodepool.labels, NODEPOOL_LABEL: nodepool.name}
    ref = nodepool.node_class_ref
    if ref is not None and ref.get("kind"):
        out[f"{ref.get('group', '')}/{ref['kind'].lower()}"] = ref.get("name", "")
    for req in nodepool.requirements:
        if resolves_custom_label(req.key) and req.key in node_labels:
            out.setdefault(req.key, node_labels[req.key])
    return out


def _merge(into: dict[str, dict[str, Any]], req: Requirement) -> None:
    """Add ``req`` to the requirements by key; two In on one key keep the values both
    allow (the others: the later one)."""
    doc: dict[str, Any] = {"key": req.key, "operator": req.operator}
    if req.values:
        doc["values"] = list(req.values)
    if req.min_values is not None:
        doc["minValues"] = req.min_values
    have = into.get(req.key)
    if have is not None and have["operator"] == "In" and req.operator == "In":
        have["values"] = [v for v in have["values"] if v in req.values]
        if req.min_values is not None:
            have["minValues"] = req.min_values
        return
    into[req.key] = doc


def _quantity(name: str, milli: int) -> str:
    fmt = QuantityFormat.BINARY_SI if name in _BINARY else QuantityFormat.DECIMAL_SI
    return str(Quantity.from_milli(milli, fmt))


@dataclass(frozen=True, slots=True)
class LaunchedNode:
    """A node one launch placed pods on: its pool, name, the pending pods on it, what
    all of its pods request (milli-units) and how many there are."""

    pool: str
    node: str
    pods: tuple[str, ...]
    requests: Mapping[str, int]
    pod_count: int


@dataclass(frozen=True, slots=True)
class NodeClaimPlan:
    """One launched node's NodeClaim. ``instance_types``: the options, cheapest first;
    ``requests``: milli-units by resource; ``pods``: the pending pods it is for."""

    nodepool: NodePoolSettings
    pool: str
    node: str
    node_labels: Mapping[str, str]
    instance_types: tuple[str, ...]
    capacity_types: tuple[str, ...]
    requests: Mapping[str, int]
    pod_count: int
    pods: tuple[str, ...]
    default_termination_grace_period: str | None = None
    min_values_relaxed: bool | None = None
    # Per requirement key, the minValues BestEffort relaxed it to.
    relaxed_min_values: Mapping[str, int] = field(default_factory=dict)

    @property
    def labels(self) -> dict[str, str]:
        return node_claim_labels(self.nodepool, self.node_labels)

    def requirements(self) -> list[dict[str, Any]]:
        merged: dict[str, dict[str, Any]] = {}
        for req in self.nodepool.requirements:
            _merge(merged, req)
        for key, value in self.labels.items():
            _merge(merged, Requirement(key, "In", (value,)))
        types = merged.get(INSTANCE_TYPE, {})
        _merge(merged, Requirement(INSTANCE_TYPE, "In",
                                   self.instance_types[:MAX_INSTANCE_TYPES] or ("",),
                                   types.get("minValues")))
        if self.capacity_types:
            _merge(merged, Requirement(CAPACITY_TYPE, "In", self.capacity_types))
        for key, relaxed in self.relaxed_min_values.items():
            if key in merged:
                merged[key]["minValues"] = relaxed
        return list(merged.values())

    def to_document(self) -> dict[str, Any]:
        nodepool = self.nodepool
        annotations = dict(nodepool.annotations)
        if self.min_values_relaxed is not None:
            annotations["karpenter.sh/nodeclaim-min-values-relaxed"] = \
                str(self.min_values_relaxed).lower()
        meta: dict[str, Any] = {
            "generateName": f"{nodepool.name}-", "labels": self.labels,
            "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                                 "name": nodepool.name, "uid": nodepool.uid,
                                 "blockOwnerDeletion": True}]}
        if annotations:
            meta["annotations"] = annotations
        spec: dict[str, Any] = {"requirements": self.requirements()}
        if nodepool.taints:
            spec["taints"] = [dict(t) for t in nodepool.taints]
        if nodepool.startup_taints:
            spec["startupTaints"] = [dict(t) for t in nodepool.startup_taints]
        if nodepool.node_class_ref is not None:
            spec["nodeClassRef"] = dict(nodepool.node_class_ref)
        grace = nodepool.termination_grace_period or self.default_termination_grace_period
        if grace is not None:
            spec["terminationGracePeriod"] = grace
        requests = {name: _quantity(name, milli) for name, milli in sorted(
            self.requests.items()) if milli}
        requests["pods"] = str(self.pod_count)
        spec["resources"] = {"requests": requests}
        return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": meta,
                "spec": spec}


def cheapest_first(options: Sequence[tuple[str, float]]) -> tuple[str, ...]:
    """Instance type names by their cheapest offering (OrderByPrice), each once."""
    best: dict[str, float] = {}
    for name, price in options:
        best[name] = min(price, best.get(name, price))
    return tuple(sorted(best, key=lambda n: (best[n], n)))
