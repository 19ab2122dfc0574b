"""Host PCIe/NUMA layouts: where each GPU and NIC of a node sits.

Platforms (synthetic but shaped like the real boards, notes §8 and §12):

* ``x86`` -- HGX/DGX-style: every GPU behind its own PCIe root complex, first
  half on NUMA node 0, second half on 1. The eight slots reproduce the H100
  example node; aligned NICs sit behind the same root as their GPU.
* ``pcie`` -- a PCIe server: two GPUs share a root complex (PCIe switch).
* ``vm`` -- a cloud VM: everything on the emulated root ``pci0000:00``, no
  NUMA affinity (so no ``numaNode`` attribute).
* ``grace`` -- a Grace-Blackwell tray: one PCI domain per GPU, two NUMA nodes.

Layouts depend only on the platform and the counts, so they are computed
once per pool and shared by all its nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PciSlot", "gpu_slots", "nic_slots"]

# (root bus, GPU bus, NUMA node) of the eight GPU slots of the x86 HGX layout.
_HGX: tuple[tuple[int, int, int], ...] = (
    (0x15, 0x1B, 0), (0x37, 0x43, 0), (0x48, 0x52, 0), (0x59, 0x61, 0),
    (0x97, 0x9D, 1), (0xB7, 0xC3, 1), (0xC8, 0xD1, 1), (0xD9, 0xDF, 1),
)
_GRACE_DOMAINS = (0x0008, 0x0009, 0x0018, 0x0019)


@dataclass(frozen=True, slots=True)
class PciSlot:
    """Standard-attribute values of one PCI function; ``numa`` None = no affinity."""

    bus_id: str
    pcie_root: str
    numa: int | None


def _spread(count: int, slots: int) -> list[int]:
    """``count`` slot indices spread evenly over ``slots`` (2 of 8 -> 0, 4)."""
    return [i * slots // count for i in range(count)]


def _x86_slot(index: int, device_offset: int, shared_root: bool) -> PciSlot:
    domain, k = divmod(index, len(_HGX))
    root, bus, numa = _HGX[(k // 2) * 2] if shared_root else _HGX[k]
    if shared_root and k % 2:
        bus += 0x04  # the second GPU behind the same switch
    bus += device_offset
    return PciSlot(f"{domain:04x}:{bus:02x}:00.0", f"pci{domain:04x}:{root:02x}", numa)


def gpu_slots(platform: str, count: int) -> list[PciSlot]:
    """PCI placement of GPUs 0..count-1 (in minor-number order)."""
    if platform == "vm":
        return [PciSlot(f"0000:00:{3 + i:02x}.0", "pci0000:00", None) for i in range(count)]
    if platform == "grace":
        out = []
        for i in range(count):
            group, k = divmod(i, len(_GRACE_DOMAINS))
            domain = _GRACE_DOMAINS[k] + 0x20 * group
            out.append(PciSlot(f"{domain:04x}:01:00.0", f"pci{domain:04x}:00",
                               (k // 2) + 2 * group))
        return out
    shared = platform == "pcie"
    indices = _spread(count, len(_HGX)) if count <= len(_HGX) else list(range(count))
    return [_x86_slot(i, 0, shared) for i in indices]


def nic_slots(platform: str, nics: int, gpus: list[PciSlot], alignment: str) -> list[PciSlot]:
    """PCI placement of NICs 0..nics-1.

    ``pcie``: NIC j shares the root complex (and NUMA node) of GPU
    ``j * len(gpus) // nics``; ``numa``: same NUMA node, its own root;
    ``none``: own roots on NUMA node 0 (none in a VM).
    """
    if platform == "vm":
        # Behind virtual root ports: a bus of its own, so VFs fit beside the PF.
        return [PciSlot(f"0000:{0x10 + j:02x}:00.0", "pci0000:00", None) for j in range(nics)]
    out: list[PciSlot] = []
    for j in range(nics):
        if alignment == "pcie" and gpus:
            gpu = gpus[j * len(gpus) // nics]
            gpu_domain, _, rest = gpu.bus_id.partition(":")
            bus = int(rest.split(":")[0], 16)
            nic_bus = bus - 3 if platform != "grace" else bus + 1
            out.append(PciSlot(f"{gpu_domain}:{nic_bus:02x}:00.0", gpu.pcie_root, gpu.numa))
            continue
        # Own root complexes in a domain of their own, so they never share a GPU's root.
        numa: int | None = 0
        if alignment == "numa" and gpus:
            numa = gpus[j * len(gpus) // nics].numa
        domain, k = 0x100 + j // 8, j % 8
        root = 0x10 + 0x20 * k
        out.append(PciSlot(f"{domain:04x}:{root + 1:02x}:00.0", f"pci{domain:04x}:{root:02x}",
                           numa))
    return out
