"""Kueue's policy as a Kueue Configuration sets it up: fair sharing and its preemption
strategies, and the feature gates dralab honours. One place for ``dralab admit``,
``dralab explain workload`` and the simulator's queueing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dralab.api.base import KubeObject

from .objects import KueueConfiguration
from .queue_order import PRIORITY_SORTING_GATE

if TYPE_CHECKING:
    from .kueue import KueuePolicy

__all__ = ["FEASIBILITY_GATE", "PARTIAL_ADMISSION_GATE", "RECLAIMABLE_PODS_GATE", "configuration",
           "feasibility_on", "kueue_policy"]

# Kueue's alpha gate for checking devices before admission; dralab checks the whole pod set.
FEASIBILITY_GATE = "KueueDRADeviceFeasibility"
# Kueue's alpha gate (off by default): waiting preemptors first in the cycle.
PRIORITIZE_PREEMPTORS_GATE = "PrioritizePreemptorWorkloads"
# Kueue's beta gate (on by default): a preemptor whose targets overlap looks for others.
RECOMPUTE_ON_OVERLAP_GATE = "RecomputeAssignmentUponPreemptionTargetsOverlap"
# Kueue's beta gates dralab honours, on by default as in Kueue.
PARTIAL_ADMISSION_GATE = "PartialAdmission"
RECLAIMABLE_PODS_GATE = "ReclaimablePods"
# Kueue's beta gate (on by default since 0.20): the flavor scan bookmark survives a busy
# cohort (kueue/scan.py).
PRESERVE_SCAN_PROGRESS_GATE = "FlavorFungibilityPreserveScanProgress"


def configuration(objects: Sequence[KubeObject]) -> KueueConfiguration | None:
    """The snapshot's Kueue Configuration (the first), if any."""
    return next((o for o in objects if isinstance(o, KueueConfiguration)), None)


def feasibility_on(config: KueueConfiguration | None) -> bool:
    return bool(config is not None and config.feature_gates.get(FEASIBILITY_GATE))


def kueue_policy(config: KueueConfiguration | None) -> KueuePolicy:
    """A ``KueuePolicy`` with the Configuration's fair sharing (Kueue's defaults without)."""
    # Imported here: the engine is its own module, loaded only when admission runs.
    from .kueue import DEFAULT_FAIR_STRATEGIES, KueuePolicy

    strategies: Any = (config.fair_sharing.preemption_strategies
                       if config is not None and config.fair_sharing is not None
                       and config.fair_sharing.preemption_strategies
                       else DEFAULT_FAIR_STRATEGIES)
    gates = config.feature_gates if config is not None else {}
    policy = KueuePolicy(fair_sharing=config is not None and config.fair_sharing_enabled,
                         fair_strategies=strategies,
                         partial_admission=gates.get(PARTIAL_ADMISSION_GATE, True))
    policy.priority_sorting = gates.get(PRIORITY_SORTING_GATE, True)
    policy.prioritize_preemptors = gates.get(PRIORITIZE_PREEMPTORS_GATE, False)
    policy.recompute_on_overlap = gates.get(RECOMPUTE_ON_OVERLAP_GATE, True)
    policy.preserve_scan_progress = gates.get(PRESERVE_SCAN_PROGRESS_GATE, True)
    return policy
