"""Kueue's admission engine on the plain queueing model.

``KueuePolicy`` is an ``AdmissionPolicy``: one call of ``cycle`` is one pass of
Kueue's scheduler (heads of the ClusterQueues, flavor assignment, quota with
borrowing and lending in cohorts, classic or fair-sharing preemption); the
decisions are applied to the state. ``admit_until_stable`` runs cycles until
nothing changes; ``admit_cycles`` runs at most N of them.

* ``quota``: ClusterQueues and cohorts as one quota tree, usage kept incrementally;
* ``flavors``: flavor assignment with fungibility, taints and node labels;
* ``preemption``: which workloads to evict (classic heuristics, fair sharing);
* ``policy``: the cycle, the queues and their strategies, stop policies;
* ``messages``: Kueue's condition messages.
"""

from dralab.queueing.kueue.policy import EVICTED_CLUSTER_QUEUE_STOPPED, KueuePolicy
from dralab.queueing.kueue.preemption import DEFAULT_FAIR_STRATEGIES, FairStrategy
from dralab.queueing.kueue.stable import (
    MAX_ADMISSION_CYCLES,
    AdmissionDidNotSettle,
    admit_cycles,
    admit_until_stable,
)

__all__ = [
    "DEFAULT_FAIR_STRATEGIES",
    "EVICTED_CLUSTER_QUEUE_STOPPED",
    "MAX_ADMISSION_CYCLES",
    "AdmissionDidNotSettle",
    "FairStrategy",
    "KueuePolicy",
    "admit_cycles",
    "admit_until_stable",
]
