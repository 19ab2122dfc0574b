"""``dralab autoscale``'s input: one Fleet plus Kubernetes objects, as a cluster.

The Fleet (``kind: Fleet``, ``apiVersion: dralab.dev/v1alpha1``) gives the node
groups and, as ``dralab fleet`` would publish them, the current nodes, their
ResourceSlices and the drivers' DeviceClasses. A pool whose nodes are given as
Node objects labelled ``dralab.dev/pool: NAME`` takes those instead (with the
input's slices). ``karpenter.sh/v1`` NodePools give the Karpenter model their
disruption block, limits, weights and node templates; their template labels and taints
are put on the Fleet's autoscaled pools (``karpenter_template``: with several, each
autoscaled pool is copied per NodePool, named NODEPOOL-POOL); ``karpenter.sh/v1``
NodeClaims give it the capacity in flight (``karpenter_claims``). The other documents
are validated as ``dralab schedule``'s are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dralab.api.base import KubeObject
from dralab.api.core import Node
from dralab.api.errors import InputError
from dralab.api.features import FeatureGates
from dralab.api.io import Document, load_documents
from dralab.fleet import Fleet, generate, parse_fleet
from dralab.fleet.nvlink import warn_groups
from dralab.fleet.spec import API_VERSION, KIND
from dralab.validation.check import validate_documents

from .groups import pool_of
from .karpenter_claims import NodeClaimState, is_node_claim, read_node_claims
from .karpenter_nodepool import NodePoolSettings, parse_nodepool
from .karpenter_template import nodepools_fleet_document

__all__ = ["NODEPOOL_API_VERSION", "AutoscaleInput", "cluster_objects", "is_nodepool",
           "read_input"]

NODEPOOL_API_VERSION = "karpenter.sh/v1"


@dataclass(frozen=True, slots=True)
class AutoscaleInput:
    fleet: Fleet
    objects: tuple[KubeObject, ...]
    nodepool: NodePoolSettings | None = None  # the input's (first) NodePool, if any
    nodepools: tuple[NodePoolSettings, ...] = ()  # all of the input's NodePools
    node_claims: tuple[NodeClaimState, ...] = ()  # the input's NodeClaims (Karpenter)


def is_nodepool(doc: Document) -> bool:
    """A Karpenter NodePool document (any karpenter.sh version)."""
    data = doc.data
    return isinstance(data, dict) and data.get("kind") == "NodePool" and \
        isinstance(data.get("apiVersion"), str) and \
        data["apiVersion"].split("/")[0] == "karpenter.sh"


def _nodepools(docs: Sequence[Document]) -> tuple[NodePoolSettings, ...]:
    """The NodePools, in input order; a name given twice is an error."""
    out: list[NodePoolSettings] = []
    seen: dict[str, Document] = {}
    for doc in docs:
        data: Any = doc.data
        if data.get("apiVersion") != NODEPOOL_API_VERSION:
            raise InputError(f"{doc.describe()}: apiVersion: only {NODEPOOL_API_VERSION} "
                             f"NodePools are read, not {data.get('apiVersion')!r}")
        settings = parse_nodepool(data, doc.describe())
        if settings.name in seen:
            raise InputError(f"{doc.describe()}: metadata.name: a second NodePool named "
                             f"{settings.name!r} (the first is {seen[settings.name].describe()})")
        seen[settings.name] = doc
        out.append(settings)
    return tuple(out)


def _is_fleet(doc: Document) -> bool:
    data = doc.data
    return isinstance(data, dict) and data.get("kind") == KIND and \
        data.get("apiVersion") == API_VERSION


def read_input(docs: Sequence[Document], gates: FeatureGates, *,
               karpenter: bool = False) -> AutoscaleInput:
    """The Fleet and the objects; with ``karpenter``, the NodePools and NodeClaims too
    (otherwise they are objects like any other, which nothing reads). InputError (one line
    naming the file, document and field) for a missing or second Fleet, a bad Fleet,
    NodePool or an invalid object."""
    fleets = [d for d in docs if _is_fleet(d)]
    if len(fleets) != 1:
        where = ", ".join(d.where for d in fleets)
        raise InputError(f"expected one Fleet ({API_VERSION} {KIND}) among the inputs, found "
                         f"{len(fleets)}" + (f" ({where})" if where else ""))
    nodepools = _nodepools([d for d in docs if is_nodepool(d)]) if karpenter else ()
    fleet_doc = fleets[0].data if not nodepools else \
        nodepools_fleet_document(fleets[0].data, nodepools)
    fleet = parse_fleet(fleet_doc, fleets[0].where)
    # NVLink pools whose groups are not whole racks: named by the user's Fleet (the
    # NodePools' copies of its pools would shift the paths).
    warn_groups(parse_fleet(fleets[0].data, fleets[0].where) if nodepools else fleet,
                fleets[0].where)
    claims = read_node_claims([d for d in docs if is_node_claim(d)]) if karpenter else ()
    rest = [d for d in docs if not _is_fleet(d) and not (
        karpenter and (is_nodepool(d) or is_node_claim(d)))]
    problems = validate_documents(rest, gates, stored=True)
    if problems:
        raise InputError(str(problems[0]))
    return AutoscaleInput(fleet, tuple(load_documents(rest)),
                          nodepools[0] if nodepools else None, nodepools, claims)


def cluster_objects(data: AutoscaleInput, seed: int | None = None) -> list[KubeObject]:
    """The Fleet's generated objects (minus the nodes of pools given as Node objects)
    followed by the input objects: what the cluster is built from."""
    given = {pool for o in data.objects if isinstance(o, Node) and (pool := pool_of(o))}
    generated = generate(data.fleet, seed)
    dropped = {n.metadata.name for n in generated.nodes if pool_of(n) in given}
    kept: list[KubeObject] = [*generated.classes]
    kept += [n for n in generated.nodes if n.metadata.name not in dropped]
    kept += [s for s in generated.slices if s.spec.node_name not in dropped]
    return [*kept, *data.objects]
