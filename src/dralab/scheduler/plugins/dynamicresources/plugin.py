"""DynamicResources: the scheduler plugin that gets a pod's ResourceClaims allocated.

Follows kube-scheduler's plugin (pkg/scheduler/framework/plugins/dynamicresources):

* PreEnqueue: the controller's work first (``ensure_pod_claims``), then the pod
  waits while a claim it names does not exist.
* PreFilter: collects the claims; rejects the pod (UnschedulableAndUnresolvable,
  upstream's wording) for a missing or deleted claim, a claim with 256
  consumers, an unknown device class; remembers allocated claims' node
  selectors; prepares the allocator (shared across pods, see ``view``).
* Filter: allocated claims must be reachable ("resourceclaim not available on
  the node", unresolvable); pending claims are allocated on the node
  (Unschedulable "cannot allocate all claims" if they do not fit, Error for
  bad input); the result is kept per node.
* PostFilter: deallocates one allocated-but-unreachable claim nobody else uses.
* Score: upstream's prioritized-list score plus the ``DevicePolicy`` score.
* Reserve: writes allocation and ``reservedFor`` into the cluster (so the next
  pod sees the devices in use); Unreserve takes it back, idempotently.
* PreBind: stamps the claims reserved for the pod with
  ``status.allocation.allocationTimestamp`` (DRADeviceBindingConditions and
  DRAResourceClaimDeviceStatus, both on by default) and records the
  extended-resource claim in the pod status.
* PreFilterExtensions, only with the ``DRAPreemption`` gate (alpha, off by
  default; KEP-5690): preemption may remove victims; their claims' devices are
  freed in a what-if allocated state used by that cycle's Filter. Without the
  gate the plugin has no PreFilterExtensions and every Filter rejection is
  UnschedulableAndUnresolvable, as in kube-scheduler 1.36
  (``statusUnschedulable``): DefaultPreemption then finds preemption not
  helpful on nodes where the claims do not fit. With it, allocation failures
  are Unschedulable, so preemption tries those nodes.

Plugin args (camelCase): ``devicePolicy`` ("first-fit" | "pack", default
first-fit), ``maxSteps`` (search budget per Filter call, our stand-in for
``filterTimeout``; default none), ``explain`` (attach the allocator's
per-request explanations to Filter rejections; default false).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from msgspec.structs import replace

from dralab.allocator.nodes import NodeSelectorError, compile_node_selector
from dralab.allocator.state import AllocatedState
from dralab.api.core import ExtendedResourceClaimStatus
from dralab.api.features import Gate
from dralab.api.keys import object_key, random_uid
from dralab.api.owned import owned_copy
from dralab.api.resource import (
    AllocationResult,
    DeviceClass,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
)
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.controllers.podgroups import GROUP_RESOURCE, group_key
from dralab.controllers.resourceclaims import (
    DELETE_PROTECTION_FINALIZER,
    RESERVED_FOR_MAX,
    add_consumer,
    claim_consumer,
    deallocate,
    ensure_pod_claims,
    ensure_pod_uid,
    generate_name,
    is_reserved_for,
    pod_claim_keys,
    pod_reference,
    remove_consumer,
    resolve_pod_claims,
)
from dralab.scheduler.framework import (
    MAX_NODE_SCORE,
    CycleState,
    Handle,
    MissingStateError,
    NodeScore,
    PluginArgsError,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterResult,
    ScoreExtensions,
    Status,
)
from dralab.scheduler.hints import EventHint
from dralab.scheduler.plugins.eventhints import DRA_HINTS

from .devicepolicy import DevicePolicy, FirstFit, make_policy
from .extended import (
    GATE,
    ExtendedClaimSpec,
    extended_claim_base,
    extended_resource_classes,
    extended_spec,
    find_extended_claim,
    is_dra_extended_resource_name,
    new_extended_claim,
    pod_extended_requests,
)
from .state import ClaimEntry, DRAState, ExtendedNeed
from .view import AllocatorCache, Mask, NodeOutcome, Positions

__all__ = ["NAME", "DynamicResources"]

NAME = "DynamicResources"
# Upstream caps firstAvailable at 8 entries; earlier entries score higher.
_SUBREQUEST_MAX = 8
_EXTENDED_PLACEHOLDER = "<extended-resources>"
_SUCCESS = Status.success()
DRA_PREEMPTION = Gate.DRA_PREEMPTION.value


# dralab's own args, and DynamicResourcesArgs' fields (accepted; filterTimeout and
# bindingTimeout are wall-clock limits a run without a wall clock does not apply).
_ARGS = frozenset({"devicePolicy", "device_policy", "maxSteps", "max_steps", "explain",
                   "apiVersion", "kind", "filterTimeout", "bindingTimeout"})


def _arg(args: Mapping[str, Any], camel: str, snake: str, default: Any) -> Any:
    return args.get(camel, args.get(snake, default))


class DynamicResources:
    """The DRA plugin; see the module docstring. One instance per profile.

    Mutates the cluster only in PreEnqueue (claim creation, as the controller
    would), PostFilter (deallocation), Reserve/Unreserve and PreBind.
    """

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.handle = handle
        unknown = sorted(set(args) - _ARGS)
        if unknown:
            raise PluginArgsError(unknown[0], "unknown field")
        policy = _arg(args, "devicePolicy", "device_policy", "first-fit")
        if isinstance(policy, str):
            try:
                policy = make_policy(policy)
            except ValueError as exc:
                raise PluginArgsError("devicePolicy", str(exc)) from None
        self.policy: DevicePolicy = policy
        self._policy_scores = not isinstance(policy, FirstFit)
        max_steps = _arg(args, "maxSteps", "max_steps", None)
        if max_steps is not None and (not isinstance(max_steps, int) or max_steps <= 0):
            raise PluginArgsError("maxSteps", "must be a positive integer")
        self.explain: bool = bool(_arg(args, "explain", "explain", False))
        # KEP-5690: without the gate, victims' devices are never freed and the
        # allocation failures are final for the node (see ``_rejection``).
        self.preemption: bool = handle.cluster.features.is_enabled(DRA_PREEMPTION)
        # v1.36.2 bindClaim: with both gates (on by default) a claim reserved for a
        # pod gets status.allocation.allocationTimestamp if it has none yet.
        features = handle.cluster.features
        self.stamp_allocations: bool = features.is_enabled(
            Gate.DRA_DEVICE_BINDING_CONDITIONS) and features.is_enabled(
            Gate.DRA_RESOURCE_CLAIM_DEVICE_STATUS)
        self.cache = AllocatorCache(handle.rng, max_steps)
        # Extended resource mapping, rebuilt when the classes change.
        self._classes: tuple[DeviceClass, ...] = ()
        self._mapping: dict[str, str] = {}
        # Interned specs of extended-resource claims, so equal specs share one
        # object and hit the per-node outcome cache across pods.
        self._extended_specs: dict[tuple[tuple[str, str, int], ...], ResourceClaimSpec] = {}

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> DynamicResources:
        return cls(args, handle)

    @property
    def cluster(self) -> ClusterState:
        return self.handle.cluster

    def events_to_register(self) -> Sequence[EventHint]:
        return DRA_HINTS

    # --- PreEnqueue -------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status:
        """Create the pod's template claims, then Success if every claim it names
        exists, else UnschedulableAndUnresolvable with the reason it waits."""
        if not pod.pod.spec.resource_claims:
            return _SUCCESS
        ensure_pod_claims(self.cluster, pod, self.handle.rng)
        found = resolve_pod_claims(self.cluster, pod.pod)
        if isinstance(found, str):
            return Status.unresolvable(NAME, found)
        return _SUCCESS

    # --- PreFilter --------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                   ) -> tuple[PreFilterResult | None, Status]:
        """Skip when the pod has no claims (and no DRA-backed extended resources);
        UnschedulableAndUnresolvable when a claim or class is missing or a claim
        cannot take another consumer; Error for a malformed allocation node
        selector; else Success with the cycle's state written."""
        s = DRAState()
        state.write(NAME, s)
        found = resolve_pod_claims(cluster, pod.pod)
        if isinstance(found, str):
            return None, Status.unresolvable(NAME, found)
        s.extended = self._extended_need(cluster, pod)
        if not found.claims and s.extended is None:
            return None, Status.skip(NAME)
        # reservedFor and ownership need a UID; pods from files may lack one.
        uid = ensure_pod_uid(pod, self.handle.rng, cluster)
        for key, claim in zip(found.keys, found.claims, strict=True):
            entry = ClaimEntry(key, claim)
            allocation = claim.status.allocation
            if allocation is not None:
                reserved = claim.status.reserved_for
                # A PodGroup's claim is reserved for the group, not for each pod.
                consumer = claim_consumer(cluster, key, pod.pod).uid or uid
                if len(reserved) >= RESERVED_FOR_MAX and not is_reserved_for(claim, consumer):
                    return None, Status.unresolvable(NAME, "resourceclaim in use")
                if allocation.node_selector is not None:
                    try:
                        entry.selector = compile_node_selector(allocation.node_selector)
                    except NodeSelectorError as exc:
                        return None, Status.error(NAME, str(exc))
            else:
                entry.pending = True
                status = _check_classes(claim, cluster)
                if status is not None:
                    return None, status
            s.claims.append(entry)
        s.pending_claims = tuple(c.claim for c in s.claims if c.pending)
        s.selectors = tuple((i, c.selector) for i, c in enumerate(s.claims)
                            if c.selector is not None)
        s.prioritized = any(r.first_available for c in s.pending_claims
                            for r in c.spec.devices.requests)
        if s.extended is not None or s.pending_claims:
            s.allocator = self.cache.refresh(cluster)
            if s.pending_claims:
                s.token = self.cache.token(s.pending_claims)
        s.fast = (s.token is not None and s.extended is None and not s.selectors
                  and not self.explain)
        if s.fast and s.token is not None:
            s.table = self.cache.table(s.token)
        return None, _SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod/RemovePod only with ``DRAPreemption``; 1.36 has no extensions."""
        return self if self.preemption else None

    def _extended_enabled(self, cluster: ClusterState) -> bool:
        return cluster.features.is_enabled(GATE)

    def _extended_mapping(self, cluster: ClusterState) -> dict[str, str]:
        classes = tuple(cluster.classes.values())
        if len(classes) != len(self._classes) or any(
                a is not b for a, b in zip(classes, self._classes, strict=True)):
            self._classes = classes
            self._mapping = extended_resource_classes(cluster.classes)
        return self._mapping

    def _extended_need(self, cluster: ClusterState, pod: PodInfo) -> ExtendedNeed | None:
        if not self._extended_enabled(cluster):
            return None
        requests = pod.requests
        if not any(is_dra_extended_resource_name(r) for r in requests):
            return None
        mapping = self._extended_mapping(cluster)
        wanted = pod_extended_requests(requests, mapping)
        if not wanted:
            return None
        return ExtendedNeed(wanted, mapping, find_extended_claim(cluster, pod.pod))

    # --- Filter -----------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Success if the pod's claims can be used on ``node``; see the module docstring."""
        s = state.get(NAME)
        if isinstance(s, DRAState) and s.fast and s.table is not None:
            # The per-node hot path: an unchanged node answers from the cache.
            view = node.view
            outcome = s.table.lookup(view)
            if outcome is not None:
                allocations = outcome.allocations
                if allocations is None:
                    return outcome.status or _rejection(outcome, self.preemption)
                s.nodes[view.name] = (allocations, None, outcome)
                return _SUCCESS
        return self._filter(state, pod, node, self.explain)

    def filter_mask(self, state: CycleState, pod: PodInfo) -> Mask | None:
        """On the fast path, the nodes whose cached outcome (still valid) says the
        claims fit: Filter there would answer Success from the cache."""
        known = self._known(state)
        # A copy: Filter calls during the search store outcomes into the table's array.
        return None if known is None else known[0].copy()

    def filter_rejections(self, state: CycleState, pod: PodInfo
                          ) -> tuple[Mask, Callable[[list[int]], list[Status]]] | None:
        """On the fast path, the nodes whose cached outcome (still valid) says the
        claims do not fit, and the statuses Filter would answer from the cache."""
        known = self._known(state)
        s = state.get(NAME)
        if known is None or not isinstance(s, DRAState) or s.table is None:
            return None
        table = s.table

        def statuses(positions: list[int]) -> list[Status]:
            preemption = self.preemption
            return [o.status or _rejection(o, preemption)
                    for o in table.failed_outcomes(positions)]

        return known[1].copy(), statuses

    def filter_visits(self, state: CycleState, pod: PodInfo
                      ) -> tuple[Mask, Callable[[Positions], None]] | None:
        """On the fast path, the nodes whose cached outcome (still valid) says the
        claims fit with shared devices: Filter there answers Success from the cache
        after drawing fresh share IDs, which ``visit`` does for many nodes at once."""
        known = self._known(state)
        s = state.get(NAME)
        if known is None or not isinstance(s, DRAState) or s.table is None:
            return None
        table = s.table
        s.visit_index = self.cluster.node_index()
        visits = s.visits

        def visit(positions: Positions) -> None:
            # Recorded; a node's outcome is built only if Score or Reserve reads it.
            visits.append(table.visit(positions))

        return known[2].copy(), visit

    def _known(self, state: CycleState) -> tuple[Mask, Mask, Mask] | None:
        s = state.get(NAME)
        if not isinstance(s, DRAState) or not s.fast or s.table is None \
                or s.in_what_if:
            return None
        return self.cache.feasible_mask(s.table, self.cluster)

    def filter_vouched(self, state: CycleState, pod: PodInfo, positions: Positions) -> None:
        """Remember the feasible nodes Filter was not called on: what its fast path
        would have recorded for them is read from the table when Score or Reserve
        asks (``DRAState.result``), which costs nothing for the nodes never asked."""
        s = state.get(NAME)
        if not isinstance(s, DRAState) or s.table is None:
            return
        cluster = self.cluster
        vouched = np.zeros(len(cluster.node_infos()), np.bool_)
        vouched[positions] = True
        s.vouched = vouched
        s.vouched_index = cluster.node_index()
        s.table.hits += len(positions)

    def explain_filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Like ``filter``, with the allocator's per-request explanations as details."""
        return self._filter(state, pod, node, True)

    def _filter(self, state: CycleState, pod: PodInfo, node: NodeInfo, explain: bool) -> Status:
        try:
            s = state.read(NAME, DRAState)
        except MissingStateError as exc:
            return Status.error(NAME, str(exc))
        pending = s.pending_claims
        token = s.token
        extended: tuple[ResourceClaim, ExtendedClaimSpec] | None = None
        if s.extended is not None:
            extended, status = self._filter_extended(s.extended, pod, node)
            if status is not None:
                return status
            if extended is not None:
                pending = (*pending, extended[0])
                kind = frozenset(r.name for r in extended[1].spec.devices.requests)
                token = s.extended.tokens.get(kind)
                if token is None:
                    token = s.extended.tokens[kind] = self.cache.token(pending)
        if s.selectors:
            view = node.view
            unavailable = [i for i, selector in s.selectors if not selector.matches(view)]
            if unavailable:
                # Checked before allocating (upstream allocates first): the node is
                # out either way, and PostFilter learns about the claims.
                s.unavailable.update(unavailable)
                return Status.unresolvable(NAME, "resourceclaim not available on the node")
        if not pending:
            return _SUCCESS
        what_if = s.in_what_if
        if not what_if:
            outcome = self.cache.allocate(pending, node, self.policy, token=token,
                                          explain=explain)
        else:
            hopeless = None
            if token is not None and not explain:
                # Freeing devices cannot help where the claims can never fit.
                hopeless = self.cache.hopeless(pending, node, token)
            if hopeless is not None:
                outcome = hopeless
            else:
                assert s.allocator is not None
                s.settled_what_if(s.allocator.state)
                if s.what_if_allocator is None:
                    assert s.what_if is not None
                    s.what_if_allocator = self.cache.what_if(s.what_if)
                outcome = self.cache.allocate(pending, node, self.policy, token=token,
                                              explain=explain, allocator=s.what_if_allocator)
        allocations = outcome.allocations
        if allocations is None:
            return outcome.status or _rejection(outcome, self.preemption)
        s.nodes[node.view.name] = (allocations, extended, None if what_if else outcome)
        return _SUCCESS

    def _filter_extended(self, need: ExtendedNeed, pod: PodInfo, node: NodeInfo
                         ) -> tuple[tuple[ResourceClaim, ExtendedClaimSpec] | None, Status | None]:
        if need.stale is not None:
            return None, Status.unresolvable(NAME, "cannot schedule extended resource claim")
        served: list[str] = []
        allocatable = node.allocatable
        for resource in need.requests:
            if resource in need.mapping and allocatable.get(resource, 0) == 0:
                served.append(resource)
            elif resource not in allocatable:
                return None, Status.unresolvable(NAME, "cannot fit resource")
        if not served:
            return None, None  # all served by device plugins: NodeResourcesFit's job
        kind = frozenset(served)
        found = need.kinds.get(kind)
        if found is None:
            made = extended_spec(pod.pod, kind, need.mapping)
            spec = self._intern(made.spec)
            placeholder = new_extended_claim(pod.pod, spec, _EXTENDED_PLACEHOLDER, "")
            found = need.kinds[kind] = (placeholder, ExtendedClaimSpec(spec, made.mappings))
        return found, None

    def _intern(self, spec: ResourceClaimSpec) -> ResourceClaimSpec:
        key = tuple((r.name, r.exactly.device_class_name, r.exactly.count or 0)
                    for r in spec.devices.requests if r.exactly is not None)
        return self._extended_specs.setdefault(key, spec)

    # --- PostFilter -------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState,
                    statuses: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status]:
        """Deallocate one allocated claim that was out of reach of some node and that
        no other pod uses (then Unschedulable "deallocation of ResourceClaim
        completed": the pod is retried), or delete a stale extended-resource claim;
        otherwise Unschedulable. Never nominates a node."""
        try:
            s = state.read(NAME, DRAState)
        except MissingStateError as exc:
            return None, Status.error(NAME, str(exc))
        if s.empty():
            return None, Status.unschedulable(NAME, "no new claims to deallocate")
        uid = pod.pod.metadata.uid
        for index in sorted(s.unavailable):
            key = s.claims[index].key
            claim = cluster.claims.get(key)
            if claim is None or claim.status.allocation is None:
                continue
            reserved = claim.status.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == uid):
                cluster.add_claim(deallocate(claim))
                return None, Status.unschedulable(NAME, "deallocation of ResourceClaim completed")
        stale = s.extended.stale if s.extended is not None else None
        if stale is not None:
            cluster.remove_claim(object_key(stale.metadata.namespace, stale.metadata.name or ""))
            return None, Status.unschedulable(NAME, "deletion of ResourceClaim completed")
        return None, Status.unschedulable(NAME, "still not schedulable")

    # --- PreScore / Score -------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        """Skip when every score would be 0 (no prioritized list to rank and a
        device policy without an opinion), sparing a call per feasible node.
        Upstream has no PreScore here; the ranking is the same."""
        s = state.get(NAME)
        if not isinstance(s, DRAState) or not s.has_results():
            return Status.skip(NAME)
        if not s.prioritized and not self._policy_scores:
            return Status.skip(NAME)
        return _SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        """Prioritized lists: 8 - index of each chosen subrequest, summed over the
        claims allocated here; plus the device policy's 0-100 opinion of the
        allocation. 0 for nodes without a Filter result."""
        try:
            s = state.read(NAME, DRAState)
        except MissingStateError:
            return 0, _SUCCESS  # PreFilter skipped or never ran: no opinion
        result = s.result(node.name)
        if result is None:
            return 0, _SUCCESS
        total = 0
        if s.prioritized:
            claims = list(s.pending_claims)
            if result[1] is not None:
                claims.append(result[1][0])
            total = _prioritized_score(claims, result[0])
        if self._policy_scores:
            outcome = result[2]
            if outcome is not None and outcome.origin is not None:
                outcome = outcome.origin  # a copy with fresh share IDs: same devices
            if outcome is not None and outcome.score is not None:
                return total + outcome.score, _SUCCESS
            _, pools = self.cache.node(node)
            if pools is not None and s.allocator is not None:
                what_if = s.settled_what_if(s.allocator.state)
                allocated = what_if if what_if is not None else s.allocator.state
                opinion = self.policy.score(pools, allocated, result[0])
                if outcome is not None:
                    # Valid as long as the outcome: both depend on the same pools.
                    outcome.score = opinion
                total += opinion
        return total, _SUCCESS

    def score_extensions(self) -> ScoreExtensions | None:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo,
                        scores: list[NodeScore]) -> Status:
        """Scale so the best node gets 100 (all stay 0 when none scored)."""
        highest = max((s.score for s in scores), default=0)
        if highest <= 0:
            return _SUCCESS
        for i, entry in enumerate(scores):
            scores[i] = NodeScore(entry.name, entry.score * MAX_NODE_SCORE // highest)
        return _SUCCESS

    # --- Reserve / Unreserve ----------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Write the node's allocations into the cluster: pending claims get
        ``status.allocation``, the delete-protection finalizer and the pod in
        ``reservedFor``; allocated claims get the pod in ``reservedFor``; the
        extended-resource claim is created. Error if Filter left no result for
        the node or a claim changed under us."""
        try:
            s = state.read(NAME, DRAState)
        except MissingStateError:
            return _SUCCESS  # nothing was prepared for this pod
        if s.empty():
            return _SUCCESS
        cluster = self.cluster
        info = pod.pod
        pending = [c for c in s.claims if c.pending]
        result = s.result(node_name)
        if result is None and pending:
            return Status.error(NAME, "claim allocation not found for node")
        allocations: Sequence[AllocationResult] = result[0] if result else ()
        for entry, allocation in zip(pending, allocations, strict=False):
            current = cluster.claims.get(entry.key)
            if current is None:
                return Status.error(NAME, f"claim {entry.key} got deleted in the meantime")
            if current.status.allocation is not None:
                return Status.error(NAME, f"claim {entry.key} got allocated elsewhere in the "
                                          "meantime")
            cluster.add_claim(_allocated(current, allocation,
                                         claim_consumer(cluster, entry.key, info)))
            s.reserved.append((entry.key, "allocated"))
        for entry in s.claims:
            if entry.pending:
                continue
            current = cluster.claims.get(entry.key)
            if current is None:
                return Status.error(NAME, f"claim {entry.key} got deleted in the meantime")
            consumer = claim_consumer(cluster, entry.key, info)
            if is_reserved_for(current, consumer.uid):
                continue
            if len(current.status.reserved_for) >= RESERVED_FOR_MAX:
                return Status.error(NAME, f"claim {entry.key}: reservedFor is full")
            cluster.add_claim(add_consumer(current, consumer))
            s.reserved.append((entry.key, "consumer"))
        if result is not None and result[1] is not None:
            created = self._create_extended(s, pod, result[1],
                                            allocations[len(pending)])
            s.reserved.append((created, "created"))
        return _SUCCESS

    def _create_extended(self, s: DRAState, pod: PodInfo,
                         extended: tuple[ResourceClaim, ExtendedClaimSpec],
                         allocation: AllocationResult) -> str:
        cluster, rng = self.cluster, self.handle.rng
        info = pod.pod
        namespace = info.metadata.namespace or "default"
        base = extended_claim_base(info.metadata.name or "")
        name = generate_name(base, rng)
        while object_key(namespace, name) in cluster.claims:
            name = generate_name(base, rng)
        uid = random_uid(rng)
        claim = new_extended_claim(info, extended[1].spec, name, uid, cluster.clock.now())
        cluster.add_claim(_allocated(claim, allocation, pod_reference(info)))
        s.extended_claim = name
        s.extended_mappings = extended[1].mappings
        return object_key(namespace, name)

    def _stamped(self, claim: ResourceClaim) -> ResourceClaim:
        """``claim`` with allocationTimestamp set to now if the gates say so and its
        allocation has none (a timestamp once written stays)."""
        allocation = claim.status.allocation
        if not self.stamp_allocations or allocation is None \
                or allocation.allocation_timestamp is not None:
            return claim
        stamped = replace(allocation, allocation_timestamp=self.cluster.clock.now())
        return replace(claim, status=replace(claim.status, allocation=stamped))

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Undo Reserve (and PreBind's pod status): created claims are deleted,
        claims allocated here are deallocated unless another pod reserved them
        meanwhile, added consumers are removed. Idempotent."""
        try:
            s = state.read(NAME, DRAState)
        except MissingStateError:
            return
        cluster = self.cluster
        uid = pod.pod.metadata.uid or ""
        for key, action in reversed(s.reserved):
            current = cluster.claims.get(key)
            if current is None:
                continue
            if action == "created":
                cluster.remove_claim(key)
                continue
            updated = remove_consumer(current, _consumer_to_release(cluster, key, pod, uid))
            if action == "allocated" and not updated.status.reserved_for:
                updated = deallocate(updated)
            if updated is not current:
                cluster.add_claim(updated)
        s.reserved.clear()
        if s.status_written:
            info = pod.pod
            status = info.status.extended_resource_claim_status
            if status is not None and status.resource_claim_name == s.extended_claim:
                self._update_pod(pod, replace(info, status=replace(
                    info.status, extended_resource_claim_status=None)))
            s.status_written = False
        s.extended_claim = None

    # --- PreBind ----------------------------------------------------------------------
    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Stamp the claims Reserve wrote for the pod with allocationTimestamp (see
        ``_stamped``), then record the extended-resource claim and its request
        mappings in the pod status. Claims were written in Reserve (upstream writes
        them here, after Permit: the time is PreBind's); binding conditions are not
        waited for (the simulation has no device drivers)."""
        try:
            s = state.read(NAME, DRAState)
        except MissingStateError:
            return _SUCCESS
        if self.stamp_allocations:
            cluster = self.cluster
            for key, _ in s.reserved:
                current = cluster.claims.get(key)
                if current is not None and (stamped := self._stamped(current)) is not current:
                    cluster.add_claim(stamped)
        if s.extended_claim is None:
            return _SUCCESS
        if not s.extended_mappings:
            return Status.error(NAME, f"nil or empty request mappings, no update of pod "
                                      f"{pod.key} ExtendedResourceClaimStatus")
        info = pod.pod
        status = ExtendedResourceClaimStatus(resource_claim_name=s.extended_claim,
                                             request_mappings=list(s.extended_mappings))
        self._update_pod(pod, replace(info, status=replace(
            info.status, extended_resource_claim_status=status)))
        s.status_written = True
        return _SUCCESS

    def _update_pod(self, pod: PodInfo, new: Any) -> None:
        cluster = self.cluster
        if cluster.pods.get(pod.key) is pod:
            cluster.update_pod(pod, new)
        else:
            pod.pod = new

    # --- preemption's remembered dry runs (plugins/dryruns.py) ------------------------
    def dry_run_key(self, state: CycleState, pod: PodInfo) -> Hashable | None:
        """Filter reads the pending claims' specs (their token), the allocated claims,
        the allocator (the classes) and the node's pools; what those pools hold is
        reported by ``dry_run_changed``. None with explanations or DRA-backed
        extended resources (not remembered)."""
        s = state.get(NAME)
        if not isinstance(s, DRAState) or self.explain or s.extended is not None:
            return None
        return (s.token, tuple(_Same(c.claim) for c in s.claims if not c.pending), s.allocator)

    def dry_run_cursor(self) -> object:
        allocated = self.cluster.allocated
        return _DryRunCursor(self.cache.epoch, allocated, allocated.log.end)

    def dry_run_changed(self, cursor: object) -> set[str] | None:
        """The nodes that see a pool whose allocated devices changed since ``cursor``
        (None after the cache forgot its nodes, or the log moved past the cursor)."""
        if not isinstance(cursor, _DryRunCursor) or cursor.epoch != self.cache.epoch \
                or cursor.allocated is not self.cluster.allocated:
            return None
        pools = cursor.allocated.log.since(cursor.end)
        if pools is None:
            return None
        return self.cache.nodes_seeing(pools)

    def dry_run_local(self, state: CycleState) -> bool:
        s = state.get(NAME)
        return not isinstance(s, DRAState) or not s.kept_shared

    # --- PreFilterExtensions (preemption) ---------------------------------------------
    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo,
                   node: NodeInfo) -> Status:
        """Preemption simulates evicting ``to_remove``: each of its claims loses it as
        a consumer; a claim left without pod consumers has its devices freed in
        this cycle's what-if allocated state (copied when first needed). A claim
        also reserved for a PodGroup or another live pod is kept. Success."""
        if not self.preemption:
            return _SUCCESS  # upstream's RemovePod is a no-op without the gate
        try:
            s = state.read(NAME, DRAState)
        except MissingStateError as exc:
            return Status.error(NAME, str(exc))
        if s.allocator is None:
            return _SUCCESS  # nothing to allocate, so freed devices cannot help
        uid = to_remove.pod.metadata.uid
        if not uid:
            return _SUCCESS
        cluster = self.cluster
        for key in pod_claim_keys(to_remove.pod):
            claim = cluster.claims.get(key)
            if claim is None:
                continue
            removed = s.removed.setdefault(key, set())
            removed.add(uid)
            if key in s.released or claim.status.allocation is None:
                continue
            if all(r.resource == "pods" and not r.api_group and r.uid in removed
                   for r in claim.status.reserved_for):
                s.defer_what_if(-1, claim)
                s.released.add(key)
            else:
                s.kept_shared = True
        return _SUCCESS

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo,
                node: NodeInfo) -> Status:
        """Undo ``remove_pod`` for ``to_add`` (preemption backtracks): a claim freed
        because of it gets its devices back in the what-if state. Success."""
        if not self.preemption:
            return _SUCCESS
        try:
            s = state.read(NAME, DRAState)
        except MissingStateError as exc:
            return Status.error(NAME, str(exc))
        uid = to_add.pod.metadata.uid
        if s.allocator is None or not uid:
            return _SUCCESS
        cluster = self.cluster
        for key in pod_claim_keys(to_add.pod):
            removed = s.removed.get(key)
            if removed is None or uid not in removed:
                continue
            removed.discard(uid)
            if not removed:
                del s.removed[key]
            claim = cluster.claims.get(key)
            if key in s.released and claim is not None and claim.status.allocation is not None:
                s.defer_what_if(+1, claim)
                s.released.discard(key)
        return _SUCCESS


