"""GPU model catalog: what NVML reports for each model, and MIG geometry where it exists.

Values follow the reference notes (``nvidia-device-model.md`` §3 and §5). Each
number carries its evidence in a trailing comment: ``obs`` = seen in real
``nvidia-smi``/NVML output, ``doc`` = NVIDIA documentation, ``inf`` =
inferred (verify on hardware). Memory is NVML total memory in MiB, which is
what the DRA driver publishes as the ``memory`` capacity of a full GPU.

The Alibaba 2023 trace names its models ``T4``, ``P100``, ``V100M16``,
``V100M32``, ``A10``, ``G2`` and ``G3`` (``trace_name``). ``G2``/``G3`` are
undisclosed internal codes; we model them as A10-class Ampere parts (GA102,
24 GB) with product names of their own, so that trace model constraints stay
distinguishable. That is an assumption, not a fact.

Everything here is immutable module data; lookups never copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "CATALOG",
    "GpuModel",
    "MigGeometry",
    "MigProfile",
    "by_product_name",
    "by_trace_name",
    "get_model",
    "model_keys",
]


@dataclass(frozen=True, slots=True)
class MigProfile:
    """One GPU-instance profile as ``nvidia-smi mig -lgip``/``-lgipp`` describe it.

    ``memory_slices`` is the placement size on the 8-slot memory axis;
    ``starts`` the valid placement starts; ``compute_slices`` the ``g`` of the
    name. Engine counts and ``memory_mib`` are NVML's GI profile info.
    """

    name: str
    gi_id: int
    compute_slices: int
    memory_slices: int
    starts: tuple[int, ...]
    max_instances: int
    multiprocessors: int
    copy_engines: int
    decoders: int
    jpeg_engines: int
    ofa_engines: int
    memory_mib: int
    encoders: int = 0

    @property
    def media_extension(self) -> bool:
        """``+me`` profiles take the GPU's single OFA (and on A100 its JPEG) unit."""
        return self.name.endswith("+me")

    def slots(self, start: int) -> range:
        """Memory slots a placement at ``start`` occupies."""
        return range(start, start + self.memory_slices)


@dataclass(frozen=True, slots=True)
class MigGeometry:
    """MIG layout rules of one model: 7 compute slices, 8 memory slices, the profiles."""

    profiles: tuple[MigProfile, ...]
    compute_slices: int = 7
    memory_slices: int = 8

    def profile(self, name: str) -> MigProfile:
        """The profile called ``name``; KeyError if the model has none such."""
        for p in self.profiles:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.profiles)

    def max_capacity(self) -> dict[str, int]:
        """Per-dimension maximum over all profiles, as the driver's full-GPU counters use.

        Keys are capacity names (camelCase); ``memory`` is in MiB.
        """
        return {
            "copyEngines": max(p.copy_engines for p in self.profiles),
            "decoders": max(p.decoders for p in self.profiles),
            "encoders": max(p.encoders for p in self.profiles),
            "jpegEngines": max(p.jpeg_engines for p in self.profiles),
            "memory": max(p.memory_mib for p in self.profiles),
            "multiprocessors": max(p.multiprocessors for p in self.profiles),
            "ofaEngines": max(p.ofa_engines for p in self.profiles),
        }


