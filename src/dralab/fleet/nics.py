"""NIC driver profiles: the SR-IOV DRA driver and a dranet-like driver.

Both publish the standard ``resource.kubernetes.io/pcieRoot`` (and
``pciBusID``/``numaNode``), which is what lets one claim ask for a GPU and a
NIC under the same root (``matchAttribute: resource.kubernetes.io/pcieRoot``).

* ``sriov`` -- ``sriovnetwork.k8snetworkplumbingwg.io`` (k8snetworkplumbingwg
  dra-driver-sriov; older write-ups call it ``sriovnetwork.k8s.cni.cncf.io``):
  one device per virtual function, named after the VF's PCI address with
  ``:``/``.`` turned into ``-``, attribute keys qualified with the driver
  name. VFs share their PF's root complex.
* ``dranet`` -- ``dra.net``: one device per physical interface, named after
  the interface, a small ``dra.net/...`` attribute set. Modelled on dranet's
  published shape, not on a captured slice.
"""

from __future__ import annotations

from dralab.api.resource import Device, DeviceAttribute, ResourceSlice

from .build import (
    MAX_DEVICES,
    bool_attr,
    chunks,
    int_attr,
    node_slices,
    pci_attributes,
    str_attr,
)
from .naming import slice_suffixes
from .spec import NicSpec
from .topology import PciSlot

__all__ = ["DRANET_DRIVER", "SRIOV_DRIVER", "NicPool", "nic_driver"]

SRIOV_DRIVER = "sriovnetwork.k8snetworkplumbingwg.io"
DRANET_DRIVER = "dra.net"
MELLANOX = "15b3"
# (PF device id, VF device id) as lspci/ghw print them.
_DEVICE_IDS = {"ConnectX-6": ("101b", "101c"), "ConnectX-7": ("1021", "101e")}


def nic_driver(spec: NicSpec) -> str:
    return SRIOV_DRIVER if spec.driver == "sriov" else DRANET_DRIVER


def _ifname(slot: PciSlot, link_type: str) -> str:
    bus = int(slot.bus_id.split(":")[1], 16)
    return f"ibp{bus}s0" if link_type == "infiniband" else f"enp{bus}s0np0"


def _vf_address(pf: str, index: int) -> str:
    domain, bus, _ = pf.split(":")
    dev, fn = divmod(index + 1, 8)
    return f"{domain}:{bus}:{dev:02x}.{fn}"


class NicPool:
    """Devices of one pool's NICs; node-independent, so built once and reused per node."""

    def __init__(self, spec: NicSpec, slots: list[PciSlot]) -> None:
        self.spec = spec
        self.driver = nic_driver(spec)
        devices = self._sriov(slots) if spec.driver == "sriov" else self._dranet(slots)
        # NIC devices carry no node-specific identity, so every node shares them.
        self._parts = chunks(devices, MAX_DEVICES)

    def _sriov(self, slots: list[PciSlot]) -> list[Device]:
        d = SRIOV_DRIVER
        pf_id, vf_id = _DEVICE_IDS[self.spec.model]
        out = []
        for slot in slots:
            pf_name = _ifname(slot, self.spec.link_type)
            for v in range(self.spec.vfs):
                vf = _vf_address(slot.bus_id, v)
                attrs: dict[str, DeviceAttribute] = {
                    f"{d}/EswitchMode": str_attr("legacy"),
                    f"{d}/PFName": str_attr(pf_name),
                    f"{d}/deviceID": str_attr(vf_id),
                    f"{d}/linkType": str_attr(self.spec.link_type),
                    f"{d}/pciAddress": str_attr(vf),
                    f"{d}/pfDeviceID": str_attr(pf_id),
                    f"{d}/pfPciAddress": str_attr(slot.bus_id),
                    f"{d}/rdmaCapable": bool_attr(True),
                    f"{d}/vendor": str_attr(MELLANOX),
                    f"{d}/vfID": int_attr(v),
                    "dra.net/numaNode": int_attr(slot.numa if slot.numa is not None else -1),
                    "k8s.cni.cncf.io/deviceID": str_attr(vf),
                    **pci_attributes(vf, slot.pcie_root, slot.numa),
                }
                name = vf.replace(":", "-").replace(".", "-")
                out.append(Device(name=name, attributes={k: attrs[k] for k in sorted(attrs)}))
        return out

    def _dranet(self, slots: list[PciSlot]) -> list[Device]:
        pf_id, _ = _DEVICE_IDS[self.spec.model]
        out = []
        for slot in slots:
            ifname = _ifname(slot, self.spec.link_type)
            attrs: dict[str, DeviceAttribute] = {
                "dra.net/ifName": str_attr(ifname),
                "dra.net/pciDevice": str_attr(pf_id),
                "dra.net/pciVendor": str_attr(MELLANOX),
                "dra.net/rdma": bool_attr(True),
                "dra.net/sriov": bool_attr(False),
                "dra.net/virtual": bool_attr(False),
                **pci_attributes(slot.bus_id, slot.pcie_root, slot.numa),
            }
            if slot.numa is not None:
                attrs["dra.net/numaNode"] = int_attr(slot.numa)
            out.append(Device(name=ifname, attributes={k: attrs[k] for k in sorted(attrs)}))
        return out

    def slices(self, seed: int, node: str, node_uid: str) -> list[ResourceSlice]:
        suffixes = slice_suffixes(seed, f"{node}/{self.driver}", len(self._parts))
        return node_slices(node, node_uid, self.driver, suffixes,
                           [(part, []) for part in self._parts])
