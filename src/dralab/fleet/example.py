"""The dra-example-driver profile (``gpu.example.com``), notes §9.

* default: ``--num-devices`` devices ``gpu-0..N-1`` in one slice, attributes
  ``index`` (int), ``uuid`` (``gpu-<uuid>``), ``model`` (``LATEST-GPU-MODEL``),
  ``driverVersion`` (``1.0.0``); capacities ``memory`` 80Gi and ``compute`` 100.
* partitionable (``gpuPartitions: P``): a counters slice with one CounterSet
  ``gpu-<i>-counters`` {compute, memory} per GPU, then devices
  ``gpu-<i>-partition-<j>`` (1/P of each, attributes + ``partition``,
  ``partitionable``) and ``gpu-<i>-full`` (everything, + ``partitionable``,
  ``full``). Devices slices hold at most 64 devices, split by whole GPUs.
* allowMultipleAllocations: every device is multi-allocatable; ``memory``
  has request policy min/step 1Gi, ``compute`` min/step 1 (default = min).

dralab extension: a pool may name a catalog model; then ``model`` is its
product name and ``memory`` its total memory (the real driver is fixed to
the values above).
"""

from __future__ import annotations

from dralab.api.quantity import Quantity, parse_quantity
from dralab.api.resource import (
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    Counter,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceCounterConsumption,
    ResourceSlice,
)

from .build import (
    MAX_COUNTER_SETS,
    MAX_DEVICES,
    MAX_DEVICES_WITH_COUNTERS,
    bool_attr,
    chunks,
    int_attr,
    mebibytes,
    node_slices,
    number,
    str_attr,
    version_attr,
)
from .catalog import GpuModel
from .naming import slice_suffixes, stable_uuid
from .spec import NodePool

__all__ = ["DRIVER", "ExamplePool"]

DRIVER = "gpu.example.com"
_DEFAULT_MEMORY = parse_quantity("80Gi")
_COMPUTE = 100
_GI = parse_quantity("1Gi")


class ExamplePool:
    """Generates the ``gpu.example.com`` slices of every node of one pool."""

    def __init__(self, pool: NodePool, model: GpuModel | None) -> None:
        self.count = pool.gpu.count
        self.partitions = pool.gpu.partitions
        self.multi = pool.gpu.multiple_allocations
        self.model = model.product_name if model is not None else "LATEST-GPU-MODEL"
        self.memory = mebibytes(model.memory_mib) if model is not None else _DEFAULT_MEMORY
        self._capacity = self._caps(self.memory, _COMPUTE)

    def _caps(self, memory: Quantity, compute: int) -> dict[str, DeviceCapacity]:
        if not self.multi:
            return {"compute": DeviceCapacity(value=number(compute)),
                    "memory": DeviceCapacity(value=memory)}
        one = number(1)
        return {
            "compute": DeviceCapacity(value=number(compute), request_policy=CapacityRequestPolicy(
                default=one, valid_range=CapacityRequestPolicyRange(min=one, step=one))),
            "memory": DeviceCapacity(value=memory, request_policy=CapacityRequestPolicy(
                default=_GI, valid_range=CapacityRequestPolicyRange(min=_GI, step=_GI))),
        }

    def _attrs(self, index: int, uuid: str, extra: dict[str, DeviceAttribute]
               ) -> dict[str, DeviceAttribute]:
        raw = {"driverVersion": version_attr("1.0.0"), "index": int_attr(index),
               "model": str_attr(self.model), "uuid": str_attr(uuid)} | extra
        return {k: raw[k] for k in sorted(raw)}

    def _partition_devices(self, i: int, uuid: str) -> tuple[list[Device], CounterSet]:
        p = self.partitions
        counter_set = f"gpu-{i}-counters"
        mib = self.memory.nano // 10**9 // (1024 * 1024)
        part_mem = mebibytes(mib // p)
        part_compute = _COMPUTE // p
        full_counters = {"compute": Counter(value=number(_COMPUTE)),
                         "memory": Counter(value=self.memory)}
        part_counters = {"compute": Counter(value=number(part_compute)),
                         "memory": Counter(value=part_mem)}
        devices = [Device(
            name=f"gpu-{i}-full",
            attributes=self._attrs(i, uuid, {"full": bool_attr(True),
                                             "partitionable": bool_attr(True)}),
            capacity=self._capacity,
            consumes_counters=[DeviceCounterConsumption(counter_set=counter_set,
                                                        counters=full_counters)])]
        caps = self._caps(part_mem, part_compute)
        for j in range(p):
            devices.append(Device(
                name=f"gpu-{i}-partition-{j}",
                attributes=self._attrs(i, uuid, {"partition": int_attr(j),
                                                 "partitionable": bool_attr(True)}),
                capacity=caps,
                consumes_counters=[DeviceCounterConsumption(counter_set=counter_set,
                                                            counters=part_counters)]))
        return devices, CounterSet(name=counter_set, counters=full_counters)

    def slices(self, seed: int, node: str, node_uid: str) -> list[ResourceSlice]:
        uuids = [f"gpu-{stable_uuid(seed, f'{node}/example/{i}')}" for i in range(self.count)]
        multi = True if self.multi else None
        contents: list[tuple[list[Device], list[CounterSet]]]
        if not self.partitions:
            devices = [Device(name=f"gpu-{i}", attributes=self._attrs(i, u, {}),
                              capacity=self._capacity, allow_multiple_allocations=multi)
                       for i, u in enumerate(uuids)]
            contents = [(part, []) for part in chunks(devices, MAX_DEVICES)]
        else:
            per_gpu = [self._partition_devices(i, u) for i, u in enumerate(uuids)]
            sets = [cs for _, cs in per_gpu]
            contents = [([], sets[k:k + MAX_COUNTER_SETS])
                        for k in range(0, len(sets), MAX_COUNTER_SETS)]
            batch: list[Device] = []
            for devices, _ in per_gpu:
                if batch and len(batch) + len(devices) > MAX_DEVICES_WITH_COUNTERS:
                    contents.append((batch, []))
                    batch = []
                batch = batch + devices
            contents.append((batch, []))
        suffixes = slice_suffixes(seed, f"{node}/{DRIVER}", len(contents))
        return node_slices(node, node_uid, DRIVER, suffixes, contents)

