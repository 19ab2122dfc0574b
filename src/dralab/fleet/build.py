"""Small constructors shared by the driver profiles: attributes, capacities, slices.

Generated objects share immutable parts (attribute values, capacity maps,
counter consumptions) across devices and nodes: a 5,000-node fleet has a
million devices but only a few thousand distinct parts. The maps inside those
frozen structs are shared too; by contract nobody mutates them (updates build
new objects, as everywhere in dralab).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from dralab.api.base import ObjectMeta, OwnerReference
from dralab.api.quantity import Quantity, QuantityFormat
from dralab.api.resource import (
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)

__all__ = [
    "MAX_COUNTER_SETS",
    "MAX_DEVICES",
    "MAX_DEVICES_WITH_COUNTERS",
    "STD",
    "chunks",
    "int_attr",
    "mebibytes",
    "node_slices",
    "number",
    "pci_attributes",
    "sorted_map",
    "str_attr",
    "version_attr",
]

# resource.k8s.io/v1 limits (dra-api-v1.md §8).
MAX_DEVICES = 128
MAX_DEVICES_WITH_COUNTERS = 64
MAX_COUNTER_SETS = 8

STD = "resource.kubernetes.io/"


@lru_cache(maxsize=4096)
def str_attr(value: str) -> DeviceAttribute:
    return DeviceAttribute(string=value)


@lru_cache(maxsize=1024)
def int_attr(value: int) -> DeviceAttribute:
    return DeviceAttribute(int_=value)


@lru_cache(maxsize=256)
def bool_attr(value: bool) -> DeviceAttribute:
    return DeviceAttribute(bool_=value)


@lru_cache(maxsize=256)
def version_attr(value: str) -> DeviceAttribute:
    return DeviceAttribute(version=value)


@lru_cache(maxsize=4096)
def number(value: int) -> Quantity:
    """An integer quantity as the driver builds it (binary format, prints plainly)."""
    return Quantity.from_int(value, QuantityFormat.BINARY_SI)


@lru_cache(maxsize=4096)
def mebibytes(mib: int) -> Quantity:
    """``mib`` MiB as a binary quantity (``81559Mi``)."""
    return Quantity.from_int(mib * 1024 * 1024, QuantityFormat.BINARY_SI)


def capacity(value: Quantity) -> DeviceCapacity:
    return DeviceCapacity(value=value)


def sorted_map(items: Mapping[str, object]) -> dict[str, object]:
    """A copy with keys in sorted order (kubectl prints maps sorted; so do we, also in JSON)."""
    return {k: items[k] for k in sorted(items)}


def pci_attributes(bus_id: str, pcie_root: str | None, numa: int | None
                   ) -> dict[str, DeviceAttribute]:
    """The standard ``resource.kubernetes.io`` topology attributes of one PCI function."""
    attrs = {f"{STD}pciBusID": str_attr(bus_id)}
    if pcie_root is not None:
        attrs[f"{STD}pcieRoot"] = str_attr(pcie_root)
    if numa is not None:
        attrs[f"{STD}numaNode"] = int_attr(numa)
    return attrs


def chunks(items: Sequence[Device], size: int) -> list[list[Device]]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)] or [[]]


def node_slices(node: str, node_uid: str, driver: str, suffixes: Sequence[str],
                contents: Iterable[tuple[list[Device], list[CounterSet]]]) -> list[ResourceSlice]:
    """The slices of one node-local pool (pool name = node name, generation 1).

    ``contents`` gives (devices, counter sets) per slice, in publishing order;
    ``suffixes`` must hold at least as many distinct generateName suffixes.
    """
    parts = list(contents)
    owner = [OwnerReference(api_version="v1", kind="Node", name=node, uid=node_uid,
                            controller=True)]
    pool = ResourcePool(name=node, generation=1, resource_slice_count=len(parts))
    prefix = f"{node}-{driver}-"
    out = []
    for (devices, counters), suffix in zip(parts, suffixes, strict=False):
        out.append(ResourceSlice(
            metadata=ObjectMeta(name=prefix + suffix, generate_name=prefix,
                                owner_references=owner),
            spec=ResourceSliceSpec(driver=driver, pool=pool, node_name=node,
                                   devices=devices, shared_counters=counters)))
    return out
