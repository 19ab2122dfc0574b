"""Kueue's Admission Fair Sharing: within a ClusterQueue, heads by their LocalQueue's
decayed usage (``site/content/en/docs/concepts/admission_fair_sharing.md``).

It acts when the Kueue Configuration has ``admissionFairSharing`` (the
AdmissionFairSharing gate is beta, on by default since 0.15) and a ClusterQueue has
``spec.admissionScope.admissionMode: UsageBasedAdmissionFairSharing``. Then:

* each LocalQueue of such a ClusterQueue has a consumed history per resource
  (``status.fairSharing.admissionFairSharingStatus.consumedResources`` and
  ``lastUpdate``), and its usage is ``sum(resourceWeights[r] * consumed[r]) / weight``
  (``spec.fairSharing.weight``, default 1; a weight of 0 or less is +Inf: last);
  Kueue's ``CalculateUsage``;
* the ClusterQueue's queue orders its pending workloads by that usage, lower first,
  then as without it (priority, queue-order time); ``pkg/cache/queue/cluster_queue.go``
  ``queueOrderingFunc``;
* a workload admitted there costs its LocalQueue an entry penalty at once:
  ``alpha(usageSamplingInterval) * its requests`` with ``alpha(t) = 1 - 0.5 **
  (t / usageHalfLifeTime)`` (``CalculateEntryPenalty``); it is folded into the
  consumed history when the workload is admitted (``updateAfsConsumedUsage``), with
  the decay since the last update. Kueue settles at Admitted, after admission checks;
  dralab does not tell reservation from admission, so it settles at once. A second
  pass (TAS delayed topology, node replacement) reserves nothing new and costs nothing
  (``shouldApplyEntryPenalty``);
* every ``usageSamplingInterval`` (default 5m) the LocalQueue controller decays the
  history towards the LocalQueue's admitted usage: ``consumed * (1 - alpha(elapsed))
  + admitted * alpha(elapsed)`` (``CalculateDecayedConsumed``). A run's clock is its
  cycles' ``now``: at each cycle the whole sampling intervals since the last update
  are applied (the admitted usage does not change between cycles, and the decay
  towards a fixed usage composes);
* preemption candidates of one such ClusterQueue from different LocalQueues: the
  higher LocalQueue usage first (``CandidatesOrdering``, after evicted and other
  ClusterQueues' workloads, before priority).

Amounts are Kueue's ``AsApproximateFloat64`` of the quantities: the model's
milli-units over 1000.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from dralab.queueing.model import Admission, QueueingState

__all__ = ["AFS_GATE", "USAGE_BASED", "AFSConfig", "AdmissionFairSharing", "LocalQueueUsage",
           "applies_entry_penalty", "calculate_usage", "decayed_consumed", "entry_penalty",
           "local_queue_key", "order_by_usage"]

# Kueue's feature gate (beta, on by default since 0.15) and the admission mode.
AFS_GATE = "AdmissionFairSharing"
USAGE_BASED = "UsageBasedAdmissionFairSharing"
NO_AFS = "NoAdmissionFairSharing"
# Kueue's default usageSamplingInterval (apis/config/v1beta2/defaults.go).
DEFAULT_SAMPLING = 300.0


@dataclass(frozen=True, slots=True)
class AFSConfig:
    """The Configuration's ``admissionFairSharing`` (seconds; weights per resource)."""

    half_life: float
    sampling: float = DEFAULT_SAMPLING
    resource_weights: Mapping[str, float] = field(default_factory=dict)

    def alpha(self, elapsed: float) -> float:
        return _alpha(elapsed, self.half_life)


def _alpha(elapsed: float, half_life: float) -> float:
    """Kueue's calculateAlphaRate: the share of the new usage after ``elapsed``
    seconds; a half-life of 0 makes none (the history resets)."""
    if half_life == 0:
        return 0.0
    return 1.0 - math.pow(0.5, elapsed / half_life)


def entry_penalty(requests: Mapping[str, float], config: AFSConfig) -> dict[str, float]:
    """Kueue's CalculateEntryPenalty: what an admission costs its LocalQueue at once,
    ``alpha(usageSamplingInterval)`` of its requests."""
    alpha = config.alpha(config.sampling)
    return {resource: amount * alpha for resource, amount in requests.items()}


def decayed_consumed(old: Mapping[str, float], new: Mapping[str, float], elapsed: float,
                     half_life: float) -> dict[str, float]:
    """Kueue's CalculateDecayedConsumed: the history ``elapsed`` seconds on, towards
    the usage ``new``."""
    alpha = _alpha(elapsed, half_life)
    out: dict[str, float] = {}
    _add(out, old, 1.0 - alpha)
    _add(out, new, alpha)
    return out


