"""Device-scoring policies: which of the feasible allocations on a node to prefer.

Upstream's allocator is first-fit: devices are tried in pool/slice/device
order and the first complete assignment wins; the scheduler then only scores
nodes (prioritized lists). That fragments partitionable GPUs: a one-slice MIG
request lands on an idle GPU while a half-used one has room, and the next
whole-GPU request finds no idle GPU left.

A ``DevicePolicy`` steers that choice in two ways, both optional:

* ``order`` re-orders the node's candidate devices before the search. The
  search stays exhaustive, so a policy can change *which* devices are chosen
  but never turn a feasible node infeasible or the reverse.
* ``score`` rates the allocation found on a node (0-100); DynamicResources
  adds it to the prioritized-list score, so the policy also prefers nodes.

Policies must be pure functions of the node's pools and the allocated state
(results are cached per node while its pools do not change).

``FirstFit`` is upstream's behaviour. ``Pack`` prefers devices in groups that
are already in use (a GPU's counter set for partitions, else the pool) and the
fullest first (best fit), and scores nodes by how used the chosen groups
already were, so partly used GPUs and nodes fill up before idle ones are
touched.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Protocol, TypeAlias, runtime_checkable

from dralab.allocator import AllocatedState, AllocationOutcome, Allocator, NodeView
from dralab.allocator.index import DeviceRecord
from dralab.allocator.pools import NodePools
from dralab.api.resource import AllocationResult, ResourceClaim

__all__ = [
    "POLICIES",
    "DevicePolicy",
    "FirstFit",
    "Group",
    "OrderedAllocator",
    "Pack",
    "group_of",
    "group_usage",
    "make_policy",
]

# (driver, pool) plus the counter set a partition draws from ("" for plain devices).
Group: TypeAlias = tuple[tuple[str, str], str]


@runtime_checkable
class DevicePolicy(Protocol):
    """How to prefer one feasible allocation over another. See the module docstring."""

    @property
    def name(self) -> str: ...

    def order(self, pools: NodePools, state: AllocatedState) -> Sequence[DeviceRecord] | None:
        """The node's candidates (``pools.candidates``) in the order to try them, or
        None to keep upstream's order. Must return every candidate exactly once."""
        ...

    def score(self, pools: NodePools, state: AllocatedState,
              allocations: Sequence[AllocationResult]) -> int:
        """0-100: how much the policy likes ``allocations`` (found on this node, not
        yet in ``state``). 0 when it has no opinion."""
        ...


class FirstFit:
    """Upstream's behaviour: candidate order untouched, no opinion on nodes."""

    name = "first-fit"

    def order(self, pools: NodePools, state: AllocatedState) -> Sequence[DeviceRecord] | None:
        return None

    def score(self, pools: NodePools, state: AllocatedState,
              allocations: Sequence[AllocationResult]) -> int:
        return 0


def group_of(rec: DeviceRecord) -> Group:
    """The group a device fills: its first counter set (one physical GPU for
    partitions), else its pool."""
    return (rec.pool_key, rec.consumes[0][0] if rec.consumes else "")


def group_usage(pools: NodePools, state: AllocatedState) -> dict[Group, float]:
    """Used fraction (0-1) of every group on the node. Pure.

    A counter-set group is as used as its most consumed counter; a plain group
    by the share of its devices that are allocated.
    """
    usage: dict[Group, float] = {}
    for pool, candidates in pools.pool_candidates.items():
        allocated = state.allocated_in_pool(pool.key)
        consumed: dict[tuple[str, str], int] = {}
        plain_used = 0
        for name in allocated:
            rec = pool.all_devices.get(name)
            if rec is None:
                continue
            if not rec.consumes:
                plain_used += 1
            for set_name, counters in rec.consumes:
                for counter, nano in counters:
                    key = (set_name, counter)
                    consumed[key] = consumed.get(key, 0) + nano
        for set_name, totals in pool.counter_sets.items():
            fractions = [consumed.get((set_name, c), 0) / total
                         for c, total in totals.items() if total > 0]
            usage[(pool.key, set_name)] = min(1.0, max(fractions, default=0.0))
        plain = sum(1 for rec in candidates if not rec.consumes)
        if plain:
            usage[(pool.key, "")] = min(1.0, plain_used / plain)
    return usage


class Pack:
    """Fill used groups first (best fit); prefer nodes whose chosen groups are fuller."""

    name = "pack"

    def order(self, pools: NodePools, state: AllocatedState) -> Sequence[DeviceRecord] | None:
        usage = group_usage(pools, state)
        if not any(usage.values()):
            return None  # nothing used yet: upstream order is as good as any
        indexed = list(enumerate(pools.candidates))
        indexed.sort(key=lambda item: (-usage.get(group_of(item[1]), 0.0), item[0]))
        return [rec for _, rec in indexed]

    def score(self, pools: NodePools, state: AllocatedState,
              allocations: Sequence[AllocationResult]) -> int:
        usage = group_usage(pools, state)
        values: list[float] = []
        for allocation in allocations:
            for result in allocation.devices.results:
                if result.admin_access:
                    continue
                pool = pools.by_key.get((result.driver, result.pool))
                rec = pool.all_devices.get(result.device) if pool is not None else None
                if rec is not None:
                    values.append(usage.get(group_of(rec), 0.0))
        if not values:
            return 0
        return round(100 * sum(values) / len(values))


POLICIES: Mapping[str, type[FirstFit] | type[Pack]] = {"first-fit": FirstFit, "pack": Pack}


def make_policy(name: str) -> DevicePolicy:
    """The built-in policy called ``name``; ValueError for an unknown name."""
    try:
        return POLICIES[name]()
    except KeyError:
        raise ValueError(f"unknown device policy {name!r} (known: "
                         f"{', '.join(sorted(POLICIES))})") from None


class OrderedAllocator:
    """Runs an ``Allocator`` search over a re-ordered candidate list.

    Adapter: the allocator has no hook for the candidate order, so this one
    gives its own ``Allocator`` a shallow copy of the slice index whose per-node
    pool memo is pre-filled with the re-ordered pools just before each call.
    Everything else (slices, classes, allocated state, features, random
    source, memoised pools) is shared with ``base``. To be replaced by an
    ``order`` argument of ``Allocator.allocate`` once the allocator offers one.
    """

    def __init__(self, base: Allocator) -> None:
        self.overlay = copy.copy(base.index)
        self.overlay.node_pools = {}
        self.allocator = Allocator(self.overlay, base.classes, base.state, base.features,
                                   rng=base.rng, max_steps=base.max_steps)

    def allocate(self, claims: Sequence[ResourceClaim], view: NodeView, pools: NodePools,
                 order: Sequence[DeviceRecord], *, explain_failure: bool) -> AllocationOutcome:
        reordered = dataclasses.replace(pools, candidates=tuple(order))
        memo = self.overlay.node_pools
        memo.clear()
        memo[view.name] = {
            (view.cache_key(), self.allocator.features.partitionable_devices): reordered}
        return self.allocator.allocate(claims, view, explain_failure=explain_failure)
