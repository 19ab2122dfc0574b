"""The stages of a simulation run, each one policy with one verb (see ``engine``).

* ``NodeLifecycle.apply``   node events: add (again, or from a pool), remove, taint
* ``Completion.complete``   a pod finishes and releases its devices
* ``JobController.arrive``  a job's pods are created; evicted pods are re-created
* ``SchedulingStage.run_round``  pending pods get scheduling cycles (in the kai mode
  ``kai.KaiSchedulingStage``: a KAI Scheduler session instead, Kueue's admission off)
* ``AutoscalingStage.scan``  (autoscaled pools) the autoscaler's loop adds / removes nodes
* ``Sampling.sample``       metrics

They share the run's ``PodBook`` (every pod's record and the pending / running /
completed totals) and talk through narrow methods, wired by ``simulate.run_mode``.
"""

from __future__ import annotations

from .autoscaling import AutoscalingStage
from .completion import Completion
from .jobs import JobController
from .nodes import NodeLifecycle
from .pods import PodBook, PodState
from .sampling import Sampling
from .scheduling import SchedulingStage

__all__ = ["AutoscalingStage", "Completion", "JobController", "NodeLifecycle", "PodBook",
           "PodState", "Sampling", "SchedulingStage"]
