"""What DynamicResources keeps in CycleState for one pod's scheduling cycle.

PreFilter writes a ``DRAState``; Filter adds one ``NodeResult`` per feasible
node; Reserve records what it wrote so Unreserve can take exactly that back.
Preemption works on clones: ``remove_pod``/``add_pod`` edit a private copy of
the allocated state (copy-on-write), never the cluster's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dralab.allocator import AllocatedState, Allocator
from dralab.allocator.nodes import CompiledNodeSelector
from dralab.api.core import ContainerExtendedResourceRequest
from dralab.api.resource import ResourceClaim

from .extended import ExtendedClaimSpec
from .view import Mask, NodeResult, OutcomeTable, Visit

__all__ = ["ClaimEntry", "DRAState", "ExtendedNeed"]


@dataclass(slots=True, eq=False)
class ClaimEntry:
    """One claim of the pod as PreFilter saw it.

    ``selector``: the allocation's node selector, for allocated claims that have
    one. ``pending``: not allocated, the scheduler allocates it.
    """

    key: str
    claim: ResourceClaim
    selector: CompiledNodeSelector | None = None
    pending: bool = False


@dataclass(slots=True, eq=False)
class ExtendedNeed:
    """The pod's extended resources that a DeviceClass can serve.

    ``requests``: pod-level whole units per resource; ``mapping``: resource ->
    class; ``stale``: a special claim left from an earlier cycle (it is deleted
    in PostFilter and the pod retried); ``kinds``: per set of resources a node
    serves through DRA, the placeholder claim to allocate and its spec.
    """

    requests: Mapping[str, int]
    mapping: Mapping[str, str]
    stale: ResourceClaim | None = None
    kinds: dict[frozenset[str], tuple[ResourceClaim, ExtendedClaimSpec]] = field(
        default_factory=dict)
    # Per kind: the outcome-cache token of the pod's pending claims plus the special one.
    tokens: dict[frozenset[str], int] = field(default_factory=dict)


@dataclass(slots=True, eq=False)
class DRAState:
    """Cycle state of DynamicResources. ``clone`` is independent for everything
    preemption or Filter may change."""

    claims: list[ClaimEntry] = field(default_factory=list)
    extended: ExtendedNeed | None = None
    # Derived once in PreFilter for the per-node hot path:
    pending_claims: tuple[ResourceClaim, ...] = ()  # the claims to allocate, in order
    selectors: tuple[tuple[int, CompiledNodeSelector], ...] = ()  # allocated claims' reach
    token: int | None = None  # AllocatorCache token of pending_claims
    prioritized: bool = False  # some pending claim has a firstAvailable request
    # Filter may answer from the outcome cache alone: a token, no extended
    # resources, no allocated claims to check, no what-if, no explanations.
    fast: bool = False
    table: OutcomeTable | None = None  # the cache's outcomes for ``token``
    # The allocator of this cycle (None: nothing to allocate).
    allocator: Allocator | None = None
    nodes: dict[str, NodeResult] = field(default_factory=dict)
    # Feasible nodes (True by position in ``vouched_index``) whose Filter call the
    # cycle skipped because ``table`` vouched for them: their results are read
    # from the table when asked for (see ``result``), not copied per pod.
    vouched: Mask | None = None
    vouched_index: Mapping[str, int] | None = None
    # Feasible nodes whose Filter call a visit replaced (cached outcomes with shared
    # devices): their share IDs, made into the outcome when asked for (``result``).
    visits: list[Visit] = field(default_factory=list)
    visit_index: Mapping[str, int] | None = None
    # Indices of allocated claims whose devices were out of reach of some node.
    unavailable: set[int] = field(default_factory=set)
    # Preemption what-if: allocated state with victims' claims released.
    what_if: AllocatedState | None = None
    owns_what_if: bool = False
    what_if_allocator: Allocator | None = None
    removed: dict[str, set[str]] = field(default_factory=dict)  # claim key -> victim uids
    released: set[str] = field(default_factory=set)  # claim keys freed in the what-if
    # Changes to the what-if state not made yet: (+1 add back | -1 free, claim). Made
    # when a Filter call needs the state (``settled_what_if``); a node where the claims
    # can never fit answers without it, so preemption's dry runs there cost no copy.
    deferred: list[tuple[int, ResourceClaim]] = field(default_factory=list)
    # A victim's claim stayed allocated because someone else holds it too (another pod,
    # a PodGroup): the dry run's answer depends on more than the node it ran on.
    kept_shared: bool = False
    # Reserve bookkeeping: (claim key, "allocated" | "consumer" | "created").
    reserved: list[tuple[str, str]] = field(default_factory=list)
    extended_claim: str | None = None
    extended_mappings: tuple[ContainerExtendedResourceRequest, ...] = ()
    status_written: bool = False

    @property
    def pending(self) -> list[ClaimEntry]:
        return [c for c in self.claims if c.pending]

    def result(self, name: str) -> NodeResult | None:
        """Filter's result for node ``name`` (None: Filter did not accept it)."""
        found = self.nodes.get(name)
        if found is None and self.visits and self.visit_index is not None:
            position = self.visit_index.get(name)
            for visit in self.visits if position is not None else ():
                outcome = visit.outcome(position)  # type: ignore[arg-type]
                if outcome is not None:
                    assert outcome.allocations is not None
                    found = self.nodes[name] = (outcome.allocations, None, outcome)
                    return found
        if found is not None or self.vouched is None or self.vouched_index is None \
                or self.table is None:
            return found
        position = self.vouched_index.get(name)
        if position is None or not self.vouched[position]:
            return None
        return self.table.result_at(position)

    def has_results(self) -> bool:
        """Some node passed Filter."""
        return bool(self.nodes) or bool(self.visits) or (
            self.vouched is not None and bool(self.vouched.any()))

    def empty(self) -> bool:
        """No claims and no extended resources: the plugin has nothing to do."""
        return not self.claims and self.extended is None

    def clone(self) -> DRAState:
        # The what-if state becomes shared: whoever changes it next copies it first.
        self.owns_what_if = False
        return DRAState(
            claims=self.claims,  # entries are never changed after PreFilter
            extended=self.extended,
            pending_claims=self.pending_claims,
            selectors=self.selectors,
            token=self.token,
            prioritized=self.prioritized,
            fast=self.fast,
            table=self.table,
            allocator=self.allocator,
            nodes=dict(self.nodes),
            vouched=self.vouched,  # never changed once set
            vouched_index=self.vouched_index,
            visits=list(self.visits),
            visit_index=self.visit_index,
            unavailable=set(self.unavailable),
            what_if=self.what_if,
            owns_what_if=False,
            what_if_allocator=self.what_if_allocator,
            removed={k: set(v) for k, v in self.removed.items()},
            released=set(self.released),
            deferred=list(self.deferred),
            kept_shared=self.kept_shared,
            reserved=list(self.reserved),
            extended_claim=self.extended_claim,
            extended_mappings=self.extended_mappings,
            status_written=self.status_written,
        )

    @property
    def in_what_if(self) -> bool:
        """Preemption changed this cycle's view of the allocated state."""
        return self.what_if is not None or bool(self.deferred)

    def defer_what_if(self, sign: int, claim: ResourceClaim) -> None:
        """Free (-1) or give back (+1) ``claim``'s devices in the what-if state, later."""
        self.deferred.append((sign, claim))
        self.fast = False

    def settled_what_if(self, base: AllocatedState) -> AllocatedState | None:
        """The what-if state with every deferred change made (None: no what-if)."""
        if self.deferred:
            state = self.writable_what_if(base)
            for sign, claim in self.deferred:
                if sign > 0:
                    state.add_claim(claim)
                else:
                    state.remove_claim(claim)
            self.deferred.clear()
        return self.what_if

    def writable_what_if(self, base: AllocatedState) -> AllocatedState:
        """The what-if state, copied first if it is shared (or still the cluster's)."""
        if self.what_if is None or not self.owns_what_if:
            self.what_if = (self.what_if or base).copy()
            self.owns_what_if = True
            self.what_if_allocator = None
            self.fast = False
        return self.what_if
