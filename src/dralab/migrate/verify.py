"""``convert --verify``: schedule the workloads before and after conversion, compare pods.

Before: the original workloads' pods (``nvidia.com/gpu``, ``nvidia.com/mig-*``,
GPU-label node selectors) on the device-plugin model of the fleet. After: the
converted pods (claims from the generated templates, CEL selectors) on the DRA
model. Each run schedules all pods of the converted workloads together on an
otherwise empty cluster, with kube-scheduler's default profile; a pod whose
outcome differs (placed in one, pending in the other) is reported with the
scheduler's reason. Pods are placed one by one: gang semantics (all pods of a
multi-node job or none) are not modelled. Deterministic for a seed.
"""

from __future__ import annotations

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


@dataclass(frozen=True, slots=True)
class PodOutcome:
    pod: str                 # namespace/name
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


@dataclass(slots=True)
class Verification:
    source: str
    pods: list[PodOutcome] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def changed(self) -> list[PodOutcome]:
        return [p for p in self.pods if p.changed]


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


def verify_models(conversion: Conversion, models: ClusterModels, seed: int = 0) -> Verification:
    """Schedule the converted workloads' pods before and after on ``models``."""
    report = Verification(models.source)
    before: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    owners: dict[str, str] = {}
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
            before += old
            after += new
            for old_pod in old:
                meta = old_pod["metadata"]
                owners[f"{meta['namespace']}/{meta['name']}"] = label
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


def render_verification(report: Verification) -> str:
    """One line per pod whose feasibility changed, then a count."""
    lines = [f"verify on {report.source}: {len(report.pods)} pod(s) scheduled before "
             "(device plugin) and after (DRA)"]
    for skipped in report.skipped:
        lines.append(f"  skipped: {skipped}")
    changed = report.changed
    if changed:
        width = max(len(p.pod) for p in changed)
        lines.append(f"  {'POD'.ljust(width)}   BEFORE -> AFTER")
        for p in changed:
            lines.append(f"  {p.pod.ljust(width)}   {p.before} -> {p.after}")
    placed = (sum(p.placed_before for p in report.pods), sum(p.placed_after for p in report.pods))
    lines.append(f"placed {placed[0]} before, {placed[1]} after; {len(changed)} pod(s) changed "
                 "feasibility")
    return "\n".join(lines) + "\n"
