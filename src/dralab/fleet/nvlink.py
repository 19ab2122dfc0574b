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

import warnings
from collections.abc import Iterable, Mapping

from dralab.api.errors import DralabWarning
from dralab.api.nvlink import CLIQUE_LABEL, clique_value

from .naming import stable_uuid
from .nodes import split_sizes
from .spec import Fleet, NodePool

__all__ = ["NvlinkGroupWarning", "clique_labels", "domain_cluster_uuid", "domain_sizes",
           "group_warnings", "nodes_by_domain", "warn_groups"]


def domain_cluster_uuid(seed: int, pool: str, domain: int) -> str:
    """The cluster UUID of the ``domain``-th (0-based) NVLink domain of ``pool``."""
    return stable_uuid(seed, f"nvlink/{pool}/{domain}")


def domain_sizes(pool: NodePool, count: int) -> list[int]:
    """How many nodes each NVLink domain of ``pool`` has when the pool has ``count``
    nodes (zones filled as ``clique_labels`` fills them); [] without ``nvlink``."""
    nvl = pool.nvlink
    if nvl is None:
        return []
    out: list[int] = []
    for size in split_sizes(count, len(pool.topology.zones) or 1):
        full, rest = divmod(size, nvl.nodes_per_domain)
        out += [nvl.nodes_per_domain] * full + ([rest] if rest else [])
    return out


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


class NvlinkGroupWarning(DralabWarning):
    """An autoscaled pool whose node group does not line up with its NVLink domains."""


def group_warnings(fleet: Fleet) -> list[str]:
    """``spec.pools[i].autoscaling.FIELD: message`` for each autoscaled ``nvlink`` pool
    whose group does not scale whole racks. Pure.

    Cluster Autoscaler has no rack concept: its node group is the unit, and a
    scale-up adds copies of one template node. So whole racks are scaled when each
    group is one rack (max = nodesPerDomain) with ZeroOrMaxNodeScaling. Both cases
    are accepted (upstream accepts them); they are warnings, not errors:

    * ``max`` not a multiple of ``nodesPerDomain``: at max size the last domain is a
      partial rack;
    * more than one domain in a regular group: CA makes new nodes as copies of a
      node of the group (its template), clique label included, so its estimate
      puts them in that node's domain while they join another;
    * ``zeroOrMaxNodeScaling`` over more than one domain: the group grows by all its
      racks at once and is removed only when all are unneeded.
    """
    out: list[str] = []
    for i, pool in enumerate(fleet.spec.pools):
        spec, nvl = pool.autoscaling, pool.nvlink
        if spec is None or nvl is None:
            continue
        path = f"spec.pools[{i}].autoscaling"
        sizes = domain_sizes(pool, spec.max)
        partial = [s for s in sizes if s < nvl.nodes_per_domain]
        if partial:
            out.append(f"{path}.max: {spec.max} nodes make NVLink domains of "
                       f"{'+'.join(map(str, sizes))} nodes, not whole racks of "
                       f"nvlink.nodesPerDomain {nvl.nodes_per_domain}")
        if not spec.zero_or_max_node_scaling and len(sizes) > 1:
            out.append(f"{path}.max: {spec.max} nodes are {len(sizes)} NVLink domains in "
                       "one node group: Cluster Autoscaler makes new nodes as copies of a "
                       "node of the group, clique label included, so it places pods as if "
                       "they joined that node's domain; give each rack its own pool with "
                       f"max {nvl.nodes_per_domain}")
        if spec.zero_or_max_node_scaling and len(sizes) > 1:
            out.append(f"{path}.zeroOrMaxNodeScaling: pool {pool.name} grows to its max "
                       f"{spec.max} nodes ({len(sizes)} NVLink domains) at once and goes "
                       "only whole: Cluster Autoscaler has no racks, a node group is its "
                       f"unit; give each rack its own pool with max {nvl.nodes_per_domain}")
    return out


def warn_groups(fleet: Fleet, source: str = "") -> None:
    """Issue ``group_warnings(fleet)`` as NvlinkGroupWarning, each naming ``source``."""
    for line in group_warnings(fleet):
        warnings.warn(NvlinkGroupWarning(f"{source}: {line}" if source else line),
                      stacklevel=2)
