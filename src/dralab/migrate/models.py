"""The two models of one cluster's GPUs: the device plugin's and DRA's.

From a Fleet spec: ``dralab.sim.fleets`` (the device-plugin view: nodes with
``nvidia.com/gpu`` and static-MIG ``nvidia.com/mig-*`` allocatable; the DRA view:
classes, nodes and ResourceSlices). From a cluster dump (Nodes, ResourceSlices,
DeviceClasses): the device-plugin view keeps each node's NVIDIA allocatable or,
where only the DRA driver runs, derives it from the node's slices (whole GPUs,
MIG devices by profile); the DRA view drops the NVIDIA allocatable (no double
advertising) and needs the slices. Both views get the GPU feature discovery
labels a node would carry (``nvidia.com/gpu.family`` from the devices'
architecture), so label selectors mean the same in both.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dralab.api.base import KubeObject
from dralab.api.codec import encode
from dralab.api.errors import InputError
from dralab.api.io import Document, load_documents, read_documents
from dralab.fleet.classes import driver_classes
from dralab.sim.fleets import device_plugin_fleet, dra_fleet

from .clusterdump import NVIDIA_DRIVER, device_plugin_resources
from .podsets import at_path

__all__ = ["ClusterModels", "load_models", "models_from_documents", "models_from_fleet"]

_KINDS = ("Node", "ResourceSlice", "DeviceClass")


@dataclass(frozen=True, slots=True)
class ClusterModels:
    """The same hardware as plain documents, once per model."""

    source: str
    device_plugin: list[dict[str, Any]]
    dra: list[dict[str, Any]]

    def objects(self, model: str) -> list[KubeObject]:
        docs = self.device_plugin if model == "device-plugin" else self.dra
        return load_documents([Document(self.source, i + 1, d) for i, d in enumerate(docs)])


def _family(architecture: str) -> str:
    return architecture.lower().replace(" ", "-")


def _gfd_labels(nodes: list[dict[str, Any]], slices: list[dict[str, Any]]) -> None:
    """Add ``nvidia.com/gpu.family`` where a node's NVIDIA devices say it and it is missing."""
    family: dict[str, str] = {}
    for rs in slices:
        spec = rs.get("spec") or {}
        if spec.get("driver") != NVIDIA_DRIVER:
            continue
        for device in spec.get("devices") or []:
            arch = at_path(device, ("attributes", "architecture", "string"))
            if isinstance(arch, str):
                family.setdefault(str(spec.get("nodeName") or at_path(spec, ("pool", "name"))),
                                  _family(arch))
    for node in nodes:
        name = at_path(node, ("metadata", "name"))
        if name in family:
            labels = node.setdefault("metadata", {}).setdefault("labels", {})
            labels.setdefault("nvidia.com/gpu.family", family[name])


def models_from_fleet(doc: dict[str, Any], source: str, seed: int = 0) -> ClusterModels:
    dra = dra_fleet(doc, seed, source)
    plugin = device_plugin_fleet(doc, seed, source)
    dra_docs = [encode(o) for o in dra.objects()]
    slices = [d for d in dra_docs if d.get("kind") == "ResourceSlice"]
    plugin_docs = [encode(o) for o in plugin.objects()]
    _gfd_labels([d for d in dra_docs if d.get("kind") == "Node"], slices)
    _gfd_labels([d for d in plugin_docs if d.get("kind") == "Node"], slices)
    return ClusterModels(source, plugin_docs, dra_docs)


def _derived_allocatable(slices: list[dict[str, Any]], node: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for rs in slices:
        spec = rs.get("spec") or {}
        if spec.get("driver") != NVIDIA_DRIVER or \
                (spec.get("nodeName") or at_path(spec, ("pool", "name"))) != node:
            continue
        for device in spec.get("devices") or []:
            kind = at_path(device, ("attributes", "type", "string"))
            profile = at_path(device, ("attributes", "profile", "string"))
            if kind == "mig" and isinstance(profile, str) and not device.get("consumesCounters"):
                name = f"nvidia.com/mig-{profile.replace('+', '.')}"
            elif kind in (None, "gpu"):
                name = "nvidia.com/gpu"
            else:
                continue
            out[name] = out.get(name, 0) + 1
    return out


def models_from_documents(docs: list[Document], source: str) -> ClusterModels:
    """Both models from a dump's Nodes, ResourceSlices and DeviceClasses."""
    kept: list[dict[str, Any]] = [dict(copy.deepcopy(d.data)) for d in docs
            if isinstance(d.data, Mapping) and d.data.get("kind") in _KINDS]
    nodes = [d for d in kept if d["kind"] == "Node"]
    slices = [d for d in kept if d["kind"] == "ResourceSlice"]
    classes = [d for d in kept if d["kind"] == "DeviceClass"]
    if not nodes:
        raise InputError(f"{source}: no Node objects: give a Fleet spec or a cluster dump "
                         "with nodes")
    if not any((s.get("spec") or {}).get("driver") == NVIDIA_DRIVER for s in slices):
        raise InputError(f"{source}: no ResourceSlices of {NVIDIA_DRIVER}: the DRA model "
                         "needs them; give a Fleet spec instead")
    _gfd_labels(nodes, slices)
    plugin_nodes, dra_nodes = [], []
    for node in nodes:
        name = at_path(node, ("metadata", "name"))
        status = node.setdefault("status", {})
        allocatable = status.get("allocatable") or {}
        advertised = device_plugin_resources(allocatable)
        plain = {k: v for k, v in allocatable.items() if k not in advertised}
        capacity = {k: v for k, v in (status.get("capacity") or {}).items()
                    if k not in advertised}
        dra_node = copy.deepcopy(node)
        dra_node["status"]["allocatable"], dra_node["status"]["capacity"] = plain, capacity
        dra_nodes.append(dra_node)
        plugin_node = copy.deepcopy(node)
        if not advertised:
            derived = _derived_allocatable(slices, str(name))
            plugin_node["status"]["allocatable"] = {**plain, **{k: str(v) for k, v in
                                                                derived.items()}}
            plugin_node["status"]["capacity"] = {**capacity, **{k: str(v) for k, v in
                                                                derived.items()}}
        plugin_nodes.append(plugin_node)
    names = {at_path(c, ("metadata", "name")) for c in classes}
    classes += [encode(c) for c in driver_classes(True, False, False, ()) if c.name not in names]
    return ClusterModels(source, plugin_nodes, [*dra_nodes, *slices, *classes])


def load_models(path: str, seed: int = 0) -> ClusterModels:
    """Both models of a Fleet spec file or a cluster dump."""
    docs = read_documents([path])
    if len(docs) == 1 and isinstance(docs[0].data, Mapping) and docs[0].data.get("kind") == "Fleet":
        return models_from_fleet(dict(docs[0].data), path, seed)
    return models_from_documents(docs, path)
