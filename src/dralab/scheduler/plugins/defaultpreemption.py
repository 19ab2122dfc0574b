"""DefaultPreemption (PostFilter): evict lower-priority pods so the pod fits.

For every node whose rejection was Unschedulable (not Unresolvable), starting at
a random offset, the node and the cycle state are cloned, every lower-priority
pod is removed (``PreFilterExtensions.remove_pod`` of each PreFilter plugin keeps
their state in step: that is how DynamicResources frees a victim's devices) and
Filter runs again. If the pod then fits, victims are reprieved one by one, most
important first, as long as it still fits. Among the candidates the node is
picked by upstream's criteria (fewest PDB violations, lowest highest-victim
priority, smallest priority sum, fewest victims, latest start, first).

Nodes without a lower-priority pod are answered at once. A failed dry run is
remembered per preemptor until something it read changes (``dryruns``): a pod
waiting for capacity asks after every event, and only the nodes something
happened on can answer differently.

The plugin does not evict: it returns the nominated node and the victims'
keys in ``PostFilterResult``; the scheduler deletes them (``ClusterState.remove_pod``)
and retries the pod. PodDisruptionBudgets are not modelled (no violations).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dralab.cluster import PREEMPT_NEVER, ClusterState, NodeInfo, PodInfo

from ..diagnosis import NodeToStatus, fit_error_message
from ..framework import Code, CycleState, Handle, PluginArgsError, PostFilterResult, Status
from .dryruns import DryRuns

NAME = "DefaultPreemption"
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
_INT32_SPAN = 2**31
_NO_VICTIMS_STATUS = Status.unresolvable(NAME, NO_VICTIMS)


def importance(pod: PodInfo) -> tuple[int, int, str, int]:
    """Sort key, most important first: higher priority, then started earlier (pods
    without status.startTime count as started now, i.e. last, in arrival order)."""
    start = pod.start_time
    return (-pod.priority, 0 if start else 1, start, pod.sequence)


def _start_rank(pod: PodInfo) -> tuple[int, str, int]:
    start = pod.start_time
    return (0 if start else 1, start, pod.sequence)


@dataclass(frozen=True, slots=True)
class Candidate:
    node: str
    victims: tuple[PodInfo, ...]  # most important first
    pdb_violations: int = 0


def pick_one_node(candidates: Sequence[Candidate]) -> Candidate | None:
    """Upstream's tie-breaking chain; the first candidate wins remaining ties."""
    if not candidates:
        return None

    def highest_priority(c: Candidate) -> int:
        return -c.victims[0].priority

    def priority_sum(c: Candidate) -> int:
        return -sum(v.priority + _INT32_SPAN for v in c.victims)

    def latest_start(c: Candidate) -> tuple[int, str, int]:
        top = c.victims[0].priority
        return min(_start_rank(v) for v in c.victims if v.priority == top)

    criteria: list[Callable[[Candidate], Any]] = [
        lambda c: -c.pdb_violations, highest_priority, priority_sum,
        lambda c: -len(c.victims), latest_start]
    pool = list(candidates)
    for criterion in criteria:
        best = max(criterion(c) for c in pool)
        pool = [c for c in pool if criterion(c) == best]
        if len(pool) == 1:
            break
    return pool[0]


def _arg_int(args: Mapping[str, Any], key: str, default: int) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise PluginArgsError(key, f"Invalid value: {value!r}: must be an integer")
    return value


