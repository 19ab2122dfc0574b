"""``dralab migrate check``: the double-advertising trap, found in a cluster dump.

A node whose GPUs are advertised by the NVIDIA device plugin (allocatable
``nvidia.com/gpu``) and published by the NVIDIA DRA driver (ResourceSlices of
``gpu.nvidia.com`` in the node's pool) has every GPU counted twice: the
scheduler can give GPU 0 to a pod through ``nvidia.com/gpu: 1`` and the same GPU
to a claim, and neither kubelet path knows of the other (NVIDIA aicr #332,
ai-dynamo #13536, KAI-Scheduler #1177). Found here: such nodes; whether what is
allocated through both paths already exceeds the GPUs present; the pods holding
GPUs there; and the workloads that can land there (their node selector and
required node affinity allow it) through either path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .clusterdump import ClusterDump, DumpNodeGpus
from .demand import pod_demand
from .podsets import at_path, workload_of
from .poolnames import pool_names
from .refusals import refuse_invalid

__all__ = ["CheckResult", "NodeFinding", "WorkloadRisk", "check_dump", "render_check"]


@dataclass(frozen=True, slots=True)
class NodeFinding:
    node: str
    pool: str
    device_plugin: dict[str, int]
    dra: dict[str, int]
    physical_gpus: int
    allocated_plugin: int
    allocated_dra: int
    pods: tuple[str, ...]

    @property
    def overcommitted(self) -> bool:
        return self.allocated_plugin + self.allocated_dra > self.physical_gpus


@dataclass(frozen=True, slots=True)
class WorkloadRisk:
    kind: str
    name: str
    path: str              # device-plugin | dra
    nodes: tuple[str, ...]


@dataclass(slots=True)
class CheckResult:
    nodes: list[NodeFinding] = field(default_factory=list)
    workloads: list[WorkloadRisk] = field(default_factory=list)
    extended_classes: dict[str, str] = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return bool(self.nodes)


def _matches(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op = str(expr.get("key")), expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    if op == "In":
        return labels.get(key) in values
    if op == "NotIn":
        return labels.get(key) not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    return True  # Gt/Lt and unknown operators: assume it may match (the finding errs safe)


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    if toleration.get("effect") not in (None, "", taint.get("effect")):
        return False
    if toleration.get("key") in (None, ""):
        return toleration.get("operator") == "Exists"
    if toleration.get("key") != taint.get("key"):
        return False
    return toleration.get("operator") == "Exists" or \
        str(toleration.get("value", "")) == str(taint.get("value", ""))


def tolerated(spec: Mapping[str, Any], taints: list[Mapping[str, Any]]) -> bool:
    """Whether the pod spec tolerates every NoSchedule/NoExecute taint of a node."""
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, Mapping)]
    return all(any(_tolerates(t, taint) for t in tolerations) for taint in taints
               if taint.get("effect") in ("NoSchedule", "NoExecute"))


def may_land(spec: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether a pod spec's nodeSelector and required node affinity allow a node."""
    selector = spec.get("nodeSelector")
    if isinstance(selector, Mapping) and any(labels.get(str(k)) != str(v)
                                             for k, v in selector.items()):
        return False
    terms = at_path(spec, ("affinity", "nodeAffinity",
                           "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"))
    if isinstance(terms, list) and terms:
        return any(isinstance(t, Mapping) and all(
            _matches(e, labels) for e in t.get("matchExpressions") or []
            if isinstance(e, Mapping)) for t in terms)
    return True


def _finding(node: DumpNodeGpus, pool: str) -> NodeFinding:
    plugin, dra = node.allocated()
    return NodeFinding(node.name, pool, dict(node.device_plugin), dict(node.dra),
                       node.physical_gpus, plugin, dra,
                       tuple(sorted(f"{p.ref}" for p in node.pods)))


