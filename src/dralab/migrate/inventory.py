"""``dralab migrate inventory``: every workload in some manifests, and what it asks of GPUs.

One entry per workload (Pod, the built-in controllers, JobSet, LeaderWorkerSet,
Kubeflow training jobs, KServe InferenceService, and as ``unsupported`` any other
kind with a container asking for NVIDIA resources; Nodes, Namespaces, ResourceSlices
and the other objects of a cluster dump are no workloads: ``otherkinds``), one row
per pod set (role):
pods, containers, GPUs per pod (whole, time-sliced, MIG by profile), the
requirements on GPU node labels, and the workload's class (``demand.CLASSES``).
Rendered as a kubectl-style table, JSON or CSV. Pure apart from rendering.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from dralab.api.io import Document

from .clusterdump import read_dump
from .demand import PodGpuDemand, pod_demand, workload_class
from .otherkinds import is_unsupported_workload, not_workload_kinds, unknown_workload
from .podsets import ManifestWorkload, PodSet, workload_of
from .refusals import refuse_invalid

__all__ = ["InventoryEntry", "inventory", "not_workloads", "render"]


@dataclass(frozen=True, slots=True)
class InventoryEntry:
    """One workload of the input: where it is, its pod sets and their demand, its class."""

    document: Document
    workload: ManifestWorkload
    demands: tuple[PodGpuDemand, ...]
    cls: str

    def pod_sets(self) -> Iterable[tuple[PodSet, PodGpuDemand]]:
        return zip(self.workload.pod_sets, self.demands, strict=True)


def inventory(docs: Iterable[Document]) -> list[InventoryEntry]:
    """The workloads among ``docs``, in input order. ValidationFailed (every problem)
    when one is a workload the API server would refuse."""
    docs = list(docs)
    refuse_invalid(docs)
    out = []
    for doc in docs:
        workload = workload_of(doc.data)
        if workload is None:
            if not is_unsupported_workload(doc.data):
                continue
            workload = unknown_workload(doc.data)  # its pod templates are not where dralab looks
        demands = [pod_demand(doc.data, p) for p in workload.pod_sets]
        out.append(InventoryEntry(doc, workload, tuple(demands),
                                  workload_class(workload, demands)))
    return out


def _mig_text(demand: PodGpuDemand) -> str:
    counts: dict[str, int] = {}
    for container in demand.containers:
        for profile, n in container.mig:
            counts[profile] = counts.get(profile, 0) + n
    return ",".join(f"{p}x{n}" if n > 1 else p for p, n in sorted(counts.items()))


def _row(entry: InventoryEntry, pod_set: PodSet, demand: PodGpuDemand) -> dict[str, Any]:
    w = entry.workload
    return {
        "source": entry.document.where,
        "kind": w.kind,
        "namespace": w.namespace or "",
        "name": w.name,
        "role": pod_set.role,
        "pods": pod_set.pods,
        "containers": [c.name for c in demand.containers],
        "gpuContainers": [c.name for c in demand.gpu_containers],
        "gpusPerPod": demand.per_pod("gpus"),
        "sharedPerPod": demand.per_pod("shared"),
        "mig": _mig_text(demand),
        "gpuSelectors": [r.text() for r in demand.requirements],
        "class": entry.cls,
    }


def rows(entries: Iterable[InventoryEntry]) -> list[dict[str, Any]]:
    """One plain row per pod set (one for a workload whose pod sets are unknown)."""
    out = []
    for e in entries:
        if not e.workload.pod_sets:
            out.append(_row(e, PodSet("", (), None, {}), PodGpuDemand((), (), (), 0)))
        out += [_row(e, p, d) for p, d in e.pod_sets()]
    return out


_PER_NODE = ("DaemonSet",)


def _table(items: list[dict[str, Any]]) -> str:
    header = ("KIND", "NAMESPACE/NAME", "ROLE", "PODS", "CONTAINERS", "GPUS/POD", "MIG",
              "GPU-SELECTORS", "CLASS")
    lines = [header]
    for r in items:
        ref = f"{r['namespace']}/{r['name']}" if r["namespace"] else r["name"]
        gpus = str(r["gpusPerPod"]) + (f"+{r['sharedPerPod']}shared" if r["sharedPerPod"]
                                       else "")
        pods = "per-node" if r["pods"] is None and r["kind"] in _PER_NODE else \
            "-" if r["pods"] is None else str(r["pods"])
        lines.append((r["kind"], ref, r["role"] or "-", pods,
                      ",".join(r["containers"]) or "-", gpus, r["mig"] or "-",
                      ";".join(r["gpuSelectors"]) or "-", r["class"]))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "".join("   ".join(cell.ljust(widths[i]) for i, cell in enumerate(line)).rstrip()
                   + "\n" for line in lines)


def _csv(items: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    fields = list(items[0]) if items else ["source", "kind", "namespace", "name", "role",
                                           "pods", "containers", "gpuContainers",
                                           "gpusPerPod", "sharedPerPod", "mig",
                                           "gpuSelectors", "class"]
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for r in items:
        writer.writerow({k: ";".join(v) if isinstance(v, list) else
                         ("" if v is None else v) for k, v in r.items()})
    return out.getvalue()


def not_workloads(docs: Iterable[Document]) -> str:
    """One line counting the objects that are no workloads, by kind, Nodes with their
    NVIDIA GPUs (``... -A -o yaml`` dumps hold them beside the workloads); "" if none."""
    docs = list(docs)
    counts = not_workload_kinds(docs)
    if not counts:
        return ""
    parts = []
    for kind in sorted(counts):
        part = f"{counts[kind]} {kind}"
        if kind == "Node":
            gpu_nodes = [n for n in read_dump(docs).nodes.values() if n.device_plugin or n.dra]
            if gpu_nodes:
                part += f" ({len(gpu_nodes)} with NVIDIA GPUs: " \
                        f"{sum(n.gpus for n in gpu_nodes)} GPUs)"
        parts.append(part)
    return "not workloads, not listed: " + ", ".join(parts) + "\n"


def _devices(entries: Iterable[InventoryEntry]) -> tuple[int, int, int, dict[str, int]]:
    """(pods, whole GPUs, time-sliced GPUs, MIG devices by profile) the entries' pods hold;
    a pod set of unknown size counts once (the least it can be), a DaemonSet's not at all."""
    pods = gpus = shared = 0
    mig: dict[str, int] = {}
    for entry in entries:
        for pod_set, demand in entry.pod_sets():
            n = 1 if pod_set.pods is None and entry.workload.unknown_pods else pod_set.pods or 0
            pods += n
            gpus += n * demand.per_pod("gpus")
            shared += n * demand.per_pod("shared")
            for container in demand.containers:
                for profile, count in container.mig:
                    mig[profile] = mig.get(profile, 0) + n * count
    return pods, gpus, shared, mig


