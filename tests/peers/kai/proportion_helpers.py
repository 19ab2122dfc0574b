"""Shared by the ported proportion-plugin tables (test_resource_division.py,
test_proportion.py, test_reclaimable*.py, test_capacity_policy*.py, test_queue_order.py).

``S`` and ``Q`` build KAI's ResourceShare and QueueAttributes literals field by field
with Go's zero values: an absent field is 0 -- maxAllowed included, so a literal that
does not say ``MaxAllowed: commonconstants.UnlimitedResourceQuantity`` has a limit of 0,
as upstream's has. ``R(milliCPU, memory, gpus)`` is resource_info.NewResource.
"""

from __future__ import annotations

from dataclasses import dataclass

from dralab.queueing.kai.model import UNLIMITED
from dralab.queueing.kai.shares import Quantities, QueueShare, ResourceShare, quantities

REPO = "NVIDIA/KAI-Scheduler"
COMMIT = "72de64fc8eca10fa8cca26a20156178f3edbe092"
PLUGIN = "pkg/scheduler/plugins/proportion"
U = UNLIMITED
# resource_info.MinMemory (10 MiB), used by upstream's tables as a memory unit
MIN_MEMORY = 10.0 * 1024 * 1024


def S(deserved: float = 0, fair_share: float = 0, over_quota_weight: float = 0,
      max_allowed: float = 0, allocated: float = 0, request: float = 0,
      allocated_not_preemptible: float = 0, usage: float = 0) -> ResourceShare:
    return ResourceShare(deserved=deserved, fair_share=fair_share,
                         over_quota_weight=over_quota_weight, max_allowed=max_allowed,
                         allocated=allocated, request=request,
                         allocated_not_preemptible=allocated_not_preemptible, usage=usage)


def Q(name: str = "", *, title: str = "", parent: str | None = None,
      children: tuple[str, ...] = (), priority: int = 0, created: float = 0.0,
      gpu: ResourceShare | None = None, cpu: ResourceShare | None = None,
      memory: ResourceShare | None = None) -> QueueShare:
    return QueueShare(name=name, title=title, parent=parent or None, children=children,
                      priority=priority, created=created, gpu=gpu or S(), cpu=cpu or S(),
                      memory=memory or S())


def R(milli_cpu: float = 0, memory: float = 0, gpus: float = 0) -> Quantities:
    return quantities(milli_cpu, memory, gpus)


@dataclass(frozen=True)
class Cite:
    """Where an upstream case is: file (under the plugin), function (the Ginkgo
    Describe/Context path or Go test function) and case (name or index), with the line."""

    file: str
    function: str
    case: str
    line: int

    def __str__(self) -> str:
        return (f"{REPO}@{COMMIT} {PLUGIN}/{self.file}:{self.line} "
                f"{self.function} / {self.case}")
