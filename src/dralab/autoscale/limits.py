"""Cluster-wide limits on scale-up: ``--max-nodes-total``, ``--cores-total`` and
``--memory-total`` (their maxima), as Cluster Autoscaler applies them
(core/scaleup/orchestrator/orchestrator.go: GetCappedNewNodeCount, and the
"cluster-wide" quota of resourcequotas built from the cloud provider's resource
limiter), with the CapacityQuotas when --capacity-quotas-enabled
(``capacityquota.py``: per-selector caps on cpu, memory, nodes and GPUs).

The usage is every node of the cluster (autoscaled or not) plus the nodes being
provisioned; a node counts its capacity, CPU in whole cores (rounded up, as
``Quantity.Value()``) and memory in bytes. A group whose one more node would pass a
limit is left out ("exceeded quota"); an option larger than what is left is capped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dralab.api.core import Node

from .capacityquota import CapacityQuota
from .utilization import GPU_RESOURCES

__all__ = ["ScaleUpBudget", "node_cores_memory", "parse_min_max"]

MAX_NODES_TOTAL_REACHED = "max node total count already reached"
ATOMIC_OVER_MAX_NODES_TOTAL = "atomic scale-up exceeds cluster node count limit"


def parse_min_max(text: str) -> tuple[int, int]:
    """CA's ``<min>:<max>`` (--cores-total, --memory-total): ValueError, with CA's
    words, for anything else or a max under the min."""
    low, sep, high = str(text).partition(":")
    try:
        pair = (int(low), int(high)) if sep else None
    except ValueError:
        pair = None
    if pair is None:
        raise ValueError(f"wrong configuration {text!r}: expected <min>:<max> integers")
    if pair[0] < 0 or pair[1] < pair[0]:
        raise ValueError(f"{text!r}: min must be 0 or more and max greater or equal to min")
    return pair


def node_cores_memory(node: Node) -> tuple[int, int]:
    """The node's capacity in whole cores (rounded up) and bytes (rounded up)."""
    capacity = node.status.capacity or node.status.allocatable
    cpu, memory = capacity.get("cpu"), capacity.get("memory")
    cores = -(-cpu.milli_value() // 1000) if cpu is not None else 0
    mem = -(-memory.milli_value() // 1000) if memory is not None else 0
    return cores, mem


def quota_resources(node: Node) -> dict[str, int]:
    """What one node counts against a quota (resourcequotas' totalNodeResources): its
    cores, memory bytes, one node, and its GPUs by extended resource name."""
    cores, memory = node_cores_memory(node)
    out = {"cpu": cores, "memory": memory, "nodes": 1}
    capacity = node.status.capacity or node.status.allocatable
    for name in GPU_RESOURCES:
        quantity = capacity.get(name)
        if quantity is not None and quantity.value() > 0:
            out[name] = quantity.value()
    return out


class ScaleUpBudget:
    """What the limits leave for scale-ups in one loop (``take`` what each uses)."""

    def __init__(self, max_nodes_total: int, max_cores: int, max_memory: int,
                 nodes: Iterable[Node], quotas: Sequence[CapacityQuota] = ()) -> None:
        self.max_nodes_total = max_nodes_total
        self.max_cores = max_cores
        self.max_memory = max_memory
        self.nodes = self.cores = self.memory = 0
        self.quotas = tuple(quotas)
        # Per quota, what is left of each limit (resourcequotas' limitsLeft).
        self.left = [dict(q.limits) for q in self.quotas]
        for node in nodes:
            self.add(node, 1)

    def add(self, node: Node, count: int) -> None:
        cores, memory = node_cores_memory(node)
        self.nodes += count
        self.cores += cores * count
        self.memory += memory * count
        if self.quotas:
            labels = node.metadata.labels or {}
            delta = quota_resources(node)
            for quota, left in zip(self.quotas, self.left, strict=True):
                if quota.applies_to(labels):
                    for name, each in delta.items():
                        if name in left:
                            left[name] = max(0, left[name] - each * count)

    def _quotas(self, template: Node, count: int) -> tuple[int | None, list[str]]:
        """How many of ``count`` nodes like ``template`` the CapacityQuotas let in (None:
        no quota applies), and CA's message for each quota they would pass
        (Tracker.checkQuota)."""
        if not self.quotas:
            return None, []
        labels = template.metadata.labels or {}
        delta = quota_resources(template)
        allowed: int | None = None
        messages: list[str] = []
        for quota, left in zip(self.quotas, self.left, strict=True):
            if not quota.applies_to(labels):
                continue
            exceeded = []
            for name, each in delta.items():
                if each <= 0 or name not in left:
                    continue
                fit = left[name] // each
                allowed = fit if allowed is None else min(allowed, fit)
                if left[name] < each * count:
                    exceeded.append(name)
            if exceeded:
                messages.append(f'exceeded quota: "{quota.id}", resources: '
                                f'{", ".join(exceeded)}')
        return allowed, messages

    def exceeded(self, template: Node, count: int) -> str:
        """Why ``count`` nodes like ``template`` at once would pass a limit (CA's check of
        an atomic scale-up before estimating), or ""."""
        cores, memory = node_cores_memory(template)
        over = [name for name, used, each, top in (
            ("cpu", self.cores, cores, self.max_cores),
            ("memory", self.memory, memory, self.max_memory)) if used + each * count > top]
        messages = [f'exceeded quota: "cluster-wide", resources: {", ".join(over)}'] \
            if over else []
        messages += self._quotas(template, count)[1]
        if messages:
            return "; ".join(messages)
        if self.max_nodes_total > 0 and self.nodes + count > self.max_nodes_total:
            return ATOMIC_OVER_MAX_NODES_TOTAL
        return ""

    def allowed(self, template: Node) -> tuple[int | None, str]:
        """How many nodes like ``template`` the limits let in (None: no limit), and when
        none, why (CA's wording)."""
        cores, memory = node_cores_memory(template)
        caps: list[int] = []
        exceeded: list[str] = []
        if cores > 0:
            fit = max(0, self.max_cores - self.cores) // cores
            caps.append(fit)
            if fit == 0:
                exceeded.append("cpu")
        if memory > 0:
            fit = max(0, self.max_memory - self.memory) // memory
            caps.append(fit)
            if fit == 0:
                exceeded.append("memory")
        messages = [f'exceeded quota: "cluster-wide", resources: {", ".join(exceeded)}'] \
            if exceeded else []
        quota_cap, quota_messages = self._quotas(template, 1)
        messages += quota_messages
        if messages:
            return 0, "; ".join(messages)
        if quota_cap is not None:
            caps.append(quota_cap)
        if self.max_nodes_total > 0:
            left = max(0, self.max_nodes_total - self.nodes)
            if left == 0:
                return 0, MAX_NODES_TOTAL_REACHED
            caps.append(left)
        return (min(caps) if caps else None), ""
