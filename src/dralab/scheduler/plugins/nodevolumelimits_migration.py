"""In-tree volumes counted as the CSI volumes they migrated to, as NodeVolumeLimits reads
them through k8s.io/csi-translation-lib in kube-scheduler v1.36.2.

An in-tree volume source (inline in a pod, or in a PersistentVolume's spec) that a CSI
driver took over is counted against that driver's attach limit under the volume handle
the translation gives it. Only the handle and the driver matter to the count; the rest of
a translated PersistentVolume (topology, access modes, attributes) is not built.

NodeVolumeLimits counts a migrated volume only on a node that has a CSINode object and only
for the five plugins whose migration is always on (utils.go isCSIMigrationOn): AWS EBS, GCE
PD, Azure Disk, Cinder and Portworx. Azure File and vSphere volumes are migratable (a pod
with one is not skipped in PreFilter) but never counted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "AWS_EBS_DRIVER",
    "GCE_PD_DRIVER",
    "TranslationError",
    "csi_driver_for_plugin",
    "inline_plugin",
    "migration_counted",
    "translate_source",
]

AWS_EBS_DRIVER = "ebs.csi.aws.com"
GCE_PD_DRIVER = "pd.csi.storage.gke.io"

# The volume source field of each migratable in-tree plugin: (in-tree plugin name, CSI driver).
_PLUGINS: dict[str, tuple[str, str]] = {
    "gcePersistentDisk": ("kubernetes.io/gce-pd", GCE_PD_DRIVER),
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", AWS_EBS_DRIVER),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    "azureFile": ("kubernetes.io/azure-file", "file.csi.azure.com"),
    "vsphereVolume": ("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"),
    "portworxVolume": ("kubernetes.io/portworx-volume", "pxd.portworx.com"),
}
_DRIVER_BY_PLUGIN = {plugin: driver for plugin, driver in _PLUGINS.values()}
# utils.go isCSIMigrationOn: the plugins whose migration is on (given a CSINode).
_COUNTED = frozenset({"kubernetes.io/aws-ebs", "kubernetes.io/portworx-volume",
                      "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                      "kubernetes.io/cinder"})
_EBS_VOLUME_ID = re.compile(r"^vol-[^/]*$")
_UNSPECIFIED = "UNSPECIFIED"
_GCE_ZONES = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")


class TranslationError(Exception):
    """The translation library refused the volume (its message)."""


def _source_key(source: Mapping[str, Any]) -> str | None:
    """The migratable in-tree field set on a volume (or PV spec), first in the library's
    order of checks being irrelevant: the API allows one source per volume."""
    for key in _PLUGINS:
        if isinstance(source.get(key), Mapping):
            return key
    return None


def inline_plugin(volume: Mapping[str, Any]) -> str:
    """IsInlineMigratable / GetInTreePluginNameFromSpec: the in-tree plugin name of a pod
    volume a CSI driver took over, or ''."""
    key = _source_key(volume)
    return _PLUGINS[key][0] if key is not None else ""


def csi_driver_for_plugin(plugin: str) -> str:
    """GetCSINameFromInTreeName (also IsMigratableIntreePluginByName: '' when not)."""
    return _DRIVER_BY_PLUGIN.get(plugin, "")


def migration_counted(plugin: str, has_csi_node: bool) -> bool:
    """isCSIMigrationOn: the node has a CSINode and the plugin's migration is on."""
    return has_csi_node and plugin in _COUNTED


def translate_source(spec: Mapping[str, Any], labels: Mapping[str, str] | None = None
                     ) -> tuple[str, str] | None:
    """(CSI driver, volume handle) of the in-tree source in ``spec`` (a pod volume, or a
    PersistentVolume's spec with the PV's ``labels``), None when it has none. Raises
    TranslationError where the library fails."""
    key = _source_key(spec)
    if key is None:
        return None
    source: Mapping[str, Any] = spec[key]
    driver = _PLUGINS[key][1]
    if key == "awsElasticBlockStore":
        return driver, _ebs_volume_id(str(source.get("volumeID") or ""))
    if key == "gcePersistentDisk":
        return driver, _gce_handle(str(source.get("pdName") or ""), labels)
    if key == "azureDisk":
        kind = source.get("kind")
        if kind is not None and str(kind).lower() != "managed":
            raise TranslationError(f"kind({kind}) is not supported in csi migration")
        return driver, str(source.get("diskURI") or "")
    if key == "azureFile":
        # Never counted (isCSIMigrationOn is off for it); the handle is not needed.
        return driver, ""
    if key == "vsphereVolume":
        return driver, str(source.get("volumePath") or "")
    return driver, str(source.get("volumeID") or "")


def _ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: aws://<zone>/<id> and aws:///<id> name vol-...;
    anything else is taken as the bare id."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    aws_id = urlsplit(kubernetes_id).path.strip("/")
    if not _EBS_VOLUME_ID.match(aws_id):
        raise TranslationError("failed to translate Kubernetes ID to EBS Volume ID "
                               f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _gce_handle(pd_name: str, labels: Mapping[str, str] | None) -> str:
    """An inline disk is projects/UNSPECIFIED/zones/UNSPECIFIED/disks/<pd>; a PV's zone
    label (beta first) names its zone, or with several zones ('__'-joined) its region."""
    if labels is None:
        return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd_name}"
    zones_label = labels.get(_GCE_ZONES[0]) or labels.get(_GCE_ZONES[1]) or ""
    zones = zones_label.split("__")
    if len(zones) == 1 and zones[0]:
        return f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        regions = set()
        for zone in zones:
            parts = zone.split("-")
            if len(parts) != 3:
                raise TranslationError(
                    "failed to get region from zones: zone in unexpected format, expected: "
                    f"{{locale}}-{{region}}-{{zone}}, got: {zone}")
            regions.add(f"{parts[0]}-{parts[1]}")
        if len(regions) != 1:
            raise TranslationError("failed to get region from zones: multiple or no regions "
                                   f"gotten from zones, got: {zones}")
        return f"projects/{_UNSPECIFIED}/regions/{regions.pop()}/disks/{pd_name}"
    return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd_name}"
