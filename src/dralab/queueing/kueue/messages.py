"""The texts Kueue writes into a Workload's conditions, in Kueue's own wording.

Amounts are printed as Kubernetes quantities (``3``, ``500m``, ``2Gi``): memory-like
resources in binary units, everything else in decimal units, as Kueue's resource
formatter does for the ``N more needed`` part of its messages.
"""

from __future__ import annotations

from functools import lru_cache

from dralab.api.quantity import Quantity, QuantityFormat

__all__ = [
    "NO_LONGER_FITS",
    "OVERLAPPING_TARGETS",
    "cluster_queue_inactive",
    "cluster_queue_missing",
    "flavor_node_affinity",
    "format_amount",
    "insufficient_unused_quota",
    "local_queue_missing",
    "max_capacity_exceeded",
    "namespace_mismatch",
    "pod_set_message",
    "preempted",
    "preemption_unplaceable",
    "resource_not_covered",
    "untolerated_taint",
]

NO_LONGER_FITS = "Workload no longer fits after processing another workload"
OVERLAPPING_TARGETS = "Workload has overlapping preemption targets with another workload"

_BINARY_RESOURCES = ("memory", "ephemeral-storage", "storage")


@lru_cache(maxsize=4096)
def format_amount(resource: str, milli: int) -> str:
    binary = resource in _BINARY_RESOURCES or resource.startswith("hugepages-")
    fmt = QuantityFormat.BINARY_SI if binary else QuantityFormat.DECIMAL_SI
    return str(Quantity.from_milli(milli, fmt))


def insufficient_unused_quota(resource: str, flavor: str, missing: int) -> str:
    return (f"insufficient unused quota for {resource} in flavor {flavor}, "
            f"{format_amount(resource, missing)} more needed")


def max_capacity_exceeded(resource: str, flavor: str, previous: int, current: int,
                          capacity: int) -> str:
    return (f"insufficient quota for {resource} in flavor {flavor}, previously considered "
            f"podsets requests ({format_amount(resource, previous)}) + current podset request "
            f"({format_amount(resource, current)}) > maximum capacity "
            f"({format_amount(resource, capacity)})")


def resource_not_covered(resource: str) -> str:
    return f"resource {resource} unavailable in ClusterQueue"


def untolerated_taint(taint: tuple[str, str, str], flavor: str) -> str:
    # Kueue formats the corev1.Taint struct with %s: {key value effect timeAdded}.
    key, value, effect = taint
    return f"untolerated taint {{{key} {value} {effect} <nil>}} in flavor {flavor}"


def flavor_node_affinity(flavor: str) -> str:
    return f"flavor {flavor} doesn't match node affinity"


def pod_set_message(pod_set: str, reasons: list[str]) -> str:
    return f"couldn't assign flavors to pod set {pod_set}: {', '.join(reasons)}"


def cluster_queue_inactive(name: str) -> str:
    return f"ClusterQueue {name} is inactive"


def cluster_queue_missing(name: str) -> str:
    return f"ClusterQueue {name} doesn't exist"


def local_queue_missing(name: str) -> str:
    return f"LocalQueue {name} doesn't exist"


def namespace_mismatch() -> str:
    # Kueue's workload.ErrNamespaceMismatch (pkg/workload/resources.go).
    return "workload namespace doesn't match ClusterQueue selector"


# The words Kueue's preemption message gives each reason (HumanReadablePreemptionReasons).
_PREEMPTION_REASONS = {
    "InClusterQueue": "prioritization in the ClusterQueue",
    "InCohortReclamation": "reclamation within the cohort",
    "InCohortFairSharing": "Fair Sharing within the cohort",
    "InCohortReclaimWhileBorrowing": "reclamation within the cohort while borrowing",
}


def preempted(uid: str, job_uid: str, reason: str, preemptor_path: str,
              preemptee_path: str) -> str:
    """The message of a preempted workload's Evicted and Preempted conditions: the
    preemptor's UID and job UID, the reason and both ClusterQueues' paths from the
    root cohort (``/cohort/queue``); what is not known reads UNKNOWN."""
    return (f"Preempted to accommodate a workload (UID: {uid or 'UNKNOWN'}, "
            f"JobUID: {job_uid or 'UNKNOWN'}) due to "
            f"{_PREEMPTION_REASONS.get(reason, 'UNKNOWN')}; "
            f"preemptor path: {preemptor_path or 'UNKNOWN'}; "
            f"preemptee path: {preemptee_path or 'UNKNOWN'}")


def preemption_unplaceable(victims: int, why: str) -> str:
    """dralab's (not Kueue's): preemption could free the quota, but no allowed set of
    victims leaves room on the nodes for the whole pod set."""
    return (f"preemption would free the quota but no allowed set of victims leaves room on "
            f"the nodes (Kueue's choice, {victims} workload(s), leaves: {why})")
