"""Kueue's flavor scan bookmark: where the next cycle resumes a workload's flavor search.

Kueue records, with every flavor assignment, the index of the last flavor the scan of
each resource group tried (``FlavorAssignment.TriedFlavorIdx``, gathered per pod set
into ``AssignmentClusterQueueState.LastTriedFlavorIdx``; -1 once the scan reached the
group's last flavor, meaning "start over"). The workload keeps it
(``workload.Info.LastAssignment``) while it waits in its queue, and the next
assignment starts each group's scan at the flavor after it
(``NextFlavorToTryForPodSetResource``), so a workload that a flavor could not take for
a reason the quota scan does not see (its topology placement, another entry taking
the room first) moves on to the next flavor instead of stopping at the same one.

The bookmark is dropped as outdated (``lastAssignmentOutdated``, scheduler.go) when
the ClusterQueue's ``AllocatableResourceGeneration`` advanced since (an admitted
workload left it, or quotas in its cohort tree changed). With
``FlavorFungibilityPreserveScanProgress`` (beta, on by default since Kueue 0.20) a
bookmark from the current or the preceding cycle survives that, and one recorded for
another workload shape (``SchedulingEquivalenceHashing``) is dropped even then.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["PRESERVE_SCAN_PROGRESS_GATE", "START_OVER", "ScanBookmark",
           "last_assignment_outdated"]

# Kueue's feature gate (pkg/features: beta, default true since 0.20).
PRESERVE_SCAN_PROGRESS_GATE = "FlavorFungibilityPreserveScanProgress"
# TriedFlavorIdx after the scan reached the group's last flavor: try from the first.
START_OVER = -1


@dataclass(frozen=True, slots=True)
class ScanBookmark:
    """Kueue's AssignmentClusterQueueState: per pod set (in the order the assignment
    made them) the last flavor index tried per resource, the ClusterQueue's generation
    and the scheduling cycle it was recorded in, and the workload's shape then (None:
    unknown, as Kueue's SchedulingHashUnknown)."""

    tried: tuple[Mapping[str, int], ...]
    generation: int = 0
    cycle: int = 0
    shape: object = None

    def next_flavor(self, pod_set: int, resource: str) -> int:
        """Kueue's NextFlavorToTryForPodSetResource: the index the scan of
        ``resource`` for pod set number ``pod_set`` starts at."""
        if pod_set >= len(self.tried):
            return 0
        index = self.tried[pod_set].get(resource)
        return 0 if index is None else index + 1

    def pending_flavors(self) -> bool:
        """Kueue's PendingFlavors: some scan stopped before its group's last flavor."""
        return any(index != START_OVER for tried in self.tried for index in tried.values())

    def matches_shape(self, shape: object) -> bool:
        """Kueue's MatchesSchedulingShape: an unknown shape on either side matches."""
        return self.shape is None or shape is None or self.shape == shape


def last_assignment_outdated(last: ScanBookmark, generation: int, cycle: int,
                             shape: object = None, *, preserve_progress: bool = True) -> bool:
    """Kueue's lastAssignmentOutdated: whether the scan starts over this cycle."""
    if preserve_progress:
        if not last.matches_shape(shape):
            return True
        # A busy cohort advances the generation on every eviction; an assignment of
        # this or the preceding cycle is kept anyway, else its progress never counts.
        if cycle - last.cycle <= 1:
            return False
    return generation > last.generation