class _Same:
    """A stored API object in a key, compared by identity: one that holds dicts (labels,
    its raw document) has no value hash, and the store replaces rather than changes its
    objects, so the same object means the same content."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj


@dataclass(frozen=True, slots=True)
class _DryRunCursor:
    epoch: int  # the cache's node epoch (its pool -> nodes map)
    allocated: AllocatedState
    end: int  # position in the allocated state's pool log


def _rejection(outcome: NodeOutcome, preemption: bool) -> Status:
    """The Filter status of a failed allocation, memoised on the (shared) outcome
    (one plugin instance, one gate value: the memo cannot mix the two codes).

    Unschedulable only with ``DRAPreemption`` (freeing a victim's devices may
    help); without it UnschedulableAndUnresolvable, as 1.36's ``statusUnschedulable``
    (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go)."""
    if outcome.error:
        status = Status.error(NAME, outcome.reason)
    elif preemption:
        status = Status.unschedulable(NAME, outcome.reason, details=outcome.details)
    else:
        status = Status.unresolvable(NAME, outcome.reason, details=outcome.details)
    outcome.status = status
    return status


def _check_classes(claim: ResourceClaim, cluster: ClusterState) -> Status | None:
    """Upstream's PreFilter check of every request's device class."""
    classes = cluster.classes
    label = object_key(claim.metadata.namespace, claim.metadata.name or "")
    prioritized = cluster.features.is_enabled("DRAPrioritizedList")
    for request in claim.spec.devices.requests:
        if request.exactly is not None:
            status = _check_class(request.exactly.device_class_name, request.name, classes)
            if status is not None:
                return status
        elif request.first_available:
            if not prioritized:
                return Status.unresolvable(NAME, f"resource claim {label}, request "
                                                 f"{request.name}: has subrequests, but the "
                                                 "DRAPrioritizedList feature is disabled")
            for sub in request.first_available:
                status = _check_class(sub.device_class_name, f"{request.name}/{sub.name}",
                                      classes)
                if status is not None:
                    return status
        else:
            return Status.unresolvable(NAME, f"resource claim {label}, request "
                                             f"{request.name}: unknown request type")
    return None


def _check_class(name: str, request: str, classes: Mapping[str, DeviceClass]) -> Status | None:
    if not name:
        return Status.error(NAME, f"request {request}: unsupported request type")
    if name not in classes:
        # Unschedulable rather than an error: creating the class may help.
        return Status.unresolvable(NAME, f"request {request}: device class {name} does not exist")
    return None


def _consumer_to_release(cluster: ClusterState, key: str, pod: PodInfo, uid: str) -> str:
    """The consumer UID Unreserve takes off claim ``key``: the pod's own ``uid``, or for
    a PodGroup's claim the group's UID once no other member of the group holds a node
    (the group no longer uses it); "" (nothing) while other members still do."""
    consumer = claim_consumer(cluster, key, pod.pod)
    if consumer.resource != GROUP_RESOURCE:
        return uid
    group = group_key(cluster, pod.pod)
    for other in cluster.pods.values():
        if other.key != pod.key and (other.assumed_node or other.pod.spec.node_name) \
                and group_key(cluster, other.pod) == group:
            return ""
    return consumer.uid


def _allocated(claim: ResourceClaim, allocation: AllocationResult,
               consumer: ResourceClaimConsumerReference) -> ResourceClaim:
    """``claim`` allocated with ``allocation``, reserved for ``consumer``, delete-protected.

    The claim gets a copy: ``allocation`` may be a remembered outcome's (the cache hands
    it to every pod with the same spec while the node's pools do not change, e.g. admin
    access), and a change to one claim's lists must not reach the cache or other claims.
    """
    allocation = owned_copy(allocation)
    metadata = claim.metadata
    if DELETE_PROTECTION_FINALIZER not in metadata.finalizers:
        metadata = replace(metadata, finalizers=[*metadata.finalizers,
                                                 DELETE_PROTECTION_FINALIZER])
    status = replace(claim.status, allocation=allocation)
    return add_consumer(replace(claim, metadata=metadata, status=status), consumer)


def _prioritized_score(claims: Sequence[ResourceClaim],
                       allocations: Sequence[AllocationResult]) -> int:
    score = 0
    for claim, allocation in zip(claims, allocations, strict=False):
        chosen = {r.request for r in allocation.devices.results if "/" in r.request}
        if not chosen:
            continue
        for request in claim.spec.devices.requests:
            for index, sub in enumerate(request.first_available):
                if f"{request.name}/{sub.name}" in chosen:
                    score += _SUBREQUEST_MAX - index
    return score
