"""Fleet -> Kubernetes objects: DeviceClasses, Nodes and ResourceSlices.

``generate`` is pure and deterministic: the same Fleet and seed give equal
objects in the same order (classes, then nodes, then each node's slices:
GPU driver, ComputeDomain driver, NIC driver). It does not validate what it
builds -- the generators are tested to produce only valid objects, and a
5,000-node fleet would spend most of its time in validation otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from dralab.api.base import KubeObject
from dralab.api.core import Node
from dralab.api.gcpause import gc_paused as _gc_paused
from dralab.api.resource import DeviceClass, ResourceSlice

from .catalog import GpuModel, get_model
from .classes import driver_classes, platform_class
from .example import ExamplePool
from .naming import stable_uuid
from .nics import NicPool, nic_driver
from .nodes import NodeTemplate, topology_labels
from .nvidia import NvidiaPool, compute_domain_slices
from .nvlink import clique_labels
from .spec import Fleet, NodePool
from .topology import gpu_slots, nic_slots

__all__ = ["GeneratedFleet", "generate", "generate_objects", "grown_pool_nodes"]


@dataclass(frozen=True, slots=True)
class GeneratedFleet:
    """The objects of one fleet, by kind. ``objects()`` gives them in output order."""

    classes: tuple[DeviceClass, ...]
    nodes: tuple[Node, ...]
    slices: tuple[ResourceSlice, ...]

    def objects(self) -> list[KubeObject]:
        return [*self.classes, *self.nodes, *self.slices]


def _platform(pool: NodePool, model: GpuModel | None) -> str:
    if pool.platform is not None:
        return pool.platform
    return model.platform if model is not None else "x86"


def _pool_objects(fleet: Fleet, pool: NodePool, seed: int, first: int = 0
                  ) -> tuple[list[Node], list[ResourceSlice]]:
    """The nodes of ``pool`` from the ``first``-th on (0: all) and their slices."""
    spec = fleet.spec
    model = get_model(pool.gpu.model) if pool.gpu.model is not None else None
    platform = _platform(pool, model)
    slots = gpu_slots(platform, pool.gpu.count)
    gpu_pool: NvidiaPool | ExamplePool | None = None
    extended: dict[str, int] = {}
    if pool.gpu.count and pool.driver == "nvidia" and model is not None:
        nv = NvidiaPool(spec, pool, model, slots)
        if pool.gpu.extended_resources:
            extended = nv.extended_resources()
        gpu_pool = nv
    elif pool.gpu.count and pool.driver == "example":
        gpu_pool = ExamplePool(spec, pool, model)
    nic_pool = None
    if pool.nics.count:
        nic_pool = NicPool(pool.nics, nic_slots(platform, pool.nics.count, slots,
                                                pool.nics.alignment))
    # The pool's own device-plugin resources; a name the NVIDIA plugin also advertises
    # takes the pool's count (what the user wrote).
    extended = {**extended, **pool.extended_resources}
    template = NodeTemplate(pool, model, platform, extended,
                            mig_capable=model is not None and model.mig is not None)
    names = pool.node_names()[first:]
    uids = [stable_uuid(seed, f"node/{name}") for name in names]
    labels = [{**topo, **clique} for topo, clique in
              zip(topology_labels(pool, spec.topology_labels), clique_labels(pool, seed),
                  strict=True)]
    nodes = template.nodes(names, uids, labels[first:])
    slices: list[ResourceSlice] = []
    for name, uid in zip(names, uids, strict=True):
        if gpu_pool is not None:
            slices += gpu_pool.slices(seed, name, uid)
        if pool.compute_domains:
            slices += compute_domain_slices(seed, name, uid)
        if nic_pool is not None:
            slices += nic_pool.slices(seed, name, uid)
    return nodes, slices



def generate(fleet: Fleet, seed: int | None = None) -> GeneratedFleet:
    """Every object of ``fleet`` (seed: ``spec.seed`` unless given). Pure; never raises
    for a Fleet that ``parse_fleet`` returned."""
    spec = fleet.spec
    seed = spec.seed if seed is None else seed
    pools = spec.pools
    classes = driver_classes(
        nvidia_used=any(p.driver == "nvidia" and p.gpu.count for p in pools),
        compute_domains=any(p.compute_domains for p in pools),
        example_used=any(p.driver == "example" and p.gpu.count for p in pools),
        example_extended=spec.example.extended_resource_name,
        nic_drivers=[nic_driver(p.nics) for p in pools if p.nics.count])
    classes += [platform_class(c) for c in spec.device_classes]
    nodes: list[Node] = []
    slices: list[ResourceSlice] = []
    with _gc_paused():
        for pool in pools:
            pool_nodes, pool_slices = _pool_objects(fleet, pool, seed)
            nodes += pool_nodes
            slices += pool_slices
    return GeneratedFleet(tuple(classes), tuple(nodes), tuple(slices))


def grown_pool_nodes(fleet: Fleet, pool_name: str, count: int, seed: int | None = None
                     ) -> list[tuple[Node, tuple[ResourceSlice, ...]]]:
    """The ``count`` nodes (with their slices) that ``dralab fleet`` publishes beyond the
    pool's current ones when the pool is ``count`` nodes larger: the next names by the
    pool's naming, its labels, taints and topology, the node's ResourceSlices. What a
    node group's template nodes are. KeyError for an unknown pool; ValueError for a pool
    that lists its nodeNames (it has no next name)."""
    pool = next((p for p in fleet.spec.pools if p.name == pool_name), None)
    if pool is None:
        raise KeyError(pool_name)
    if pool.names:
        raise ValueError(f"pool {pool_name} lists its nodeNames: it has no next node name")
    if count <= 0:
        return []
    seed = fleet.spec.seed if seed is None else seed
    larger = msgspec.structs.replace(pool, count=pool.size + count)
    with _gc_paused():
        nodes, slices = _pool_objects(fleet, larger, seed, first=pool.size)
    by_node: dict[str, list[ResourceSlice]] = {n.name: [] for n in nodes}
    for s in slices:
        if s.spec.node_name in by_node:
            by_node[s.spec.node_name].append(s)
    return [(n, tuple(by_node[n.name])) for n in nodes]


def generate_objects(fleet: Fleet, seed: int | None = None) -> list[KubeObject]:
    """``generate(fleet, seed).objects()``: classes, nodes, slices."""
    return generate(fleet, seed).objects()