def calculate_usage(consumed: Mapping[str, float], penalty: Mapping[str, float],
                    lq_weight: float, resource_weights: Mapping[str, float]) -> float:
    """Kueue's CalculateUsage: the weighted sum (resources in sorted order; a weight
    not given is 1) over the LocalQueue's weight; a weight of 0 or less is +Inf (0/0
    would be NaN and sort first)."""
    total = 0.0
    merged: dict[str, float] = {}
    _add(merged, consumed)
    _add(merged, penalty)
    for resource in sorted(merged):
        total += resource_weights.get(resource, 1.0) * merged[resource]
    return math.inf if lq_weight <= 0 else total / lq_weight


@dataclass(slots=True)
class LocalQueueUsage:
    """One LocalQueue's consumed history (resource -> amount) and when it was updated
    (None: not said; Kueue seeds the history at its first reconcile, the run's first
    cycle here)."""

    consumed: dict[str, float]
    last_update: float | None


def local_queue_key(workload_key: str, queue: str) -> str:
    """A workload's LocalQueue as ``namespace/name``."""
    return queue if "/" in queue else f"{workload_key.split('/', 1)[0]}/{queue}"


def applies_entry_penalty(config: AFSConfig | None, admission_mode: str | None,
                          reserved: bool, gate: bool = True) -> bool:
    """Kueue's shouldApplyEntryPenalty: Admission Fair Sharing configured (and its
    gate on), a usage-based ClusterQueue, a workload not holding quota already (a
    second pass re-assumes one: one reservation, one penalty)."""
    return config is not None and gate and admission_mode == USAGE_BASED and not reserved


def _add(into: dict[str, float], amounts: Mapping[str, float], factor: float = 1.0) -> None:
    for resource, amount in amounts.items():
        into[resource] = into.get(resource, 0.0) + amount * factor


def _amounts(admission: Admission) -> dict[str, float]:
    out: dict[str, float] = {}
    for pod_set in admission.pod_sets:
        for resource, milli in pod_set.usage.items():
            out[resource] = out.get(resource, 0.0) + milli / 1000
    return out


