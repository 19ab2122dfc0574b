"""One autoscaler loop over a snapshot: what ``dralab autoscale`` runs.

The pending pods are first scheduled on the existing nodes (the one scheduling
loop, preemption included); the model then scales up for those still pending
and, when none needed a scale-up, reports the nodes that could go.
"""

from __future__ import annotations

from dataclasses import replace

from dralab.api.features import FeatureGates
from dralab.api.workloads import DaemonSet
from dralab.scheduler import Scheduler, build_cluster
from dralab.scheduler.result import REASON_UNSCHEDULABLE

from .clusterautoscaler import AutoscalerOptions, ClusterAutoscaler
from .decisions import LoopDecisions, PendingPod
from .inputs import AutoscaleInput, cluster_objects
from .karpenter import Karpenter
from .karpenter_pdb import read_pdbs

__all__ = ["MODELS", "run_once"]

MODELS = ("cluster-autoscaler", "karpenter")


def run_once(data: AutoscaleInput, model: str = "cluster-autoscaler",
             expander: str = "least-waste", features: FeatureGates | None = None,
             seed: int = 0, options: AutoscalerOptions | None = None,
             ignore_dra_requests: bool = True,
             preference_policy: str = "Respect") -> LoopDecisions:
    """Schedule, then one loop of ``model``. Deterministic for a seed. ``options``:
    Cluster Autoscaler's flags (default: CA's defaults with ``expander`` and ``seed``;
    given, they are used as they are). ``ignore_dra_requests`` and ``preference_policy``:
    Karpenter's flags (its defaults); the Karpenter model reads the input's NodePool."""
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r} (known: {', '.join(MODELS)})")
    cluster, pending = build_cluster(cluster_objects(data), features, seed)
    scheduler = Scheduler.build(cluster, None, seed)
    result = scheduler.run(pending)
    waiting = []
    other: list[PendingPod] = []
    for item in result.unplaced:
        key = f"{item.pod.metadata.namespace or 'default'}/{item.pod.metadata.name}"
        info = cluster.pods.get(key)
        if item.reason == REASON_UNSCHEDULABLE and info is not None:
            waiting.append(info)
        else:
            # Gated or unprofiled pods are not the autoscaler's to help (nor CA's).
            other.append(PendingPod(key, f"{item.reason}: {item.message}"))
    daemon_sets = tuple(o for o in data.objects if isinstance(o, DaemonSet))
    if model == "karpenter":
        karpenter = Karpenter(scheduler, data.fleet, daemon_sets=daemon_sets,
                              ignore_dra_requests=ignore_dra_requests,
                              preference_policy=preference_policy,
                              pdbs=read_pdbs(data.objects), node_claims=data.node_claims)
        if data.nodepool is not None:
            karpenter.nodepool = data.nodepool
            karpenter.nodepools = data.nodepools if len(data.nodepools) > 1 else ()
        karpenter.report_node_claims = True
        decisions = karpenter.loop(waiting, 0.0)
        decisions = replace(decisions, node_claims=tuple(
            c.to_document() for c in karpenter.last_node_claims))
    else:
        if options is None:
            options = AutoscalerOptions(expander=expander, seed=seed)
        decisions = ClusterAutoscaler(scheduler, data.fleet, options,
                                      daemon_sets=daemon_sets).loop(waiting, 0.0)
    if other:
        decisions = replace(decisions, pending=(*decisions.pending, *other), unneeded=())
    return decisions