def check_dump(dump: ClusterDump) -> CheckResult:
    """Double-advertising nodes and the workloads at risk (see the module doc).

    ValidationFailed (every problem) when a workload of the dump is one the API server
    would refuse."""
    refuse_invalid(dump.documents)
    flagged = [n for n in sorted(dump.nodes.values(), key=lambda n: n.name)
               if n.double_advertised]
    # Pools by the names `migrate plan` gives them (DNS labels of the pool label values).
    names = pool_names(n.pool for n in dump.nodes.values() if n.device_plugin or n.dra)
    result = CheckResult([_finding(n, names[n.pool]) for n in flagged], [],
                         dict(dump.extended_classes))
    if not flagged:
        return result
    for doc in dump.documents:
        workload = workload_of(doc.data)
        if workload is None or (workload.kind == "Pod" and at_path(doc.data, ("spec", "nodeName"))):
            continue  # bound pods are listed per node
        for pod_set in workload.pod_sets:
            spec = at_path(doc.data, pod_set.spec_path)
            if not isinstance(spec, Mapping):
                continue
            demand = pod_demand(doc.data, pod_set)
            paths = []
            if demand.gpu_containers:
                paths.append("device-plugin")
            if spec.get("resourceClaims"):
                paths.append("dra")
            nodes = tuple(n.name for n in flagged if may_land(spec, n.labels)
                          and tolerated(spec, n.taints)
                          and demand.per_pod("gpus") <= n.physical_gpus)
            for path in paths:
                risk = WorkloadRisk(workload.kind, workload.ref, path, nodes)
                if nodes and risk not in result.workloads:
                    result.workloads.append(risk)
    return result


def _counts(values: Mapping[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(values.items())) or "-"


def render_check(result: CheckResult, output: str) -> str:
    """A table (nodes, then workloads) or JSON."""
    if output == "json":
        data = {"doubleAdvertisedNodes": [
            {"node": n.node, "pool": n.pool, "devicePlugin": n.device_plugin, "dra": n.dra,
             "physicalGPUs": n.physical_gpus, "allocatedDevicePlugin": n.allocated_plugin,
             "allocatedDRA": n.allocated_dra, "overcommitted": n.overcommitted,
             "pods": list(n.pods)} for n in result.nodes],
            "workloadsAtRisk": [{"kind": w.kind, "name": w.name, "path": w.path,
                                 "nodes": list(w.nodes)} for w in result.workloads]}
        return msgspec.json.format(msgspec.json.encode(data), indent=2).decode() + "\n"
    if not result.found:
        return "no node advertises its GPUs through both the device plugin and DRA\n"
    lines: list[tuple[str, ...]] = [
        ("NODE", "POOL", "DEVICE-PLUGIN", "DRA-DEVICES", "GPUS", "ALLOCATED(DP+DRA)",
         "STATUS")]
    for n in result.nodes:
        status = "OVERCOMMITTED" if n.overcommitted else "double-advertised"
        lines.append((n.node, n.pool, _counts(n.device_plugin), _counts(n.dra),
                      str(n.physical_gpus), f"{n.allocated_plugin}+{n.allocated_dra}", status))
    text = _columns(lines)
    pods = [(p, n.node) for n in result.nodes for p in n.pods]
    if pods:
        text += "\npods holding GPUs on those nodes:\n" + "".join(
            f"  {p} on {node}\n" for p, node in pods)
    if result.workloads:
        text += "\n" + _columns([("WORKLOAD", "PATH", "CAN-LAND-ON"), *[
            (f"{w.kind} {w.name}", w.path, ",".join(w.nodes)) for w in result.workloads]])
    text += (f"\n{len(result.nodes)} node(s) advertise the same GPUs through the device plugin "
             "and DRA: every such GPU can be given out twice. Fix: stop the device plugin on "
             "nodes that run the DRA driver (e.g. a node label the GPU operator's "
             "devicePlugin honours), or keep the DRA driver off them.\n")
    return text


def _columns(lines: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    return "".join("   ".join(c.ljust(widths[i]) for i, c in enumerate(line)).rstrip() + "\n"
                   for line in lines)
