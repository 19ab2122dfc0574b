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

from collections.abc import Callable, Hashable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TypeAlias

from dralab.scheduler import Scheduler
from dralab.scheduler.cluster import NodeInfo, PodInfo
from dralab.scheduler.framework import CycleState, Status
from dralab.scheduler.runtime import Framework

FilterFns: TypeAlias = Sequence[tuple[str, Callable[[CycleState, PodInfo, NodeInfo], Status]]]

__all__ = ["PlaceOutcome", "Prepared", "place_pod", "place_prepared", "prepare_pod"]


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

    def filter_key(self) -> Hashable | None:
        """What the pod's Filter answers on a node depend on besides that node: the
        profile and ``Framework.dry_run_key`` (every Filter plugin's ``DryRunKey``). Two
        pods with one key get one answer from every node; None when a Filter plugin
        of the cycle promises nothing (inter-pod affinity, topology spread)."""
        plugins = self.framework.dry_run_key(self.state, self.pod)
        return None if plugins is None else (id(self.framework), plugins)


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
