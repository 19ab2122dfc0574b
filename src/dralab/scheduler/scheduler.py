"""The scheduling loop: queue order, one cycle per pod, preemption and retries.

``Scheduler.run`` pops pods in QueueSort order and runs kube-scheduler's
scheduleOne for each (``cycle.py``). A pod whose preemption nominated a node, or
whose PostFilter otherwise changed the cluster (DynamicResources deallocating a
claim), is retried at once; such changes also send every unschedulable pod back
to the queue, as upstream's cluster events do. No I/O, no clock; the same inputs
and seed give the same result.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping

import msgspec

from dralab.api.core import PodCondition

from .claims import delete_pod
from .cluster import ClusterState, PodInfo, set_pod_condition
from .cycle import DEFAULT_SCHEDULER_NAME, Attempt, Cycle
from .framework import Registry
from .queue import SchedulingQueue
from .result import (
    REASON_NO_PROFILE,
    REASON_NOT_READY,
    REASON_SCHEDULER_ERROR,
    REASON_SCHEDULING_GATED,
    REASON_UNSCHEDULABLE,
    Evicted,
    Placement,
    ScheduleResult,
    Unplaced,
)
from .runtime import Framework

__all__ = ["MAX_ATTEMPTS", "Scheduler"]

SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
SCHEDULING_GATES = "SchedulingGates"  # the plugin whose rejection is a scheduling gate
# A pod is tried at most this often; evictions are finite, so this is only a backstop.
MAX_ATTEMPTS = 64


class Scheduler:
    """Schedules the pending pods of one ClusterState with one or more profiles.

    ``frameworks`` maps schedulerName to its Framework; all share the cluster and
    ``rng`` (the run's only randomness). ``observe`` is called after every cycle,
    before its outcome is applied (victims are still on their nodes). Use
    ``Scheduler.build`` or ``dralab.scheduler.schedule`` to construct from a config.
    A Scheduler runs once.
    """

    def __init__(self, cluster: ClusterState, frameworks: Mapping[str, Framework],
                 rng: random.Random, percentage_of_nodes_to_score: int | None = None,
                 observe: Callable[[Attempt], None] | None = None) -> None:
        if not frameworks:
            raise ValueError("at least one profile is needed")
        first = next(iter(frameworks.values()))
        if first.queue_sort is None:
            raise ValueError(f"profile {first.profile_name!r} has no QueueSort plugin")
        self.cluster = cluster
        self.frameworks = dict(frameworks)
        self.cycle = Cycle(cluster, rng, percentage_of_nodes_to_score)
        for framework in self.frameworks.values():
            framework.nominated = self.cycle.nominated
        self.observe = observe
        self.queue = SchedulingQueue(first.queue_sort)
        self._evicted: dict[str, PodInfo] = {}
        self.warnings: tuple[str, ...] = ()

    @classmethod
    def build(cls, cluster: ClusterState, config: object | None = None, seed: int = 0,
              observe: Callable[[Attempt], None] | None = None,
              registry: Registry | None = None) -> Scheduler:
        """Frameworks from ``config``: a ``SchedulerConfig``, a mapping shaped like
        KubeSchedulerConfiguration, or None for the default profile. ConfigError if
        the configuration is invalid."""
        from .profile import SchedulerConfig, build_frameworks, parse_config

        if config is None or isinstance(config, Mapping):
            config = parse_config(config)
        if not isinstance(config, SchedulerConfig):
            raise TypeError(f"expected SchedulerConfig or mapping, got {type(config).__name__}")
        rng = random.Random(seed)
        warnings: list[str] = []
        frameworks = build_frameworks(config, cluster, rng, registry, warnings)
        scheduler = cls(cluster, frameworks, rng, config.percentage_of_nodes_to_score, observe)
        scheduler.warnings = tuple(warnings)
        return scheduler

    def framework_for(self, pod: PodInfo) -> Framework | None:
        return self.frameworks.get(pod.pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME)

    # --- the run ----------------------------------------------------------------------
    def run(self, pending: Iterable[PodInfo] | None = None) -> ScheduleResult:
        """Schedule ``pending`` (default: every pod without spec.nodeName) to completion."""
        todo = sorted(pending if pending is not None else self.cluster.pending_pods(),
                      key=lambda p: p.sequence)
        no_profile: list[PodInfo] = []
        for info in todo:
            profile = self.framework_for(info)
            if profile is None:
                no_profile.append(info)
                continue
            status = profile.run_pre_enqueue(info)
            if status.is_success():
                self.queue.push(info)
            else:
                self.queue.hold(info, status)

        placed: list[Placement] = []
        failures: dict[str, Attempt] = {}
        evicted: list[Evicted] = []
        while (pod := self.queue.pop()) is not None:
            framework = self.frameworks[pod.pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME]
            pod.attempts += 1
            attempt = self.cycle.schedule_one(framework, pod)
            if self.observe is not None:
                self.observe(attempt)
            if attempt.node is not None:
                failures.pop(pod.key, None)
                placed.append(Placement(pod.pod, attempt.node, pod.attempts))
                continue
            failures[pod.key] = attempt
            self._record_failure(pod, attempt)
            if attempt.victims:
                evicted.extend(v for key in attempt.victims
                               if (v := self._evict(key, pod, framework)) is not None)
            if attempt.victims or attempt.cluster_changed:
                # Room was made (victims deleted, a claim deallocated): upstream's cluster
                # events would send the waiting pods back to the queue.
                self.queue.move_all_to_active()
            retry = attempt.nominated or attempt.cluster_changed
            if retry and pod.attempts < MAX_ATTEMPTS:
                self.queue.push(pod)
            else:
                self.queue.add_unschedulable(pod)
        return self._result(failures, placed, evicted, no_profile)

    def _record_failure(self, pod: PodInfo, attempt: Attempt) -> None:
        """PodScheduled=False with the message, and nominatedNodeName as PostFilter said."""
        if attempt.error is not None:
            condition = PodCondition(type="PodScheduled", status="False",
                                     reason=REASON_SCHEDULER_ERROR, message=attempt.error.message)
        else:
            assert attempt.diagnosis is not None
            condition = PodCondition(type="PodScheduled", status="False",
                                     reason=REASON_UNSCHEDULABLE,
                                     message=attempt.diagnosis.message())
        updated = set_pod_condition(pod.pod, condition)
        if attempt.clear_nomination or attempt.nominated:
            updated = msgspec.structs.replace(updated, status=msgspec.structs.replace(
                updated.status, nominated_node_name=attempt.nominated))
            self.cycle.set_nomination(pod, attempt.nominated)
        self.cluster.update_pod(pod, updated)

    def _evict(self, key: str, preemptor: PodInfo, framework: Framework) -> Evicted | None:
        info = delete_pod(self.cluster, key)
        if info is None:
            return None
        self.queue.forget(key)
        self.cycle.set_nomination(info, None)
        node = info.assumed_node or info.pod.spec.node_name or ""
        info.pod = set_pod_condition(info.pod, PodCondition(
            type="DisruptionTarget", status="True", reason="PreemptionByScheduler",
            message=f"{framework.profile_name}: preempting to accommodate a higher "
                    "priority pod"))
        self._evicted[key] = info
        return Evicted(info.pod, node, preemptor.key)

    def _result(self, failures: Mapping[str, Attempt], placed: list[Placement],
                evicted: list[Evicted], no_profile: list[PodInfo]) -> ScheduleResult:
        left: list[tuple[int, Unplaced]] = []
        for pod, status in self.queue.gated.values():
            # Only spec.schedulingGates get the API server's SchedulingGated wording;
            # any other PreEnqueue rejection is reported with the plugin's message.
            if status.plugin == SCHEDULING_GATES:
                reason, message = REASON_SCHEDULING_GATED, SCHEDULING_GATED_MESSAGE
            else:
                reason, message = REASON_NOT_READY, status.message
            gated = set_pod_condition(pod.pod, PodCondition(
                type="PodScheduled", status="False", reason=reason, message=message))
            self.cluster.update_pod(pod, gated)
            left.append((pod.sequence, Unplaced(gated, reason, status.message, 0)))
        for pod in no_profile:
            name = pod.pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME
            left.append((pod.sequence, Unplaced(
                pod.pod, REASON_NO_PROFILE, f"no profile for scheduler name {name!r}", 0)))
        for pod in self.queue.pending():
            attempt = failures.get(pod.key)
            if attempt is None:
                continue
            if attempt.error is not None:
                left.append((pod.sequence, Unplaced(
                    pod.pod, REASON_SCHEDULER_ERROR, attempt.error.message, pod.attempts)))
                continue
            diagnosis = attempt.diagnosis
            assert diagnosis is not None
            left.append((pod.sequence, Unplaced(
                pod.pod, REASON_UNSCHEDULABLE, diagnosis.message(), pod.attempts,
                dict(diagnosis.statuses.explicit), diagnosis.statuses.absent,
                pod.pod.status.nominated_node_name)))
        left.sort(key=lambda item: item[0])
        everything = sorted([*self.cluster.pods.values(), *self._evicted.values()],
                            key=lambda p: p.sequence)
        return ScheduleResult(tuple(placed), tuple(u for _, u in left), tuple(evicted),
                              tuple(p.pod for p in everything), self.cluster, self.warnings)
