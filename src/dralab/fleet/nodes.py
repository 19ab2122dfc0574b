"""Node objects: labels (hostname, topology, GPU feature discovery), capacity, taints."""

from __future__ import annotations

from dataclasses import dataclass

from dralab.api.base import ObjectMeta
from dralab.api.core import Node, NodeSpec, NodeStatus, Taint
from dralab.api.quantity import Quantity, parse_quantity

from .catalog import GpuModel
from .spec import NodePool, TopologyLabels

__all__ = ["NodeTemplate", "split_sizes", "topology_labels"]

EPHEMERAL_STORAGE = "ephemeral-storage"


def split_sizes(count: int, parts: int) -> list[int]:
    """Sizes of ``parts`` contiguous chunks of ``count`` items, larger chunks first (how a
    pool's nodes are split over its zones)."""
    base, extra = divmod(count, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def topology_labels(pool: NodePool, keys: TopologyLabels) -> list[dict[str, str]]:
    """Zone/block/rack labels of each node of ``pool``, in node order.

    Zones take contiguous runs of nodes; racks of ``nodesPerRack`` nodes and
    blocks of ``racksPerBlock`` racks are filled in node order inside a zone
    (so no rack spans two zones). Names are ``<pool>-rack-NN`` and
    ``<pool>-block-NN``, numbered across the pool from 1.
    """
    topo = pool.topology
    zones: list[str | None] = list(topo.zones) or [topo.zone]
    out: list[dict[str, str]] = []
    rack_base = block_base = 0
    for zone, size in zip(zones, split_sizes(pool.size, len(zones)), strict=True):
        racks = -(-size // topo.nodes_per_rack) if topo.nodes_per_rack else 0
        for k in range(size):
            labels: dict[str, str] = {}
            if zone is not None:
                labels[keys.zone] = zone
            if topo.nodes_per_rack:
                rack = k // topo.nodes_per_rack
                labels[keys.rack] = f"{pool.name}-rack-{rack_base + rack + 1:02d}"
                if topo.racks_per_block:
                    block = rack // topo.racks_per_block
                    labels[keys.block] = f"{pool.name}-block-{block_base + block + 1:02d}"
            out.append(labels)
        rack_base += racks
        if topo.racks_per_block:
            block_base += -(-racks // topo.racks_per_block)
    return out


@dataclass(frozen=True, slots=True)
class NodeTemplate:
    """What every node of a pool shares; ``node`` fills in name, uid and topology."""

    pool: NodePool
    model: GpuModel | None
    platform: str
    extended: dict[str, int]
    mig_capable: bool

    def _resources(self) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
        pool = self.pool
        capacity = {"cpu": parse_quantity(str(pool.cpu)),
                    "memory": parse_quantity(str(pool.memory)),
                    "pods": parse_quantity(str(pool.pods))}
        if pool.ephemeral_storage is not None:
            capacity[EPHEMERAL_STORAGE] = parse_quantity(str(pool.ephemeral_storage))
        for name, n in self.extended.items():
            capacity[name] = parse_quantity(str(n))
        allocatable = dict(capacity)
        for field, resource in (("cpu", "cpu"), ("memory", "memory"),
                                ("ephemeral_storage", EPHEMERAL_STORAGE)):
            reserved = getattr(pool.reserved, field)
            if reserved is not None:
                allocatable[resource] = capacity[resource] - parse_quantity(str(reserved))
        return dict(sorted(capacity.items())), dict(sorted(allocatable.items()))

    def base_labels(self) -> dict[str, str]:
        labels = {
            "dralab.dev/pool": self.pool.name,
            "kubernetes.io/arch": "arm64" if self.platform == "grace" else "amd64",
            "kubernetes.io/os": "linux",
        }
        if self.model is not None and self.pool.driver == "nvidia" and self.pool.gpu.count:
            # What NVIDIA GPU feature discovery labels a node with.
            labels |= {
                "nvidia.com/gpu.count": str(self.pool.gpu.count),
                "nvidia.com/gpu.memory": str(self.model.memory_mib),
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.product": self.model.gpu_product_label,
                "nvidia.com/mig.capable": "true" if self.mig_capable else "false",
            }
        return labels

    def nodes(self, names: list[str], uids: list[str],
              topology: list[dict[str, str]]) -> list[Node]:
        capacity, allocatable = self._resources()
        status = NodeStatus(capacity=capacity, allocatable=allocatable)
        spec = NodeSpec(taints=[Taint(key=t.key, value=t.value, effect=t.effect)
                                for t in self.pool.taints])
        base = self.base_labels()
        out = []
        for name, uid, topo in zip(names, uids, topology, strict=True):
            raw = base | topo | {"kubernetes.io/hostname": name} | self.pool.labels
            labels = {k: raw[k] for k in sorted(raw)}
            out.append(Node(metadata=ObjectMeta(name=name, uid=uid, labels=labels),
                            spec=spec, status=status))
        return out
