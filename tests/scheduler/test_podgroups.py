"""PodGroups (gate GenericWorkload) and their shared claims (gate DRAWorkloadResourceClaims).

Scenario tables on the example driver's PodGroup demo (tests/data/upstream/dra-example-driver,
two gang PodGroups of two pods, each group with one claim from the template ``one-gpu``)
on a kind worker with N example GPUs. Expected outcomes:

* both gates on: one claim per PodGroup, shared by its two pods and reserved for the group
  (the driver's README: "All pods in group-1 should show the same GPU ID");
* GenericWorkload alone: each pod has its own claim, but a group binds all together or not
  at all (upstream's message ``minCount (2) cannot be satisfied: ...``);
* GenericWorkload off (DRAWorkloadResourceClaims alone changes nothing, the pods'
  schedulingGroup is dropped): every pod on its own.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.features import FeatureGates
from dralab.fleet import generate, parse_fleet
from dralab.scheduler import ScheduleResult, schedule

DEMO = (Path(__file__).resolve().parents[1] / "data" / "upstream" / "dra-example-driver"
        / "podgroup-resourceclaimtemplate.yaml")
BOTH = "GenericWorkload=true,DRAWorkloadResourceClaims=true"
GANG = "GenericWorkload=true"
CLAIMS_ONLY = "DRAWorkloadResourceClaims=true"

Doc = dict[str, Any]


@cache
def _fleet(gpus: int) -> tuple[KubeObject, ...]:
    data = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "spec": {"pools": [
        {"name": "worker", "nodeNames": ["worker"], "driver": "example",
         "gpu": {"count": gpus}}]}}
    return tuple(generate(parse_fleet(json.loads(json.dumps(data)), "<test>")).objects())


def demo_docs() -> list[Doc]:
    with DEMO.open() as f:
        return [d for d in yaml.safe_load_all(f) if d]


def run(docs: list[Doc], gpus: int, gates: str) -> ScheduleResult:
    objects = [*_fleet(gpus), *(decode(d) for d in docs)]
    return schedule(objects, features=FeatureGates.parse(gates) if gates else None)


def devices_by_pod(result: ScheduleResult) -> dict[str, list[str]]:
    """Placed pod name -> devices of its claims (sorted)."""
    by_claim = {c.metadata.name: sorted(r.device for r in c.status.allocation.devices.results)
                for c in result.claims if c.status.allocation is not None}
    out: dict[str, list[str]] = {}
    for placement in result.placed:
        names = [s.resource_claim_name for s in placement.pod.status.resource_claim_statuses]
        out[placement.pod.metadata.name or ""] = sorted(
            d for n in names if n for d in by_claim.get(n, []))
    return out


def placed_per_group(result: ScheduleResult) -> dict[str, int]:
    counts = {"group-1": 0, "group-2": 0}
    for placement in result.placed:
        counts[(placement.pod.metadata.name or "")[:7]] += 1
    return counts


def messages(result: ScheduleResult) -> set[str]:
    return {u.message for u in result.unplaced}


@dataclass(frozen=True)
class Case:
    id: str
    gpus: int
    gates: str
    placed: dict[str, int]
    unplaced_message: str | None = None   # a substring every unplaced pod's message has
    edit: Callable[[list[Doc]], None] | None = None


def _without_group_2(docs: list[Doc]) -> None:
    docs[:] = [d for d in docs if not (d["kind"] == "PodGroup" and d["metadata"]["name"]
                                       == "group-2")]


def _min_count_3(docs: list[Doc]) -> None:
    for d in docs:
        if d["kind"] == "PodGroup":
            d["spec"]["schedulingPolicy"] = {"gang": {"minCount": 3}}


def _basic(docs: list[Doc]) -> None:
    for d in docs:
        if d["kind"] == "PodGroup":
            d["spec"]["schedulingPolicy"] = {"basic": {}}


def _gated_member(docs: list[Doc]) -> None:
    # group-2 as one replica plus a second member held back by a scheduling gate.
    deploy = next(d for d in docs if d["kind"] == "Deployment"
                  and d["metadata"]["name"] == "group-2")
    deploy["spec"]["replicas"] = 1
    template = deploy["spec"]["template"]
    docs.append({"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "group-2-held", "namespace": deploy["metadata"]["namespace"],
                              "labels": dict(template["metadata"]["labels"])},
                 "spec": {**copy.deepcopy(template["spec"]),
                          "schedulingGates": [{"name": "example.com/hold"}]}})


CASES = [
    # Both gates: one GPU per group is enough; with one GPU only group-1 gets it.
    Case("shared-claims-8-gpus", 8, BOTH, {"group-1": 2, "group-2": 2}),
    Case("shared-claims-2-gpus", 2, BOTH, {"group-1": 2, "group-2": 2}),
    Case("shared-claims-1-gpu", 1, BOTH, {"group-1": 2, "group-2": 0},
         "cannot allocate all claims"),
    # Gang without shared claims: 3 GPUs fit group-1 and half of group-2, which then binds
    # nothing and gives its GPU back.
    Case("gang-3-gpus-all-or-nothing", 3, GANG, {"group-1": 2, "group-2": 0}),
    Case("gang-4-gpus", 4, GANG, {"group-1": 2, "group-2": 2}),
    # Gates off, or only the claims gate: the pods' schedulingGroup is dropped.
    Case("gates-off-3-gpus", 3, "", {"group-1": 2, "group-2": 1},
         "cannot allocate all claims"),
    Case("claims-gate-alone-3-gpus", 3, CLAIMS_ONLY, {"group-1": 2, "group-2": 1},
         "cannot allocate all claims"),
    # PreEnqueue: the group must exist and have minCount pods before any is tried.
    Case("pod-group-missing", 8, BOTH, {"group-1": 2, "group-2": 0},
         "waiting for pods's pod group \"group-2\" to appear in scheduling queue",
         _without_group_2),
    Case("fewer-pods-than-min-count", 8, BOTH, {"group-1": 0, "group-2": 0},
         "waiting for minCount pods from a gang to appear in scheduling queue", _min_count_3),
    # A member held by a scheduling gate is counted (PreEnqueue) but not tried: the gang
    # cannot be completed in its PodGroup cycle, so the other member lets go at once
    # instead of holding its GPU at Permit until the timeout.
    Case("member-held-by-scheduling-gate", 8, BOTH, {"group-1": 2, "group-2": 0},
         None, _gated_member),
    # A basic PodGroup is no gang: 3 GPUs place 3 pods (own claims without the claims gate).
    Case("basic-policy", 3, GANG, {"group-1": 2, "group-2": 1}, "cannot allocate all claims",
         _basic),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_pod_groups(case: Case) -> None:
    docs = demo_docs()
    if case.edit is not None:
        case.edit(docs)
    before = copy.deepcopy(docs)
    result = run(docs, case.gpus, case.gates)
    assert docs == before  # inputs are never modified
    assert placed_per_group(result) == case.placed
    if case.unplaced_message is not None:
        assert result.unplaced
        assert all(case.unplaced_message in u.message for u in result.unplaced), \
            messages(result)
    # No device is held by a pod that did not bind (a rejected gang gives its GPUs back).
    held = {d for c in result.claims if c.status.allocation is not None
            for d in (r.device for r in c.status.allocation.devices.results)}
    assert held == {d for ds in devices_by_pod(result).values() for d in ds}


def test_shared_claim_is_the_groups() -> None:
    result = run(demo_docs(), 8, BOTH)
    devices = devices_by_pod(result)
    g1 = {tuple(d) for p, d in devices.items() if p.startswith("group-1-")}
    g2 = {tuple(d) for p, d in devices.items() if p.startswith("group-2-")}
    assert len(g1) == 1 and len(g2) == 1 and g1 != g2
    claims = [c for c in result.claims if c.status.allocation is not None]
    assert len(claims) == 2
    for claim in claims:
        owner = claim.metadata.owner_references[0]
        assert (owner.kind, owner.controller) == ("PodGroup", True)
        assert claim.metadata.name.startswith(f"{owner.name}-gpu-")
        [ref] = claim.status.reserved_for
        assert (ref.api_group, ref.resource, ref.name) == ("scheduling.k8s.io", "podgroups",
                                                           owner.name)
        assert ref.uid and ref.uid == owner.uid


def test_gang_rejection_names_min_count() -> None:
    # group-2's first pod fits (the third GPU), its second does not. The first is rejected
    # with upstream's PodGroup-cycle message and gives the GPU back; the second, retried
    # on that, fits alone and is rejected the same way: nothing of group-2 binds.
    result = run(demo_docs(), 3, GANG)
    assert [u.pod.metadata.name[:7] for u in result.unplaced] == ["group-2", "group-2"]
    assert all(u.message == "0/1 nodes are available: 1 minCount (2) cannot be satisfied: "
                            "1 scheduled, 0 remaining." for u in result.unplaced)
    assert {r.device for c in result.claims if c.status.allocation is not None
            for r in c.status.allocation.devices.results} == {"gpu-0", "gpu-1"}


def test_gated_member_messages() -> None:
    docs = demo_docs()
    _gated_member(docs)
    result = run(docs, 8, BOTH)
    found = {(u.pod.metadata.name or "")[:12]: u.message for u in result.unplaced}
    assert found == {
        "group-2-held": "waiting for scheduling gates: [example.com/hold]",
        "group-2-647d": "0/1 nodes are available: 1 minCount (2) cannot be satisfied: "
                        "1 scheduled, 0 remaining."}


def test_v1alpha3_and_v1beta1_read_alike() -> None:
    results = []
    for version in ("scheduling.k8s.io/v1alpha2", "scheduling.k8s.io/v1alpha3",
                    "scheduling.k8s.io/v1beta1"):
        docs = demo_docs()
        for d in docs:
            if d["kind"] == "PodGroup":
                d["apiVersion"] = version
        results.append(devices_by_pod(run(docs, 2, BOTH)))
    assert results[0] == results[1] == results[2]
