"""One row per pod of a scheduling run: where it is and which devices each claim got,
or why it waits. What ``dralab schedule -o table`` prints. Pure.

Status: ``Scheduled`` (bound in this run); the pod's phase, ``Bound`` or
``Terminating`` for pods the run did not schedule (bound before, finished, being
deleted); the reason of a pod left pending (``Unschedulable``, ``SchedulingGated``,
``NotReadyForScheduling``, ``SchedulerError``, ``NoProfile``); ``Preempted`` for a
victim.
"""

from __future__ import annotations

from dataclasses import dataclass

from dralab.api.core import Pod
from dralab.api.keys import key_of, object_key
from dralab.api.resource import ResourceClaim

from .result import ScheduleResult

__all__ = ["PodRow", "pod_rows"]


@dataclass(frozen=True, slots=True)
class PodRow:
    """``devices``: (claim, devices as ``driver/pool/device``) per allocated claim of
    the pod, keyed by its ``spec.resourceClaims[].name`` (the extended-resource claim
    by the resource names it stands for). ``message``: why the pod waits (or was
    preempted); "" otherwise."""

    pod: str
    node: str | None
    status: str
    devices: tuple[tuple[str, tuple[str, ...]], ...] = ()
    message: str = ""


def _devices(claim: ResourceClaim | None) -> tuple[str, ...]:
    if claim is None or claim.status.allocation is None:
        return ()
    return tuple(f"{r.driver}/{r.pool}/{r.device}"
                 for r in claim.status.allocation.devices.results)


def _claims_of(pod: Pod, result: ScheduleResult) -> tuple[tuple[str, tuple[str, ...]], ...]:
    claims = result.cluster.claims
    namespace = pod.metadata.namespace or "default"
    statuses = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
    out: list[tuple[str, tuple[str, ...]]] = []
    for entry in pod.spec.resource_claims:
        name = entry.resource_claim_name or statuses.get(entry.name)
        devices = _devices(claims.get(object_key(namespace, name))) if name else ()
        if devices:
            out.append((entry.name, devices))
    extended = pod.status.extended_resource_claim_status
    if extended is not None and extended.resource_claim_name:
        devices = _devices(claims.get(object_key(namespace, extended.resource_claim_name)))
        resources = sorted({m.resource_name for m in extended.request_mappings})
        if devices:
            out.append((",".join(resources) or extended.resource_claim_name, devices))
    return tuple(out)


def pod_rows(result: ScheduleResult) -> list[PodRow]:
    """A row for every pod of ``result.pods``, in the same order."""
    placed = {key_of(p.pod) for p in result.placed}
    unplaced = {key_of(u.pod): u for u in result.unplaced}
    evicted = {key_of(e.pod): e for e in result.evicted}
    rows: list[PodRow] = []
    for pod in result.pods:
        key = key_of(pod)
        if key in evicted:
            victim = evicted[key]
            rows.append(PodRow(key, victim.node, "Preempted",
                               message=f"preempted on {victim.node} by {victim.preemptor}"))
        elif key in unplaced:
            item = unplaced[key]
            rows.append(PodRow(key, None, item.reason, message=item.message))
        else:
            node = pod.spec.node_name
            if key in placed:
                status = "Scheduled"
            elif pod.status.phase in ("Succeeded", "Failed"):
                status = pod.status.phase
            elif pod.metadata.deletion_timestamp is not None:
                status = "Terminating"
            elif node and pod.status.phase in (None, "Pending"):
                status = "Bound"  # on its node; Pending only until a kubelet starts it
            else:
                status = pod.status.phase or "Pending"
            finished = status in ("Succeeded", "Failed")
            rows.append(PodRow(key, node, status, () if finished else _claims_of(pod, result)))
    return rows
