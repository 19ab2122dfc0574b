"""scheduling.k8s.io/v1beta1 Workload and PodGroup: the 1.37 workload-aware scheduling API.

Gate ``GenericWorkload`` (beta in 1.37, off by default). A Workload is a static
template (``spec.podGroupTemplates``); a PodGroup is the runtime group the
scheduler reads: its ``schedulingPolicy`` is ``basic`` or ``gang`` (all or
nothing, ``minCount`` pods), and with gate ``DRAWorkloadResourceClaims`` its
``resourceClaims`` name claims shared by the group's pods. A pod joins a group
with ``spec.schedulingGroup.podGroupName`` (see ``core.PodSchedulingGroup``).

Only the fields dralab acts on are typed; the rest (references to the Workload,
disruption mode, conditions) stay in the raw document and are written back
unchanged. v1alpha3 (1.37's alpha) and v1alpha2 (1.36) documents are read as
v1beta1: the fields dralab models have the same names and meaning in all three.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from .base import KubeObject, Spec

__all__ = [
    "SCHEDULING_V1BETA1",
    "GangSchedulingPolicy",
    "PodGroup",
    "PodGroupResourceClaim",
    "PodGroupResourceClaimStatus",
    "PodGroupSchedulingPolicy",
    "PodGroupSpec",
    "PodGroupStatus",
    "PodGroupTemplate",
    "SchedulingWorkloadSpec",
    "Workload",
]

SCHEDULING_V1BETA1: Final = "scheduling.k8s.io/v1beta1"


class GangSchedulingPolicy(Spec, frozen=True):
    min_count: int = 0


class PodGroupSchedulingPolicy(Spec, frozen=True):
    """Exactly one of ``basic`` (an empty object) and ``gang``."""

    basic: dict[str, Any] | None = None
    gang: GangSchedulingPolicy | None = None


class PodGroupResourceClaim(Spec, frozen=True):
    """One claim of the group: exactly one of a claim name and a template name."""

    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodGroupSpec(Spec, frozen=True):
    scheduling_policy: PodGroupSchedulingPolicy = PodGroupSchedulingPolicy()
    resource_claims: list[PodGroupResourceClaim] = []
    priority_class_name: str | None = None
    priority: int | None = None


class PodGroupResourceClaimStatus(Spec, frozen=True):
    name: str = ""
    resource_claim_name: str | None = None


class PodGroupStatus(Spec, frozen=True):
    resource_claim_statuses: list[PodGroupResourceClaimStatus] = []


class PodGroup(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = SCHEDULING_V1BETA1
    KIND: ClassVar[str] = "PodGroup"
    NAMESPACED: ClassVar[bool] = True

    spec: PodGroupSpec = PodGroupSpec()
    status: PodGroupStatus = PodGroupStatus()

    @property
    def min_count(self) -> int | None:
        """The gang's ``minCount``; None for the basic policy (no all-or-nothing)."""
        gang = self.spec.scheduling_policy.gang
        return gang.min_count if gang is not None else None


class PodGroupTemplate(Spec, frozen=True):
    name: str = ""
    scheduling_policy: PodGroupSchedulingPolicy = PodGroupSchedulingPolicy()
    resource_claims: list[PodGroupResourceClaim] = []


class SchedulingWorkloadSpec(Spec, frozen=True):
    pod_group_templates: list[PodGroupTemplate] = []


class Workload(KubeObject, frozen=True):
    """The template PodGroups are made from; the scheduler itself reads PodGroups only."""

    API_VERSION: ClassVar[str] = SCHEDULING_V1BETA1
    KIND: ClassVar[str] = "Workload"
    NAMESPACED: ClassVar[bool] = True

    spec: SchedulingWorkloadSpec = SchedulingWorkloadSpec()
