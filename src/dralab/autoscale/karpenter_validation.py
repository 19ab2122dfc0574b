"""What changes while a consolidation command waits for its validation.

Karpenter holds a consolidation command for 15 s (consolidation.go
commandValidationDelay) and then validates it again on the cluster as it is by then
(validation.go): a node that has lost its candidacy (a do-not-disrupt pod, a pod a
blocking PodDisruptionBudget covers, its budget used up) or a simulation that now needs
other capacity makes the command void. dralab has no wall clock there: what happens
during the wait is an input -- the pods that arrive (bound to a node, or pending) and
the PodDisruptionBudgets that appear -- and the model validates the command against the
cluster with them (``karpenter_disruption.validate_command``). The arrivals are seen on
a fork: they are the caller's to add to the cluster for real.
"""

from __future__ import annotations

from dataclasses import dataclass

from dralab.api.core import Pod
from dralab.scheduler import Scheduler

from .karpenter_pdb import PdbLimit

__all__ = ["ValidationWait"]


@dataclass(frozen=True, slots=True)
class ValidationWait:
    """Pods (a pod with spec.nodeName is on that node) and PodDisruptionBudgets that
    arrive during the validation wait."""

    pods: tuple[Pod, ...] = ()
    pdbs: tuple[PdbLimit, ...] = ()

    def arrive(self, scheduler: Scheduler) -> None:
        """On the open fork: the pods added to the cluster."""
        for pod in self.pods:
            scheduler.cluster.add_pod(pod)
