"""Which nodes may be considered for scale-down at all: Cluster Autoscaler's
``core/scaledown/eligibility`` (``FilterOutUnremovable``), and its reasons.

Per candidate node, in this order, the first that applies keeps it:

* ``CurrentlyBeingDeleted``: it carries CA's ``ToBeDeletedByClusterAutoscaler``
  taint, set less than 5 minutes ago (without a clock: set at all);
* ``ScaleDownDisabledAnnotation``: annotated
  ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"``;
* ``NotAutoscaled``: it belongs to no node group;
* ``UnexpectedError``: its utilisation cannot be computed (``node_utilization``);
* ``ScaleDownUnreadyDisabled``: it is not Ready and ``--scale-down-unready-enabled``
  is off;
* ``NotUnderutilized``: its utilisation is above the threshold
  (``--scale-down-gpu-utilization-threshold`` for GPU nodes,
  ``--scale-down-utilization-threshold`` for the others); at the threshold it may go.

The others are unneeded candidates; whether their pods can move is ``scaledown``'s.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from dralab.api.core import Node
from dralab.cluster import ClusterState

from .groups import pool_of
from .utilization import (
    Allocated,
    AllocatedDevices,
    NodeUtilization,
    PoolCache,
    gpu_config,
    node_utilization,
)

__all__ = ["MAX_DELETION_TIME", "SCALE_DOWN_DISABLED", "TO_BE_DELETED_TAINT", "Eligibility",
           "EligibilityOptions", "Unremovable", "being_deleted", "filter_out_unremovable",
           "is_ready", "scale_down_disabled"]

SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"
# actuation: a node tainted for deletion this long ago is still being deleted
# (MaxCloudProviderNodeDeletionTime, the longer of CA's two deletion timeouts).
MAX_DELETION_TIME = 300.0


class EligibilityOptions(Protocol):
    """The flags eligibility reads (``AutoscalerOptions`` has them all)."""

    @property
    def scale_down_utilization_threshold(self) -> float: ...
    @property
    def scale_down_gpu_utilization_threshold(self) -> float: ...
    @property
    def ignore_daemonsets_utilization(self) -> bool: ...
    @property
    def ignore_mirror_pods_utilization(self) -> bool: ...
    @property
    def scale_down_unready_enabled(self) -> bool: ...
    @property
    def dynamic_resource_allocation(self) -> bool: ...
    @property
    def gpu_labels(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class Unremovable:
    """A node scale-down keeps, with CA's ``UnremovableReason`` (its String() name) and
    what made it so (an error, the pod that blocks, ...)."""

    node: str
    reason: str
    detail: str = ""
    pool: str = ""


@dataclass(slots=True)
class Eligibility:
    """``unneeded``: candidates in the order given; ``utilization``: every node
    measured (the unneeded and those above the threshold)."""

    unneeded: list[str] = field(default_factory=list)
    utilization: dict[str, NodeUtilization] = field(default_factory=dict)
    unremovable: list[Unremovable] = field(default_factory=list)


def scale_down_disabled(node: Node) -> bool:
    return (node.metadata.annotations or {}).get(SCALE_DOWN_DISABLED) == "true"


def being_deleted(node: Node, now: float | None) -> bool:
    """Tainted ToBeDeletedByClusterAutoscaler (its value: the unix time it was set)
    less than ``MAX_DELETION_TIME`` before ``now`` (unix seconds; None: any such taint).
    A value that is not a number is no deletion time, as CA reads it."""
    for taint in node.spec.taints:
        if taint.key != TO_BE_DELETED_TAINT:
            continue
        try:
            since = int(taint.value or "")
        except ValueError:
            return False
        return now is None or now - since < MAX_DELETION_TIME
    return False


def is_ready(node: Node) -> bool:
    """The node's Ready condition is True (CA's GetReadinessState): a node written
    without one is not Ready. Nodes dralab generates from a Fleet (no document
    behind them) are Ready."""
    raw = node.raw
    if raw is None:
        return True
    status = raw.get("status") if isinstance(raw, dict) else None
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def filter_out_unremovable(cluster: ClusterState, candidates: Iterable[str],
                           groups: Container[str], options: EligibilityOptions,
                           now: float | None = None, allocated: Allocated | None = None,
                           cache: PoolCache | None = None,
                           gpu_labels: Collection[str] | None = None) -> Eligibility:
    """CA's ``FilterOutUnremovable`` over ``candidates`` (node names); ``groups``: the
    autoscaled pools (a node's group is its ``dralab.dev/pool`` label). ``now``: unix
    seconds (deletion taints, long-terminating pods), None without a clock."""
    out = Eligibility()
    if allocated is None:
        allocated = AllocatedDevices(cluster)
    labels = options.gpu_labels if gpu_labels is None else gpu_labels
    for name in candidates:
        info = cluster.nodes.get(name)
        if info is None:
            out.unremovable.append(Unremovable(name, "UnexpectedError", "no such node"))
            continue
        node = info.node
        pool = pool_of(node) or ""
        if being_deleted(node, now):
            out.unremovable.append(Unremovable(name, "CurrentlyBeingDeleted", "", pool))
            continue
        if scale_down_disabled(node):
            out.unremovable.append(Unremovable(name, "ScaleDownDisabledAnnotation",
                                               f"{SCALE_DOWN_DISABLED}: \"true\"", pool))
            continue
        if pool not in groups:
            out.unremovable.append(Unremovable(name, "NotAutoscaled", "", pool))
            continue
        slices = cluster.slices_of(name) if options.dynamic_resource_allocation else ()
        gpu = gpu_config(node, bool(slices), labels)
        util = node_utilization(cluster, info, allocated, cache,
                                ignore_daemonsets=options.ignore_daemonsets_utilization,
                                ignore_mirror_pods=options.ignore_mirror_pods_utilization,
                                dra_enabled=options.dynamic_resource_allocation,
                                gpu=gpu, now=now)
        if util.error is not None:
            out.unremovable.append(Unremovable(name, "UnexpectedError",
                                               f"utilization: {util.error}", pool))
            continue
        if not options.scale_down_unready_enabled and not is_ready(node):
            out.unremovable.append(Unremovable(name, "ScaleDownUnreadyDisabled", "", pool))
            continue
        out.utilization[name] = util
        threshold = options.scale_down_gpu_utilization_threshold if gpu is not None \
            else options.scale_down_utilization_threshold
        if util.value > threshold:
            out.unremovable.append(Unremovable(
                name, "NotUnderutilized",
                f"{util.resource} requested ({util.value:.6g} of allocatable) is above the "
                f"threshold {threshold:g}", pool))
            continue
        out.unneeded.append(name)
    return out
