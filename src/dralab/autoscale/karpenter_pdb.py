"""PodDisruptionBudgets as Karpenter's disruption reads them (sigs.k8s.io/karpenter
pkg/utils/pdb/pdb.go: Limits, CanEvictPods; pkg/controllers/state/statenode.go
ValidatePodsDisruptable).

The input's ``policy/v1`` PodDisruptionBudgets (dralab does not model the kind: they
are carried as unknown objects and read here) give, each, its namespace and selector,
``status.disruptionsAllowed`` (0 when the status is absent, as a budget the disruption
controller has not counted yet), whether it is fully blocking (``maxUnavailable`` 0 or
"0%", ``minAvailable`` "100%") and ``unhealthyPodEvictionPolicy: AlwaysAllow``.

A node is no consolidation candidate when one of its evictable pods (active, not a
Node's mirror pod, not tolerating ``karpenter.sh/disrupted:NoSchedule``, without an
active do-not-disrupt) is covered by more than one budget (the eviction API refuses
those), or by one that allows no disruption -- unless the budget lets unhealthy pods
go and the pod is not Ready.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dralab.api.base import KubeObject, UnknownObject
from dralab.api.core import Pod
from dralab.controllers.owners import selector_matches

from .karpenter_nodepool import DO_NOT_DISRUPT, do_not_disrupt_pod, parse_go_duration
from .utilization import unix_time

__all__ = ["DISRUPTED_TAINT", "PdbLimit", "blocking_pdbs", "do_not_disrupt_active",
           "fully_blocked", "read_pdbs"]

DISRUPTED_TAINT = "karpenter.sh/disrupted"


@dataclass(frozen=True, slots=True)
class PdbLimit:
    """pdb.pdbItem: what Karpenter keeps of a PodDisruptionBudget."""

    namespace: str
    name: str
    selector: Mapping[str, Any] | None  # None: no selector, which matches no pod
    disruptions_allowed: int = 0
    fully_blocking: bool = False
    always_allow_unhealthy: bool = False

    def covers(self, pod: Pod) -> bool:
        return self.namespace == (pod.metadata.namespace or "default") and \
            selector_matches(self.selector, pod.metadata.labels or {})


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _pdb(raw: Mapping[str, Any]) -> PdbLimit:
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    max_unavailable = spec.get("maxUnavailable")
    min_available = spec.get("minAvailable")
    fully = (max_unavailable == 0 and not isinstance(max_unavailable, bool)) or \
        max_unavailable == "0%" or min_available == "100%"
    selector = spec.get("selector")
    return PdbLimit(str(meta.get("namespace") or "default"), str(meta.get("name") or ""),
                    selector if isinstance(selector, Mapping) else None,
                    _int(status.get("disruptionsAllowed")), fully,
                    spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow")


def read_pdbs(objects: Iterable[KubeObject]) -> tuple[PdbLimit, ...]:
    """The policy/v1 PodDisruptionBudgets among ``objects``."""
    out = []
    for obj in objects:
        raw = obj.raw
        if isinstance(obj, UnknownObject) and isinstance(raw, dict) and \
                raw.get("apiVersion") == "policy/v1" and raw.get("kind") == "PodDisruptionBudget":
            out.append(_pdb(raw))
    return tuple(out)


def do_not_disrupt_active(pod: Pod, wall: float | None = None) -> bool:
    """pod.IsDoNotDisruptActive: ``karpenter.sh/do-not-disrupt`` "true", or a duration
    not yet over since the pod's ``status.startTime`` by ``wall`` (unix seconds of the
    loop's clock). Without a wall clock or a start time a duration is still running,
    as upstream's answer for a pod without a start time."""
    if not do_not_disrupt_pod(pod):
        return False
    value = (pod.metadata.annotations or {}).get(DO_NOT_DISRUPT, "")
    if value == "true" or wall is None:
        return True
    status = pod.raw.get("status") if isinstance(pod.raw, dict) else None
    started = status.get("startTime") if isinstance(status, dict) else None
    start = unix_time(started) if isinstance(started, str) else None
    return start is None or wall - start < parse_go_duration(value)


def _tolerates_disrupted(pod: Pod) -> bool:
    """ToleratesDisruptedNoScheduleTaint."""
    for t in pod.spec.tolerations:
        if t.effect not in (None, "", "NoSchedule"):
            continue
        if (t.operator == "Exists" and not t.key) or \
                (t.key == DISRUPTED_TAINT and (t.operator == "Exists" or not t.value)):
            return True
    return False


def _evictable(pod: Pod, wall: float | None) -> bool:
    """pod.IsEvictable: what the eviction API would be called on."""
    active = pod.status.phase not in ("Succeeded", "Failed") and \
        pod.metadata.deletion_timestamp is None
    mirror = any(r.kind == "Node" and r.api_version == "v1"
                 for r in pod.metadata.owner_references)
    return active and not mirror and not _tolerates_disrupted(pod) and \
        not do_not_disrupt_active(pod, wall)


def _not_ready(pod: Pod) -> bool:
    return any(c.type == "Ready" and c.status == "False" for c in pod.status.conditions)


def blocking_pdbs(pdbs: Iterable[PdbLimit], pods: Iterable[Pod], wall: float | None = None
                  ) -> list[str]:
    """Limits.CanEvictPods: the budgets (namespace/name) that stop the first pod that
    cannot be evicted; empty when every pod can be. ``wall``: as for
    ``do_not_disrupt_active``."""
    pdbs = list(pdbs)
    if not pdbs:
        return []
    for pod in pods:
        if not _evictable(pod, wall):
            continue
        matching = [p for p in pdbs if p.covers(pod)]
        if len(matching) > 1:
            return [f"{p.namespace}/{p.name}" for p in matching]
        for p in matching:
            if p.always_allow_unhealthy and _not_ready(pod):
                break
            if p.disruptions_allowed == 0:
                return [f"{p.namespace}/{p.name}"]
    return []


def fully_blocked(pdbs: Iterable[PdbLimit], pod: Pod, wall: float | None = None) -> bool:
    """Limits.isFullyBlocked: an evictable pod covered by more than one budget, or by a
    fully blocking one (unless it lets unhealthy pods go and the pod is not Ready).
    Karpenter provisions no capacity for such a pod on a deleting node."""
    if not _evictable(pod, wall):
        return False
    matching = [p for p in pdbs if p.covers(pod)]
    if len(matching) > 1:
        return True
    for p in matching:
        if p.always_allow_unhealthy and _not_ready(pod):
            return False
        if p.fully_blocking:
            return True
    return False
