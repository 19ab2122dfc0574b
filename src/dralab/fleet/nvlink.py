"""Multi-node NVLink domains of a pool: the node labels GPU Feature Discovery writes.

A pool with ``nvlink`` is cut, in node order, into domains of ``nodesPerDomain``
nodes (an NVL72 rack: 18 compute trays of 4 GPUs), filled inside each zone as
racks are, so no domain spans two zones (a fabric is one rack's switch trays).
Every node of a domain gets ``nvidia.com/gpu.clique=<clusterUUID>.<cliqueID>``,
the value the compute-domain kubelet plugin also derives from NVML (k8s-dra-driver-gpu 22407113,
cmd/compute-domain-kubelet-plugin/nvlib.go getCliqueID). Each domain is its own
NVLink fabric, so it has its own cluster UUID, derived from the seed, the pool
and the domain's number: the same fleet and seed give the same labels.

The GPU driver (gpu.nvidia.com) publishes no clique or NVLink attribute on its
devices at that commit (cmd/gpu-kubelet-plugin/deviceinfo.go), so GPU devices
are unchanged; the domain is only visible as the node label.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dralab.api.nvlink import CLIQUE_LABEL, clique_value

from .naming import stable_uuid
from .nodes import split_sizes
from .spec import NodePool

__all__ = ["clique_labels", "domain_cluster_uuid", "nodes_by_domain"]


def domain_cluster_uuid(seed: int, pool: str, domain: int) -> str:
    """The cluster UUID of the ``domain``-th (0-based) NVLink domain of ``pool``."""
    return stable_uuid(seed, f"nvlink/{pool}/{domain}")


def clique_labels(pool: NodePool, seed: int) -> list[dict[str, str]]:
    """The clique label of each node of ``pool`` in node order ({} without ``nvlink``)."""
    nvl = pool.nvlink
    if nvl is None:
        return [{} for _ in range(pool.size)]
    zones = len(pool.topology.zones) or 1
    out: list[dict[str, str]] = []
    base = 0
    for size in split_sizes(pool.size, zones):
        for k in range(size):
            domain = base + k // nvl.nodes_per_domain
            value = clique_value(domain_cluster_uuid(seed, pool.name, domain), nvl.clique_id)
            out.append({CLIQUE_LABEL: value})
        base += -(-size // nvl.nodes_per_domain)
    return out


def nodes_by_domain(nodes: Iterable[tuple[str, Mapping[str, str]]]) -> dict[str, list[str]]:
    """Node names per NVLink domain (clique label value), for nodes given as (name,
    labels); nodes without the label are left out. Sorted by domain, names in order."""
    out: dict[str, list[str]] = {}
    for name, labels in nodes:
        value = labels.get(CLIQUE_LABEL)
        if value:
            out.setdefault(value, []).append(name)
    return dict(sorted(out.items()))
