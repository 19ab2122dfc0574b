"""``convert --verify``: schedule the workloads before and after conversion, compare pods.

Before: the original workloads' pods (``nvidia.com/gpu``, ``nvidia.com/mig-*``,
GPU-label node selectors) on the device-plugin model of the fleet. After: the
converted pods (claims from the generated templates, CEL selectors) on the DRA
model. Each run schedules all pods of the converted workloads together on an
otherwise empty cluster, with kube-scheduler's default profile; a pod whose
outcome differs (placed in one, pending in the other) is reported with the
scheduler's reason, and so is every pod pending in both runs (the conversion did not
change it, but it does not run either: "0 changed" is no success by itself). Pods
are told apart by workload kind, namespace and name: a StatefulSet and a Pod both
named ``x`` make different pods (the later one's generated name gets its kind). Pods
are placed one by one: gang semantics (all pods of a multi-node job or none) are not
modelled. Deterministic for a seed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dralab.api.base import KubeObject
from dralab.api.io import Document, load_documents
from dralab.scheduler import ScheduleResult, schedule

from .convert import Conversion
from .models import ClusterModels, load_models
from .pods import workload_pods
from .podsets import workload_of

__all__ = ["PodOutcome", "Verification", "render_verification", "verify", "verify_models"]

_KIND = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True, slots=True)
class PodOutcome:
    pod: str                 # namespace/name (unique in the run)
    workload: str            # Kind namespace/name
    before: str              # node, or "pending: <reason>"
    after: str

    @property
    def placed_before(self) -> bool:
        return not self.before.startswith("pending")

    @property
    def placed_after(self) -> bool:
        return not self.after.startswith("pending")

    @property
    def changed(self) -> bool:
        return self.placed_before != self.placed_after

    @property
    def pending_both(self) -> bool:
        return not self.placed_before and not self.placed_after


@dataclass(slots=True)
class Verification:
    source: str
    pods: list[PodOutcome] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def changed(self) -> list[PodOutcome]:
        return [p for p in self.pods if p.changed]

    @property
    def pending_both(self) -> list[PodOutcome]:
        return [p for p in self.pods if p.pending_both]


def _outcomes(result: ScheduleResult) -> dict[str, str]:
    out = {}
    for placed in result.placed:
        meta = placed.pod.metadata
        out[f"{meta.namespace}/{meta.name}"] = placed.node
    for item in result.unplaced:
        meta = item.pod.metadata
        # The first sentence says why; the rest is the preemption post-mortem.
        message = (item.message or item.reason).split(". ", 1)[0]
        out[f"{meta.namespace}/{meta.name}"] = f"pending: {message}"
    return out


def _objects(pods: list[dict[str, Any]], source: str) -> list[KubeObject]:
    return load_documents([Document(source, i + 1, p) for i, p in enumerate(pods)])


def _unique(pods: list[dict[str, Any]], taken: set[tuple[str, str]], kind: str
            ) -> list[tuple[str, str]]:
    """(namespace, name) for each pod, unique among ``taken`` (which it extends): a name
    another workload's pod holds gets the kind, then a number (names of 63 at most)."""
    out = []
    for pod in pods:
        meta = pod["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        base, n = name, 2
        if (namespace, name) in taken:
            base = name = f"{name[:50]}-{_KIND.sub('-', kind.lower())}"[:63]
        while (namespace, name) in taken:
            name = f"{base[:58]}-{n}"
            n += 1
        taken.add((namespace, name))
        out.append((namespace, name))
    return out


def _renamed(pods: list[dict[str, Any]], names: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [{**p, "metadata": {**p["metadata"], "name": name}}
            for p, (_, name) in zip(pods, names, strict=True)]


def verify_models(conversion: Conversion, models: ClusterModels, seed: int = 0) -> Verification:
    """Schedule the converted workloads' pods before and after on ``models``."""
    report = Verification(models.source)
    before: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    owners: dict[str, str] = {}
    taken: set[tuple[str, str]] = set()
    for f in conversion.files:
        for doc, plan, converted in zip(f.documents, f.plans, f.converted, strict=True):
            if not plan.changes or plan.workload is None:
                continue
            workload = plan.workload
            label = f"{workload.kind} {workload.ref}"
            if any(p.pods is None for p in workload.pod_sets):
                report.skipped.append(f"{label}: one pod per node (DaemonSet), not verified")
            old = workload_pods(doc.data, workload)
            new_workload = workload_of(converted)
            new = workload_pods(converted, new_workload) if new_workload else []
            # The conversion keeps pod sets and counts: pod i before is pod i after.
            names = _unique(old, taken, workload.kind)
            before += _renamed(old, names)
            after += _renamed(new, names) if len(new) == len(old) else new
            for namespace, name in names:
                owners[f"{namespace}/{name}"] = label
    plugin = schedule([*models.objects("device-plugin"), *_objects(before, "<before>")],
                      seed=seed)
    dra = schedule([*models.objects("dra"), *conversion.templates,
                    *_objects(after, "<after>")], seed=seed)
    was, now = _outcomes(plugin), _outcomes(dra)
    for pod in sorted(owners):
        report.pods.append(PodOutcome(pod, owners[pod], was.get(pod, "pending: not created"),
                                      now.get(pod, "pending: not created")))
    return report


def verify(conversion: Conversion, fleet_or_dump: str, seed: int = 0) -> Verification:
    return verify_models(conversion, load_models(fleet_or_dump, seed), seed)


def _pod_lines(pods: list[PodOutcome], header: str, text: Callable[[PodOutcome], str]
               ) -> list[str]:
    width = [max(len(x) for x in ("WORKLOAD", *(p.workload for p in pods))),
             max(len(x) for x in ("POD", *(p.pod for p in pods)))]
    out = [f"    {'WORKLOAD'.ljust(width[0])}   {'POD'.ljust(width[1])}   {header}"]
    out += [f"    {p.workload.ljust(width[0])}   {p.pod.ljust(width[1])}   {text(p)}"
            for p in pods]
    return out


def render_verification(report: Verification) -> str:
    """One line per pod whose feasibility changed, then a count."""
    lines = [f"verify on {report.source}: {len(report.pods)} pod(s) scheduled before "
             "(device plugin) and after (DRA)"]
    for skipped in report.skipped:
        lines.append(f"  skipped: {skipped}")
    changed, pending = report.changed, report.pending_both
    if changed:
        lines.append("  changed feasibility:")
        lines += _pod_lines(changed, "BEFORE -> AFTER",
                            lambda p: f"{p.before} -> {p.after}")
    if pending:
        lines.append("  pending in both models (not running either way: the fleet has no "
                     "room or no match):")
        lines += _pod_lines(pending, "REASON (DRA)", lambda p: p.after.removeprefix("pending: "))
    placed = (sum(p.placed_before for p in report.pods), sum(p.placed_after for p in report.pods))
    lines.append(f"placed {placed[0]} before, {placed[1]} after; {len(changed)} pod(s) changed "
                 f"feasibility, {len(pending)} pending in both")
    return "\n".join(lines) + "\n"
