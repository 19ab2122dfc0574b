"""The cluster store: every mutation's event and versions, read-only listers, slice
ownership, and fork / revert / commit (nested) restoring exactly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from dralab.api.base import ObjectMeta, OwnerReference
from dralab.api.core import PodResourceClaimStatus, PriorityClass
from dralab.api.resource import (
    DeviceTaint,
    DeviceTaintRule,
    DeviceTaintRuleSpec,
    ResourceSlice,
)
from dralab.cluster import (
    ClaimChanged,
    ClassChanged,
    ClusterEvent,
    ClusterState,
    DRALister,
    NodeAdded,
    NodeRemoved,
    NodeUpdated,
    PodAdded,
    PodAssumed,
    PodBound,
    PodForgotten,
    PodRemoved,
    PodUpdated,
    PriorityClassChanged,
    SharedLister,
    SlicesChanged,
    TaintRulesChanged,
    TemplateChanged,
)
from dralab.controllers.resourceclaims import delete_pod
from scheduler.dra.builders import DRIVER, claim, gpu_class, gpus, node, pod, template

from .fingerprint import fingerprint


def shared_slice(name: str, pool: str = "shared", devices: int = 1) -> ResourceSlice:
    """A slice of a pool reachable from every node (owned by its pool, not a node)."""
    base = gpus("x", devices, pool=pool)
    spec = msgspec.structs.replace(base.spec, node_name=None, all_nodes=True)
    return msgspec.structs.replace(base, metadata=ObjectMeta(name=name), spec=spec)


def taint_rule(name: str) -> DeviceTaintRule:
    return DeviceTaintRule(metadata=ObjectMeta(name=name), spec=DeviceTaintRuleSpec(
        taint=DeviceTaint(key="k", value="v", effect="NoSchedule")))


def base() -> ClusterState:
    """Two nodes with GPUs, a bound and a pending pod, a class, a template, a claim."""
    state = ClusterState()
    for name in ("node-0", "node-1"):
        state.add_node(node(name, {"kubernetes.io/hostname": name}), [gpus(name, 2)])
    state.add_class(gpu_class())
    state.add_template(template("tpl"))
    state.add_claim(claim("held", allocated=[("node-0", "gpu-0")], on="node-0"))
    state.add_pod(msgspec.structs.replace(
        pod("bound"), spec=msgspec.structs.replace(pod("bound").spec, node_name="node-0")))
    state.add_pod(pod("pending"))
    return state


def changes(state: ClusterState, action: Callable[[], Any]) -> tuple[list[ClusterEvent], int]:
    """The events ``action`` emitted and how much ``version`` moved."""
    cursor, version = state.events.end, state.version
    action()
    found = state.events.since(cursor)
    assert found is not None
    return list(found), state.version - version


# --- every mutation: its event, its versions -----------------------------------------------

def test_node_mutations_emit_events_and_bump_versions() -> None:
    state = base()
    nv = state.node_version
    events, moved = changes(state, lambda: state.add_node(node("node-2")))
    assert events == [NodeAdded("node-2")] and moved > 0 and state.node_version > nv
    nv = state.node_version
    events, moved = changes(state, lambda: state.add_node(node("node-2", {"a": "b"})))
    assert events == [NodeUpdated("node-2")] and moved > 0 and state.node_version > nv
    sv = state.slice_version
    events, _ = changes(state, lambda: state.add_node(node("node-2"), [gpus("node-2", 1)]))
    assert events == [NodeUpdated("node-2"),
                      SlicesChanged("node-2", frozenset({(DRIVER, "node-2")}))]
    assert state.slice_version > sv
    nv = state.node_version
    events, moved = changes(state, lambda: state.remove_node("node-2"))
    assert events == [NodeRemoved("node-2"),
                      SlicesChanged("node-2", frozenset({(DRIVER, "node-2")}))]
    assert moved > 0 and state.node_version > nv
    assert state.slices_of("node-2") == () and "node-2" not in state.nodes
    events, moved = changes(state, lambda: state.remove_node("node-2"))
    assert events == [] and moved == 0


def test_replaced_node_keeps_its_pods() -> None:
    state = base()
    before = state.nodes["node-0"]
    after = state.add_node(node("node-0", {"zone": "a"}))
    assert after is not before and [p.key for p in after.pods] == ["default/bound"]
    assert after.requested == before.requested


def test_slice_mutations_emit_events_with_owner_and_pools() -> None:
    state = base()
    sv = state.slice_version
    events, _ = changes(state, lambda: state.set_slices("node-1", [gpus("node-1", 3)]))
    assert events == [SlicesChanged("node-1", frozenset({(DRIVER, "node-1")}))]
    assert state.slice_version > sv
    events, _ = changes(state, lambda: state.put_slice(shared_slice("s")))
    assert events == [SlicesChanged((DRIVER, "shared"), frozenset({(DRIVER, "shared")}))]
    assert state.slices_of((DRIVER, "shared")) == (state.slices[-1],)
    events, _ = changes(state, lambda: state.remove_slice("s"))
    assert events == [SlicesChanged((DRIVER, "shared"), frozenset({(DRIVER, "shared")}))]
    # The same objects again: nothing to do, nothing emitted.
    events, _ = changes(state, lambda: state.set_slices("node-1", state.slices_of("node-1")))
    assert events == []


def test_slices_belong_to_their_owner() -> None:
    state = base()
    with pytest.raises(ValueError, match="belongs to"):
        state.set_slices("node-0", [gpus("node-1", 1)])
    with pytest.raises(ValueError, match="two ResourceSlices"):
        state.set_slices("node-0", [gpus("node-0", 1), gpus("node-0", 2)])
    # A slice that moves to another node changes both owners.
    moved = msgspec.structs.replace(state.slices_of("node-0")[0], spec=msgspec.structs.replace(
        state.slices_of("node-0")[0].spec, node_name="node-1"))
    events, _ = changes(state, lambda: state.put_slice(moved))
    assert [type(e) for e in events] == [SlicesChanged, SlicesChanged]
    assert {e.owner for e in events if isinstance(e, SlicesChanged)} == {"node-0", "node-1"}
    assert state.slices_of("node-0") == ()
    assert moved in state.slices_of("node-1")


def test_pod_lifecycle_events() -> None:
    state = base()
    events, moved = changes(state, lambda: state.add_pod(pod("new")))
    assert events == [PodAdded("default/new", None)] and moved == 0
    info = state.pods["default/new"]
    events, moved = changes(state, lambda: state.assume_pod(info, "node-1"))
    assert events == [PodAssumed("default/new", "node-1")] and moved > 0
    events, moved = changes(state, lambda: state.forget_pod(info))
    assert events == [PodForgotten("default/new", "node-1")] and moved > 0
    events, _ = changes(state, lambda: state.forget_pod(info))
    assert events == []
    events, _ = changes(state, lambda: state.bind_pod(info, "node-1"))
    assert events == [PodAssumed("default/new", "node-1"), PodBound("default/new", "node-1")]
    assert info.pod.spec.node_name == "node-1"
    events, _ = changes(state, lambda: state.update_pod(info, info.pod))
    assert events == [PodUpdated("default/new")]
    events, moved = changes(state, lambda: state.remove_pod("default/new"))
    assert events == [PodRemoved("default/new", "node-1")] and moved > 0
    assert "default/new" not in state.pods
    assert [p.key for p in state.nodes["node-1"].pods] == []


def test_bound_pod_is_placed_when_added() -> None:
    state = base()
    spec = msgspec.structs.replace(pod("b2").spec, node_name="node-1")
    events, _ = changes(state, lambda: state.add_pod(msgspec.structs.replace(pod("b2"),
                                                                              spec=spec)))
    assert events == [PodAdded("default/b2", "node-1")]
    assert state.nodes["node-1"].requested["pods"] == 1000


def test_claim_events_keep_devices_in_step() -> None:
    state = base()
    events, moved = changes(state, lambda: state.add_claim(
        claim("c", allocated=[("node-1", "gpu-1")])))
    assert events == [ClaimChanged("default/c")] and moved > 0
    assert state.allocated.in_use(f"{DRIVER}/node-1/gpu-1")
    events, _ = changes(state, lambda: state.remove_claim("default/c"))
    assert events == [ClaimChanged("default/c", deleted=True)]
    assert not state.allocated.in_use(f"{DRIVER}/node-1/gpu-1")
    events, moved = changes(state, lambda: state.remove_claim("default/c"))
    assert events == [] and moved > 0  # counted as it always was


def test_class_template_priority_class_and_rule_events() -> None:
    state = base()
    cv = state.class_version
    events, _ = changes(state, lambda: state.add_class(gpu_class("other")))
    assert events == [ClassChanged("other")] and state.class_version > cv
    events, _ = changes(state, lambda: state.remove_class("other"))
    assert events == [ClassChanged("other", deleted=True)]
    events, _ = changes(state, lambda: state.add_template(template("t2")))
    assert events == [TemplateChanged("default/t2")]
    events, _ = changes(state, lambda: state.remove_template("default/t2"))
    assert events == [TemplateChanged("default/t2", deleted=True)]
    events, _ = changes(state, lambda: state.add_priority_class(
        PriorityClass(metadata=ObjectMeta(name="high"), value=100)))
    assert events == [PriorityClassChanged("high")]
    assert state.resolve_priority(msgspec.structs.replace(
        pod("p"), spec=msgspec.structs.replace(pod("p").spec, priority_class_name="high"))) == 100
    events, _ = changes(state, lambda: state.remove_priority_class("high"))
    assert events == [PriorityClassChanged("high", deleted=True)]
    events, _ = changes(state, lambda: state.add_taint_rule(taint_rule("r")))
    assert events == [TaintRulesChanged()] and len(state.taint_rules) == 1
    events, _ = changes(state, lambda: state.set_taint_rules(()))
    assert events == [TaintRulesChanged()] and state.taint_rules == ()


def test_removing_a_pod_leaves_its_claims_to_the_claim_controller() -> None:
    state = base()
    state.add_claim(claim("mine", allocated=[("node-1", "gpu-0")], reserved_for=["u-mine"]))
    mine = state.add_pod(pod("mine", uid="u-mine", claims={"gpu": "mine"}))
    state.remove_pod(mine.key)
    assert state.claims["default/mine"].status.allocation is not None
    again = state.add_pod(pod("mine", uid="u-mine", claims={"gpu": "mine"}))
    assert delete_pod(state, again.key) is again
    assert state.claims["default/mine"].status.allocation is None  # no consumer left


def test_revert_gives_back_a_deleted_pods_claim_statuses() -> None:
    # Deleting a pod drops its generated claims' status entries from the removed
    # PodInfo; a revert must restore them, or a second what-if's delete of the same
    # pod no longer finds (and frees) the claim.
    state = base()
    generated = claim("mine-gpu-abcde", allocated=[("node-1", "gpu-0")], on="node-1",
                      reserved_for=["u-mine"])
    generated = msgspec.structs.replace(generated, metadata=msgspec.structs.replace(
        generated.metadata, owner_references=[OwnerReference(
            api_version="v1", kind="Pod", name="mine", uid="u-mine", controller=True)]))
    state.add_claim(generated)
    spec = pod("mine", uid="u-mine", templates={"gpu": "tpl"})
    spec = msgspec.structs.replace(spec, status=msgspec.structs.replace(
        spec.status, resource_claim_statuses=[
            PodResourceClaimStatus(name="gpu", resource_claim_name="mine-gpu-abcde")]))
    state.add_pod(spec)
    for _ in range(2):
        state.fork()
        delete_pod(state, "default/mine")
        assert "default/mine-gpu-abcde" not in state.claims
        state.revert()
        assert "default/mine-gpu-abcde" in state.claims
        assert state.pods["default/mine"].pod.status.resource_claim_statuses


# --- listers -----------------------------------------------------------------------------

def test_listers_are_read_only() -> None:
    state = base()
    listers: list[Any] = [state.nodes, state.pods, state.claims, state.templates,
                          state.classes, state.priority_classes]
    for mapping in listers:
        key = next(iter(mapping), "x")
        before = dict(mapping)
        for mutate in (lambda m, k: m.__setitem__(k, None), lambda m, k: m.__delitem__(k),
                       lambda m, k: m.pop(k), lambda m, k: m.clear(),
                       lambda m, k: m.update({}), lambda m, k: m.setdefault(k, None),
                       lambda m, k: m.popitem(), lambda m, k: m.__ior__({})):
            with pytest.raises(TypeError, match="read-only"):
                mutate(mapping, key)
        assert dict(mapping) == before
    assert isinstance(state.slices, tuple) and isinstance(state.taint_rules, tuple)
    assert isinstance(state.slices_of("node-0"), tuple)
    with pytest.raises(AttributeError):
        state.slices = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        state.nodes = {}  # type: ignore[misc]
    with pytest.raises(AttributeError):
        state.extra = 1  # type: ignore[attr-defined]
    # The store satisfies the lister protocols its readers ask for.
    shared: SharedLister = state
    dra: DRALister = state
    assert shared.node_names() == ["node-0", "node-1"] and dra.claims is state.claims


def test_listers_keep_arrival_order() -> None:
    state = base()
    state.add_claim(claim("b"))
    state.add_claim(claim("a"))
    state.add_claim(claim("held"))  # replaced in place
    assert list(state.claims) == ["default/held", "default/b", "default/a"]
    assert [s.name for s in state.slices] == [s.name for n in ("node-0", "node-1")
                                              for s in state.slices_of(n)]


# --- forks -------------------------------------------------------------------------------

def what_if(state: ClusterState) -> None:
    """A bit of everything, as a scale-down plus scale-up what-if would do."""
    state.add_node(node("template", {"kubernetes.io/hostname": "template"}),
                   [gpus("template", 4)])
    new = state.add_pod(pod("new"))
    state.bind_pod(new, "template")
    pending = state.pods["default/pending"]
    state.assume_pod(pending, "node-1")
    state.add_claim(claim("c", allocated=[("template", "gpu-0")]))
    state.remove_claim("default/held")
    state.remove_pod("default/bound")
    state.remove_node("node-0")
    state.add_node(node("node-1", {"changed": "yes"}))
    state.put_slice(shared_slice("s"))
    state.remove_class("gpu")
    state.add_template(template("t2"))
    state.add_priority_class(PriorityClass(metadata=ObjectMeta(name="pc"), value=5))
    state.add_taint_rule(taint_rule("r"))


def test_revert_restores_exactly() -> None:
    state = base()
    before = fingerprint(state)
    state.fork()
    what_if(state)
    assert fingerprint(state) != before
    state.revert()
    assert fingerprint(state) == before
    # And it goes on as an untouched store would.
    untouched = base()
    for s in (state, untouched):
        what_if(s)
    assert fingerprint(state, identity=False) == fingerprint(untouched, identity=False)


def test_commit_keeps_changes_as_if_made_directly() -> None:
    state, direct = base(), base()
    state.fork()
    what_if(state)
    state.commit()
    what_if(direct)
    assert fingerprint(state, identity=False) == fingerprint(direct, identity=False)
    assert state.forks == 0
    with pytest.raises(RuntimeError):
        state.revert()
    with pytest.raises(RuntimeError):
        state.commit()


def test_nested_forks() -> None:
    state = base()
    start = fingerprint(state)
    state.fork()
    state.remove_pod("default/bound")
    state.add_pod(pod("outer"))
    middle = fingerprint(state)
    state.fork()
    what_if(state)
    state.revert()
    assert fingerprint(state) == middle
    state.fork()
    what_if(state)
    state.commit()  # joins the outer fork
    assert state.forks == 1
    state.revert()
    assert fingerprint(state) == start


def test_revert_emits_the_restoration_and_versions_move_on() -> None:
    state = base()
    info = state.pods["default/pending"]
    versions = (state.version, state.node_version, state.slice_version)
    cursor = state.events.end
    with state.what_if():
        state.assume_pod(info, "node-1")
        state.remove_node("node-0")
    events = state.events.since(cursor)
    assert events is not None
    undone = events[3:]
    assert NodeAdded("node-0") in undone
    assert SlicesChanged("node-0", frozenset({(DRIVER, "node-0")})) in undone
    assert PodForgotten("default/pending", "node-1") in undone
    assert info.assumed_node is None
    assert state.version > versions[0] and state.node_version > versions[1] \
        and state.slice_version > versions[2]
    # Caches keyed on the node journal see the node whose pods were restored.
    log = state.node_log().since(0)
    assert log is not None and log[-1] == "node-1"


def test_fork_costs_what_it_changes() -> None:
    state = ClusterState()
    for i in range(300):
        name = f"n{i}"
        state.add_node(node(name), [gpus(name, 1)])
    state.fork()
    state.add_pod(pod("p"))
    state.assume_pod(state.pods["default/p"], "n5")
    # One undo step per change plus one copy of the one node touched, nothing per node.
    assert len(state._undo) <= 4  # the cost is the point of the test
    state.revert()
    assert state.nodes["n5"].pods == []


def test_revert_of_a_deleted_key_restores_order_lazily() -> None:
    state = base()
    for name in ("a", "b", "c"):
        state.add_claim(claim(name))
    order = list(state.claims)
    with state.what_if():
        state.remove_claim("default/a")
        state.remove_claim("default/held")
    assert "default/a" in state.claims  # lookups need no re-sort
    assert list(state.claims) == order
    assert [k for k, _ in state.claims.items()] == order


def test_slice_index_positions_follow_reverts() -> None:
    state = base()
    order = [s.name for s in state.slices]
    positions = [state.slice_position(n) for n in order]
    with state.what_if():
        state.remove_node("node-0")
    assert [s.name for s in state.slices] == order
    assert [state.slice_position(n) for n in order] == positions
    assert positions == sorted(positions)


def test_package_exports_exactly_all() -> None:
    import dralab.cluster as package

    public = {n for n, v in vars(package).items()
              if not n.startswith("_") and n != "annotations"
              and type(v).__name__ != "module"}
    assert public == set(package.__all__)