def _device_text(gpus: int, shared: int, mig: dict[str, int]) -> str:
    parts = [f"{gpus} GPU(s)"]
    if shared:
        parts.append(f"{shared} time-sliced GPU share(s)")
    if mig:
        parts.append(f"{sum(mig.values())} MIG device(s) ("
                     + ", ".join(f"{p} x{n}" for p, n in sorted(mig.items())) + ")")
    return ", ".join(parts)


def totals(entries: list[InventoryEntry]) -> str:
    """The table's last lines: every GPU the pods of the listed workloads ask for, and the
    part dralab cannot convert or that belongs to templates (no pods of their own)."""
    gpu = [e for e in entries if e.cls != "cpu-only"]
    if not gpu:
        return ""
    pods, gpus, shared, mig = _devices(gpu)
    text = f"total: {len(gpu)} GPU workload(s), {pods} pod(s), {_device_text(gpus, shared, mig)}"
    if any(e.workload.pod_sets and all(p.pods is None for p in e.workload.pod_sets)
           and not e.workload.unknown_pods for e in gpu):
        text += " (DaemonSets: per node, not counted)"
    text += "\n"
    for label, part in (("not convertible (class unsupported)",
                         [e for e in gpu if e.cls == "unsupported"]),
                        ("templates, no pods of their own (TrainingRuntime)",
                         [e for e in gpu if e.workload.template_only])):
        if part:
            pods, gpus, shared, mig = _devices(part)
            text += f"  of which {label}: {len(part)} workload(s), {pods} pod(s), " \
                    f"{_device_text(gpus, shared, mig)}\n"
    return text


def render(entries: list[InventoryEntry], output: str, others: str = "") -> str:
    """``table`` (one line per pod set, then the ``totals`` and ``others``: the
    ``not_workloads`` line), ``json`` (a list of rows) or ``csv``; the machine formats
    list workloads only."""
    items = rows(entries)
    if output == "json":
        return msgspec.json.format(msgspec.json.encode(items), indent=2).decode() + "\n"
    if output == "csv":
        return _csv(items)
    return (_table(items) + totals(entries) if items else "no workloads found\n") + others
