"""Node autoscaling with DRA: Cluster Autoscaler and Karpenter models.

A Fleet pool with ``autoscaling: {min, max, pricePerHour, provisioningDelay,
priority}`` is a node group; its template node and ResourceSlices are what
``dralab fleet`` publishes for one more node of the pool (``groups``). The
models simulate pending pods on template nodes with the scheduler's own
plugins on a fork of the cluster (``placement``, ``estimator``), choose with
an expander (``expanders``) and find nodes that could go with CA's DRA-aware
utilisation (``utilization``, ``scaledown``).

Per loop, with the caller's clock (a simulator stage calls it each period)::

    ca = ClusterAutoscaler(scheduler, fleet, AutoscalerOptions(expander="price"))
    decisions = ca.loop(pending_pods, now)   # LoopDecisions: scale_ups, pending,
                                             # unneeded, scale_downs
    Karpenter(scheduler, fleet).loop(pending_pods, now)

``run_once(read_input(docs, gates))`` is ``dralab autoscale``: schedule the
snapshot, then one loop.
"""

from __future__ import annotations

from .clusterautoscaler import AutoscalerOptions, ClusterAutoscaler
from .decisions import LoopDecisions, PendingPod, ScaleDown, ScaleUp
from .estimator import Estimate, estimate
from .expanders import EXPANDERS
from .groups import NodeGroup, TemplateNodes, node_groups
from .inputs import AutoscaleInput, cluster_objects, read_input
from .karpenter import Karpenter
from .run import MODELS, run_once
from .utilization import NodeUtilization, allocated_devices, node_utilization, pool_utilization

__all__ = [
    "EXPANDERS",
    "MODELS",
    "AutoscaleInput",
    "AutoscalerOptions",
    "ClusterAutoscaler",
    "Estimate",
    "Karpenter",
    "LoopDecisions",
    "NodeGroup",
    "NodeUtilization",
    "PendingPod",
    "ScaleDown",
    "ScaleUp",
    "TemplateNodes",
    "allocated_devices",
    "cluster_objects",
    "estimate",
    "node_groups",
    "node_utilization",
    "pool_utilization",
    "read_input",
    "run_once",
]
