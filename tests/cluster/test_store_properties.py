"""Property tests of forks: random mutation sequences inside a fork, then revert, give
back the untouched store; commit gives what applying them directly gives; nested
forks compose; caches that follow the store's journals stay in step throughout."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dralab.api.base import ObjectMeta
from dralab.api.core import PriorityClass
from dralab.cluster import ClusterState, NodeTable
from scheduler.dra.builders import claim, gpu_class, gpus, node, pod, template

from .fingerprint import fingerprint
from .test_store import base, shared_slice, taint_rule

OPS = ("add_node", "remove_node", "set_slices", "put_shared", "remove_slice", "add_pod",
       "assume", "forget", "bind", "update", "remove_pod", "add_claim", "remove_claim",
       "add_class", "remove_class", "add_template", "remove_template", "add_pc",
       "remove_pc", "rules")

Op = tuple[str, int, int]
ops_strategy = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 60),
                                  st.integers(0, 60)), max_size=30)


def _pick(items: list[Any], i: int) -> Any:
    return items[i % len(items)] if items else None


def apply(state: ClusterState, op: Op) -> None:
    """Apply one operation; arguments pick among what exists, so the same sequence on
    two equal stores does the same thing."""
    name, a, b = op
    nodes = list(state.nodes)
    pods = list(state.pods.values())
    if name == "add_node":
        n = f"n{a % 5}"
        state.add_node(node(n, {"v": str(b % 3), "kubernetes.io/hostname": n,
                                "topology.kubernetes.io/zone": f"z{b % 2}"}),
                       [gpus(n, 1 + b % 3)] if b % 2 else None)
    elif name == "remove_node" and nodes:
        state.remove_node(_pick(nodes, a))
    elif name == "set_slices":
        owner = f"n{a % 5}"
        state.set_slices(owner, [gpus(owner, b % 3, prefix=f"g{b}-")] if b % 3 else [])
    elif name == "put_shared":
        state.put_slice(shared_slice(f"s{a % 3}", pool=f"pool{b % 2}", devices=1 + b % 2))
    elif name == "remove_slice" and state.slices:
        state.remove_slice(_pick(list(state.slices), a).name)
    elif name == "add_pod":
        p = pod(f"p{a % 8}", uid=f"u{a % 8}")
        if b % 2:
            p = msgspec.structs.replace(p, spec=msgspec.structs.replace(
                p.spec, node_name=f"n{b % 5}"))
        state.add_pod(p)
    elif name == "assume":
        pending = [p for p in pods if p.assumed_node is None]
        if pending and nodes:
            state.assume_pod(_pick(pending, a), _pick(nodes, b))
    elif name == "forget":
        placed = [p for p in pods if p.assumed_node is not None]
        if placed:
            state.forget_pod(_pick(placed, a))
    elif name == "bind" and pods and nodes:
        state.bind_pod(_pick(pods, a), _pick(nodes, b))
    elif name == "update" and pods:
        info = _pick(pods, a)
        meta = msgspec.structs.replace(info.pod.metadata, labels={"x": str(b)})
        state.update_pod(info, msgspec.structs.replace(info.pod, metadata=meta))
    elif name == "remove_pod" and pods:
        state.remove_pod(_pick(pods, a).key)
    elif name == "add_claim":
        allocated = [(f"n{b % 5}", f"gpu-{b % 2}")] if b % 2 else []
        state.add_claim(claim(f"c{a % 5}", allocated=allocated))
    elif name == "remove_claim" and state.claims:
        state.remove_claim(_pick(list(state.claims), a))
    elif name == "add_class":
        state.add_class(gpu_class(f"k{a % 3}"))
    elif name == "remove_class" and state.classes:
        state.remove_class(_pick(list(state.classes), a))
    elif name == "add_template":
        state.add_template(template(f"t{a % 3}"))
    elif name == "remove_template" and state.templates:
        state.remove_template(_pick(list(state.templates), a))
    elif name == "add_pc":
        state.add_priority_class(PriorityClass(metadata=ObjectMeta(name=f"pc{a % 2}"),
                                               value=b, global_default=bool(b % 2)))
    elif name == "remove_pc" and state.priority_classes:
        state.remove_priority_class(_pick(list(state.priority_classes), a))
    elif name == "rules":
        state.set_taint_rules([taint_rule(f"r{i}") for i in range(b % 3)])


def apply_all(state: ClusterState, ops: list[Op]) -> None:
    for op in ops:
        apply(state, op)


def table_in_step(state: ClusterState) -> None:
    """The incremental node table equals one built afresh (its journal was followed)."""
    kept = state.node_table()
    fresh = NodeTable(state)
    assert fresh.sync()
    assert kept is not None
    for column in ("pods_room", "alloc_cpu", "alloc_memory", "non_zero_cpu",
                   "non_zero_memory", "req_cpu", "req_memory"):
        assert np.array_equal(getattr(kept, column), getattr(fresh, column)), column


@settings(max_examples=150, deadline=None)
@given(ops_strategy, ops_strategy)
def test_revert_gives_back_the_untouched_store(ops: list[Op], after: list[Op]) -> None:
    state = base()
    table_in_step(state)
    before = fingerprint(state)
    state.fork()
    apply_all(state, ops)
    table_in_step(state)
    state.revert()
    assert fingerprint(state) == before
    table_in_step(state)
    # From here on it behaves as a store that never forked.
    untouched = base()
    apply_all(state, after)
    apply_all(untouched, after)
    assert fingerprint(state, identity=False) == fingerprint(untouched, identity=False)
    table_in_step(state)


@settings(max_examples=150, deadline=None)
@given(ops_strategy, ops_strategy)
def test_commit_equals_applying_directly(ops: list[Op], after: list[Op]) -> None:
    forked, direct = base(), base()
    forked.fork()
    apply_all(forked, ops)
    forked.commit()
    apply_all(direct, ops)
    assert fingerprint(forked, identity=False) == fingerprint(direct, identity=False)
    apply_all(forked, after)
    apply_all(direct, after)
    assert fingerprint(forked, identity=False) == fingerprint(direct, identity=False)
    table_in_step(forked)


@settings(max_examples=100, deadline=None)
@given(ops_strategy, ops_strategy, ops_strategy, st.booleans())
def test_nested_forks_compose(outer: list[Op], inner: list[Op], later: list[Op],
                              keep_inner: bool) -> None:
    state, direct = base(), base()
    start = fingerprint(state)
    state.fork()
    apply_all(state, outer)
    middle = fingerprint(state)
    state.fork()
    apply_all(state, inner)
    if keep_inner:
        state.commit()
    else:
        state.revert()
        assert fingerprint(state) == middle
    apply_all(state, later)
    apply_all(direct, outer)
    if keep_inner:
        apply_all(direct, inner)
    apply_all(direct, later)
    assert fingerprint(state, identity=False) == fingerprint(direct, identity=False)
    state.revert()
    assert fingerprint(state) == start
    table_in_step(state)
