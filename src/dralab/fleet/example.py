"""The dra-example-driver profile (``gpu.example.com``), as its ``gpu`` profile publishes it.

Read from kubernetes-sigs/dra-example-driver ``internal/profiles/gpu/gpu.go``
(main @ 31914ce, 2026-07-20); Helm values in brackets:

* default [``kubeletPlugin.numDevices``]: devices ``gpu-0..N-1`` in one slice,
  attributes ``index`` (int), ``uuid`` (``gpu-<uuid>``), ``model``
  (``LATEST-GPU-MODEL``), ``driverVersion`` (version ``1.0.0``); capacities
  ``memory`` 80Gi and ``compute`` 100.
* partitionable [``kubeletPlugin.gpuPartitions: P``]: a first slice holding
  one CounterSet ``gpu-<i>-counters`` {memory, compute} per GPU, then a
  devices slice listing, GPU by GPU, the partitions ``gpu-<i>-partition-<j>``
  *before* the whole GPU ``gpu-<i>-full``. A partition has ``memory`` =
  the GPU's bytes / P (integer division, printed as a plain byte count when
  not a whole binary unit) and ``compute`` = 100 / P, attributes + ``partition``
  (int) and ``partitionable`` (true); ``gpu-<i>-full`` consumes the whole
  counter set, attributes + ``partitionable`` and ``full`` (true). The order
  matters: first-fit allocation gives a one-device claim ``gpu-0-partition-0``.
* allowMultipleAllocations [``gpuAllowMultipleAllocations``], alone or with
  partitions: every device has ``allowMultipleAllocations: true`` and each
  ``memory``/``compute`` capacity a request policy with default = max = the
  capacity's own value and min = step = 1Gi / 1 -- so a claim that does not
  ask for capacity takes the whole device. Without the setting the driver
  sets ``allowMultipleAllocations: false`` explicitly, which the API server
  keeps from Kubernetes 1.36 on (DRAConsumableCapacity on by default) and
  drops before.
* binding conditions [``kubeletPlugin.bindingConditions``]: every device
  carries ``bindingConditions: [BindingConditions]`` and
  ``bindingFailureConditions: [BindingFailureConditions]``.

Deviations, on purpose: UUIDs come from dralab's seeded generator, not the
driver's node-name-seeded Go PRNG; more than 64 counter-consuming devices are
split over several devices slices (by whole GPUs) where the driver would
publish one slice the API server rejects; a pool may name a catalog model,
then ``model`` is its product name and ``memory`` its total memory.
"""

from __future__ import annotations

from dralab.api.quantity import Quantity, QuantityFormat, parse_quantity
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
    str_attr,
    version_attr,
)
from .catalog import GpuModel
from .naming import slice_suffixes, stable_uuid
from .spec import FleetSpec, NodePool

__all__ = ["DRIVER", "ExamplePool"]

DRIVER = "gpu.example.com"
BINDING_CONDITIONS = ("BindingConditions",)
BINDING_FAILURE_CONDITIONS = ("BindingFailureConditions",)
_DEFAULT_MEMORY = parse_quantity("80Gi")
_COMPUTE = 100
_GI = parse_quantity("1Gi")
_ONE = Quantity.from_int(1, QuantityFormat.DECIMAL_SI)


def _memory(nbytes: int) -> Quantity:
    return Quantity.from_int(nbytes, QuantityFormat.BINARY_SI)


def _compute(value: int) -> Quantity:
    return Quantity.from_int(value, QuantityFormat.DECIMAL_SI)


