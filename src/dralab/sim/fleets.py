"""The fleet of a scenario, as each compared mode sees it, and how devices map to GPUs.

DRA mode uses the fleet exactly as specified (MIG, shares, ...). Device-plugin
mode is the same hardware as the device plugin would expose it: no sharing, no
ResourceSlices, every GPU a unit of the ``nvidia.com/gpu`` extended resource,
except on pools with static MIG, whose MIG devices the device plugin (mixed
strategy) advertises as ``nvidia.com/mig-<profile>``. Dynamic MIG exists only
with DRA: those GPUs are whole GPUs here.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
import yaml

from dralab.api.core import Node
from dralab.api.resource import ResourceSlice
from dralab.fleet import Fleet, FleetSpecError, default_fleet_text, generate, parse_fleet
from dralab.fleet.catalog import CATALOG
from dralab.fleet.generate import GeneratedFleet

from .devplugin import mig_resource
from .spec import ScenarioError
from .templates import TemplateError, resolve_path

if TYPE_CHECKING:
    from .parsedscenario import ParsedScenario

__all__ = ["DeviceInfo", "DeviceMap", "device_plugin_fleet", "device_plugin_fleet_spec",
           "device_plugin_node", "dra_fleet", "fleet_document",
           "fleet_path", "grown", "load_fleet", "mig_fraction", "mig_resource_fractions",
           "read_fleet_document"]

_NVIDIA = "gpu.nvidia.com"


@functools.cache
def _mig_fractions() -> Mapping[str, float]:
    """Per MIG profile of the fleet catalog: its compute slices over its GPU's."""
    out: dict[str, float] = {}
    for model in CATALOG.values():
        if model.mig is not None:
            for profile in model.mig.profiles:
                out.setdefault(profile.name, min(
                    1.0, profile.compute_slices / model.mig.compute_slices))
    return out


def mig_fraction(profile: str) -> float:
    """The share of a GPU one MIG device of ``profile`` takes (the fleet catalog's compute
    slices); a whole GPU for a profile the catalog does not know (nothing to go by)."""
    return _mig_fractions().get(profile, 1.0)


@functools.cache
def mig_resource_fractions() -> Mapping[str, float]:
    """``mig_fraction`` by the device plugin's resource name (``nvidia.com/mig-1g.10gb``)."""
    return {mig_resource(name): share for name, share in _mig_fractions().items()}


def fleet_path(scenario: ParsedScenario, allow_outside: bool = True) -> str:
    """The file ``spec.fleet.file`` names, relative to the scenario's directory; unless
    ``allow_outside``, ScenarioError if it lies outside that directory."""
    assert scenario.fleet.file is not None
    try:
        return resolve_path(scenario.fleet.file, scenario.base_dir, allow_outside)
    except TemplateError as exc:
        raise ScenarioError(scenario.source, "spec.fleet.file", str(exc)) from None


def fleet_document(scenario: ParsedScenario) -> dict[str, Any]:
    """The scenario's Fleet as a plain document (a copy). A loaded scenario carries it
    (``Scenario.fleet_data``, read when it loaded); otherwise it is read here."""
    if scenario.fleet_data is not None:
        return copy.deepcopy(scenario.fleet_data)
    return read_fleet_document(scenario)


def read_fleet_document(scenario: ParsedScenario) -> dict[str, Any]:
    """The Fleet document ``spec.fleet`` names: inline, a file, or the default fleet."""
    ref = scenario.fleet
    if ref.spec is not None:
        return {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
                "metadata": {"name": scenario.name}, "spec": copy.deepcopy(ref.spec)}
    if ref.file is not None:
        from dralab.api.io import read_documents

        path = fleet_path(scenario)
        docs = read_documents([path])
        if len(docs) != 1 or not isinstance(docs[0].data, dict):
            raise ScenarioError(scenario.source, "spec.fleet.file",
                                f"{path}: expected one Fleet document")
        return copy.deepcopy(docs[0].data)
    data = yaml.safe_load(default_fleet_text())
    assert isinstance(data, dict)
    return data


def load_fleet(scenario: ParsedScenario) -> Fleet:
    """The scenario's Fleet, parsed and checked. Errors name the scenario field of an
    inline fleet (``spec.fleet.spec.pools[0].count``) or the fleet file."""
    doc = fleet_document(scenario)
    if scenario.fleet.spec is None:
        source = fleet_path(scenario) if scenario.fleet.file is not None else "<default fleet>"
        return parse_fleet(doc, source)
    try:
        return parse_fleet(doc, "")
    except FleetSpecError as exc:
        # Fleet paths start at the Fleet document; an inline fleet is spec.fleet.spec.
        path = f"spec.fleet.{exc.path}" if exc.path else "spec.fleet.spec"
        raise ScenarioError(scenario.source, path, exc.detail) from None


