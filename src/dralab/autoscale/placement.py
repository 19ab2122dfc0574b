"""Placing one pod on chosen nodes with the scheduler's own plugins.

What Cluster Autoscaler's scheduler-based predicate checker and its DRA snapshot
do: PreFilter, then Filter on the given nodes only (in order), and on the first
that passes Reserve, PreBind and Bind -- so the DRA plugin's allocation is
written to the claims and the next simulated pod sees those devices in use
(MIG counters, consumable capacity, matchAttribute topology, taints and
tolerations all as the scheduler decides them). Permit is skipped: gangs are
placed whole by the caller. Used on a fork; the caller reverts.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TypeAlias

from dralab.cluster import NodeInfo, PodInfo
from dralab.scheduler import Scheduler
from dralab.scheduler.framework import CycleState, DryRunKey, Status
from dralab.scheduler.runtime import Framework

KeyFn: TypeAlias = Callable[[CycleState, PodInfo], Hashable | None]
FilterFns: TypeAlias = Sequence[tuple[str, Callable[[CycleState, PodInfo, NodeInfo], Status]]]

__all__ = ["PlaceOutcome", "Prepared", "dry_run_key_fns", "place_pod", "place_prepared",
           "prepare_pod"]


@dataclass(frozen=True, slots=True)
class PlaceOutcome:
    """Where the pod went (None: nowhere) and, if nowhere, the last rejection."""

    node: str | None
    reason: str = ""


def _reason(status: Status) -> str:
    message = status.message
    return f"{status.plugin}: {message}" if status.plugin and message else message


def _filter(framework: Framework, filters: FilterFns, state: CycleState, info: PodInfo,
            node: NodeInfo) -> Status:
    for name, fn in filters:
        status = fn(state, info, node)
        if not status.is_success():
            return framework.filter_failure(name, status)
    return status if filters else Status.success()


@dataclass(frozen=True, slots=True)
class Prepared:
    """A pod after PreFilter, ready to be tried on nodes (``place_prepared``)."""

    pod: PodInfo
    framework: Framework
    state: CycleState
    allowed: AbstractSet[str] | None
    filters: FilterFns

    def filter_key(self, key_fns: Mapping[str, KeyFn]) -> Hashable | None:
        """What the pod's Filter answers on a node depend on besides that node: the
        profile, the plugins PreFilter skipped, and each Filter plugin's ``DryRunKey``
        (``key_fns``: ``dry_run_key_fns(self.framework)``). As
        ``Framework.dry_run_key``, over the plugins run here: without its relevance
        check, which rescans every node after each node a what-if adds. Two pods with
        one key get one answer from every node; None when a Filter plugin promises
        nothing (inter-pod affinity, topology spread)."""
        keys: list[Hashable] = [id(self.framework), frozenset(self.state.skip_filter)]
        for name, _ in self.filters:
            fn = key_fns.get(name)
            key = fn(self.state, self.pod) if fn is not None else None
            if key is None:
                return None
            keys.append((name, key))
        return tuple(keys)


def dry_run_key_fns(framework: Framework) -> dict[str, KeyFn]:
    """The ``dry_run_key`` of each of the profile's Filter plugins that has one."""
    return {name: plugin.dry_run_key for name, plugin in framework.filter
            if isinstance(plugin, DryRunKey)}


def prepare_pod(scheduler: Scheduler, info: PodInfo) -> Prepared | PlaceOutcome:
    """PreFilter for ``info``: a ``Prepared`` pod, or the outcome when it fits no node
    (no profile, or PreFilter rejected it)."""
    framework = scheduler.framework_for(info)
    if framework is None:
        return PlaceOutcome(None, "no scheduler profile for the pod")
    state = CycleState()
    result, status, _ = framework.run_pre_filter(state, info, scheduler.cluster)
    if not status.is_success():
        return PlaceOutcome(None, _reason(status))
    allowed = result.node_names if result is not None else None
    # Every Filter plugin PreFilter kept: the per-pod relevance shortcut scans all
    # nodes whenever a node was added, which a what-if does all the time.
    return Prepared(info, framework, state, allowed, framework.filters_for(state))


def place_prepared(scheduler: Scheduler, info: PodInfo, prepared: Prepared,
                   nodes: Iterable[str]) -> PlaceOutcome:
    """Bind the prepared ``info`` to the first of ``nodes`` that passes Filter and
    Reserve. A ``Prepared`` serves one bind: after a success, prepare again."""
    framework, state, allowed, filters = (prepared.framework, prepared.state,
                                          prepared.allowed, prepared.filters)
    cluster = scheduler.cluster
    reason = "no node"
    for name in nodes:
        if allowed is not None and name not in allowed:
            reason = "excluded by PreFilter"
            continue
        node = cluster.nodes.get(name)
        if node is None:
            continue
        status = _filter(framework, filters, state, info, node)
        if not status.is_success():
            reason = _reason(status)
            continue
        cluster.assume_pod(info, name)
        status = framework.run_reserve(state, info, name)
        if status.is_success():
            status = framework.run_pre_bind(state, info, name)
        if status.is_success():
            status = framework.run_bind(state, info, name)
        if status.is_success():
            return PlaceOutcome(name)
        framework.run_unreserve(state, info, name)
        cluster.forget_pod(info)
        reason = _reason(status)
    return PlaceOutcome(None, reason)


def place_pod(scheduler: Scheduler, info: PodInfo, nodes: Iterable[str]) -> PlaceOutcome:
    """Bind ``info`` to the first of ``nodes`` that passes Filter and Reserve."""
    prepared = prepare_pod(scheduler, info)
    if isinstance(prepared, PlaceOutcome):
        return prepared
    return place_prepared(scheduler, info, prepared, nodes)