class DefaultPreemption:
    def __init__(self, handle: Handle, min_percentage: int, min_absolute: int) -> None:
        self._handle = handle
        self.min_candidate_nodes_percentage = min_percentage
        self.min_candidate_nodes_absolute = min_absolute
        self._dry_runs = DryRuns()

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> DefaultPreemption:
        percentage = _arg_int(args, "minCandidateNodesPercentage", 10)
        absolute = _arg_int(args, "minCandidateNodesAbsolute", 100)
        if not 0 <= percentage <= 100:
            raise PluginArgsError("minCandidateNodesPercentage",
                                  f"Invalid value: {percentage}: not in valid range [0, 100]")
        if absolute < 0:
            raise PluginArgsError("minCandidateNodesAbsolute",
                                  f"Invalid value: {absolute}: not in valid range [0, inf)")
        if percentage == 0 and absolute == 0:
            raise PluginArgsError("minCandidateNodesAbsolute", "Invalid value: 0: cannot be "
                                  "zero at the same time as minCandidateNodesPercentage")
        return cls(handle, percentage, absolute)

    @property
    def name(self) -> str:
        return NAME

    def post_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState,
                    statuses: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status]:
        result, status = self._preempt(state, pod, cluster, statuses)
        if status.message:
            return result, Status(status.code, (f"preemption: {status.message}",), NAME)
        return result, status

    def num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        return min(max(n, self.min_candidate_nodes_absolute), num_nodes)

    def _preempt(self, state: CycleState, pod: PodInfo, cluster: ClusterState,
                 statuses: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status]:
        if pod.preemption_policy == PREEMPT_NEVER:
            return None, Status.unschedulable(NAME, NOT_ELIGIBLE_NEVER)
        all_nodes = cluster.node_infos()
        if not all_nodes:
            return None, Status.error(NAME, "no nodes available")
        if isinstance(statuses, NodeToStatus):
            names = statuses.nodes_with_code(Code.UNSCHEDULABLE)
        else:
            names = [n.name for n in all_nodes
                     if (s := statuses.get(n.name)) is not None and s.code is Code.UNSCHEDULABLE]
        potential = [cluster.nodes[n] for n in names if n in cluster.nodes]
        node_statuses: dict[str, Status] = {}
        candidates: list[Candidate] = []
        errors: list[Status] = []
        if potential:
            offset = self._handle.rng.randrange(len(potential))
            wanted = self.num_candidates(len(potential))
            framework = self._handle.framework
            runs = self._dry_runs.runs_for(framework, state, pod, cluster)
            nominated = framework.nominated
            priority = pod.priority
            for i in range(len(potential)):
                info = potential[(offset + i) % len(potential)]
                others: tuple[PodInfo, ...] = ()
                if runs is not None:
                    waiting = nominated.get(info.name)
                    if waiting:
                        others = tuple(p for p in waiting
                                       if p is not pod and p.priority >= priority)
                    known = runs.known(info, others)
                    if known is not None:
                        self._dry_runs.hits += 1
                        node_statuses[info.name] = known
                        continue
                    self._dry_runs.misses += 1
                if not any(p.priority < priority for p in info.pods):
                    node_statuses[info.name] = _NO_VICTIMS_STATUS
                    if runs is not None:
                        runs.remember(info, others, _NO_VICTIMS_STATUS)
                    continue
                node = info.clone()
                dry_state = state.clone()
                victims, status = self.select_victims_on_node(dry_state, pod, node)
                if status.is_success() and victims:
                    candidates.append(Candidate(node.name, tuple(victims)))
                    if len(candidates) >= wanted:
                        break
                    continue
                if status.is_success():
                    status = Status.error(NAME, f"expected at least one victim pod on node "
                                                f"{node.name!r}")
                if status.is_error():
                    errors.append(status)
                elif runs is not None and framework.dry_run_local(dry_state):
                    runs.remember(info, others, status)
                node_statuses[node.name] = status
        if not candidates:
            if errors:
                return None, errors[0]
            report = NodeToStatus([n.name for n in all_nodes], node_statuses,
                                  Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_HELPFUL,)))
            return PostFilterResult(None), Status.unschedulable(
                NAME, fit_error_message(len(all_nodes), report))
        best = pick_one_node(candidates)
        assert best is not None
        return PostFilterResult(best.node, tuple(v.key for v in best.victims)), Status.success()

    def select_victims_on_node(self, state: CycleState, pod: PodInfo, node: NodeInfo
                               ) -> tuple[list[PodInfo], Status]:
        """The fewest lower-priority pods to evict from ``node`` (a clone, changed here)
        so that ``pod`` fits, most important first; or the rejection without them."""
        framework = self._handle.framework
        potential = [p for p in node.pods if p.priority < pod.priority]
        if not potential:
            return [], _NO_VICTIMS_STATUS
        for victim in potential:
            node.remove_pod(victim.key)
            status = framework.run_pre_filter_extension_remove_pod(state, pod, victim, node)
            if not status.is_success():
                return [], status
        status = framework.run_filter_with_nominated(state, pod, node)
        if not status.is_success():
            return [], status
        potential.sort(key=importance)
        victims: list[PodInfo] = []
        for victim in potential:
            node.add_pod(victim)
            status = framework.run_pre_filter_extension_add_pod(state, pod, victim, node)
            if not status.is_success():
                return [], status
            if not framework.run_filter_with_nominated(state, pod, node).is_success():
                node.remove_pod(victim.key)
                status = framework.run_pre_filter_extension_remove_pod(state, pod, victim, node)
                if not status.is_success():
                    return [], status
                victims.append(victim)
        return victims, Status.success()
