"""A NodePool's node template on the Fleet's autoscaled pools.

The Karpenter model's instance types are the Fleet's autoscaled pools. A NodePool's
``spec.template`` reaches their nodes here, on the Fleet document, so that template
nodes, the nodes a run adds and the pools' current generated nodes agree:

- ``spec.template.metadata.labels`` and ``karpenter.sh/nodepool: NAME`` are added to
  each autoscaled pool's labels, ``spec.template.spec.taints`` to its taints;
- a requirement ``In`` with a single value on a key the pool's labels do not set is a
  label too (Karpenter labels a NodeClaim with its single-valued requirements). Keys
  the Fleet sets itself (architecture, OS, zone, pool, GPU discovery) are left alone:
  the model checks them on the pool's template node.

Which pools are the NodePool's (``NodePoolSettings.admits`` on a template node's labels)
is the model's to decide (``Karpenter``), not this document's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .karpenter_nodepool import NodePoolSettings

__all__ = ["NODEPOOL_LABEL", "nodepool_fleet_document"]

NODEPOOL_LABEL = "karpenter.sh/nodepool"
# Labels the Fleet generator sets from a pool's platform, topology or GPUs.
_FLEET_SET = ("kubernetes.io/arch", "kubernetes.io/os", "kubernetes.io/hostname",
              "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
              "dralab.dev/")


def _fleet_sets(key: str) -> bool:
    return key.startswith(_FLEET_SET) or key.startswith("nvidia.com/")


def nodepool_fleet_document(doc: Mapping[str, Any], nodepool: NodePoolSettings
                            ) -> dict[str, Any]:
    """A copy of the Fleet document ``doc`` whose autoscaled pools carry ``nodepool``'s
    template labels and taints. Malformed parts are left as they are (``parse_fleet``
    reports them)."""
    out = copy.deepcopy(dict(doc))
    spec = out.get("spec")
    pools = spec.get("pools") if isinstance(spec, dict) else None
    if not isinstance(pools, list):
        return out
    single = {r.key: r.values[0] for r in nodepool.requirements
              if r.operator == "In" and len(r.values) == 1 and not _fleet_sets(r.key)}
    for pool in pools:
        if not isinstance(pool, dict) or pool.get("autoscaling") is None:
            continue
        labels = pool.get("labels")
        labels = dict(labels) if isinstance(labels, dict) else {}
        for key, value in single.items():
            labels.setdefault(key, value)
        pool["labels"] = {**labels, **nodepool.labels, NODEPOOL_LABEL: nodepool.name}
        if nodepool.taints:
            taints = pool.get("taints")
            pool["taints"] = [*(taints if isinstance(taints, list) else []),
                              *(dict(t) for t in nodepool.taints)]
    return out
