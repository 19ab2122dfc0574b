"""SliceIndex.update: after any sequence of slices taken out and put in, every node
gathers exactly the pools an index built afresh from the same slices (in the same
order) gathers, and a node left out of the returned set gathers what it gathered
before the update."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dralab.allocator import NodeView, SliceIndex
from dralab.allocator.pools import NodePools, PoolGatherError, gather_pools
from dralab.api.resource import ResourceSlice

from .builders import (
    ALL_NODES,
    DRIVER_B,
    PER_DEVICE,
    consumes,
    counter_set,
    device,
    devices,
    node,
    node_selector,
    rslice,
)

# Builders of the slices a cluster may hold; each call makes a new object.
CANDIDATES: list[Callable[[], ResourceSlice]] = [
    lambda: rslice("n1-a", "node-1", "pool-n1", "driver-a", *devices(2)),
    lambda: rslice("n2-a", "node-2", "pool-n2", "driver-a", *devices(1)),
    lambda: rslice("n3-a", "node-3", "pool-n3", "driver-a", *devices(3)),
    # One pool published by two nodes (two slices announced).
    lambda: rslice("span-1", "node-1", "span", "driver-a", *devices(1), count=2),
    lambda: rslice("span-2", "node-2", "span", "driver-a", *devices(1, start=1), count=2),
    # A newer generation of node-1's pool, and a duplicate device name in it.
    lambda: rslice("n1-gen2", "node-1", "pool-n1", "driver-a", *devices(1), generation=2),
    lambda: rslice("n1-dup", "node-1", "pool-n1", "driver-a", *devices(1), count=1),
    # Partitionable: counters and the devices drawing on them, on node-3.
    lambda: rslice("n3-counters", "node-3", "mig", "driver-a", count=2,
                   counters=[counter_set("gpu-0", memory=4)]),
    lambda: rslice("n3-parts", "node-3", "mig", "driver-a",
                   device("part-0", counters=[consumes("gpu-0", memory=2)]),
                   device("part-1", counters=[consumes("gpu-0", memory=2)]), count=2),
    # Not pinned to a node: all nodes, a label selector, per-device selection.
    lambda: rslice("everywhere", ALL_NODES, "net", DRIVER_B, *devices(2)),
    lambda: rslice("region-1", node_selector("region", "region-1"), "fabric", DRIVER_B,
                   *devices(1)),
    lambda: rslice("per-device", PER_DEVICE, "pd", DRIVER_B,
                   device("pd-0", on="node-1"), device("pd-1", on=ALL_NODES),
                   device("pd-2", on=node_selector("region", "region-2"))),
    # The shared pool "net" also gets a slice pinned to node-2.
    lambda: rslice("net-n2", "node-2", "net", DRIVER_B, *devices(1, start=5), count=1),
]

VIEWS = [NodeView.of(node("node-1", "region-1")), NodeView.of(node("node-2", "region-2")),
         NodeView.of(node("node-3", "region-1")), NodeView.of(node("node-4", "region-2"))]


def summary(index: SliceIndex, view: NodeView, partitionable: bool) -> Any:
    try:
        pools: NodePools = gather_pools(index, view, partitionable)
    except PoolGatherError as exc:
        return str(exc)
    return (
        [(p.driver, p.name, p.incomplete, p.invalid, p.invalid_reason,
          [e.name for e in p.slices], sorted(p.all_devices),
          sorted((k, sorted(v.items())) for k, v in p.counter_sets.items()))
         for p in pools.pools],
        [(r.slice.name, r.name) for r in pools.candidates],
        pools.first_bad.key if pools.first_bad is not None else None,
        pools.any_invalid,
        sorted((r.slice.name, r.name) for r in pools.broken),
    )


def everything(index: SliceIndex) -> dict[tuple[str, bool], Any]:
    return {(v.name, p): summary(index, v, p) for v in VIEWS for p in (False, True)}


Step = tuple[int, int]  # (candidate, action: 0 add, 1 remove, 2 replace)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, len(CANDIDATES) - 1), max_size=6),
       st.lists(st.tuples(st.integers(0, len(CANDIDATES) - 1), st.integers(0, 2)),
                min_size=1, max_size=12))
def test_updated_index_gathers_what_a_fresh_one_gathers(initial: list[int],
                                                        steps: list[Step]) -> None:
    present: dict[int, tuple[int, ResourceSlice]] = {}  # candidate -> (order, slice)
    counter = 0
    for i in dict.fromkeys(initial):
        present[i] = (counter, CANDIDATES[i]())
        counter += 1
    index = SliceIndex([s for _, s in present.values()], (),
                       [o for o, _ in present.values()])
    for candidate, action in steps:
        before = everything(index)  # also fills the memos the update must clear
        removed: list[ResourceSlice] = []
        added: list[tuple[int, ResourceSlice]] = []
        if action == 0 and candidate not in present:
            present[candidate] = (counter, CANDIDATES[candidate]())
            added.append(present[candidate])
            counter += 1
        elif action == 1 and candidate in present:
            removed.append(present.pop(candidate)[1])
        elif action == 2 and candidate in present:
            order, old = present[candidate]
            present[candidate] = (order, CANDIDATES[candidate]())
            removed.append(old)
            added.append(present[candidate])
        affected = index.update(removed, added)
        ordered = sorted(present.values(), key=lambda item: item[0])
        fresh = SliceIndex([s for _, s in ordered], (), [o for o, _ in ordered])
        after = everything(index)
        assert after == everything(fresh)
        assert len(index) == len(present)
        if affected is not None:
            for (name, partitionable), found in after.items():
                if name not in affected:
                    assert found == before[(name, partitionable)], name
        for _, s in present.values():
            assert index.order_of(s) is not None
        for s in removed:
            assert index.order_of(s) is None
