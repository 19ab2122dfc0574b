"""One scheduling cycle (kube-scheduler's scheduleOne) for one pod.

PreFilter; the nominated node first if preemption set one; Filter over the nodes
in rotating order (the start index advances by the number of nodes processed)
until ``num_feasible_nodes_to_find`` feasible nodes are found; PostFilter when
none is; PreScore, Score and host selection (ties broken by a seeded reservoir
sample); then assume, Reserve, Permit, PreBind and Bind. Any failure after
assume unreserves in reverse order and forgets the pod.

The cycle never applies PostFilter's evictions itself: it reports them in the
``Attempt`` and the Scheduler deletes the victims.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .cluster import ClusterState, NodeInfo, PodInfo
from .diagnosis import Diagnosis, NodeToStatus
from .framework import Code, CycleState, Status
from .runtime import Framework, ScoreTable

__all__ = [
    "DEFAULT_SCHEDULER_NAME",
    "NO_NODES_AVAILABLE",
    "Attempt",
    "Cycle",
    "num_feasible_nodes_to_find",
]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
# Nodes per batch-Filter call: large enough to amortise calls, small enough that
# plugins do little work on nodes a sequential search would never have reached.
FILTER_CHUNK = 64
_SUCCESS = Status.success()


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes end the Filter search (kube-scheduler's rule): all of
    them below 100 nodes; else ``percentage`` % (0/None: 50 - n/125, at least 5 %),
    but never fewer than 100."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(slots=True)
class Attempt:
    """One cycle of one pod.

    ``node``: the node it was bound to (None when it failed). On failure either
    ``error`` (a bug or bad input) or ``diagnosis`` (does not fit) is set.
    ``nominated``/``victims``: what PostFilter (preemption) decided;
    ``clear_nomination``: the pod's nominatedNodeName must be cleared;
    ``cluster_changed``: PostFilter changed the cluster (e.g. deallocated a claim), so
    the pod is worth another try.
    ``scores``: weighted scores of the feasible nodes when scoring ran;
    ``feasible``/``rejected``: what Filter found (first rejecting plugin per node);
    ``evaluated``: nodes Filter looked at.
    """

    pod: PodInfo
    framework: Framework
    node: str | None = None
    diagnosis: Diagnosis | None = None
    error: Status | None = None
    scores: ScoreTable | None = None
    feasible: list[str] = field(default_factory=list)
    rejected: dict[str, Status] = field(default_factory=dict)
    via_nomination: bool = False
    nominated: str | None = None
    clear_nomination: bool = False
    victims: tuple[str, ...] = ()
    cluster_changed: bool = False
    evaluated: int = 0


class _Failure(Exception):
    """Ends a cycle with an Error status (never used for "does not fit")."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


