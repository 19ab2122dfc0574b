"""What a ComputeDomain's pods look like across NVLink domains (issue 36).

Upstream (NVIDIA's k8s-dra-driver-gpu at 22407113785e78c7763b4637689a201eb39c6199
plus kube-scheduler) gives a ComputeDomain's workload channel claim no node
constraint: kube-scheduler places the pods one by one, and a job can land in
several NVLink domains (cliques, the ``nvidia.com/gpu.clique`` node label) unless
its pods carry required pod affinity on that label. dralab places them the same
way and says so: these helpers turn a scheduling run into the lines
``dralab explain pod`` prints for a pod of a ComputeDomain.

A ComputeDomain is read from its document (``resource.nvidia.com`` kind
ComputeDomain): ``spec.numNodes`` and ``spec.channel.resourceClaimTemplate.name``.
A pod belongs to it when one of its claims comes from that template, or when it
carries the ``resource.nvidia.com/computeDomain`` label naming it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dralab.api.nvlink import (
    CLIQUE_LABEL,
    COMPUTE_DOMAIN_GROUP,
    COMPUTE_DOMAIN_KIND,
    COMPUTE_DOMAIN_LABEL,
    clique_of,
)

__all__ = ["ComputeDomainRef", "DomainRoom", "compute_domains", "domain_of", "notes",
           "room_by_domain", "span"]


@dataclass(frozen=True, slots=True)
class ComputeDomainRef:
    namespace: str
    name: str
    uid: str | None
    num_nodes: int
    template: str | None  # the channel ResourceClaimTemplate's name

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def _document(obj: Any) -> Mapping[str, Any] | None:
    raw = getattr(obj, "raw", None)
    if isinstance(raw, Mapping):
        return raw
    return None


def compute_domains(objects: Iterable[Any]) -> list[ComputeDomainRef]:
    """The ComputeDomains among ``objects``, in input order: read from the document
    they were decoded from (typed or not), else from a typed object's fields.
    Ill-shaped fields read as absent: validating them is the object reader's job."""
    out = []
    for obj in objects:
        doc = _document(obj)
        if doc is None:
            typed = _typed(obj)
            if typed is not None:
                out.append(typed)
            continue
        if doc.get("kind") != COMPUTE_DOMAIN_KIND:
            continue
        if not str(doc.get("apiVersion", "")).startswith(COMPUTE_DOMAIN_GROUP + "/"):
            continue
        meta = doc.get("metadata") or {}
        spec = doc.get("spec") or {}
        channel = spec.get("channel") or {}
        rct = channel.get("resourceClaimTemplate") or {}
        num = spec.get("numNodes")
        out.append(ComputeDomainRef(
            str(meta.get("namespace") or "default"), str(meta.get("name") or ""),
            meta.get("uid"), num if isinstance(num, int) and num >= 0 else 0,
            rct.get("name") if isinstance(rct.get("name"), str) else None))
    return out


def _typed(obj: Any) -> ComputeDomainRef | None:
    """A ComputeDomain object built in code (no document): its own properties."""
    if getattr(type(obj), "KIND", None) != COMPUTE_DOMAIN_KIND:
        return None
    meta = obj.metadata
    return ComputeDomainRef(meta.namespace or "default", meta.name or "", meta.uid,
                            int(getattr(obj, "num_nodes", 0) or 0),
                            getattr(obj, "template_name", None) or None)


def domain_of(pod: Any, domains: Sequence[ComputeDomainRef]) -> ComputeDomainRef | None:
    """The ComputeDomain whose channel template one of the pod's claims uses (or whose
    name or uid the pod's computeDomain label names), None when none does."""
    namespace = pod.metadata.namespace or "default"
    templates = {c.resource_claim_template_name for c in pod.spec.resource_claims
                 if c.resource_claim_template_name}
    label = pod.metadata.labels.get(COMPUTE_DOMAIN_LABEL)
    for cd in domains:
        if cd.namespace != namespace:
            continue
        if (cd.template and cd.template in templates) or (
                label and label in (cd.name, cd.uid)):
            return cd
    return None


def span(placed: Iterable[tuple[Any, str]], cd: ComputeDomainRef,
         domains: Sequence[ComputeDomainRef],
         node_labels: Mapping[str, Mapping[str, str]]) -> dict[str, list[str]]:
    """NVLink domain -> nodes holding the ComputeDomain's placed pods (``placed``:
    pod, node pairs). A node without the clique label counts as its own domain
    ``(no clique: <node>)``: it shares NVLink with no other node."""
    out: dict[str, list[str]] = {}
    for pod, node in placed:
        if domain_of(pod, domains) != cd:
            continue
        clique = clique_of(node_labels.get(node, {})) or f"(no clique: {node})"
        nodes = out.setdefault(clique, [])
        if node not in nodes:
            nodes.append(node)
    return out


@dataclass(frozen=True, slots=True)
class DomainRoom:
    clique: str
    nodes: int  # nodes of the domain where the pod fits now, or holding a sibling


def room_by_domain(fitting: Iterable[str], used: Mapping[str, Sequence[str]],
                   node_labels: Mapping[str, Mapping[str, str]]) -> list[DomainRoom]:
    """Per NVLink domain, the nodes the ComputeDomain could have there: nodes where
    the pod fits (Filter passed) plus nodes already holding its pods. Largest first,
    then clique name (deterministic). Nodes without the clique label are left out:
    they are no multi-node NVLink domain."""
    per: dict[str, set[str]] = {}
    for node in fitting:
        clique = clique_of(node_labels.get(node, {}))
        if clique is not None:
            per.setdefault(clique, set()).add(node)
    for clique, nodes in used.items():
        if not clique.startswith("(no clique"):
            per.setdefault(clique, set()).update(nodes)
    rooms = [DomainRoom(c, len(n)) for c, n in per.items()]
    return sorted(rooms, key=lambda r: (-r.nodes, r.clique))


def notes(pod: Any, placed_on: str | None, fitting: Iterable[str],
          domains: Sequence[ComputeDomainRef], placed: Sequence[tuple[Any, str]],
          node_labels: Mapping[str, Mapping[str, str]]) -> tuple[str, ...]:
    """The lines ``dralab explain pod`` adds for a pod of a ComputeDomain (empty for
    any other pod): how many NVLink domains the domain's placed pods span and, for
    a pod left pending, whether one domain has room for all of it."""
    cd = domain_of(pod, domains)
    if cd is None:
        return ()
    used = span(placed, cd, domains, node_labels)
    count = sum(len(n) for n in used.values())
    lines = [f"ComputeDomain {cd.key} (numNodes {cd.num_nodes}): its placed pods span "
             f"{len(used)} NVLink domain(s) on {count} node(s)"
             + (": " + "; ".join(f"{c}: {', '.join(n)}" for c, n in sorted(used.items()))
                if used else "")]
    if len(used) > 1:
        lines.append(f"  kube-scheduler places the pods one by one: without required pod "
                     f"affinity on {CLIQUE_LABEL} a ComputeDomain can span NVLink domains")
    if placed_on is None and cd.num_nodes > 0:
        rooms = room_by_domain(fitting, used, node_labels)
        largest = rooms[0].nodes if rooms else 0
        where = f" ({rooms[0].clique})" if rooms else ""
        lines.append(f"  needs {cd.num_nodes} nodes in one NVLink domain; the largest free "
                     f"domain has {largest}{where}")
    return tuple(lines)
