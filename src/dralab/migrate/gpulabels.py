"""GPU node labels (GPU feature discovery) and what they become under DRA.

With the device plugin, a pod picks GPUs through labels GPU feature discovery
puts on nodes: ``nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3``,
``nvidia.com/gpu.memory=81559`` (MiB), ``nvidia.com/gpu.family=hopper``. Under DRA
the same choice is a CEL selector on the device's own attributes
(``productName``, ``architecture``, capacity ``memory``), so it travels with the
claim instead of the node. Labels that mean "this node has GPUs / shares them"
are implied by the claim and dropped; every other ``nvidia.com/`` label has no
device attribute and stays a node selector (reported).

A requirement is (label, operator, values) as in a node-affinity match
expression; a ``nodeSelector`` entry is (label, In, [value]).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dralab.api.celtext import cel_string
from dralab.fleet.catalog import CATALOG

__all__ = [
    "GPU_LABEL_PREFIX",
    "IMPLIED_LABELS",
    "SHARING_LABELS",
    "LabelRequirement",
    "Translation",
    "is_gpu_label",
    "translate",
]

GPU_LABEL_PREFIX = "nvidia.com/"
PRODUCT = "nvidia.com/gpu.product"
MEMORY = "nvidia.com/gpu.memory"
FAMILY = "nvidia.com/gpu.family"
# Labels the claim itself implies (any allocated GPU device satisfies them).
IMPLIED_LABELS = frozenset({"nvidia.com/gpu.present", "nvidia.com/gpu.deploy.device-plugin",
                            "nvidia.com/gpu.deploy.gpu-feature-discovery"})
# Labels of time-slicing / MPS through the device plugin; DRA sharing replaces them.
SHARING_LABELS = frozenset({"nvidia.com/gpu.sharing-strategy", "nvidia.com/gpu.replicas"})
MIG_LABELS = frozenset({"nvidia.com/mig.capable", "nvidia.com/mig.strategy"})
_SHARED_SUFFIX = "-SHARED"  # GFD appends it to the product label of time-sliced GPUs
_DEVICE = "device.attributes['gpu.nvidia.com']"
_MEMORY = "device.capacity['gpu.nvidia.com'].memory"
_FAMILIES = {"kepler": "Kepler", "maxwell": "Maxwell", "pascal": "Pascal", "volta": "Volta",
             "turing": "Turing", "ampere": "Ampere", "ada-lovelace": "Ada Lovelace",
             "hopper": "Hopper", "blackwell": "Blackwell", "rubin": "Rubin"}


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def text(self) -> str:
        if self.operator in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.operator}"
        return f"{self.key} {self.operator} {','.join(self.values)}"


@dataclass(frozen=True, slots=True)
class Translation:
    """What one requirement becomes: ``cel`` (a device selector), ``dropped`` (implied by
    the claim) or neither (kept on the pod, with ``reason``)."""

    requirement: LabelRequirement
    cel: str | None = None
    dropped: bool = False
    reason: str = ""

    @property
    def kept(self) -> bool:
        return self.cel is None and not self.dropped


def is_gpu_label(key: str) -> bool:
    return key.startswith(GPU_LABEL_PREFIX)


def _product_name(label: str) -> str | None:
    """The NVML product name whose GFD label is ``label`` (catalog models), or None."""
    label = label.removesuffix(_SHARED_SUFFIX)
    return next((m.product_name for m in CATALOG.values() if m.gpu_product_label == label), None)


def _product_cel(values: Sequence[str]) -> str:
    """productName matching any of the labels; an unknown model compares its label form."""
    terms = []
    for value in values:
        name = _product_name(value)
        if name is not None:
            terms.append(f"{_DEVICE}.productName == {cel_string(name)}")
        else:  # GFD writes the product name with '-' for ' '
            label = value.removesuffix(_SHARED_SUFFIX)
            terms.append(f"{_DEVICE}.productName.replace(' ', '-') == {cel_string(label)}")
    return terms[0] if len(terms) == 1 else "(" + " || ".join(terms) + ")"


def _mib(value: str) -> int | None:
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 9 else None


def _memory_cel(req: LabelRequirement) -> str | None:
    numbers = [_mib(v) for v in req.values]
    if not numbers or any(n is None for n in numbers):
        return None
    if req.operator in ("Gt", "Lt") and len(numbers) == 1:
        op = ">" if req.operator == "Gt" else "<"
        return f"{_MEMORY}.compareTo(quantity('{numbers[0]}Mi')) {op} 0"
    terms = [f"{_MEMORY}.compareTo(quantity('{n}Mi')) == 0" for n in numbers]
    return terms[0] if len(terms) == 1 else "(" + " || ".join(terms) + ")"


def _family_cel(values: Sequence[str]) -> str | None:
    names = [_FAMILIES.get(v.lower()) for v in values]
    if any(n is None for n in names):
        return None
    terms = [f"{_DEVICE}.architecture == {cel_string(n or '')}" for n in names]
    return terms[0] if len(terms) == 1 else "(" + " || ".join(terms) + ")"


def translate(req: LabelRequirement, device_type: str) -> Translation:
    """What ``req`` on a GPU label becomes for a claim of ``device_type`` (gpu, mig, share)."""
    key, op = req.key, req.operator
    if key in IMPLIED_LABELS and op in ("In", "Exists") and set(req.values) <= {"true"}:
        return Translation(req, dropped=True)
    if key in SHARING_LABELS and device_type == "share":
        return Translation(req, dropped=True)
    if key in MIG_LABELS and device_type == "mig" and op in ("In", "Exists"):
        return Translation(req, dropped=True)
    if op == "Exists" and key in (PRODUCT, MEMORY, FAMILY):
        return Translation(req, dropped=True)  # every NVIDIA GPU device has these
    cel: str | None = None
    if key == PRODUCT and op in ("In", "NotIn") and req.values:
        cel = _product_cel(req.values)
    elif key == FAMILY and op in ("In", "NotIn") and req.values:
        cel = _family_cel(req.values)
    elif key == MEMORY and op in ("In", "NotIn", "Gt", "Lt") and device_type != "mig":
        cel = _memory_cel(req)
    if cel is None:
        why = ("a MIG device's memory is its profile's, not the GPU's" if key == MEMORY
               and device_type == "mig" else "no device attribute says this")
        return Translation(req, reason=f"{req.text()}: kept as a node selector ({why})")
    if op == "NotIn":
        cel = f"!({cel})"
    return Translation(req, cel=cel)
