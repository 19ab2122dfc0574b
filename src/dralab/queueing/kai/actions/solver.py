"""How KAI finds victims for a job: the job solver shared by preempt, reclaim and
consolidation (actions/common/solvers: job_solver.go, pod_scenario_builder.go,
by_pod_solver.go, scenario/; actions/common/action.go).

The job's tasks of this turn are solved one more at a time (the first task, then the
first two, ...), each partial job carrying the victims the previous step needed. For a
partial job, scenarios grow one potential victim job at a time, in the victim order
(``order.JobsOrder`` with ``victims=True``; a victim gives its tasks in reverse task
order -- a gang all of its allocated pods, an elastic job above its minimum one pod at
a time). A scenario is tried node by node over the nodes of the latest potential victim:
the recorded victims and every potential victim with a pod on that node are evicted,
then the victims' jobs and the preemptor are placed again in queue order, pipeline-only
(a victim placed back on its own node simply stays; one placed elsewhere is moved).
The preemptor must fit; victims that did not fit are the ones evicted. The action's
validator then judges the scenario (reclaim: the proportion plugin's reclaim rules;
consolidation: nobody may be evicted for good). The first valid scenario wins.

The job is solved when its gangs are satisfied and it has more pods placed than before.

Before a scenario is simulated it must pass KAI's filters: every pending task with a
node affinity has a matching node among the feasible and the victims' nodes; the
topology-aware idle-GPUs filter (``topology_filter``); and the idle-GPUs filter (each
pending task's GPUs fit, largest first, on the nodes with the most idle or releasing
GPUs plus what the victims free).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from dralab.queueing.kai.actions.common import (
    allocate_job,
    podset_cmp,
    task_cmp,
    tasks_to_allocate,
)
from dralab.queueing.kai.actions.order import JobsOrder
from dralab.queueing.kai.framework import (
    ACTIVE_ALLOCATED,
    ALIVE,
    Session,
    SessionJob,
    SessionTask,
    Statement,
)
from dralab.queueing.kai.model import KaiNode, KaiTask
from dralab.queueing.kai.placement import ACTIVE_USED, NodeUsage, request_kind
from dralab.queueing.kai.topology import task_amounts
from dralab.queueing.kai.topology_filter import (
    TopologyIdleGpusFilter,
    node_idle_or_releasing_gpus,
)

__all__ = [
    "IdleGpusFilter",
    "NodeAffinitiesFilter",
    "Validator",
    "VictimFilter",
    "VictimScenario",
    "eviction_message",
    "feasible_nodes",
    "greedy_match",
    "solve_job",
    "tasks_to_evict",
    "victim_jobs",
]

VictimFilter = Callable[[SessionJob], bool]


@dataclass(slots=True)
class VictimScenario:
    """A partial preemptor and its victims: recorded (needed by earlier steps) and
    potential (added by this step's scenarios), grouped per victim job."""

    preemptor: SessionJob
    pending: list[SessionTask]
    recorded: list[SessionTask] = field(default_factory=list)
    potential: list[SessionTask] = field(default_factory=list)
    potential_jobs_by_node: dict[str, list[str]] = field(default_factory=dict)
    groups: dict[str, list[list[SessionTask]]] = field(default_factory=dict)
    latest_job: str | None = None

    def add_potential(self, tasks: Sequence[SessionTask]) -> None:
        if not tasks:
            return
        self.potential.extend(tasks)
        self.groups.setdefault(tasks[0].job, []).append(list(tasks))
        self.latest_job = tasks[-1].job
        for task in tasks:
            jobs = self.potential_jobs_by_node.setdefault(task.node or "", [])
            if task.job not in jobs:
                jobs.append(task.job)

    def victim_tasks_from_node(self, node: str) -> list[SessionTask]:
        tasks: list[SessionTask] = []
        for job in sorted(self.potential_jobs_by_node.get(node, [])):
            for group in self.groups.get(job, []):
                tasks.extend(group)
        return tasks

    def victims(self) -> dict[str, list[SessionTask]]:
        """Every victim task (recorded and potential) per job."""
        by_job: dict[str, list[SessionTask]] = {}
        for task in [*self.recorded, *self.potential]:
            by_job.setdefault(task.job, [])
            if task not in by_job[task.job]:
                by_job[task.job].append(task)
        return by_job


Validator = Callable[[Session, VictimScenario, dict[str, float]], bool]


def _sub_job(job: SessionJob, pods: list[SessionTask],
             minima: dict[str, int] | None = None) -> SessionJob:
    """CloneWithTasks: the same pod group seen through some of its pods."""
    return SessionJob(job.spec, pods, minima=minima)


def tasks_to_evict(job: SessionJob) -> tuple[list[SessionTask], bool]:
    """GetTasksToEvict: a gang gives all its allocated pods; a pod set above its minimum
    gives one pod; the last pods in task order go first. Also: whether the job has more
    allocated pods than these."""
    minima = job.podsets()
    allocated = {s: job.count(ACTIVE_ALLOCATED, s) for s in minima}
    above = [s for s in minima if allocated[s] > minima[s]]
    limit = 1 if above else len(minima)

    def podset_key(left: str, right: str) -> int:
        # the session's pod-set order reversed (its name fallback too): the most
        # satisfied pod set gives first
        return podset_cmp(job, minima, right, left)

    chosen: list[SessionTask] = []
    for podset in sorted(minima, key=functools.cmp_to_key(podset_key))[:limit]:
        pods = sorted((p for p in job.pods_of(podset) if p.status in ACTIVE_ALLOCATED),
                      key=functools.cmp_to_key(_reverse_task_cmp))
        wanted = 1 if allocated[podset] > minima[podset] else allocated[podset]
        chosen.extend(pods[:wanted])
    return chosen, len(chosen) < job.count(ACTIVE_ALLOCATED)


def _reverse_task_cmp(left: SessionTask, right: SessionTask) -> int:
    return task_cmp(right, left)


def _gpus_free(usage: NodeUsage) -> bool:
    idle = usage.idle("gpu") + sum(1 - usage.used_portion(g) for g, u in usage.groups.items()
                                   if u.live())
    releasing = usage.releasing("gpu")
    mig = any(usage.idle(n) > 0 or usage.releasing(n) > 0 for n in usage.node.mig_instances)
    return idle > 0 or releasing > 0 or mig


def feasible_nodes(session: Session, job: SessionJob) -> dict[str, NodeUsage]:
    """FeasibleNodesForJob: every node for a job with a CPU-only pod, else the nodes
    with some idle or releasing GPU."""
    nodes = session.nodes
    if any(request_kind(p.spec) == "cpu" and not p.spec.claims for p in job.pods):
        return dict(nodes)
    return {name: usage for name, usage in nodes.items() if _gpus_free(usage)}


def greedy_match(required: Sequence[float], holders: Sequence[str],
                 capacity: Mapping[str, float]) -> bool:
    """greedyMatchRequirements: each requirement (largest first) goes to the first
    holder (most capacity first) with room left for it; a zero requirement ends the
    check (the rest are zero too), a holder with less capacity in all than the
    requirement ends it in failure (the others have less)."""
    taken: dict[str, float] = {}
    for need in required:
        if need == 0:
            return True
        for holder in holders:
            total = capacity.get(holder, 0.0)
            if total < need:
                return False
            if total - taken.get(holder, 0.0) >= need:
                taken[holder] = taken.get(holder, 0.0) + need
                break
        else:
            return False
    return True


class IdleGpusFilter:
    """idle_gpus.AccumulatedIdleGpus: each pending task's GPUs, largest first, must fit
    one by one (greedily) on the nodes with the most idle or releasing GPUs -- as many
    nodes as tasks -- counting what the scenario's victims free on their nodes (each
    victim once)."""

    def __init__(self, capacity: dict[str, float], required: Sequence[float],
                 size: int) -> None:
        self.capacity = capacity
        self.size = size
        self.required = sorted(required, reverse=True)
        self.seen: set[int] = set()

    @classmethod
    def make(cls, session: Session, pending: Sequence[SessionTask]) -> IdleGpusFilter:
        return cls({name: node_idle_or_releasing_gpus(usage)
                    for name, usage in session.nodes.items()},
                   [task_amounts(t.spec)["gpu"] for t in pending], len(pending))

    def add_victims(self, tasks: Sequence[SessionTask]) -> None:
        for task in tasks:
            if not task.node or id(task) in self.seen:
                continue
            self.seen.add(id(task))
            self.capacity[task.node] = self.capacity.get(task.node, 0.0) + task.accepted_gpus

    def holders(self) -> list[str]:
        # the nodes with most GPUs first; KAI ranges over a map for ties, here by name
        return sorted(self.capacity, key=lambda n: (-self.capacity[n], n))[:self.size]

    def valid(self, scenario: VictimScenario) -> bool:
        self.add_victims([*scenario.recorded, *scenario.potential])
        return greedy_match(self.required, self.holders(), self.capacity)


class NodeAffinitiesFilter:
    """node_affinities.NodeAffinitiesFilter: every pending task with a required node
    affinity (or node selector) needs a matching node among the feasible nodes and the
    victims' nodes -- or, for an affinity naming its nodes by metadata.name, among all
    of the cluster's nodes (NodeAffinity's PreFilter node list is looked up there)."""

    def __init__(self, session: Session, nodes: Mapping[str, NodeUsage]) -> None:
        self.session = session
        self.nodes = set(nodes)

    @staticmethod
    def needed(pending: Sequence[SessionTask]) -> bool:
        return any(t.spec.node_names or t.spec.node_selector for t in pending)

    @classmethod
    def make(cls, session: Session, nodes: Mapping[str, NodeUsage],
             scenario: VictimScenario) -> NodeAffinitiesFilter | None:
        """NewNodeAffinitiesFilter: none when no pending task has a constraint."""
        return cls(session, nodes) if cls.needed(scenario.pending) else None

    def valid(self, scenario: VictimScenario) -> bool:
        for task in [*scenario.recorded, *scenario.potential]:
            if task.node:
                self.nodes.add(task.node)
        for task in scenario.pending:
            spec = task.spec
            if not (spec.node_names or spec.node_selector):
                continue
            candidates = self.nodes | set(spec.node_names) if spec.node_names_by_name \
                else self.nodes
            if not any(_affinity_matches(spec, self.session.nodes[n].node)
                       for n in sorted(candidates) if n in self.session.nodes):
                return False
        return True


def _affinity_matches(task: KaiTask, node: KaiNode) -> bool:
    if task.node_names and node.name not in task.node_names:
        return False
    return all(node.labels.get(k) == v for k, v in task.node_selector.items())


class _Builder:
    """PodAccumulatedScenarioBuilder: scenarios with one more potential victim job, each
    passed through KAI's scenario filters (node affinities, topology-aware idle GPUs,
    idle GPUs) before it is simulated."""

    def __init__(self, session: Session, job: SessionJob, scenario: VictimScenario,
                 victims: JobsOrder, nodes: Mapping[str, NodeUsage]) -> None:
        self.session = session
        self.scenario = scenario
        self.victims = victims
        self.recorded = {id(t) for t in scenario.recorded}
        self.affinities = NodeAffinitiesFilter.make(session, nodes, scenario)
        partial = dataclasses.replace(job.spec, tasks=tuple(t.spec for t in scenario.pending))
        self.topology = TopologyIdleGpusFilter.for_preemptor(partial, session.nodes)
        self.idle = IdleGpusFilter.make(session, scenario.pending)

    def _valid(self) -> bool:
        scenario = self.scenario
        if self.affinities is not None and not self.affinities.valid(scenario):
            return False
        if self.topology is not None and not self.topology.filter(scenario.recorded,
                                                                  scenario.potential):
            return False
        return self.idle.valid(scenario)

    def first(self) -> VictimScenario | None:
        """GetValidScenario on the scenario without potential victims."""
        return self.scenario if self._valid() else self.next()

    def next(self) -> VictimScenario | None:
        while not self.victims.empty():
            job = self.victims.pop()
            if job is None:
                return None
            tasks, more = tasks_to_evict(job)
            if any(id(t) in self.recorded for t in tasks):
                rest = [p for p in job.pods if id(p) not in self.recorded]
                if rest:
                    self.victims.push(_sub_job(job, rest))
                continue
            if more:
                rest = [p for p in job.pods if p not in tasks]
                self.victims.push(_sub_job(job, rest))
            self.scenario.add_potential(tasks)
            if self._valid():
                return self.scenario
        return None


@dataclass(slots=True)
class _Solution:
    statement: Statement
    victims: list[SessionTask]


class _PodSolver:
    """byPodSolver: one scenario, node by node."""

    def __init__(self, session: Session, action: str, nodes: dict[str, NodeUsage],
                 validator: Validator | None, required: dict[str, float]) -> None:
        self.session = session
        self.action = action
        self.nodes = nodes
        self.validator = validator
        self.required = required

    def solve(self, scenario: VictimScenario) -> _Solution | None:
        stmt = self.session.statement(self.action)
        preemptor = scenario.preemptor
        _evict_all(stmt, scenario.recorded, preemptor.name)
        if scenario.latest_job is None:
            if scenario.recorded:
                found = self._simulate(stmt, scenario, list(scenario.recorded))
                if found is not None:
                    return found
        else:
            victim = self.session.jobs[scenario.latest_job]
            for node in sorted({p.node for p in victim.pods if p.node}):
                checkpoint = stmt.checkpoint()
                potential = scenario.victim_tasks_from_node(node)
                _evict_all(stmt, potential, preemptor.name)
                added = [p.node for p in potential
                         if p.node and p.node not in self.nodes]
                for name in added:
                    self.nodes[name] = self.session.nodes[name]
                found = self._simulate(stmt, scenario, [*scenario.recorded, *potential])
                if found is not None:
                    return found
                for name in added:
                    self.nodes.pop(name, None)
                stmt.rollback(checkpoint)
        stmt.discard()
        return None

    def _simulate(self, stmt: Statement, scenario: VictimScenario,
                  victims: list[SessionTask]) -> _Solution | None:
        session = self.session
        preemptor = scenario.preemptor
        victim_jobs = {t.job for t in victims}
        # GetJobsToAllocate: every job with pending pods, the victims' jobs and the
        # preemptor; only the latter two are placed, but the others still stand for
        # their queues in the queue order
        names = sorted(victim_jobs | {n for n, j in session.jobs.items() if j.pending()})
        candidates = [session.jobs[n] for n in names if n != preemptor.name]
        order = JobsOrder(session, [*candidates, preemptor])
        order.drop_after_last(lambda j: j is preemptor or j.name in victim_jobs)
        nodes = [self.nodes[name] for name in sorted(self.nodes)]
        placed = False
        # once the preemptor and every victim job were popped, the rest are skipped
        # anyway: stop there
        left = len(victim_jobs - {preemptor.name}) + 1
        while left and not order.empty():
            job = order.pop()
            if job is None:
                break
            if job is preemptor:
                left -= 1
                if not allocate_job(session, stmt, job, nodes, pipeline_only=True,
                                    tasks=scenario.pending):
                    return None
                placed = True
            elif job.name in victim_jobs:
                left -= 1
                allocate_job(session, stmt, job, nodes, pipeline_only=True)
        if not placed:
            return None
        evicted = [t for t in victims if t.status == "Releasing"]
        moved = [t for t in victims if t.status == "Pipelined"]
        if self.validator is not None and not self.validator(session, scenario,
                                                              self.required):
            stmt.discard()
            return None
        return _Solution(stmt, evicted + moved)


def eviction_message(session: Session, action: str, task: SessionTask, preemptor: str) -> str:
    """utils.GetMessageOfEviction (without reclaim's queue details)."""
    ns = session.jobs[task.job].spec.namespace
    pns = session.jobs[preemptor].spec.namespace if preemptor in session.jobs else ns
    if action == "preempt":
        return (f"Pod {ns}/{task.name} was preempted by higher priority workload "
                f"{pns}/{preemptor}")
    if action == "consolidation":
        return (f"Pod {ns}/{task.name} was preempted and rescheduled due to bin packing "
                f"(resource consolidation) procedure")
    return f"Pod {ns}/{task.name} was preempted by workload {pns}/{preemptor}."


def victim_jobs(session: Session, keep: VictimFilter) -> list[SessionJob]:
    """utils.GetVictimsQueue's jobs: those with a live pod (on a known node) that
    ``keep`` accepts."""
    chosen: list[SessionJob] = []
    for job in session.jobs.values():
        alive = any(p.status in ALIVE and (p.node is None or p.node in session.nodes)
                    for p in job.pods)
        if alive and keep(job):
            chosen.append(job)
    return chosen


def _evict_all(stmt: Statement, tasks: Sequence[SessionTask], preemptor: str) -> None:
    for task in tasks:
        if task.status == "Releasing" and task.virtual:
            continue
        stmt.evict(task, reason=eviction_message(stmt.session, stmt.action, task, preemptor),
                   for_job=preemptor)


def _partial(job: SessionJob, pending: list[SessionTask]) -> SessionJob:
    """getPartialJobRepresentative: the pending tasks so far, each pod set's minimum
    the number of them in it."""
    minima: dict[str, int] = {}
    for task in pending:
        minima[task.podset] = minima.get(task.podset, 0) + 1
    return _sub_job(job, pending, minima)


def solve_job(session: Session, job: SessionJob, action: str,
              victims: Callable[[], JobsOrder], validator: Validator | None,
              required: Callable[[list[SessionTask]], dict[str, float]] | None = None,
              ) -> Statement | None:
    """JobSolver.Solve: the statement that makes room for ``job`` (not committed), or
    None."""
    before = job.count(ACTIVE_USED)
    tasks = tasks_to_allocate(job, real=False)
    nodes = feasible_nodes(session, job)
    recorded: list[SessionTask] = []
    statement: Statement | None = None
    for count in range(1, len(tasks) + 1):
        pending = tasks[:count]
        preemptor = _partial(job, pending)
        scenario = VictimScenario(preemptor, pending, recorded=list(recorded))
        step_nodes = dict(nodes)
        for task in recorded:
            if task.node:
                step_nodes[task.node] = session.nodes[task.node]
        need = required(pending) if required is not None else {}
        solver = _PodSolver(session, action, step_nodes, validator, need)
        builder = _Builder(session, job, scenario, victims(), step_nodes)
        found: _Solution | None = None
        current = builder.first()
        while current is not None:
            found = solver.solve(current)
            if found is not None:
                break
            current = builder.next()
        if found is None:
            break
        if count < len(tasks):
            found.statement.discard()
        statement = found.statement
        recorded = found.victims
    if statement is None:
        return None
    if not job.gang_satisfied() or job.count(ACTIVE_USED) <= before:
        statement.discard()
        return None
    return statement
