"""What the pilot plan must say besides the pilot: capacity short of demand, workloads no
pool serves, and workloads dralab cannot convert that run on a pool.

* Shortfall: the pilot's workloads, all their pods at once, against what the pool
  advertises: whole GPUs (``nvidia.com/gpu``, else the physical count where the device
  plugin is gone), time-sliced replicas (where advertised as ``nvidia.com/gpu.shared``),
  and MIG devices by profile. Pods beyond it
  wait in both models; the simulation shows who.
* Unserved: a GPU workload of the dump (not a pod a controller made and bound, not a
  template such as a TrainingRuntime) that lands on no pool, with why: another GPU
  model or labels no node has, an untolerated taint, too few GPUs or no such MIG
  profile on a node.
* Unconvertible: a workload of class ``unsupported`` that lands on a pool; moving that
  pool to DRA leaves it without GPUs.

Pure: the dump's pools and inventory in, lines out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .check import may_land, tolerated
from .demand import GPU, SHARED, PodGpuDemand, is_shared
from .inventory import InventoryEntry
from .podsets import at_path
from .pools import GpuPool

__all__ = ["shortfall", "unconvertible", "unserved"]


def _ask(entries: Iterable[InventoryEntry]) -> tuple[int, int, dict[str, int]]:
    gpus = shared = 0
    mig: dict[str, int] = {}
    for entry in entries:
        for pod_set, demand in entry.pod_sets():
            n = pod_set.pods or 0
            if is_shared(demand):  # time-sliced: its nvidia.com/gpu are replicas, not GPUs
                shared += n * (demand.per_pod("gpus") + demand.per_pod("shared"))
            else:
                gpus += n * demand.per_pod("gpus")
            for container in demand.containers:
                for profile, count in container.mig:
                    key = profile.replace("+", ".")
                    mig[key] = mig.get(key, 0) + n * count
    return gpus, shared, mig


def shortfall(pool: GpuPool, entries: list[InventoryEntry]) -> list[str]:
    """One line per kind of device the entries ask more of than the pool advertises."""
    gpus, shared, mig = _ask(entries)
    has_gpus = sum(n.device_plugin.get(GPU, 0) or (0 if any(
        r.startswith("nvidia.com/mig-") for r in n.device_plugin) else n.physical_gpus)
        for n in pool.nodes)
    has_shared = sum(n.device_plugin.get(SHARED, 0) for n in pool.nodes)
    out = []
    if gpus > has_gpus:
        out.append(f"{gpus} whole GPU(s) asked, {has_gpus} in the pool: {gpus - has_gpus} short")
    # Time-sliced replicas are counted only where the device plugin names them apart
    # (nvidia.com/gpu.shared); otherwise their number per GPU is not in the dump.
    if has_shared and shared > has_shared:
        out.append(f"{shared} time-sliced GPU replica(s) asked, {has_shared} in the pool: "
                   f"{shared - has_shared} short")
    for profile in sorted(mig):
        have = pool.mig_profiles.get(profile, 0)
        if mig[profile] > have:
            out.append(f"{mig[profile]} MIG {profile} device(s) asked, {have} in the pool: "
                       f"{mig[profile] - have} short")
    return out


def _why_nowhere(entry: InventoryEntry, pools: list[GpuPool]) -> str:
    nodes = [n for p in pools for n in p.nodes]
    reasons = []
    for pod_set, demand in entry.pod_sets():
        spec = at_path(entry.document.data, pod_set.spec_path)
        if not demand.gpu_containers or not isinstance(spec, Mapping):
            continue
        labelled = [n for n in nodes if may_land(spec, n.labels)]
        tolerant = [n for n in labelled if tolerated(spec, n.taints)]
        if not labelled:
            wanted = _selectors(spec)
            reasons.append("no GPU node matches its node selector or affinity"
                           + (f" ({wanted})" if wanted else ""))
        elif not tolerant:
            reasons.append("the GPU nodes its selectors allow have taints it does not tolerate")
        else:
            reasons.append(f"no node it may use has {_shape(demand)}")
    return "; ".join(dict.fromkeys(reasons)) or "no pod set asks for GPUs a node has"


def _shape(demand: PodGpuDemand) -> str:
    parts = []
    if demand.per_pod("gpus"):
        parts.append(f"{demand.per_pod('gpus')} GPU(s)")
    if demand.per_pod("shared"):
        parts.append(f"{demand.per_pod('shared')} time-sliced replica(s)")
    parts += [f"MIG {p}" for p in demand.profiles]
    return " and ".join(parts) + " for one pod"


def _selectors(spec: Mapping[str, Any]) -> str:
    """The pod spec's node selector and required affinity, as ``key=value`` and
    ``key Op values`` (all labels, not only GPU ones: a cloud's accelerator label counts)."""
    selector = spec.get("nodeSelector")
    parts = [f"{k}={v}" for k, v in (selector.items() if isinstance(selector, Mapping) else ())]
    terms = at_path(spec, ("affinity", "nodeAffinity",
                           "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"))
    for term in terms if isinstance(terms, list) else []:
        for expr in at_path(term, ("matchExpressions",)) or []:
            if isinstance(expr, Mapping):
                values = ",".join(str(v) for v in expr.get("values") or [])
                parts.append(f"{expr.get('key')} {expr.get('operator')} {values}".rstrip())
    return "; ".join(parts)


def _is_running_pod(entry: InventoryEntry) -> bool:
    return entry.workload.kind == "Pod" and bool(at_path(entry.document.data,
                                                         ("spec", "nodeName")))


def unserved(entries: list[InventoryEntry], pools: list[GpuPool]) -> list[tuple[str, str]]:
    """(``Kind ref (class)``, why) for every GPU workload that lands on no pool."""
    served = {id(w.document) for p in pools for w in p.workloads}
    out = []
    for entry in entries:
        if entry.cls == "cpu-only" or id(entry.document) in served \
                or _is_running_pod(entry) or entry.workload.template_only:
            continue
        w = entry.workload
        why = w.not_convertible if entry.cls == "unsupported" and not w.pod_sets \
            else _why_nowhere(entry, pools)
        out.append((f"{w.kind} {w.ref} ({entry.cls})", why))
    return out


def unconvertible(pool: GpuPool) -> list[str]:
    """``Kind ref`` of the workloads of ``pool`` dralab cannot convert."""
    return [f"{e.workload.kind} {e.workload.ref}" for e in pool.workloads
            if e.cls == "unsupported"]
