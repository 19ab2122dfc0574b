"""Names shared by dralab's multi-node NVLink (ComputeDomain) support, issue 36.

Plain constants and small pure helpers only (api layer). Values are those of
NVIDIA's k8s-dra-driver-gpu at commit 22407113785e78c7763b4637689a201eb39c6199
(Apache-2.0) and of GPU Feature Discovery; add names here, never rename them:
other layers code against them.
"""

from __future__ import annotations

from collections.abc import Mapping

# GPU Feature Discovery labels each MNNVL-capable node "<clusterUUID>.<cliqueID>"
# (driver docs/install.md): nodes with the same value share one NVLink domain.
CLIQUE_LABEL = "nvidia.com/gpu.clique"

GPU_DRIVER = "gpu.nvidia.com"
COMPUTE_DOMAIN_DRIVER = "compute-domain.nvidia.com"
CHANNEL_DEVICE_CLASS = "compute-domain-default-channel.nvidia.com"
DAEMON_DEVICE_CLASS = "compute-domain-daemon.nvidia.com"

# cmd/compute-domain-controller/computedomain.go: on nodes and daemon pods (value:
# the ComputeDomain's uid) and on the RCTs the controller writes.
COMPUTE_DOMAIN_LABEL = "resource.nvidia.com/computeDomain"
COMPUTE_DOMAIN_CLIQUE_LABEL = "resource.nvidia.com/computeDomain.cliqueID"

COMPUTE_DOMAIN_GROUP = "resource.nvidia.com"
COMPUTE_DOMAIN_KIND = "ComputeDomain"

# cmd/compute-domain-kubelet-plugin/deviceinfo.go: devices "channel-<id>" and
# "daemon-<id>", attributes "type" (string) and "id" (int).
CHANNEL_TYPE = "channel"
DAEMON_TYPE = "daemon"


def clique_of(labels: Mapping[str, str]) -> str | None:
    """The node's NVLink domain (its clique label), None when it has none."""
    value = labels.get(CLIQUE_LABEL)
    return value or None


def device_name(kind: str, ident: int) -> str:
    """The device name the compute-domain kubelet plugin publishes (CanonicalName)."""
    return f"{kind}-{ident}"


# cmd/compute-domain-controller/main.go defaultMaxNodesPerIMEXDomain: "On GB200 and
# GB300 the limit is 18" -- the nodes (compute trays) of one NVL72 rack.
MAX_NODES_PER_IMEX_DOMAIN = 18

# cmd/compute-domain-kubelet-plugin/nvlib.go getImexChannelCount: 2048 IMEX channels per
# node exist, but driver.go publishes only channel 0 (the others are never advertised),
# plus the single daemon-0: two devices per node in one slice.
IMEX_CHANNEL_COUNT = 2048
PUBLISHED_CHANNEL_IDS = (0,)
PUBLISHED_DAEMON_IDS = (0,)


def clique_value(cluster_uuid: str, clique_id: int | str) -> str:
    """The clique label's value: ``<clusterUUID>.<cliqueID>`` (nvlib.go getCliqueID)."""
    return f"{cluster_uuid}.{clique_id}"
