"""The NVIDIA DRA driver profile (``gpu.nvidia.com``): what its kubelet plugin publishes.

Read from kubernetes-sigs/dra-driver-nvidia-gpu (formerly NVIDIA/k8s-dra-driver-gpu)
``cmd/gpu-kubelet-plugin/{deviceinfo,mig,partitions,driver,consumable_shares}.go``
at main @ 9593204 (2026-08-07), checked against its bats tests' exact attribute
lists (``tests/bats/test_gpu_{basic,mig,dynmig}.bats``):

* GPU: ``type``, ``uuid``, ``productName``, ``brand``, ``architecture``,
  ``cudaComputeCapability``, ``driverVersion``, ``cudaDriverVersion``,
  ``resource.kubernetes.io/pciBusID``, ``resource.kubernetes.io/pcieRoot`` and
  ``addressingMode`` (when NVML reports one);
* MIG: the same minus ``uuid`` plus ``parentUUID`` and ``profile``; static MIG
  devices also have ``uuid``;
* ``resource.kubernetes.io/numaNode`` only with ``spec.nvidia.numaNodeAttribute``
  (main publishes it when the host gives the GPU a NUMA node; v0.4.1 does not);
* no ``index``/``minor``/``parentIndex`` any more (removed in v25.8).

Modes, as in the driver (notes §1-§2, §6.4):

* **default** (MIG off, or static MIG): one slice per node holding every
  device -- full GPUs ``gpu-<minor>`` and, for GPUs partitioned by the admin,
  their MIG devices ``gpu-<minor>-mig-<profile>-<GI id>-<start>`` (with
  ``uuid`` and ``memorySlice<i>`` capacities) instead of the full GPU. An
  empty partition list in the spec means MIG mode off for that GPU.
  Nodes with more than 128 devices get several slices (the driver would
  publish one invalid slice; we split instead).
* **DynamicMIG**, Kubernetes >= 1.35 ("split"): a counters slice holding one
  CounterSet ``gpu-<minor>-counter-set`` per GPU, then one devices slice per
  GPU in PCI order with every (profile, placement) as an abstract MIG device
  (no ``uuid``) consuming its counters, devices sorted by name. Hopper and
  newer also publish the full GPU consuming every counter; Ampere (MIG mode on)
  does not. ``resourceSliceCount = 1 + #GPUs``. A slice may hold at most 8
  counter sets, so nodes with more than 8 GPUs get ceil(#GPUs / 8) counters
  slices (the driver has no such rule yet; its single slice would be rejected).
* DynamicMIG on Kubernetes 1.34 ("combined"): one slice per GPU holding its
  counter set and its devices.
* **ConsumableShares**: every GPU/MIG device gets ``allowMultipleAllocations``
  and a ``memory`` request policy (plus a ``shares`` capacity for ``<N>``).

Per pool a ``NvidiaPool`` is built once; it precomputes every part that does
not depend on the node (names, capacities, counter sets, consumptions, PCI
attributes), so a node costs one dict and one Device per published device.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    chunks,
    int_attr,
    mebibytes,
    node_slices,
    number,
    pci_attributes,
    str_attr,
    version_attr,
)
from .catalog import GpuModel, MigGeometry, MigProfile
from .mig import MigPlacement, assign_placements, mig_device_name, placements_of
from .naming import driver_semver, slice_suffixes, stable_uuid
from .spec import FleetSpec, NodePool
from .topology import PciSlot

__all__ = ["CD_DRIVER", "DRIVER", "NvidiaPool", "camel_to_dns", "compute_domain_slices"]

DRIVER = "gpu.nvidia.com"
CD_DRIVER = "compute-domain.nvidia.com"

_MIG_CAPACITIES = ("copyEngines", "decoders", "encoders", "jpegEngines", "memory",
                   "multiprocessors", "ofaEngines")


def camel_to_dns(name: str) -> str:
    """Capacity name to counter name, the driver's way: ``copyEngines`` -> ``copy-engines``."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and (name[i - 1].islower() or name[i - 1].isdigit()):
            out.append("-")
        out.append(ch.lower())
    return "".join(out)


