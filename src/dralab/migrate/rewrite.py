"""Rewriting one workload document from device-plugin GPUs to DRA claims.

``plan_document`` decides, from the plain document (read with YAML 1.1 rules, as
Kubernetes reads it), what changes: per pod set the pod claims and their needs,
the resources to remove, the GPU-label requirements that become CEL or are
dropped, and what stays and why. ``apply_edits`` carries those changes out on
any mutable mapping tree with the same structure: the plain document itself
(JSON output, verification) or a round-trip YAML tree that keeps comments and
key order (``roundtrip``). Paths are structural, so both agree.

Per container and GPU resource one pod claim: ``gpu`` (``mig-<profile>``,
``gpu-share``) or, when several containers hold GPUs, ``<container>-gpu``. A
CPU-only pod set is left alone; a document of a kind dralab does not read is
reported when a container of it asks for NVIDIA resources (``otherkinds``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from .demand import PodGpuDemand, is_shared, pod_demand
from .gpulabels import LabelRequirement, Translation, translate
from .otherkinds import is_unsupported_workload, unknown_workload
from .podsets import ManifestWorkload, PathKey, PodSet, at_path, path_text, workload_of
from .shapes import DeviceNeed, TemplateNames

__all__ = ["ClaimEdit", "DocumentPlan", "PodSetEdit", "apply_edits", "plan_document"]

_LABEL = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True, slots=True)
class ClaimEdit:
    """One pod claim: its name, the template, the container using it and what it holds."""

    claim: str
    template: str
    container: tuple[PathKey, ...]
    container_name: str
    need: DeviceNeed
    removed: tuple[str, ...]


@dataclass(slots=True)
class PodSetEdit:
    pod_set: PodSet
    claims: list[ClaimEdit] = field(default_factory=list)
    selector_keys: list[str] = field(default_factory=list)       # nodeSelector keys to drop
    affinity_exprs: list[tuple[int, int]] = field(default_factory=list)  # (term, expr) to drop
    translated: list[tuple[str, str]] = field(default_factory=list)  # (requirement, CEL|dropped)
    kept: list[str] = field(default_factory=list)                # requirements left, with why
    # (mapping path in the document, key, value) set beside the claims (PodSet.gpu_count_param)
    params: list[tuple[tuple[PathKey, ...], str, str]] = field(default_factory=list)


@dataclass(slots=True)
class DocumentPlan:
    """What converting one document does: ``edits`` (empty: nothing to convert) and
    ``problems`` (why it, or part of it, cannot be converted; then nothing is changed)."""

    workload: ManifestWorkload | None
    edits: list[PodSetEdit] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def changes(self) -> bool:
        return bool(self.edits) and not self.problems


def _claim_base(resource_kind: str, profile: str) -> str:
    if resource_kind == "mig":
        return "mig-" + _LABEL.sub("-", profile.lower()).strip("-")
    return "gpu-share" if resource_kind == "share" else "gpu"


def _needs(demand: PodGpuDemand, shared: bool, share_memory: str
           ) -> tuple[list[tuple[Any, str, DeviceNeed, tuple[str, ...]]], list[str]]:
    """(container, claim base, need, removed resources) per GPU resource; problems."""
    out = []
    problems = []
    for c in demand.containers:
        problems += [f"container {c.name}: {p}" for p in c.problems]
        whole = c.gpus + c.shared
        if whole:
            removed = tuple(r for r in c.resources if not r.startswith("nvidia.com/mig-"))
            if shared:
                if whole > 1:
                    problems.append(f"container {c.name}: {whole} time-sliced GPUs: a DRA "
                                    "share is one device; convert by hand")
                    continue
                out.append((c, "share", DeviceNeed("share", memory=share_memory), removed))
            else:
                out.append((c, "gpu", DeviceNeed("gpu", count=whole), removed))
        for profile, n in c.mig:
            out.append((c, "mig", DeviceNeed("mig", count=n, profile=profile),
                        (f"nvidia.com/mig-{profile.replace('+', '.')}",)))
    return out, problems


def _translations(reqs: list[LabelRequirement], types: set[str]
                  ) -> list[tuple[LabelRequirement, list[Translation]]]:
    return [(r, [translate(r, t) for t in sorted(types)]) for r in reqs]


def _plan_pod_set(doc: Any, pod_set: PodSet, demand: PodGpuDemand, namespace: str | None,
                  names: TemplateNames, share_memory: str) -> tuple[PodSetEdit | None, list[str]]:
    needs, problems = _needs(demand, is_shared(demand), share_memory)
    if problems or not needs:
        return None, problems
    edit = PodSetEdit(pod_set)
    types = {n.type for _, _, n, _ in needs}
    selectors: list[str] = []
    product = ""
    # nodeSelector entries and the one required term's expressions can move into the claim;
    # several terms are ORed, which one claim cannot say: those stay.
    movable: list[tuple[LabelRequirement, tuple[str, str | tuple[int, int]]]] = [
        (r, ("selector", r.key)) for r in demand.selector]
    if demand.affinity_terms == 1:
        movable += [(r, ("affinity", (t, e))) for t, e, r in demand.affinity]
    else:
        edit.kept += [f"{r.text()}: kept (one of {demand.affinity_terms} ORed nodeSelectorTerms)"
                      for _, _, r in demand.affinity]
    for (req, (where, key)), (_, results) in zip(
            movable, _translations([r for r, _ in movable], types), strict=True):
        kept = [t for t in results if t.kept]
        if kept:
            edit.kept.append(kept[0].reason)
            continue
        cel = next((t.cel for t in results if t.cel), None)
        if cel is not None:
            selectors.append(cel)
            if req.key == "nvidia.com/gpu.product" and req.operator == "In" \
                    and len(req.values) == 1:
                product = req.values[0]
        edit.translated.append((req.text(), cel or "dropped (implied by the claim)"))
        if where == "selector":
            edit.selector_keys.append(str(key))
        else:
            assert isinstance(key, tuple)
            edit.affinity_exprs.append(key)
    edit.kept += [f"{r.text()}: preferred affinity kept (a claim can prefer devices with "
                  "firstAvailable)" for r in demand.preferred]
    spec = at_path(doc, pod_set.spec_path)
    taken = {str(c.get("name")) for c in (spec.get("resourceClaims") or [])
             if isinstance(c, Mapping)} if isinstance(spec, Mapping) else set()
    several = len({id(c) for c, _, _, _ in needs}) > 1
    for container, base, need, removed in needs:
        need = DeviceNeed(need.type, need.count, need.profile, need.memory, tuple(selectors),
                          product)
        claim = _claim_base(base, need.profile)
        if several:
            claim = f"{_LABEL.sub('-', container.name.lower()).strip('-')}-{claim}"[:63]
        name, n = claim, 2
        while name in taken:
            name = f"{claim[:59]}-{n}"
            n += 1
        taken.add(name)
        edit.claims.append(ClaimEdit(name, names.name(namespace, need), container.path,
                                     container.name, need, removed))
    if pod_set.gpu_count_param is not None and demand.per_pod("gpus"):
        param_path, param = pod_set.gpu_count_param
        params = at_path(doc, param_path)
        if not (isinstance(params, Mapping) and param in params):
            edit.params.append((param_path, param, str(demand.per_pod("gpus"))))
    return edit, []


def plan_document(doc: Any, names: TemplateNames, share_memory: str = "8Gi") -> DocumentPlan:
    """The conversion of one plain document (see the module doc)."""
    workload = workload_of(doc)
    if workload is None:
        if is_unsupported_workload(doc):
            return DocumentPlan(None, problems=[unknown_workload(doc).not_convertible])
        return DocumentPlan(None)
    if workload.not_convertible:
        uses = any(pod_demand(doc, p).uses_gpus for p in workload.pod_sets)
        return DocumentPlan(workload, problems=[workload.not_convertible] if uses else [])
    plan = DocumentPlan(workload)
    for pod_set in workload.pod_sets:
        demand = pod_demand(doc, pod_set)
        edit, problems = _plan_pod_set(doc, pod_set, demand, workload.namespace, names,
                                       share_memory)
        where = path_text(pod_set.spec_path)
        plan.problems += [f"{where}: {p}" for p in problems]
        if edit is not None:
            plan.edits.append(edit)
    if plan.problems:
        plan.edits = []
    return plan


# --- carrying the edits out -------------------------------------------------------------------

def _mapping(tree: Any, path: tuple[PathKey, ...]) -> MutableMapping[Any, Any]:
    node = at_path(tree, path)
    if not isinstance(node, MutableMapping):
        raise ValueError(f"{path_text(path)}: not a mapping in the document being written")
    return node


def _drop_if_empty(parent: MutableMapping[Any, Any], key: str) -> None:
    value = parent.get(key)
    if isinstance(value, Mapping | list) and not value:
        del parent[key]


def _edit_affinity(spec: MutableMapping[Any, Any], exprs: list[tuple[int, int]]) -> None:
    node = _mapping(spec, ("affinity", "nodeAffinity"))
    required = _mapping(node, ("requiredDuringSchedulingIgnoredDuringExecution",))
    terms = required["nodeSelectorTerms"]
    for t, e in sorted(exprs, reverse=True):
        del terms[t]["matchExpressions"][e]
    for term in terms:
        _drop_if_empty(term, "matchExpressions")
    # An empty term matches no node: a term left empty means "no requirement" here.
    if all(not term for term in terms):
        del node["requiredDuringSchedulingIgnoredDuringExecution"]
    _drop_if_empty(spec["affinity"], "nodeAffinity")
    _drop_if_empty(spec, "affinity")


def apply_edits(tree: Any, plan: DocumentPlan, new_map: Any = dict, new_seq: Any = list,
                text: Any = str) -> None:
    """Carry ``plan`` out on ``tree`` (a mapping with the plain document's structure).
    ``new_map``/``new_seq``/``text`` make the values inserted (round-trip types for YAML)."""
    for edit in plan.edits:
        spec = _mapping(tree, edit.pod_set.spec_path)
        for claim in edit.claims:
            container = _mapping(spec, claim.container)
            resources = container.get("resources")
            if not isinstance(resources, MutableMapping):
                resources = container["resources"] = new_map()
            for section in ("limits", "requests"):
                values = resources.get(section)
                if isinstance(values, MutableMapping):
                    for name in claim.removed:
                        values.pop(name, None)
                    _drop_if_empty(resources, section)
            if not isinstance(resources.get("claims"), list):
                resources["claims"] = new_seq()
            entry = new_map()
            entry["name"] = text(claim.claim)
            resources["claims"].append(entry)
        if not isinstance(spec.get("resourceClaims"), list):
            spec["resourceClaims"] = new_seq()
        for claim in edit.claims:
            entry = new_map()
            entry["name"] = text(claim.claim)
            entry["resourceClaimTemplateName"] = text(claim.template)
            spec["resourceClaims"].append(entry)
        selector = spec.get("nodeSelector")
        if isinstance(selector, MutableMapping):
            for key in edit.selector_keys:
                selector.pop(key, None)
            _drop_if_empty(spec, "nodeSelector")
        if edit.affinity_exprs:
            _edit_affinity(spec, edit.affinity_exprs)
        for where, key, value in edit.params:
            parent = _mapping(tree, where[:-1])
            if not isinstance(parent.get(where[-1]), MutableMapping):
                parent[where[-1]] = new_map()
            parent[where[-1]][key] = text(value)
