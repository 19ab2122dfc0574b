"""KAI Scheduler's dra_resource_utils_test.go, ported case by case (22 cases).

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
pkg/scheduler/api/resource_info/dra_resource_utils_test.go, Describe("DRA Resource
Utils"); one test per It, id "<Context> / <It>". The inputs are upstream's, rebuilt as
dralab objects; the expectations are upstream's Expect lines.

Which claims are a pod's (CalcClaimsToPodsBaseMap, GetDraPodClaims) decides which claims
KAI counts as the pod's DRA GPUs: those run against ``dra.claims_by_pod`` and
``dra.pod_claims``. ResourceClaimSliceToMap and addClaimToPodClaimMap only build Go maps
(a slice keyed by namespace/name; one insert into a nested map): not decisions.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dralab.api.base import ObjectMeta, OwnerReference
from dralab.api.resource import (
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
)
from dralab.queueing.kai import dra

CITE = ("NVIDIA/KAI-Scheduler@72de64fc8eca pkg/scheduler/api/resource_info/"
        "dra_resource_utils_test.go Describe(\"DRA Resource Utils\")")
NOT_A_DECISION = ("not a decision: {what} only builds a Go map (KAI's bookkeeping), no "
                  "claim is chosen or counted by it")


def claim(name: str, uid: str, namespace: str | None = None, owner: tuple[str, str] | None = None,
          reserved: tuple[str, str] | None = None) -> ResourceClaim:
    """A claim as the Go test writes it: owner (kind, uid), reservedFor (resource, uid)."""
    owners = [OwnerReference(kind=owner[0], uid=owner[1])] if owner else []
    refs = [ResourceClaimConsumerReference(resource=reserved[0], uid=reserved[1])] \
        if reserved else []
    return ResourceClaim(metadata=ObjectMeta(name=name, namespace=namespace, uid=uid,
                                             owner_references=owners),
                         status=ResourceClaimStatus(reserved_for=refs))


def uids(mapping: dict[str, dict[str, ResourceClaim]]) -> dict[str, list[str]]:
    return {pod: sorted(claims) for pod, claims in mapping.items()}


# --- CalcClaimsToPodsBaseMap -----------------------------------------------------------------

def calc_empty() -> None:
    assert dra.claims_by_pod([]) == {}


def calc_owner() -> None:
    c = claim("claim-1", "claim-uid-1", owner=("Pod", "pod-uid-1"))
    got = dra.claims_by_pod([c])
    assert uids(got) == {"pod-uid-1": ["claim-uid-1"]}
    assert got["pod-uid-1"]["claim-uid-1"] is c


def calc_reserved() -> None:
    c = claim("claim-1", "claim-uid-1", reserved=("pods", "pod-uid-1"))
    got = dra.claims_by_pod([c])
    assert uids(got) == {"pod-uid-1": ["claim-uid-1"]}
    assert got["pod-uid-1"]["claim-uid-1"] is c


def calc_owner_first() -> None:
    c = claim("claim-1", "claim-uid-1", owner=("Pod", "pod-uid-1"),
              reserved=("pods", "pod-uid-2"))
    got = dra.claims_by_pod([c])
    assert uids(got) == {"pod-uid-1": ["claim-uid-1"]}
    assert "pod-uid-2" not in got


def calc_non_pod_owner() -> None:
    c = claim("claim-1", "claim-uid-1", owner=("Deployment", "deploy-uid-1"))
    assert dra.claims_by_pod([c]) == {}


def calc_non_pod_reserved() -> None:
    c = claim("claim-1", "claim-uid-1", reserved=("services", "service-uid-1"))
    assert dra.claims_by_pod([c]) == {}


def calc_same_pod() -> None:
    c1 = claim("claim-1", "claim-uid-1", owner=("Pod", "pod-uid-1"))
    c2 = claim("claim-2", "claim-uid-2", owner=("Pod", "pod-uid-1"))
    got = dra.claims_by_pod([c1, c2])
    assert uids(got) == {"pod-uid-1": ["claim-uid-1", "claim-uid-2"]}
    assert got["pod-uid-1"]["claim-uid-1"] is c1 and got["pod-uid-1"]["claim-uid-2"] is c2


def calc_many_pods() -> None:
    c1 = claim("claim-1", "claim-uid-1", owner=("Pod", "pod-uid-1"))
    c2 = claim("claim-2", "claim-uid-2", owner=("Pod", "pod-uid-2"))
    got = dra.claims_by_pod([c1, c2])
    assert uids(got) == {"pod-uid-1": ["claim-uid-1"], "pod-uid-2": ["claim-uid-2"]}
    assert got["pod-uid-1"]["claim-uid-1"] is c1 and got["pod-uid-2"]["claim-uid-2"] is c2


# --- GetDraPodClaims -------------------------------------------------------------------------

def get_none() -> None:
    assert dra.pod_claims("default", "pod-uid-1", [], {}, {}) == []


def get_spec() -> None:
    c = claim("claim-1", "claim-uid-1", namespace="default")
    got = dra.pod_claims("default", "pod-uid-1", ["claim-1"], {"default/claim-1": c}, {})
    assert got == [c]


def get_template_entry() -> None:
    # the entry has a template name and no resourceClaimName: nothing is looked up
    t = claim("template-1", "template-uid-1")
    assert dra.pod_claims("default", "pod-uid-1", [None], {"default/template-1": t}, {}) == []


def get_not_found() -> None:
    assert dra.pod_claims("default", "pod-uid-1", ["claim-1"], {}, {}) == []


def get_other_namespace() -> None:
    c = claim("claim-1", "claim-uid-1", namespace="other-namespace")
    assert dra.pod_claims("default", "pod-uid-1", ["claim-1"], {"claim-1": c}, {}) == []


def get_from_map() -> None:
    c1 = claim("claim-1", "claim-uid-1", namespace="default")
    c2 = claim("claim-2", "claim-uid-2", namespace="default")
    got = dra.pod_claims("default", "pod-uid-1", [], {},
                         {"pod-uid-1": {"claim-uid-1": c1, "claim-uid-2": c2}})
    assert len(got) == 2 and c1 in got and c2 in got


def get_combined() -> None:
    c1 = claim("claim-1", "claim-uid-1", namespace="default")
    c2 = claim("claim-2", "claim-uid-2", namespace="default")
    got = dra.pod_claims("default", "pod-uid-1", ["claim-1"], {"default/claim-1": c1},
                         {"pod-uid-1": {"claim-uid-2": c2}})
    assert len(got) == 2 and c1 in got and c2 in got


def get_no_duplicate() -> None:
    c = claim("claim-1", "claim-uid-1", namespace="default")
    got = dra.pod_claims("default", "pod-uid-1", ["claim-1"], {"claim-1": c},
                         {"pod-uid-1": {"claim-uid-1": c}})
    assert got == [c]


CASES: list[tuple[str, str, Callable[[], None] | str]] = [
    ("ResourceClaimSliceToMap", "should convert empty slice to empty map",
     "ResourceClaimSliceToMap"),
    ("ResourceClaimSliceToMap", "should convert single claim to map", "ResourceClaimSliceToMap"),
    ("ResourceClaimSliceToMap", "should convert multiple claims to map",
     "ResourceClaimSliceToMap"),
    ("CalcClaimsToPodsBaseMap", "should return empty map for empty input", calc_empty),
    ("CalcClaimsToPodsBaseMap", "should map claim with Pod owner reference", calc_owner),
    ("CalcClaimsToPodsBaseMap", "should map claim with reservedFor reference", calc_reserved),
    ("CalcClaimsToPodsBaseMap", "should prefer owner reference over reservedFor",
     calc_owner_first),
    ("CalcClaimsToPodsBaseMap", "should ignore claims with non-Pod owner references",
     calc_non_pod_owner),
    ("CalcClaimsToPodsBaseMap", "should ignore claims with non-pods reservedFor resource",
     calc_non_pod_reserved),
    ("CalcClaimsToPodsBaseMap", "should map multiple claims to same pod", calc_same_pod),
    ("CalcClaimsToPodsBaseMap", "should map claims to multiple pods", calc_many_pods),
    ("GetDraPodClaims", "should return empty slice for pod with no resource claims", get_none),
    ("GetDraPodClaims", "should return claims referenced in pod spec", get_spec),
    ("GetDraPodClaims", "should skip claims with nil ResourceClaimName - even if a template "
     "name is provided", get_template_entry),
    ("GetDraPodClaims", "should skip claims not found in draClaimMap", get_not_found),
    ("GetDraPodClaims", "should skip claims in different namespace", get_other_namespace),
    ("GetDraPodClaims", "should return claims from podsToClaimsMap", get_from_map),
    ("GetDraPodClaims", "should combine claims from pod spec and podsToClaimsMap", get_combined),
    ("GetDraPodClaims", "should not duplicate claims already in podsToClaimsMap",
     get_no_duplicate),
    ("addClaimToPodClaimMap", "should add claim to new pod entry", "addClaimToPodClaimMap"),
    ("addClaimToPodClaimMap", "should add claim to existing pod entry", "addClaimToPodClaimMap"),
    ("addClaimToPodClaimMap", "should overwrite claim with same UID", "addClaimToPodClaimMap"),
]


@pytest.mark.parametrize("check", [pytest.param(c[2], id=f"{c[0]} / {c[1]}") for c in CASES])
def test_case(check: Callable[[], None] | str) -> None:
    if isinstance(check, str):
        pytest.skip(NOT_A_DECISION.format(what=check))
    check()