class AdmissionFairSharing:
    """The LocalQueues' usage ledger of one run. ``cluster_queues``: those whose
    admission mode is usage based; ``weights``: LocalQueue -> spec.fairSharing.weight
    (a LocalQueue missing here weighs 1, as Kueue's ResolveLQWeight for a missing one);
    ``usage``: the histories read from the LocalQueues' status."""

    def __init__(self, config: AFSConfig, cluster_queues: Iterable[str],
                 weights: Mapping[str, float] | None = None,
                 usage: Mapping[str, LocalQueueUsage] | None = None) -> None:
        self.config = config
        self.cluster_queues = frozenset(cluster_queues)
        self.weights = dict(weights or {})
        self.ledger: dict[str, LocalQueueUsage] = {
            k: LocalQueueUsage(dict(v.consumed), v.last_update) for k, v in (usage or {}).items()}
        # (LocalQueue -> usage) memo, cleared whenever the ledger changes
        self._memo: dict[str, float] = {}
        # the usage at the start of the cycle (Kueue's snapshot), for preemption
        self._at_cycle: dict[str, float] = {}

    def applies(self, cluster_queue: str) -> bool:
        return cluster_queue in self.cluster_queues

    def usage(self, local_queue: str) -> float:
        """Kueue's CalculateUsage of the LocalQueue (0 without a history)."""
        known = self._memo.get(local_queue)
        if known is not None:
            return known
        entry = self.ledger.get(local_queue)
        value = calculate_usage(entry.consumed if entry is not None else {}, {},
                                self.weight(local_queue), self.config.resource_weights)
        self._memo[local_queue] = value
        return value

    def weight(self, local_queue: str) -> float:
        """spec.fairSharing.weight; 1 for a LocalQueue not in the input (Kueue's
        ResolveLQWeight for a missing one)."""
        return self.weights.get(local_queue, 1.0)

    def _admitted_usage(self, state: QueueingState) -> dict[str, dict[str, float]]:
        """Per LocalQueue of the usage-based ClusterQueues, what its admitted workloads
        use (Kueue's cache LocalQueue GetAdmittedUsage)."""
        out: dict[str, dict[str, float]] = {}
        for key in sorted(state.admitted):
            admission = state.admitted[key]
            workload = state.workloads.get(key)
            if workload is None or admission.cluster_queue not in self.cluster_queues:
                continue
            _add(out.setdefault(local_queue_key(key, workload.queue), {}), _amounts(admission))
        return out

    def _decay(self, entry: LocalQueueUsage, admitted: Mapping[str, float],
               elapsed: float) -> None:
        entry.consumed = decayed_consumed(entry.consumed, admitted, max(0.0, elapsed),
                                          self.config.half_life)

    def sample(self, state: QueueingState, now: float) -> None:
        """The LocalQueue controller's samples up to ``now``: a LocalQueue seen for the
        first time starts its history now (empty); one whose last update is a whole
        sampling interval or more ago decays by those intervals towards its admitted
        usage."""
        admitted = self._admitted_usage(state)
        step = self.config.sampling
        for name in sorted({*admitted, *self.ledger}):
            entry = self.ledger.get(name)
            if entry is None:
                self.ledger[name] = LocalQueueUsage({}, now)
                continue
            if entry.last_update is None:
                entry.last_update = now
                continue
            if step <= 0 or now - entry.last_update < step:
                continue
            if self.config.half_life == 0:
                entry.consumed = {}  # Kueue resets the history
                entry.last_update = now
                continue
            intervals = math.floor((now - entry.last_update) / step)
            self._decay(entry, admitted.get(name, {}), intervals * step)
            entry.last_update += intervals * step
        self._memo.clear()
        self._at_cycle = {name: self.usage(name) for name in self.ledger}

    def cycle_usage(self, local_queue: str) -> float:
        """The LocalQueue's usage as the cycle's snapshot took it (Kueue computes a
        preemption candidate's LocalQueueFSUsage there, not after the cycle's
        admissions)."""
        known = self._at_cycle.get(local_queue)
        if known is not None:
            return known
        return calculate_usage({}, {}, self.weight(local_queue), {})

    def admitted(self, state: QueueingState, key: str, admission: Admission,
                 now: float) -> None:
        """``key`` was just admitted with ``admission`` (already in ``state``): its
        entry penalty, settled into its LocalQueue's history with the decay since the
        last update."""
        workload = state.workloads.get(key)
        if workload is None or not self.applies(admission.cluster_queue):
            return
        name = local_queue_key(key, workload.queue)
        penalty = entry_penalty(_amounts(admission), self.config)
        entry = self.ledger.setdefault(name, LocalQueueUsage({}, now))
        if entry.last_update is None:
            entry.last_update = now
        if self.config.alpha(max(0.0, now - entry.last_update)) > 0:
            # within a cycle (no time elapsed) the decay changes nothing: skip the sum
            own: dict[str, float] = {}
            for other, held in state.admitted.items():
                spec = state.workloads.get(other)
                if spec is not None and held.cluster_queue in self.cluster_queues \
                        and local_queue_key(other, spec.queue) == name:
                    _add(own, _amounts(held))
            self._decay(entry, own, now - entry.last_update)
        _add(entry.consumed, penalty)
        entry.last_update = max(entry.last_update, now)
        self._memo.clear()

    def status(self) -> dict[str, LocalQueueUsage]:
        """The histories as they stand (a LocalQueue's status.fairSharing)."""
        return {k: LocalQueueUsage(dict(v.consumed), v.last_update)
                for k, v in sorted(self.ledger.items())}


class _Candidate(Protocol):
    @property
    def cluster_queue(self) -> str: ...

    @property
    def evicted(self) -> bool: ...

    @property
    def lq_usage(self) -> float | None: ...


_C = TypeVar("_C", bound=_Candidate)


def order_by_usage(candidates: list[_C]) -> list[_C]:
    """Kueue's CandidatesOrdering step for Admission Fair Sharing on candidates already
    in its order without it: those of one usage-based ClusterQueue (``lq_usage`` set)
    take their own places again, the higher LocalQueue usage first (after the evicted
    ones, before priority; equal usage keeps the order). Candidates of different
    ClusterQueues are not compared by usage, as Kueue's."""
    places: dict[str, list[int]] = {}
    for at, candidate in enumerate(candidates):
        if candidate.lq_usage is not None:
            places.setdefault(candidate.cluster_queue, []).append(at)
    if not places:
        return candidates
    out = list(candidates)
    for at_list in places.values():
        group = [candidates[at] for at in at_list]
        group.sort(key=lambda c: (not c.evicted, -(c.lq_usage or 0.0)))  # stable
        for at, candidate in zip(at_list, group, strict=True):
            out[at] = candidate
    return out
