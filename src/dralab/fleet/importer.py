"""Import ResourceSlices from real clusters, including older NVIDIA driver releases.

Older releases published other attribute names (notes §2.6); later layers
only understand the current set. ``import_slices`` turns what a cluster
published into current-style v1 slices and reports every device it renamed.

Mapping for driver ``gpu.nvidia.com`` (everything else passes unchanged):

=================================  ==================================================
older release                      current (main)
=================================  ==================================================
``pcieBusID`` (string, v25.3)      ``resource.kubernetes.io/pciBusID`` (lower case)
``numa`` (int, VFIO, v0.4)         ``resource.kubernetes.io/numaNode``
``index``, ``minor`` (GPU, v25.3)  kept: no current counterpart, but claims written
``index``, ``parentIndex`` (MIG)   for those releases still select on them (the
                                   driver's own quickstart ``gpu-test6`` does)
MIG ``gpu-<m>-mig-<GI id>-<start>  ``gpu-<m>-mig-<profile>-<GI id>-<start>`` (profile
-<size>`` (v25.3)                  from the device's ``profile`` attribute)
``driverVersion``,                 a ``version`` attribute, semver-normalised
``cudaDriverVersion``,             (``580.105.08`` -> ``580.105.8``, ``12.4`` ->
``cudaComputeCapability`` given    ``12.4.0``)
as strings or unnormalised
=================================  ==================================================

Older API versions are accepted as plain documents and converted by
``dralab.api.versions``: the served ``v1beta2`` and ``v1beta1`` as the API
server converts them, and the ``v1alpha3`` slices of 1.31-1.33 clusters (no
longer served, but still found in dumps of older clusters) as well.

All functions are pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.errors import LoadError
from dralab.api.resource import Device, DeviceAttribute, ResourceSlice
from dralab.api.versions import legacy_slice_to_v1, to_v1

from .mig import profile_token
from .naming import driver_semver

__all__ = [
    "ImportResult",
    "import_slices",
    "normalize_slice",
    "upgrade_slice_document",
]

DRIVER = "gpu.nvidia.com"
_STD = "resource.kubernetes.io/"
_OLD_MIG = re.compile(r"^gpu-([0-9]+)-mig-([0-9]+)-([0-9]+)-([0-9]+)$")
_VERSION_TEXT = re.compile(r"^v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?$")
_VERSIONED = ("driverVersion", "cudaDriverVersion", "cudaComputeCapability")


@dataclass(frozen=True, slots=True)
class ImportResult:
    """Current-style slices, plus what changed.

    ``renamed`` maps (driver, pool, old device name) to the new name, so
    allocations recorded against old names can be translated; ``changes``
    has one human-readable line per slice that was rewritten.
    """

    slices: tuple[ResourceSlice, ...]
    renamed: Mapping[tuple[str, str, str], str] = field(default_factory=dict)
    changes: tuple[str, ...] = ()


def upgrade_slice_document(data: Mapping[str, Any]) -> dict[str, Any]:
    """A ResourceSlice document of any served version (or a 1.31-1.33 v1alpha3 one) as v1 data.

    Other documents come back as a shallow copy.
    """
    if data.get("kind") != "ResourceSlice":
        return dict(data)
    return to_v1(legacy_slice_to_v1(data))


def _version_attr(attr: DeviceAttribute) -> DeviceAttribute:
    text = attr.version if attr.version is not None else attr.string
    if text is None:
        return attr
    match = _VERSION_TEXT.match(text.strip())
    if match is None:
        return attr
    return DeviceAttribute(version=driver_semver(".".join(g for g in match.groups() if g)))


def _normalize_attributes(attrs: Mapping[str, DeviceAttribute]) -> dict[str, DeviceAttribute]:
    out = dict(attrs)
    old_bus = out.pop("pcieBusID", None)
    if old_bus is not None and f"{_STD}pciBusID" not in out and old_bus.string is not None:
        out[f"{_STD}pciBusID"] = DeviceAttribute(string=old_bus.string.lower())
    old_numa = out.pop("numa", None)
    if old_numa is not None and f"{_STD}numaNode" not in out and old_numa.int_ is not None:
        out[f"{_STD}numaNode"] = DeviceAttribute(int_=old_numa.int_)
    for key in _VERSIONED:
        if key in out:
            out[key] = _version_attr(out[key])
    return {k: out[k] for k in sorted(out)}


def _new_name(device: Device) -> str:
    match = _OLD_MIG.match(device.name)
    profile = device.attributes.get("profile")
    if match is None or profile is None or profile.string is None:
        return device.name
    minor, gi_id, start = match[1], match[2], match[3]
    return f"gpu-{minor}-mig-{profile_token(profile.string)}-{gi_id}-{start}"


def normalize_slice(slice_: ResourceSlice) -> tuple[ResourceSlice, dict[str, str]]:
    """``slice_`` with current NVIDIA attribute names, and its device renames (old -> new).

    Slices of other drivers come back unchanged (the same object).
    """
    if slice_.spec.driver != DRIVER:
        return slice_, {}
    renames: dict[str, str] = {}
    devices = []
    changed = False
    for device in slice_.spec.devices:
        attrs = _normalize_attributes(device.attributes)
        name = _new_name(device)
        if name != device.name:
            renames[device.name] = name
        if name != device.name or attrs != device.attributes:
            changed = True
            device = msgspec.structs.replace(device, name=name, attributes=attrs)
        devices.append(device)
    if not changed:
        return slice_, {}
    spec = msgspec.structs.replace(slice_.spec, devices=devices)
    return msgspec.structs.replace(slice_, spec=spec), renames


def import_slices(items: Iterable[KubeObject | Mapping[str, Any]]) -> ImportResult:
    """Normalise the ResourceSlices among ``items`` (objects or plain documents).

    Other objects are ignored. Raises LoadError for a document that is not a
    valid ResourceSlice even after the version upgrade.
    """
    slices: list[ResourceSlice] = []
    renamed: dict[tuple[str, str, str], str] = {}
    changes: list[str] = []
    for item in items:
        obj: KubeObject = item if isinstance(item, KubeObject) \
            else decode(upgrade_slice_document(item))
        if not isinstance(obj, ResourceSlice):
            if not isinstance(item, KubeObject) and item.get("kind") == "ResourceSlice":
                raise LoadError(f"ResourceSlice {obj.name}: unsupported apiVersion "
                                f"{item.get('apiVersion')!r}")
            continue
        new, renames = normalize_slice(obj)
        slices.append(new)
        pool = new.spec.pool.name
        for old, name in renames.items():
            renamed[(new.spec.driver, pool, old)] = name
        if new is not obj:
            changes.append(f"{new.name}: normalised {len(new.spec.devices)} device(s)"
                           + (f", renamed {len(renames)}" if renames else ""))
    return ImportResult(tuple(slices), renamed, tuple(changes))
