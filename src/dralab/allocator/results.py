"""Turning the picks of a successful search into API objects.

Per claim: one result entry per picked device in search order; the merged
configuration (each class's configs once, listing the requests that used the
class, then the claim's own configs that apply; a config whose request list
covers every request of the claim gets it cleared, as in 1.37); and the node
selector implied by where the picked devices are reachable.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import msgspec

from dralab.api.core import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from dralab.api.keys import random_uid
from dralab.api.owned import owned_copy
from dralab.api.quantity import Quantity
from dralab.api.resource import (
    AllocationResult,
    Device,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    OpaqueDeviceConfiguration,
    ResourceClaim,
)

from .prepare import PreparedClaim, Req
from .search import Fatal, Pick

__all__ = ["build_claim", "build_claim_at", "local_node_selector"]


def local_node_selector(node: str) -> NodeSelector:
    """The selector that pins an allocation to one node: a new object per call.

    API structs are frozen but their lists are not, so one object shared by every
    allocation on a node (as an earlier cache did) let a change to one claim's
    ``status.allocation.nodeSelector`` show up in all later ones. Building one costs
    three small structs and three lists per allocated claim, next to the
    device results built anyway: within bench_allocator's noise, cold and warm.
    """
    return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_fields=[
        NodeSelectorRequirement(key="metadata.name", operator="In", values=[node])])])


def _own(r: NodeSelectorRequirement) -> NodeSelectorRequirement:
    """A copy of a slice's requirement, so that a result never shares the slice's lists."""
    return NodeSelectorRequirement(key=r.key, operator=r.operator, values=list(r.values))


def _entry(pick: Pick, binding: bool, rng: random.Random) -> DeviceRequestAllocationResult:
    rec, req = pick.rec, pick.req
    consumed: dict[str, Quantity] = {}
    share_id = None
    if pick.share:
        share_id = random_uid(rng)
        amounts = pick.amounts or {}
        for fqn, (published, _) in rec.capacity.items():
            consumed[published] = amounts[fqn]
    return DeviceRequestAllocationResult(
        request=req.full_name,
        driver=rec.driver,
        pool=rec.pool,
        device=rec.name,
        admin_access=True if req.admin else None,
        tolerations=list(req.tolerations),
        binding_conditions=list(rec.binding_conditions) if binding else [],
        binding_failure_conditions=list(rec.binding_failure_conditions) if binding else [],
        share_id=share_id,
        consumed_capacity=consumed,
    )


def _configs(prepared: PreparedClaim, selected: Mapping[int, int]
             ) -> list[DeviceAllocationConfiguration]:
    claim = prepared.claim
    # [source, requests, opaque] while building; requests grow for shared classes.
    built: list[tuple[str, list[str], OpaqueDeviceConfiguration | None]] = []
    class_ranges: dict[str, tuple[int, int]] = {}
    for ri, slot in enumerate(prepared.slots):
        req = slot.req if slot.req is not None else slot.subs[selected[ri]]
        name = req.cls.name
        known = class_ranges.get(name)
        if known is not None:
            for i in range(*known):
                built[i][1].append(req.full_name)
            continue
        start = len(built)
        for cfg in req.cls.spec.config:
            built.append(("FromClass", [req.full_name], cfg.opaque))
        class_ranges[name] = (start, len(built))
    for claim_cfg in claim.spec.devices.config:
        names = claim_cfg.requests
        if not names:
            built.append(("FromClaim", [], claim_cfg.opaque))
            continue
        # Quirk kept from upstream: appended once per request it names.
        for ri, slot in enumerate(prepared.slots):
            if slot.name in names:
                built.append(("FromClaim", list(names), claim_cfg.opaque))
                continue
            if slot.req is None:
                chosen = f"{slot.name}/{slot.subs[selected[ri]].name}"
                if chosen in names:
                    built.append(("FromClaim", list(names), claim_cfg.opaque))
    total = len(prepared.slots)
    # Each result owns its opaque parameters: they are the class's or the claim's
    # objects, whose maps a caller could otherwise change through the allocation.
    return [
        DeviceAllocationConfiguration(
            source=source,
            requests=[] if len(requests) == total else requests,
            opaque=owned_copy(opaque) if opaque is not None else None,
        )
        for source, requests, opaque in built
    ]


def _requirement_key(r: NodeSelectorRequirement) -> tuple[str, str, frozenset[str]]:
    return (r.key, r.operator, frozenset(r.values))


def _node_selector(picks: Sequence[Pick], node: str, binding: bool) -> NodeSelector | None:
    fields: list[NodeSelectorRequirement] = []
    expressions: list[NodeSelectorRequirement] = []
    seen_fields: set[tuple[str, str, frozenset[str]]] = set()
    seen_expressions: set[tuple[str, str, frozenset[str]]] = set()
    for pick in picks:
        rec = pick.rec
        if rec.local_node_name() is not None or (binding and rec.binds_to_node):
            return local_node_selector(node)
        selector = rec.node_selector()
        if selector is None:
            continue
        terms = selector.node_selector_terms
        if len(terms) > 1:
            raise Fatal(f"create NodeSelector: unsupported ResourceSlice.NodeSelector with "
                        f"{len(terms)} terms")
        if not terms:
            continue
        for requirement in terms[0].match_fields:
            k = _requirement_key(requirement)
            if k not in seen_fields:
                seen_fields.add(k)
                fields.append(_own(requirement))
        for requirement in terms[0].match_expressions:
            k = _requirement_key(requirement)
            if k not in seen_expressions:
                seen_expressions.add(k)
                expressions.append(_own(requirement))
    if not fields and not expressions:
        return None
    return NodeSelector(node_selector_terms=[
        NodeSelectorTerm(match_expressions=expressions, match_fields=fields)])


def build_claim(prepared: PreparedClaim, picks: Sequence[Pick], selected: Mapping[int, int],
                node: str, binding: bool, rng: random.Random) -> ResourceClaim:
    """The claim with ``status.allocation`` set from the search's picks. Raises Fatal."""
    return _allocated_claim(prepared, [_entry(p, binding, rng) for p in picks], selected,
                            _node_selector(picks, node, binding))


def _allocated_claim(prepared: PreparedClaim, results: list[DeviceRequestAllocationResult],
                     selected: Mapping[int, int], node_selector: NodeSelector | None
                     ) -> ResourceClaim:
    allocation = AllocationResult(
        devices=DeviceAllocationResult(
            results=results,
            config=_configs(prepared, selected) if prepared.has_config else [],
        ),
        node_selector=node_selector,
    )
    claim = prepared.claim
    status = msgspec.structs.replace(claim.status, allocation=allocation)
    return msgspec.structs.replace(claim, status=status)


def build_claim_at(prepared: PreparedClaim, driver: str, pool: str, devices: Sequence[Device],
                   picks: Sequence[tuple[int, Req]], selected: Mapping[int, int],
                   binding: bool, node: str) -> ResourceClaim:
    """``build_claim`` for exclusive picks, given as (position in ``devices``, request), of
    devices of one node-local slice (``twins``): the same results without device
    records; the node selector is ``node``'s own."""
    results = []
    for at, req in picks:
        d = devices[at]
        results.append(DeviceRequestAllocationResult(
            request=req.full_name,
            driver=driver,
            pool=pool,
            device=d.name,
            admin_access=True if req.admin else None,
            tolerations=list(req.tolerations),
            binding_conditions=list(d.binding_conditions) if binding else [],
            binding_failure_conditions=list(d.binding_failure_conditions) if binding else [],
        ))
    return _allocated_claim(prepared, results, selected,
                            local_node_selector(node) if picks else None)