@dataclass(frozen=True, slots=True)
class GpuModel:
    """One GPU model as the NVIDIA DRA driver sees it through NVML.

    ``platform`` is the usual host layout (``x86``: one PCIe root per GPU,
    two NUMA nodes; ``grace``: Grace-Blackwell tray; ``pcie``: a PCIe server
    with GPUs behind shared roots). ``hot_mig_toggle`` is true for Hopper and
    newer, which can switch MIG mode without a GPU reset (so DynamicMIG also
    publishes the full GPU).
    """

    key: str
    product_name: str
    architecture: str
    cuda_compute_capability: str
    memory_mib: int
    multiprocessors: int
    pci_device_id: str
    brand: str = "Nvidia"
    addressing_mode: str | None = "HMM"
    trace_name: str | None = None
    mig: MigGeometry | None = None
    hot_mig_toggle: bool = False
    platform: str = "x86"
    aliases: tuple[str, ...] = field(default=())

    @property
    def gpu_product_label(self) -> str:
        """The ``nvidia.com/gpu.product`` node label value GPU feature discovery sets."""
        return self.product_name.replace(" ", "-")

    @property
    def memory_gib(self) -> int:
        """Total memory rounded up to GiB (used in MIG profile names)."""
        return -(-self.memory_mib // 1024)


def _p(name: str, gi_id: int, g: int, size: int, starts: tuple[int, ...], inst: int,
       sm: int, ce: int, dec: int, jpeg: int, ofa: int, mib: int) -> MigProfile:
    return MigProfile(name=name, gi_id=gi_id, compute_slices=g, memory_slices=size,
                      starts=starts, max_instances=inst, multiprocessors=sm, copy_engines=ce,
                      decoders=dec, jpeg_engines=jpeg, ofa_engines=ofa, memory_mib=mib)


_ALL7 = (0, 1, 2, 3, 4, 5, 6)
_EVEN4 = (0, 2, 4, 6)
_EVEN3 = (0, 2, 4)
_HALF = (0, 4)

# MIG User Guide Table 6 + `nvidia-smi mig -lgip/-lgipp` on A100-40GB (obs).
_A100_40 = MigGeometry(profiles=(
    _p("1g.5gb", 19, 1, 1, _ALL7, 7, 14, 1, 0, 0, 0, 4864),
    _p("1g.5gb+me", 20, 1, 1, _ALL7, 1, 14, 1, 1, 1, 1, 4864),
    _p("1g.10gb", 15, 1, 2, _EVEN4, 4, 14, 1, 1, 0, 0, 9856),
    _p("2g.10gb", 14, 2, 2, _EVEN3, 3, 28, 2, 1, 0, 0, 9856),
    _p("3g.20gb", 9, 3, 4, _HALF, 2, 42, 3, 2, 0, 0, 19968),
    _p("4g.20gb", 5, 4, 4, (0,), 1, 56, 4, 2, 0, 0, 19968),
    _p("7g.40gb", 0, 7, 8, (0,), 1, 98, 7, 5, 1, 1, 40192),
))

# Same geometry as 40GB, names scaled (doc); MiB from an A100 80GB -lgip (obs),
# 1g.20gb and 7g.80gb MiB inferred (notes §5.2).
_A100_80 = MigGeometry(profiles=(
    _p("1g.10gb", 19, 1, 1, _ALL7, 7, 14, 1, 0, 0, 0, 9728),
    _p("1g.10gb+me", 20, 1, 1, _ALL7, 1, 14, 1, 1, 1, 1, 9728),
    _p("1g.20gb", 15, 1, 2, _EVEN4, 4, 14, 1, 1, 0, 0, 19968),
    _p("2g.20gb", 14, 2, 2, _EVEN3, 3, 28, 2, 1, 0, 0, 19968),
    _p("3g.40gb", 9, 3, 4, _HALF, 2, 42, 3, 2, 0, 0, 40192),
    _p("4g.40gb", 5, 4, 4, (0,), 1, 56, 4, 2, 0, 0, 40192),
    _p("7g.80gb", 0, 7, 8, (0,), 1, 98, 7, 5, 1, 1, 80896),
))

# MIG User Guide Table 7; SM/MiB from -lgip transcripts (obs), 1g.20gb/2g.20gb MiB ≈.
_H100 = MigGeometry(profiles=(
    _p("1g.10gb", 19, 1, 1, _ALL7, 7, 16, 1, 1, 1, 0, 9984),
    _p("1g.10gb+me", 20, 1, 1, _ALL7, 1, 16, 1, 1, 1, 1, 9984),
    _p("1g.20gb", 15, 1, 2, _EVEN4, 4, 26, 1, 1, 1, 0, 20096),
    _p("2g.20gb", 14, 2, 2, _EVEN3, 3, 32, 2, 2, 2, 0, 20096),
    _p("3g.40gb", 9, 3, 4, _HALF, 2, 60, 3, 3, 3, 0, 40448),
    _p("4g.40gb", 5, 4, 4, (0,), 1, 64, 4, 4, 4, 0, 40448),
    _p("7g.80gb", 0, 7, 8, (0,), 1, 132, 8, 7, 7, 1, 81152),
))

# MIG User Guide Table 8; IDs/starts inferred from identical fractions, some MiB/SM inferred.
_H200 = MigGeometry(profiles=(
    _p("1g.18gb", 19, 1, 1, _ALL7, 7, 16, 1, 1, 1, 0, 16384),
    _p("1g.18gb+me", 20, 1, 1, _ALL7, 1, 16, 1, 1, 1, 1, 16384),
    _p("1g.35gb", 15, 1, 2, _EVEN4, 4, 26, 1, 1, 1, 0, 33280),
    _p("2g.35gb", 14, 2, 2, _EVEN3, 3, 32, 2, 2, 2, 0, 33280),
    _p("3g.71gb", 9, 3, 4, _HALF, 2, 60, 3, 3, 3, 0, 71424),
    _p("4g.71gb", 5, 4, 4, (0,), 1, 64, 4, 4, 4, 0, 71424),
    _p("7g.141gb", 0, 7, 8, (0,), 1, 132, 8, 7, 7, 1, 143360),
))

_MODELS: tuple[GpuModel, ...] = (
    GpuModel(key="h100-80gb-sxm", product_name="NVIDIA H100 80GB HBM3", architecture="Hopper",
             cuda_compute_capability="9.0", memory_mib=81559, multiprocessors=132,
             pci_device_id="0x2330", mig=_H100, hot_mig_toggle=True,
             aliases=("h100", "h100-sxm", "h100-80gb")),  # obs (qx-h100 capture)
    GpuModel(key="h200-141gb", product_name="NVIDIA H200", architecture="Hopper",
             cuda_compute_capability="9.0", memory_mib=143771, multiprocessors=132,
             pci_device_id="0x2335", mig=_H200, hot_mig_toggle=True,
             aliases=("h200", "h200-sxm")),  # obs
    GpuModel(key="a100-40gb", product_name="NVIDIA A100-SXM4-40GB", architecture="Ampere",
             cuda_compute_capability="8.0", memory_mib=40960, multiprocessors=108,
             pci_device_id="0x20b0", mig=_A100_40,
             aliases=("a100", "a100-40gb-sxm")),  # obs (qx-a100 capture)
    GpuModel(key="a100-40gb-pcie", product_name="NVIDIA A100-PCIE-40GB", architecture="Ampere",
             cuda_compute_capability="8.0", memory_mib=40960, multiprocessors=108,
             pci_device_id="0x20f1", mig=_A100_40, platform="pcie"),  # doc
    GpuModel(key="a100-80gb", product_name="NVIDIA A100-SXM4-80GB", architecture="Ampere",
             cuda_compute_capability="8.0", memory_mib=81920, multiprocessors=108,
             pci_device_id="0x20b2", mig=_A100_80, aliases=("a100-80gb-sxm",)),  # obs
    GpuModel(key="l4", product_name="NVIDIA L4", architecture="Ada Lovelace",
             cuda_compute_capability="8.9", memory_mib=23034, multiprocessors=58,
             pci_device_id="0x27b8", platform="vm"),  # obs
    GpuModel(key="b200", product_name="NVIDIA B200", architecture="Blackwell",
             cuda_compute_capability="10.0", memory_mib=183359, multiprocessors=148,
             pci_device_id="0x2901"),  # obs (nvidia-smi totals); MIG geometry not modelled
    GpuModel(key="gb200", product_name="NVIDIA GB200", architecture="Blackwell",
             cuda_compute_capability="10.0", memory_mib=189471, multiprocessors=152,
             pci_device_id="0x2941", addressing_mode="ATS",
             platform="grace"),  # obs (qx-gb200); SM count inf; MIG geometry not modelled
    # Blackwell Ultra (issue 36's GB300 NVL72: 18 trays of 4 GPUs per rack, like GB200).
    # Compute capability 10.3 and 160 SMs from NVIDIA's Blackwell Ultra documentation
    # (doc); name by GB200's pattern, NVML MiB scaled from GB200's 189471 by 288/192 GiB
    # and the PCI device ID: inf, not seen on hardware here -- verify before relying on them.
    GpuModel(key="gb300", product_name="NVIDIA GB300", architecture="Blackwell",
             cuda_compute_capability="10.3", memory_mib=284206, multiprocessors=160,
             pci_device_id="0x31c2", addressing_mode="ATS",
             platform="grace"),  # doc (cc, SMs); inf (name, MiB, PCI ID); MIG not modelled
    # Models of the Alibaba GPU trace 2023.
    GpuModel(key="t4", product_name="Tesla T4", architecture="Turing",
             cuda_compute_capability="7.5", memory_mib=15360, multiprocessors=40,
             pci_device_id="0x1eb8", trace_name="T4", platform="pcie"),  # obs
    GpuModel(key="p100", product_name="Tesla P100-PCIE-16GB", architecture="Pascal",
             cuda_compute_capability="6.0", memory_mib=16384, multiprocessors=56,
             pci_device_id="0x15f8", trace_name="P100", addressing_mode=None,
             platform="pcie"),  # inf (recent drivers report 16384 MiB)
    GpuModel(key="v100-16gb", product_name="Tesla V100-SXM2-16GB", architecture="Volta",
             cuda_compute_capability="7.0", memory_mib=16384, multiprocessors=80,
             pci_device_id="0x1db1", trace_name="V100M16"),  # inf
    GpuModel(key="v100-32gb", product_name="Tesla V100-SXM2-32GB", architecture="Volta",
             cuda_compute_capability="7.0", memory_mib=32768, multiprocessors=80,
             pci_device_id="0x1db5", trace_name="V100M32"),  # obs
    GpuModel(key="a10", product_name="NVIDIA A10", architecture="Ampere",
             cuda_compute_capability="8.6", memory_mib=23028, multiprocessors=72,
             pci_device_id="0x2236", trace_name="A10", platform="pcie"),  # obs
    GpuModel(key="g2", product_name="Alibaba G2", architecture="Ampere",
             cuda_compute_capability="8.6", memory_mib=23028, multiprocessors=72,
             pci_device_id="0x2236", trace_name="G2"),  # assumption: A10-class
    GpuModel(key="g3", product_name="Alibaba G3", architecture="Ampere",
             cuda_compute_capability="8.6", memory_mib=23028, multiprocessors=72,
             pci_device_id="0x2236", trace_name="G3"),  # assumption: A10-class
)

CATALOG: MappingProxyType[str, GpuModel] = MappingProxyType({m.key: m for m in _MODELS})
_LOOKUP: dict[str, GpuModel] = {}
for _m in _MODELS:
    for _name in (_m.key, *_m.aliases):
        _LOOKUP[_name] = _m


def model_keys() -> tuple[str, ...]:
    """Canonical keys of every catalog model, in catalog order."""
    return tuple(m.key for m in _MODELS)


def get_model(name: str) -> GpuModel:
    """The model with key or alias ``name`` (case-insensitive); KeyError otherwise."""
    return _LOOKUP[name.lower()]


def by_trace_name(name: str) -> GpuModel:
    """The model the Alibaba trace calls ``name`` (``T4``, ``V100M16``, ``G2`` ...)."""
    for m in _MODELS:
        if m.trace_name == name:
            return m
    raise KeyError(name)


def by_product_name(name: str) -> GpuModel | None:
    """The first model whose NVML product name is ``name``, or None."""
    return next((m for m in _MODELS if m.product_name == name), None)