def _profile_capacity(p: MigProfile) -> dict[str, int]:
    return {"copyEngines": p.copy_engines, "decoders": p.decoders, "encoders": p.encoders,
            "jpegEngines": p.jpeg_engines, "memory": p.memory_mib,
            "multiprocessors": p.multiprocessors, "ofaEngines": p.ofa_engines}


def _capacity_map(values: dict[str, int]) -> dict[str, DeviceCapacity]:
    return {k: DeviceCapacity(value=mebibytes(v) if k == "memory" else number(v))
            for k, v in sorted(values.items())}


def _counters(values: dict[str, int], slots: range) -> dict[str, Counter]:
    counters = {camel_to_dns(k): Counter(value=mebibytes(v) if k == "memory" else number(v))
                for k, v in values.items()}
    for i in slots:
        counters[f"memory-slice-{i}"] = Counter(value=number(1))
    return {k: counters[k] for k in sorted(counters)}


_ZERO = parse_quantity("0")
_STEP = parse_quantity("1Mi")
_ONE = number(1)


def _share_capacity(capacity: dict[str, DeviceCapacity], mode: str) -> dict[str, DeviceCapacity]:
    """Capacities under ``--consumable-shares=<mode>`` (notes §6.4, consumable_shares.go)."""
    memory = capacity.get("memory")
    if memory is None:
        return capacity
    top = Quantity((memory.value.nano // _STEP.nano) * _STEP.nano, memory.value.format)
    low, default = (_STEP, top) if mode == "memory" else (_ZERO, _ZERO)
    out = dict(capacity)
    out["memory"] = DeviceCapacity(value=top, request_policy=CapacityRequestPolicy(
        default=default, valid_range=CapacityRequestPolicyRange(min=low, max=top, step=_STEP)))
    if mode not in ("unlimited", "memory"):
        n = number(int(mode))
        out["shares"] = DeviceCapacity(value=n, request_policy=CapacityRequestPolicy(
            default=_ONE, valid_range=CapacityRequestPolicyRange(min=_ONE, max=n, step=_ONE)))
    return {k: out[k] for k in sorted(out)}


@dataclass(frozen=True, slots=True)
class _Entry:
    """One device of a GPU, node-independent: name, kind and the shared parts."""

    name: str
    kind: str  # "gpu" | "mig" | "static-mig"
    profile: str | None
    capacity: dict[str, DeviceCapacity]
    consumes: list[DeviceCounterConsumption]


class NvidiaPool:
    """Generates the ``gpu.nvidia.com`` slices of every node of one pool.

    Built once per pool (node-independent work happens here); ``slices`` is
    then called per node. Pure given its inputs; returned objects share
    immutable parts with each other.
    """

    def __init__(self, spec: FleetSpec, pool: NodePool, model: GpuModel,
                 slots: list[PciSlot]) -> None:
        self.pool = pool
        self.model = model
        self.slots = slots
        self.mode = pool.gpu.mig.mode
        self.split = int(spec.kubernetes_version.split(".")[1]) >= 35
        self.shares = (str(pool.gpu.sharing.consumable_shares)
                       if pool.gpu.sharing.consumable_shares is not None else None)
        common = {
            "architecture": str_attr(model.architecture),
            "brand": str_attr(model.brand),
            "cudaComputeCapability": version_attr(driver_semver(model.cuda_compute_capability)),
            "cudaDriverVersion": version_attr(driver_semver(spec.nvidia.cuda_driver_version)),
            "driverVersion": version_attr(driver_semver(spec.nvidia.driver_version)),
            "productName": str_attr(model.product_name),
        }
        if model.addressing_mode is not None:
            common["addressingMode"] = str_attr(model.addressing_mode)
        # numaNode: only the driver's unreleased main branch publishes it (when
        # sysfs gives the GPU a NUMA node); releases up to v0.4.1, the driver's
        # attribute reference and its bats tests have none on GPU/MIG devices.
        numa = spec.nvidia.numa_node_attribute
        pci = [pci_attributes(s.bus_id, s.pcie_root, s.numa if numa else None) for s in slots]
        self._gpu_base = [common | p | {"type": str_attr("gpu")} for p in pci]
        self._mig_base = [common | p | {"type": str_attr("mig")} for p in pci]
        self._entries = [self._gpu_entries(minor) for minor in range(len(slots))]
        self._counter_sets = self._make_counter_sets()

    # --- node-independent parts -------------------------------------------------

    def _geometry(self) -> MigGeometry:
        assert self.model.mig is not None
        return self.model.mig

    def _full_capacity(self) -> dict[str, DeviceCapacity]:
        return {"memory": DeviceCapacity(value=mebibytes(self.model.memory_mib))}

    def _shared(self, capacity: dict[str, DeviceCapacity]) -> dict[str, DeviceCapacity]:
        return _share_capacity(capacity, self.shares) if self.shares else capacity

    def _static_items(self, minor: int) -> list[str]:
        mig = self.pool.gpu.mig
        return list(mig.per_gpu[minor]) if mig.per_gpu else list(mig.profiles)

    def _gpu_entries(self, minor: int) -> list[_Entry]:
        if self.mode == "static":
            items = self._static_items(minor)
            if not items:
                return [_Entry(f"gpu-{minor}", "gpu", None,
                               self._shared(self._full_capacity()), [])]
            geometry = self._geometry()
            entries = []
            for p in assign_placements(geometry, items):
                caps = _capacity_map(_profile_capacity(p.profile))
                for i in p.slots:
                    caps[f"memorySlice{i}"] = DeviceCapacity(value=number(1))
                entries.append(_Entry(mig_device_name(minor, p.profile, p.start), "static-mig",
                                      p.profile.name, self._shared(dict(sorted(caps.items()))),
                                      []))
            return sorted(entries, key=lambda e: e.name)
        if self.mode == "off":
            return [_Entry(f"gpu-{minor}", "gpu", None, self._shared(self._full_capacity()), [])]
        geometry = self._geometry()
        counter_set = f"gpu-{minor}-counter-set"
        full_values = geometry.max_capacity()
        entries = []
        if self.model.hot_mig_toggle:
            entries.append(_Entry(
                f"gpu-{minor}", "gpu", None, self._shared(_capacity_map(full_values)),
                [DeviceCounterConsumption(counter_set=counter_set, counters=_counters(
                    full_values, range(geometry.memory_slices)))]))
        for p in placements_of(geometry):
            entries.append(self._dynamic_entry(minor, counter_set, p))
        return sorted(entries, key=lambda e: e.name)

    def _dynamic_entry(self, minor: int, counter_set: str, p: MigPlacement) -> _Entry:
        values = _profile_capacity(p.profile)
        return _Entry(mig_device_name(minor, p.profile, p.start), "mig", p.profile.name,
                      self._shared(_capacity_map(values)),
                      [DeviceCounterConsumption(counter_set=counter_set,
                                                counters=_counters(values, p.slots))])

    def _make_counter_sets(self) -> list[CounterSet]:
        if self.mode != "dynamic":
            return []
        geometry = self._geometry()
        values = geometry.max_capacity()
        return [CounterSet(name=f"gpu-{minor}-counter-set",
                           counters=_counters(values, range(geometry.memory_slices)))
                for minor in range(len(self.slots))]

    # --- per node ---------------------------------------------------------------

    def gpu_uuids(self, seed: int, node: str) -> list[str]:
        """NVML-style ``GPU-<uuid>`` of each GPU of ``node`` (minor order)."""
        return [f"GPU-{stable_uuid(seed, f'{node}/gpu/{s.bus_id}')}" for s in self.slots]

    def _devices(self, minor: int, uuid: str, seed: int, node: str) -> list[Device]:
        gpu_attrs: dict[str, DeviceAttribute] | None = None
        mig_attrs: dict[str | None, dict[str, DeviceAttribute]] = {}
        multi = True if self.shares else None
        out = []
        for e in self._entries[minor]:
            if e.kind == "gpu":
                if gpu_attrs is None:
                    raw = self._gpu_base[minor] | {"uuid": str_attr(uuid)}
                    gpu_attrs = {k: raw[k] for k in sorted(raw)}
                attrs = gpu_attrs
            else:
                attrs = mig_attrs.get(e.profile) or {}
                if not attrs:
                    raw = self._mig_base[minor] | {"parentUUID": str_attr(uuid),
                                                   "profile": str_attr(e.profile or "")}
                    attrs = mig_attrs[e.profile] = {k: raw[k] for k in sorted(raw)}
                if e.kind == "static-mig":
                    mig_uuid = stable_uuid(seed, f"{node}/mig/{minor}/{e.name}")
                    raw = attrs | {"uuid": str_attr(f"MIG-{mig_uuid}")}
                    attrs = {k: raw[k] for k in sorted(raw)}
            out.append(Device(name=e.name, attributes=attrs, capacity=e.capacity,
                              consumes_counters=e.consumes, allow_multiple_allocations=multi))
        return out

    def slices(self, seed: int, node: str, node_uid: str) -> list[ResourceSlice]:
        """Every ``gpu.nvidia.com`` slice of ``node``, in publishing order."""
        uuids = self.gpu_uuids(seed, node)
        per_gpu = [self._devices(m, u, seed, node) for m, u in enumerate(uuids)]
        contents: list[tuple[list[Device], list[CounterSet]]]
        if self.mode != "dynamic":
            flat = [d for devices in per_gpu for d in devices]
            contents = [(part, []) for part in chunks(flat, MAX_DEVICES)]
        elif self.split:
            sets = self._counter_sets
            contents = [([], sets[i:i + MAX_COUNTER_SETS])
                        for i in range(0, len(sets), MAX_COUNTER_SETS)]
            contents += [(devices, []) for devices in per_gpu]
        else:
            contents = [(devices, [cs]) for devices, cs in zip(per_gpu, self._counter_sets,
                                                               strict=True)]
        suffixes = slice_suffixes(seed, f"{node}/{DRIVER}", len(contents))
        return node_slices(node, node_uid, DRIVER, suffixes, contents)

    # --- node facts ---------------------------------------------------------------

    def extended_resources(self) -> dict[str, int]:
        """What the legacy device plugin (mixed MIG strategy) would advertise per node."""
        out: dict[str, int] = {}
        whole = 0
        for minor in range(len(self.slots)):
            items = self._static_items(minor) if self.mode == "static" else []
            if not items:
                whole += 1
                continue
            for item in items:
                key = f"nvidia.com/mig-{item.partition('@')[0].strip()}"
                out[key] = out.get(key, 0) + 1
        if whole:
            out["nvidia.com/gpu"] = whole
        return dict(sorted(out.items()))


def compute_domain_slices(seed: int, node: str, node_uid: str) -> list[ResourceSlice]:
    """The ``compute-domain.nvidia.com`` pool of a node: IMEX ``channel-0`` and ``daemon-0``."""
    devices = [
        Device(name="channel-0", attributes={"id": int_attr(0), "type": str_attr("channel")}),
        Device(name="daemon-0", attributes={"id": int_attr(0), "type": str_attr("daemon")}),
    ]
    suffixes = slice_suffixes(seed, f"{node}/{CD_DRIVER}", 1)
    return node_slices(node, node_uid, CD_DRIVER, suffixes, [(devices, [])])