def _device_plugin_spec(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    spec = out.setdefault("spec", {})
    for pool in spec.get("pools", []):
        if not isinstance(pool, dict):
            continue  # parse_fleet reports it
        gpu = pool.get("gpu")
        if isinstance(gpu, dict):
            mig = gpu.get("mig")
            if not (isinstance(mig, dict) and mig.get("mode") == "static"):
                gpu["mig"] = {"mode": "off"}
            gpu.pop("sharing", None)
            # Only NVIDIA has a device plugin; other drivers' GPUs advertise nothing.
            if pool.get("driver", "nvidia") == "nvidia":
                gpu["extendedResources"] = True
    # Platform classes may name MIG profiles that no longer exist; the device plugin has none.
    spec.pop("deviceClasses", None)
    return out


def device_plugin_fleet_spec(doc: dict[str, Any], source: str) -> Fleet:
    """The Fleet as the device plugin sees it (its pools' nodes carry extended resources):
    what an autoscaler's template nodes are built from in device-plugin mode."""
    return parse_fleet(_device_plugin_spec(doc), source)


def device_plugin_node(node: Node, slices: tuple[ResourceSlice, ...]
                       ) -> tuple[Node, tuple[ResourceSlice, ...]]:
    """A node of ``device_plugin_fleet_spec`` as it joins: MIG resources renamed, no
    slices (as ``device_plugin_fleet`` publishes it)."""
    return _plugin_names(node), ()


def dra_fleet(doc: dict[str, Any], seed: int, source: str) -> GeneratedFleet:
    """The fleet as specified (DRA mode): classes, nodes and their ResourceSlices."""
    return generate(parse_fleet(doc, source), seed)


def device_plugin_fleet(doc: dict[str, Any], seed: int, source: str) -> GeneratedFleet:
    """The same hardware as the device plugin exposes it: nodes only, GPUs (and static MIG
    devices) as extended resources; no classes, no slices."""
    fleet = generate(parse_fleet(_device_plugin_spec(doc), source), seed)
    return GeneratedFleet((), tuple(_plugin_names(n) for n in fleet.nodes), ())


def grown(doc: dict[str, Any], growth: Mapping[str, int]) -> dict[str, Any]:
    """``doc`` with ``growth[pool]`` more nodes in each named pool (``count`` raised)."""
    out = copy.deepcopy(doc)
    for pool in out.get("spec", {}).get("pools", []):
        if isinstance(pool, dict) and pool.get("name") in growth:
            pool["count"] = int(pool.get("count", 0)) + growth[pool["name"]]
    return out


def _plugin_names(node: Node) -> Node:
    """The node with MIG resources named as the device plugin names them (``+`` -> ``.``)."""
    def rename(resources: dict[str, Any]) -> dict[str, Any]:
        prefix = "nvidia.com/mig-"
        return {mig_resource(k[len(prefix):]) if k.startswith(prefix) else k: v
                for k, v in resources.items()}

    status = node.status
    if not any("+" in k for k in status.capacity):
        return node
    return msgspec.structs.replace(node, status=msgspec.structs.replace(
        status, capacity=rename(status.capacity), allocatable=rename(status.allocatable)))


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """One allocatable device: the node and physical GPU it belongs to, and what it holds.

    ``fraction`` is the share of the GPU an exclusive allocation takes (1 for a whole
    GPU, g/7 for a MIG ``<g>g`` profile); ``memory`` (MiB) is the capacity shares
    are measured in.
    """

    node: str
    gpu: str
    fraction: float
    memory: int
    shared: bool


class DeviceMap:
    """Maps (driver, pool, device) of NVIDIA GPU and MIG devices to physical GPUs."""

    def __init__(self, slices: Iterable[ResourceSlice]) -> None:
        self.devices: dict[tuple[str, str, str], DeviceInfo] = {}
        self.gpu_memory: dict[str, int] = {}
        self.gpus_by_node: dict[str, list[str]] = {}
        self.add(slices)

    def add(self, slices: Iterable[ResourceSlice]) -> None:
        """Map the devices of ``slices`` too (a node that joined); known ones stay as are."""
        for s in slices:
            spec = s.spec
            if spec.driver != _NVIDIA:
                continue
            node = spec.node_name or spec.pool.name
            for d in spec.devices:
                attrs = d.attributes
                kind = attrs["type"].string if "type" in attrs else "gpu"
                if kind == "gpu":
                    gpu = attrs["uuid"].string if "uuid" in attrs else f"{node}/{d.name}"
                    fraction = 1.0
                elif kind == "mig":
                    gpu = attrs["parentUUID"].string if "parentUUID" in attrs else \
                        f"{node}/{d.name.split('-mig-')[0]}"
                    profile = attrs["profile"].string if "profile" in attrs else None
                    fraction = mig_fraction(profile or "")
                else:
                    continue
                gpu = gpu or f"{node}/{d.name}"
                if (spec.driver, spec.pool.name, d.name) in self.devices:
                    continue
                mem = d.capacity["memory"].value.value() // (1024 * 1024) \
                    if "memory" in d.capacity else 0
                self.devices[(spec.driver, spec.pool.name, d.name)] = DeviceInfo(
                    node, gpu, fraction, mem, bool(d.allow_multiple_allocations))
                self.gpu_memory[gpu] = max(self.gpu_memory.get(gpu, 0), mem)
                gpus = self.gpus_by_node.setdefault(node, [])
                if gpu not in gpus:
                    gpus.append(gpu)

    def used(self, allocations: Iterable[tuple[str, str, str, Mapping[str, int]]]
             ) -> dict[str, float]:
        """Share of each physical GPU in use, from (driver, pool, device, consumed MiB) entries
        (consumed is empty for exclusive allocations)."""
        used: dict[str, float] = {}
        for driver, pool, device, consumed in allocations:
            info = self.devices.get((driver, pool, device))
            if info is None:
                continue
            if info.shared and consumed:
                share = consumed.get("memory", 0) / info.memory if info.memory else 1.0
            else:
                share = info.fraction
            used[info.gpu] = min(1.0, used.get(info.gpu, 0.0) + share)
        return used