class ExamplePool:
    """Generates the ``gpu.example.com`` slices of every node of one pool."""

    def __init__(self, spec: FleetSpec, pool: NodePool, model: GpuModel | None) -> None:
        gpu = pool.gpu
        self.count = gpu.count
        self.partitions = gpu.partitions
        self.multi = gpu.multiple_allocations
        self.binding = gpu.binding_conditions
        # The driver always sets the field; before 1.36 the API server drops a
        # false value (DRAConsumableCapacity off by default) and keeps a true one
        # only where an admin turned the gate on -- which this mode needs anyway.
        minor = int(spec.kubernetes_version.split(".")[1])
        self._allow_multiple: bool | None = True if self.multi else (
            False if minor >= 36 else None)
        self.model = model.product_name if model is not None else "LATEST-GPU-MODEL"
        self.memory = mebibytes(model.memory_mib) if model is not None else _DEFAULT_MEMORY
        self._capacity = self._caps(self.memory, _compute(_COMPUTE))

    def _caps(self, memory: Quantity, compute: Quantity) -> dict[str, DeviceCapacity]:
        if not self.multi:
            return {"compute": DeviceCapacity(value=compute),
                    "memory": DeviceCapacity(value=memory)}
        return {
            "compute": DeviceCapacity(value=compute, request_policy=CapacityRequestPolicy(
                default=compute, valid_range=CapacityRequestPolicyRange(
                    min=_ONE, max=compute, step=_ONE))),
            "memory": DeviceCapacity(value=memory, request_policy=CapacityRequestPolicy(
                default=memory, valid_range=CapacityRequestPolicyRange(
                    min=_GI, max=memory, step=_GI))),
        }

    def _attrs(self, index: int, uuid: str, extra: dict[str, DeviceAttribute]
               ) -> dict[str, DeviceAttribute]:
        raw = {"driverVersion": version_attr("1.0.0"), "index": int_attr(index),
               "model": str_attr(self.model), "uuid": str_attr(uuid)} | extra
        return {k: raw[k] for k in sorted(raw)}

    def _device(self, name: str, attrs: dict[str, DeviceAttribute],
                capacity: dict[str, DeviceCapacity],
                consumes: list[DeviceCounterConsumption] | None = None) -> Device:
        return Device(
            name=name, attributes=attrs, capacity=capacity, consumes_counters=consumes or [],
            allow_multiple_allocations=self._allow_multiple,
            binding_conditions=list(BINDING_CONDITIONS) if self.binding else [],
            binding_failure_conditions=list(BINDING_FAILURE_CONDITIONS) if self.binding else [])

    def _partition_devices(self, i: int, uuid: str) -> tuple[list[Device], CounterSet]:
        p = self.partitions
        counter_set = f"gpu-{i}-counters"
        part_mem = _memory(self.memory.nano // 10**9 // p)
        part_compute = _compute(_COMPUTE // p)
        full_counters = {"compute": Counter(value=_compute(_COMPUTE)),
                         "memory": Counter(value=self.memory)}
        part_counters = {"compute": Counter(value=part_compute),
                         "memory": Counter(value=part_mem)}
        caps = self._caps(part_mem, part_compute)
        devices = [
            self._device(f"gpu-{i}-partition-{j}",
                         self._attrs(i, uuid, {"partition": int_attr(j),
                                               "partitionable": bool_attr(True)}),
                         caps, [DeviceCounterConsumption(counter_set=counter_set,
                                                         counters=part_counters)])
            for j in range(p)]
        devices.append(self._device(
            f"gpu-{i}-full",
            self._attrs(i, uuid, {"full": bool_attr(True), "partitionable": bool_attr(True)}),
            self._capacity, [DeviceCounterConsumption(counter_set=counter_set,
                                                      counters=full_counters)]))
        return devices, CounterSet(name=counter_set, counters=full_counters)

    def slices(self, seed: int, node: str, node_uid: str) -> list[ResourceSlice]:
        uuids = [f"gpu-{stable_uuid(seed, f'{node}/example/{i}')}" for i in range(self.count)]
        contents: list[tuple[list[Device], list[CounterSet]]]
        if not self.partitions:
            devices = [self._device(f"gpu-{i}", self._attrs(i, u, {}), self._capacity)
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