class Cycle:
    """The per-run state scheduleOne needs: the rotating start index, nominations
    and the RNG. Shared by all profiles of a run."""

    def __init__(self, cluster: ClusterState, rng: random.Random,
                 percentage_of_nodes_to_score: int | None = None) -> None:
        self.cluster = cluster
        self.rng = rng
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.next_start_node_index = 0
        self.nominated: dict[str, list[PodInfo]] = {}

    def set_nomination(self, pod: PodInfo, node: str | None) -> None:
        """Record (or with None, drop) that preemption nominated ``node`` for ``pod``."""
        for name in [n for n, pods in self.nominated.items() if pod in pods]:
            self.nominated[name].remove(pod)
            if not self.nominated[name]:
                del self.nominated[name]
        if node:
            self.nominated.setdefault(node, []).append(pod)

    # --- scheduleOne --------------------------------------------------------------------
    def schedule_one(self, framework: Framework, pod: PodInfo) -> Attempt:
        attempt = Attempt(pod, framework)
        state = CycleState()
        try:
            node = self.schedule_pod(framework, state, pod, attempt)
        except _Failure as failure:
            attempt.error = failure.status
            attempt.clear_nomination = True
            return attempt
        if node is None:
            self._post_filter(framework, state, pod, attempt)
            return attempt
        return self._reserve_and_bind(framework, state, pod, node, attempt)

    def _post_filter(self, framework: Framework, state: CycleState, pod: PodInfo,
                     attempt: Attempt) -> None:
        diagnosis = attempt.diagnosis
        assert diagnosis is not None
        if diagnosis.override or not framework.has_post_filter_plugins():
            attempt.clear_nomination = True
            return
        before = self.cluster.version
        result, status = framework.run_post_filter(state, pod, self.cluster,
                                                   diagnosis.statuses)
        attempt.cluster_changed = self.cluster.version != before
        diagnosis.post_filter_msg = status.message
        if result is None:
            return  # keep whatever nomination the pod has
        attempt.nominated = result.nominated_node_name
        attempt.clear_nomination = result.nominated_node_name is None
        if status.is_success():
            attempt.victims = result.victims

    def _reserve_and_bind(self, framework: Framework, state: CycleState, pod: PodInfo,
                          node: str, attempt: Attempt) -> Attempt:
        cluster = self.cluster
        cluster.assume_pod(pod, node)
        status = framework.run_reserve(state, pod, node)
        if status.is_success():
            status = framework.run_permit(state, pod, node)
        if status.is_success():
            status = framework.run_pre_bind(state, pod, node)
        if status.is_success():
            status = framework.run_bind(state, pod, node)
        if not status.is_success():
            framework.run_unreserve(state, pod, node)
            cluster.forget_pod(pod)
            attempt.clear_nomination = True
            if status.is_rejected():
                # Upstream reports a Reserve/Permit rejection as a fit error over one node.
                diagnosis = Diagnosis(NodeToStatus([node], {node: status}))
                diagnosis.add_plugin_status(status)
                attempt.diagnosis = diagnosis
            else:
                attempt.error = status
            return attempt
        self.set_nomination(pod, None)
        attempt.node = node
        return attempt

    def schedule_pod(self, framework: Framework, state: CycleState, pod: PodInfo,
                     attempt: Attempt) -> str | None:
        """The node to bind to, or None with ``attempt.diagnosis`` set."""
        cluster = self.cluster
        all_nodes = cluster.node_infos()
        diagnosis = Diagnosis(NodeToStatus(cluster.node_names()))
        attempt.diagnosis = diagnosis
        if not all_nodes:
            diagnosis.override = NO_NODES_AVAILABLE
            return None
        result, status, plugins = framework.run_pre_filter(state, pod, cluster)
        if not status.is_success():
            if not status.is_rejected():
                raise _Failure(status)
            diagnosis.statuses.absent = status
            diagnosis.pre_filter_msg = status.message
            diagnosis.add_plugin_status(status)
            return None

        nominated = pod.pod.status.nominated_node_name
        if nominated and nominated in cluster.nodes:
            # Preemption made room there: try it alone first.
            feasible = self.find_nodes_that_pass_filters(
                framework, state, pod, diagnosis, [cluster.nodes[nominated]], 0)
            if feasible:
                attempt.diagnosis = None
                attempt.feasible = [nominated]
                attempt.rejected = diagnosis.statuses.explicit
                attempt.via_nomination = True
                return nominated

        nodes = all_nodes
        if result is not None and result.node_names is not None:
            index = cluster.node_index()
            nodes = sorted((cluster.nodes[n] for n in result.node_names if n in cluster.nodes),
                           key=lambda n: index[n.name])
            diagnosis.statuses.absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",))
        feasible = self.find_nodes_that_pass_filters(
            framework, state, pod, diagnosis, nodes, self.next_start_node_index)
        processed = len(feasible) + len(diagnosis.statuses.explicit)
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        attempt.evaluated = processed
        if not feasible:
            return None
        attempt.diagnosis = None
        attempt.feasible = [n.name for n in feasible]
        attempt.rejected = diagnosis.statuses.explicit
        if len(feasible) == 1:
            return feasible[0].name
        scores = self.prioritize(framework, state, pod, feasible)
        attempt.scores = scores
        return self.select_host(scores)

    def find_nodes_that_pass_filters(self, framework: Framework, state: CycleState,
                                     pod: PodInfo, diagnosis: Diagnosis,
                                     nodes: list[NodeInfo], start: int) -> list[NodeInfo]:
        """Feasible nodes, visiting ``nodes`` from ``start`` round the ring and stopping
        once enough are found; rejections go into ``diagnosis``. Error raises _Failure."""
        num = len(nodes)
        if num == 0:
            return []
        percentage = framework.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(percentage, num)
        if not framework.has_score_plugins():
            to_find = 1  # without scoring any feasible node is as good as another
        if not framework.has_filter_plugins():
            return [nodes[(start + i) % num] for i in range(to_find)]
        filters = framework.filters_for(state, pod)
        batches = [(name, fn, framework.batch_filter(name)) for name, fn in filters]
        nominated = self.nominated
        explicit = diagnosis.statuses.explicit
        rejectors = diagnosis.unschedulable_plugins
        feasible: list[NodeInfo] = []
        visited = 0
        # Nodes are checked in chunks, plugin by plugin, so plugins with a batch Filter
        # handle many nodes per call. A chunk is never larger than the feasible nodes
        # still wanted, and only nodes up to the last one needed count: the outcome is
        # exactly that of checking node after node.
        while visited < num and len(feasible) < to_find:
            size = min(FILTER_CHUNK, to_find - len(feasible), num - visited)
            chunk = [nodes[(start + visited + j) % num] for j in range(size)]
            visited += size
            results: list[Status | None] = [None] * size
            alive = list(range(size))
            if nominated:
                for k, node in enumerate(chunk):
                    if node.name in nominated:  # room preemption freed for someone else
                        alive.remove(k)
                        results[k] = framework.run_filter_with_nominated(state, pod, node)
            for name, fn, batch in batches:
                if not alive:
                    break
                subset = chunk if len(alive) == size else [chunk[k] for k in alive]
                verdicts = batch(state, pod, subset) if batch is not None else \
                    [fn(state, pod, node) for node in subset]
                survivors: list[int] = []
                for k, status in zip(alive, verdicts, strict=True):
                    if status.code is Code.SUCCESS:
                        survivors.append(k)
                    else:
                        results[k] = framework.filter_failure(name, status)
                alive = survivors
            for k, node in enumerate(chunk):
                verdict = results[k]
                if verdict is None or verdict.code is Code.SUCCESS:
                    feasible.append(node)
                    if len(feasible) >= to_find:
                        break
                elif verdict.code is Code.ERROR:
                    raise _Failure(verdict)
                else:
                    explicit[node.name] = verdict
                    if verdict.plugin:
                        rejectors.add(verdict.plugin)
        return feasible

    def prioritize(self, framework: Framework, state: CycleState, pod: PodInfo,
                   nodes: list[NodeInfo]) -> ScoreTable:
        if not framework.has_score_plugins():
            return ScoreTable([n.name for n in nodes], {}, [1] * len(nodes))
        status = framework.run_pre_score(state, pod, nodes)
        if not status.is_success():
            raise _Failure(status)
        scores, status = framework.run_score(state, pod, nodes)
        if not status.is_success():
            raise _Failure(status)
        return scores

    def select_host(self, scores: ScoreTable) -> str:
        """The highest total; each further tie replaces the pick with probability
        1/count (a reservoir sample, as upstream's selectHost)."""
        totals = scores.totals
        best = max(totals)
        ties = [i for i, t in enumerate(totals) if t == best]
        selected = ties[0]
        random = self.rng.random
        for count, index in enumerate(ties[1:], start=2):
            if random() * count < 1.0:
                selected = index
        return scores.names[selected]
