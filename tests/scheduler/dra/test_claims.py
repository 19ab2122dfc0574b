"""Claim lifecycle: generation from templates, lookup, release and deallocation."""

from __future__ import annotations

import random

import pytest
from msgspec.structs import replace

from dralab.api.codec import encode
from dralab.controllers.resourceclaims import (
    DELETE_PROTECTION_FINALIZER,
    NAME_ALPHABET,
    POD_CLAIM_ANNOTATION,
    delete_pod,
    ensure_pod_claims,
    generate_name,
    release_pod_claims,
    resolve_pod_claims,
    template_claim_base,
)

from .builders import NS, Harness, claim, claims_of, cluster, gpu_nodes, pod, template


def test_template_claim_is_named_owned_and_recorded() -> None:
    state = cluster(templates=[template("tpl", labels={"team": "a"},
                                       annotations={"note": "x"})])
    info = state.add_pod(pod("train", uid="pod-uid", templates={"gpu": "tpl"}))
    ensure_pod_claims(state, info, random.Random(7))
    [entry] = info.pod.status.resource_claim_statuses
    assert entry.name == "gpu"
    generated = state.claims[f"{NS}/{entry.resource_claim_name}"]
    name = generated.metadata.name or ""
    assert name.startswith("train-gpu-") and len(name) == len("train-gpu-") + 5
    assert set(name[len("train-gpu-"):]) <= set(NAME_ALPHABET)
    assert generated.metadata.generate_name == "train-gpu-"
    assert generated.metadata.namespace == NS
    assert generated.metadata.labels == {"team": "a"}
    assert generated.metadata.annotations == {"note": "x", POD_CLAIM_ANNOTATION: "gpu"}
    # The resourceclaim controller's object (kubernetes v1.36.2,
    # pkg/controller/resourceclaim/controller.go, handleClaim): the pod as controlling
    # owner without blockOwnerDeletion, the template's labels and annotations plus
    # pod-claim-name, no finalizers (the scheduler adds delete-protection when it
    # allocates).
    meta = encode(generated)["metadata"]
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "train",
                                        "uid": "pod-uid", "controller": True}]
    assert "finalizers" not in meta
    assert generated.spec is state.templates[f"{NS}/tpl"].spec.spec
    assert generated.status.allocation is None


def test_ensure_is_idempotent_and_assigns_a_deterministic_uid() -> None:
    runs = []
    for _ in range(2):
        state = cluster(templates=[template("tpl")])
        info = state.add_pod(pod("p", templates={"a": "tpl", "b": "tpl"}))
        rng = random.Random(3)
        ensure_pod_claims(state, info, rng)
        first = dict(state.claims)
        ensure_pod_claims(state, info, rng)
        assert state.claims == first
        assert len(info.pod.status.resource_claim_statuses) == 2
        runs.append((info.pod.metadata.uid, sorted(first)))
    assert runs[0] == runs[1]
    assert runs[0][0]


def test_missing_template_creates_nothing_and_the_pod_waits() -> None:
    state = cluster()
    info = state.add_pod(pod("p", templates={"gpu": "nope"}))
    ensure_pod_claims(state, info, random.Random(1))
    assert not state.claims
    assert resolve_pod_claims(state, info.pod) == 'pod "default/p": ResourceClaim not created yet'
    h = Harness(state)
    status = h.plugin.pre_enqueue(info)
    assert status.is_rejected() and status.reasons == (
        'pod "default/p": ResourceClaim not created yet',)


@pytest.mark.parametrize(("pod_name", "entry", "base"), [
    ("p", "gpu", "p-gpu-"),
    ("a" * 40, "b" * 30, "a" * 31 + "-" + "b" * 23),  # 57/72 of each, no final hyphen
])
def test_template_claim_base_truncation(pod_name: str, entry: str, base: str) -> None:
    assert template_claim_base(pod_name, entry) == base


def test_generated_names_cut_the_base_to_58() -> None:
    name = generate_name("x" * 70, random.Random(1))
    assert len(name) == 63 and name.startswith("x" * 58)


def test_shared_claim_must_exist() -> None:
    state = cluster()
    info = state.add_pod(pod("p", claims={"gpu": "shared"}))
    h = Harness(state)
    status = h.plugin.pre_enqueue(info)
    assert status.is_rejected()
    assert status.reasons == ('resourceclaim.resource.k8s.io "shared" not found',)
    state.add_claim(claim("shared"))
    assert h.plugin.pre_enqueue(info).is_success()


def test_claim_generated_for_another_pod_is_refused() -> None:
    state = cluster(templates=[template("tpl")])
    info = state.add_pod(pod("p", uid="u1", templates={"gpu": "tpl"}))
    ensure_pod_claims(state, info, random.Random(1))
    [entry] = info.pod.status.resource_claim_statuses
    other = state.add_pod(replace(pod("q", uid="u2", templates={"gpu": "tpl"}),
                                  status=info.pod.status))
    assert resolve_pod_claims(state, other.pod) == (
        f"ResourceClaim default/{entry.resource_claim_name} was not created for pod "
        "default/q (pod is not owner)")


def test_claim_being_deleted_makes_the_pod_wait() -> None:
    state = cluster(claims=[claim("c")])
    state.add_claim(replace(state.claims["default/c"], metadata=replace(
        state.claims["default/c"].metadata, deletion_timestamp="2025-01-01T00:00:00Z")))
    info = state.add_pod(pod("p", claims={"gpu": "c"}))
    assert resolve_pod_claims(state, info.pod) == 'resourceclaim "c" is being deleted'


def test_release_deletes_generated_claims_and_frees_devices() -> None:
    nodes, slices = gpu_nodes(1, 1)
    state = cluster(nodes, slices, templates=[template("tpl")])
    h = Harness(state)
    first = h.add(pod("first", templates={"gpu": "tpl"}))
    assert h.schedule(first).node == "node-0"
    [generated] = claims_of(state, first)
    assert DELETE_PROTECTION_FINALIZER in generated.metadata.finalizers
    assert state.allocated.claims()
    second = h.add(pod("second", templates={"gpu": "tpl"}))
    assert h.schedule(second).node is None
    delete_pod(state, first.key)  # the claim controller releases its claims
    assert f"{NS}/{generated.metadata.name}" not in state.claims
    assert not state.allocated.claims()
    assert first.pod.status.resource_claim_statuses == []
    release_pod_claims(state, first)  # twice is harmless
    assert h.schedule(second).node == "node-0"


def test_shared_claim_is_deallocated_when_the_last_consumer_goes() -> None:
    nodes, slices = gpu_nodes(2, 1)
    state = cluster(nodes, slices, claims=[claim("shared")])
    h = Harness(state)
    a, b = h.add(pod("a", claims={"gpu": "shared"})), h.add(pod("b", claims={"gpu": "shared"}))
    assert h.schedule(a).node == "node-0"
    assert h.schedule(b).node == "node-0"
    shared = state.claims["default/shared"]
    assert [r.name for r in shared.status.reserved_for] == ["a", "b"]
    release_pod_claims(state, a)
    shared = state.claims["default/shared"]
    assert [r.name for r in shared.status.reserved_for] == ["b"]
    assert shared.status.allocation is not None and state.allocated.claims()
    release_pod_claims(state, b)
    release_pod_claims(state, b)
    shared = state.claims["default/shared"]
    assert shared.status.allocation is None and shared.status.reserved_for == []
    assert DELETE_PROTECTION_FINALIZER not in shared.metadata.finalizers
    assert not state.allocated.claims()
