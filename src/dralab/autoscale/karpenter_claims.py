"""Karpenter NodeClaims in the input (``karpenter.sh/v1`` NodeClaim, the Karpenter model).

Karpenter's cluster state holds a NodeClaim from its launch on (state.Cluster), so a
snapshot taken mid-scale-up has capacity no Node shows yet. Read here:

- ``metadata.name``, ``metadata.labels`` (the instance type, zone, capacity type and
  NodePool Karpenter resolved at launch), ``metadata.deletionTimestamp``;
- ``status.nodeName``: the Node it registered as, if any;
- ``status.conditions`` ``Initialized``: StateNode.Initialized is this condition, not
  the node's ``karpenter.sh/initialized`` label.

A NodeClaim whose node is in the input and that is not Initialized makes that node one
in flight (``karpenter_inflight``) whatever its labels say. One without a node in the
input, not being deleted, is a node in flight of the autoscaled pool its labels match
(the pool's template node, named as the NodeClaim): pending pods it takes need no new
node, and it counts in its pool's size. A NodeClaim no pool matches is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from dralab.api.core import Node
from dralab.api.errors import InputError
from dralab.api.io import Document
from dralab.fleet import Fleet

from .groups import TemplateNodes

__all__ = ["NODECLAIM_API_VERSION", "NodeClaimState", "claim_pool", "claimed_nodes",
           "is_node_claim", "read_node_claims", "uninitialized_by_claim", "unjoined"]

NODECLAIM_API_VERSION = "karpenter.sh/v1"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
# The labels a NodeClaim's pool must share with it (those it has).
_MATCHED = ("node.kubernetes.io/instance-type", "karpenter.sh/capacity-type",
            "karpenter.sh/nodepool", ZONE, "karpenter.sh/reservation-id")


@dataclass(frozen=True, slots=True)
class NodeClaimState:
    name: str
    labels: Mapping[str, str]
    node_name: str | None
    initialized: bool
    deleting: bool


def is_node_claim(doc: Document) -> bool:
    """A Karpenter NodeClaim document (any karpenter.sh version)."""
    data = doc.data
    return isinstance(data, dict) and data.get("kind") == "NodeClaim" and \
        isinstance(data.get("apiVersion"), str) and \
        data["apiVersion"].split("/")[0] == "karpenter.sh"


def _fail(doc: Document, path: str, message: str) -> InputError:
    return InputError(f"{doc.describe()}: {path}: {message}")


def _read(doc: Document) -> NodeClaimState:
    data: Any = doc.data
    if data.get("apiVersion") != NODECLAIM_API_VERSION:
        raise _fail(doc, "apiVersion", f"only {NODECLAIM_API_VERSION} NodeClaims are read, "
                                       f"not {data.get('apiVersion')!r}")
    meta = data.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) \
            or not meta["name"]:
        raise _fail(doc, "metadata.name", "required")
    labels = meta.get("labels") or {}
    if not isinstance(labels, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise _fail(doc, "metadata.labels", "must map strings to strings")
    status = data.get("status") or {}
    if not isinstance(status, dict):
        raise _fail(doc, "status", "must be an object")
    node_name = status.get("nodeName")
    if node_name is not None and not isinstance(node_name, str):
        raise _fail(doc, "status.nodeName", "must be a string")
    conditions = status.get("conditions") or []
    if not isinstance(conditions, list):
        raise _fail(doc, "status.conditions", "must be a list")
    initialized = any(isinstance(c, dict) and c.get("type") == "Initialized"
                      and c.get("status") == "True" for c in conditions)
    return NodeClaimState(meta["name"], dict(labels), node_name or None, initialized,
                          bool(meta.get("deletionTimestamp")))


def read_node_claims(docs: Sequence[Document]) -> tuple[NodeClaimState, ...]:
    """The NodeClaims, in input order; a name given twice is an error."""
    out: list[NodeClaimState] = []
    seen: dict[str, Document] = {}
    for doc in docs:
        claim = _read(doc)
        if claim.name in seen:
            raise _fail(doc, "metadata.name", f"a second NodeClaim named {claim.name!r} "
                                              f"(the first is {seen[claim.name].describe()})")
        seen[claim.name] = doc
        out.append(claim)
    return tuple(out)


def uninitialized_by_claim(claims: Iterable[NodeClaimState]) -> frozenset[str]:
    """The nodes whose NodeClaim is not Initialized (whatever their labels say)."""
    return frozenset(c.node_name for c in claims if c.node_name and not c.initialized)


def claim_pool(claim: NodeClaimState, fleet: Fleet) -> str | None:
    """The autoscaled pool whose nodes the NodeClaim's labels describe (the first by
    name), from the pool's labels and zone."""
    for pool in sorted(fleet.spec.pools, key=lambda p: p.name):
        if pool.autoscaling is None:
            continue
        labels = {**pool.labels, **({ZONE: pool.topology.zone} if pool.topology.zone else {})}
        if all(labels.get(k) == claim.labels[k] for k in _MATCHED if k in claim.labels):
            return pool.name
    return None


def unjoined(claims: Iterable[NodeClaimState], nodes: Iterable[str]
             ) -> list[NodeClaimState]:
    """The NodeClaims without a node among ``nodes``, not being deleted."""
    present = set(nodes)
    return [c for c in claims if not c.deleting and (c.node_name or c.name) not in present]


def claimed_nodes(claims: Iterable[NodeClaimState], fleet: Fleet, templates: TemplateNodes,
                  pools: Iterable[str], nodes: Iterable[str]) -> list[Node]:
    """The nodes in flight of the NodeClaims without a node: each its pool's template node
    (one of ``pools``, the usable ones), named as the NodeClaim, with its labels."""
    usable = set(pools)
    out = []
    for claim in unjoined(claims, nodes):
        pool = claim_pool(claim, fleet)
        if pool is None or pool not in usable:
            continue
        template = templates.node(pool, 0)[0]
        name = claim.node_name or claim.name
        labels = {**(template.metadata.labels or {}), **claim.labels, HOSTNAME: name}
        out.append(msgspec.structs.replace(template, metadata=msgspec.structs.replace(
            template.metadata, name=name, uid=f"uid-nodeclaim-{claim.name}", labels=labels)))
    return out
