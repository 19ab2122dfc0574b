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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np

from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.cluster.nodetable import pick

from .diagnosis import Diagnosis, NodeToStatus
from .framework import Code, CycleState, Mask, Positions, Status
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
# Below this many nodes the plain search is as fast as building arrays.
MASK_MIN_NODES = 32
_SUCCESS = Status.success()

FilterFn: TypeAlias = Callable[[CycleState, PodInfo, NodeInfo], Status]


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
    ``waiting``: Permit said Wait (``node`` is then where the pod waits, not bound).
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
    waiting: dict[str, float] | None = None  # Permit Wait: plugin -> timeout (s)
    state: CycleState | None = None          # kept for the binding cycle of a waiting pod


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
        # The plugins' filter_mask / score_positions fast paths; off only to check
        # that they change nothing.
        self.use_masks = True
        # Whether a pod that fits gets the rejected nodes' statuses (Attempt.rejected,
        # for explain). Off, they are counted but not worked out: a run that never
        # reads them (the simulator) spares the work per rejected node.
        self.record_rejections = True

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
            status, waits = framework.run_permit(state, pod, node)
            if status.is_success() and waits:
                # Permit said Wait: the pod keeps its node and its Reserve until the
                # Scheduler's waiting pods allow, reject or time it out.
                attempt.node = node
                attempt.waiting = waits
                attempt.state = state
                return attempt
        if status.is_success():
            status = self.bind(framework, state, pod, node)
        if not status.is_success():
            self.unreserve(framework, state, pod, node, status, attempt)
            return attempt
        self.set_nomination(pod, None)
        attempt.node = node
        return attempt

    def bind(self, framework: Framework, state: CycleState, pod: PodInfo, node: str) -> Status:
        """The binding cycle: PreBind, then Bind."""
        status = framework.run_pre_bind(state, pod, node)
        if status.is_success():
            status = framework.run_bind(state, pod, node)
        return status

    def unreserve(self, framework: Framework, state: CycleState, pod: PodInfo, node: str,
                  status: Status, attempt: Attempt) -> None:
        """Undo Reserve and the assumption after ``status`` failed the pod on ``node``."""
        framework.run_unreserve(state, pod, node)
        self.cluster.forget_pod(pod)
        attempt.node = None
        attempt.clear_nomination = True
        if status.is_rejected():
            # Upstream reports a Reserve/Permit rejection as a fit error over one node.
            diagnosis = Diagnosis(NodeToStatus([node], {node: status}))
            diagnosis.add_plugin_status(status)
            attempt.diagnosis = diagnosis
        else:
            attempt.error = status

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
        feasible, positions = self._find(framework, state, pod, diagnosis, nodes,
                                         self.next_start_node_index)
        processed = len(feasible) + len(diagnosis.statuses.explicit) + diagnosis.unrecorded
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        attempt.evaluated = processed
        if not feasible:
            return None
        attempt.diagnosis = None
        attempt.feasible = [n.name for n in feasible]
        attempt.rejected = diagnosis.statuses.explicit
        if len(feasible) == 1:
            return feasible[0].name
        scores = self.prioritize(framework, state, pod, feasible, positions)
        attempt.scores = scores
        return self.select_host(scores)

    def find_nodes_that_pass_filters(self, framework: Framework, state: CycleState,
                                     pod: PodInfo, diagnosis: Diagnosis,
                                     nodes: list[NodeInfo], start: int) -> list[NodeInfo]:
        """Feasible nodes, visiting ``nodes`` from ``start`` round the ring and stopping
        once enough are found; rejections go into ``diagnosis``. Error raises _Failure."""
        return self._find(framework, state, pod, diagnosis, nodes, start)[0]

    def _find(self, framework: Framework, state: CycleState, pod: PodInfo,
              diagnosis: Diagnosis, nodes: list[NodeInfo], start: int
              ) -> tuple[list[NodeInfo], Positions | None]:
        """``find_nodes_that_pass_filters`` plus the feasible nodes' positions in
        ``node_infos()`` when the masked search knows them (for batch scoring)."""
        num = len(nodes)
        if num == 0:
            return [], None
        percentage = framework.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(percentage, num)
        if not framework.has_score_plugins():
            to_find = 1  # without scoring any feasible node is as good as another
        if not framework.has_filter_plugins():
            return [nodes[(start + i) % num] for i in range(to_find)], None
        filters = framework.filters_for(state, pod)
        if self.use_masks and num >= MASK_MIN_NODES:
            masks = framework.filter_masks(state, pod, filters)
            order = self._positions(nodes) if masks is not None else None
            if masks is not None and order is not None:
                return self._find_masked(framework, state, pod, diagnosis, nodes, start,
                                         to_find, filters, masks, order)
        return self._find_chunked(framework, state, pod, diagnosis, nodes, start, to_find,
                                  filters), None

    def _positions(self, nodes: list[NodeInfo]) -> Positions | None:
        """Where ``nodes`` sit in ``node_infos()`` (None: some node is not the
        cluster's own NodeInfo, so no mask can speak for it)."""
        everything = self.cluster.node_infos()
        if nodes is everything:
            return np.arange(len(nodes), dtype=np.int64)
        index = self.cluster.node_index()
        out: list[int] = []
        for node in nodes:
            position = index.get(node.name)
            if position is None or everything[position] is not node:
                return None
            out.append(position)
        return np.array(out, np.int64)

    def _find_masked(self, framework: Framework, state: CycleState, pod: PodInfo,
                     diagnosis: Diagnosis, nodes: list[NodeInfo], start: int, to_find: int,
                     filters: Sequence[tuple[str, FilterFn]], masks: list[Mask],
                     order: Positions) -> tuple[list[NodeInfo], Positions]:
        """The search of ``_find_chunked`` with the plugins' promises.

        Each node falls in one of three groups: every mask vouches for it (feasible,
        no call); the first plugin without a pass promise has a known rejection
        (rejected with that status, no call); otherwise it is checked node by node,
        each plugin called unless its promise covers the node. Only the last group
        costs Python work per node. The ring walk, its stopping point, the statuses
        (recorded in ring order) and the Filter calls made are exactly those of the
        node-by-node search.
        """
        num = len(nodes)
        start %= num  # a restricted node list is shorter than the ring of all nodes
        everything = self.cluster.node_infos()
        total = len(everything)
        rejections = framework.filter_rejections(state, pod, filters)
        visits = framework.filter_visits(state, pod, filters)
        if any(len(m) != total for m in masks) or any(
                r is not None and len(r[0]) != total for r in [*rejections, *visits]):
            raise ValueError("a filter_mask, filter_rejections or filter_visits does not "
                             "cover every node")
        # Per position: does every plugin so far vouch; else which plugin's rejection is
        # known while all plugins before it vouch (-1: none).
        vouched = np.ones(total, np.bool_)
        known = np.full(total, -1, np.int64)
        # Nodes every plugin vouches for except one (the first offering visits), whose
        # Filter would pass with a side effect: feasible, visited in ring order below.
        loose: Mask | None = None
        visitor: Callable[[Positions], None] | None = None
        for i, (mask, rejection, visit) in enumerate(zip(masks, rejections, visits,
                                                          strict=True)):
            if rejection is not None:
                known[vouched & rejection[0]] = i
            if loose is not None:
                loose &= mask
            elif visit is not None:
                loose = vouched & visit[0]
                visitor = visit[1]
            vouched &= mask
        good = vouched[order]  # indexed like ``nodes`` (copies)
        known = known[order]
        visit_ring = loose[order] if loose is not None and loose.any() else None
        nominated = self.nominated
        if nominated:
            # Room preemption freed for someone else: always the full check.
            index = self.cluster.node_index()
            for name in nominated:
                position = index.get(name)
                if position is None:
                    continue
                if nodes is everything:
                    k = position
                else:
                    at = np.flatnonzero(order == position)
                    if not len(at):
                        continue
                    k = int(at[0])
                good[k] = False
                known[k] = -1
                if visit_ring is not None:
                    visit_ring[k] = False
        if visit_ring is not None:
            good |= visit_ring
        if start:  # ring order from ``start``
            good = np.concatenate((good[start:], good[:start]))
            known = np.concatenate((known[start:], known[:start]))
            if visit_ring is not None:
                visit_ring = np.concatenate((visit_ring[start:], visit_ring[:start]))
        # Ring indexes of the nodes to visit, and how many of them were visited so far:
        # each is visited before any later node's Filter call, as a node-by-node search
        # would have called Filter there.
        to_visit: list[int] = [] if visit_ring is None else np.flatnonzero(visit_ring).tolist()
        done = 0

        def visit_before(limit: int) -> None:
            nonlocal done
            upto = done
            while upto < len(to_visit) and to_visit[upto] < limit:
                upto += 1
            if upto == done:
                return
            ks = np.array(to_visit[done:upto], np.int64) + start
            ks[ks >= num] -= num
            assert visitor is not None
            visitor(order[ks])
            done = upto
        # goods[i]: vouched-for nodes among the first i of the ring.
        goods = np.concatenate(([0], np.cumsum(good)))
        checks = list(zip(filters, masks, rejections, strict=True))
        passed: list[int] = []  # ring indexes of checked nodes that turned out feasible
        rejected: list[tuple[int, str, Status]] = []  # (ring index, node, status) of checks
        found = 0
        prev = 0  # ring index after the last checked node
        end = -1  # ring index just past the last node visited
        for b in np.flatnonzero(~good & (known < 0)).tolist():
            run = int(goods[b] - goods[prev])  # vouched-for nodes before this one
            if found + run >= to_find:
                end = int(np.searchsorted(goods, goods[prev] + to_find - found))
                break
            found += run
            k = b + start
            if k >= num:
                k -= num
            node = nodes[k]
            if to_visit:
                visit_before(b)
            if nominated and node.name in nominated:
                verdict = framework.run_filter_with_nominated(state, pod, node)
            else:
                verdict = _SUCCESS
                position = int(order[k])
                for (name, fn), mask, rejection in checks:
                    if mask[position]:
                        continue
                    if rejection is not None and rejection[0][position]:
                        verdict = framework.filter_failure(name, rejection[1]([position])[0])
                        break
                    status = fn(state, pod, node)
                    if status.code is not Code.SUCCESS:
                        verdict = framework.filter_failure(name, status)
                        break
            prev = b + 1
            if verdict.code is Code.SUCCESS:
                passed.append(b)
                found += 1
                if found >= to_find:
                    end = prev
                    break
            elif verdict.code is Code.ERROR:
                raise _Failure(verdict)
            else:
                rejected.append((b, node.name, verdict))
        if end < 0:
            run = int(goods[num] - goods[prev])
            end = int(np.searchsorted(goods, goods[prev] + to_find - found)) \
                if found + run >= to_find else num
        if to_visit:
            visit_before(end)
        # Known rejections up to the stopping point (in ring order), then merged with
        # the checked ones, so statuses are recorded in the order nodes were visited.
        known_ring = np.flatnonzero(known[:end] >= 0)
        fits = bool(passed) or bool(good[:end].any())
        # (Counted apart only when nothing is recorded yet: a node counts once, and the
        # nominated node may have been rejected already.)
        if fits and not self.record_rejections and not diagnosis.statuses.explicit:
            diagnosis.unrecorded += len(rejected) + len(known_ring)
            known_ring = known_ring[:0]
            rejected = []
        if len(known_ring):
            ks = known_ring + start
            ks[ks >= num] -= num
            positions_k = order[ks]
            by_plugin = known[known_ring]
            statuses: list[Status] = [_SUCCESS] * len(known_ring)
            for i in np.unique(by_plugin).tolist():
                rejection = rejections[i]
                assert rejection is not None
                where = np.flatnonzero(by_plugin == i)
                name = filters[i][0]
                # Plugins hand out few distinct statuses (memoised per reason): decide
                # once per status object what the framework reports.
                reported: dict[int, Status] = {}
                for j, status in zip(where.tolist(), rejection[1](positions_k[where].tolist()),
                                     strict=True):
                    final = reported.get(id(status))
                    if final is None:
                        final = reported[id(status)] = \
                            status if status.plugin and status.is_rejected() else \
                            framework.filter_failure(name, status)
                    statuses[j] = final
            names = pick(self.cluster.node_names(), positions_k)
            if rejected:
                rejected = sorted([*rejected, *zip(known_ring.tolist(), names, statuses,
                                                   strict=True)], key=lambda r: r[0])
            else:
                rejected = list(zip(known_ring.tolist(), names, statuses, strict=True))
        explicit = diagnosis.statuses.explicit
        rejectors = diagnosis.unschedulable_plugins
        if rejected:
            explicit.update([(name, status) for _, name, status in rejected])
            rejectors.update({status.plugin for _, _, status in rejected if status.plugin})
        chosen = good[:end]
        if passed:
            chosen = chosen.copy()
            chosen[passed] = True
        ring = np.flatnonzero(chosen)
        if start:
            ring += start
            ring[ring >= num] -= num
        feasible = pick(nodes, ring)
        positions = order[ring]
        for (name, _), mask, _ in checks:
            hook = framework.vouched(name)
            if hook is None:
                continue
            # Feasible nodes whose Filter call for this plugin was skipped: those its
            # mask vouched for, except nominated ones (checked in full regardless).
            skipped = positions[mask[positions]]
            if nominated:
                skipped = np.array([p for p in skipped.tolist()
                                    if everything[p].name not in nominated], np.int64)
            if len(skipped):
                hook(state, pod, skipped)
        return feasible, positions

    def _find_chunked(self, framework: Framework, state: CycleState, pod: PodInfo,
                      diagnosis: Diagnosis, nodes: list[NodeInfo], start: int, to_find: int,
                      filters: Sequence[tuple[str, FilterFn]]) -> list[NodeInfo]:
        num = len(nodes)
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
                   nodes: list[NodeInfo], positions: Positions | None = None) -> ScoreTable:
        """PreScore and Score over ``nodes``; ``positions`` (their indexes in
        ``node_infos()``) lets plugins score from arrays."""
        if not framework.has_score_plugins():
            return ScoreTable([n.name for n in nodes], {}, [1] * len(nodes))
        status = framework.run_pre_score(state, pod, nodes)
        if not status.is_success():
            raise _Failure(status)
        if positions is None and self.use_masks and len(nodes) >= MASK_MIN_NODES:
            positions = self._positions(nodes)
        scores, status = framework.run_score(state, pod, nodes, positions)
        if not status.is_success():
            raise _Failure(status)
        return scores

    def select_host(self, scores: ScoreTable) -> str:
        """The highest total; each further tie replaces the pick with probability
        1/count (a reservoir sample, as upstream's selectHost)."""
        ties = scores.best()
        if len(ties) == 1:
            return scores.name_at(ties[0])
        # One draw per further tie, in order, as the loop ``if random() * count < 1:
        # selected = index`` makes; the last tie that wins its draw is the pick.
        random = self.rng.random
        draws = np.array([random() for _ in range(len(ties) - 1)])
        wins = np.flatnonzero(draws * np.arange(2, len(ties) + 1) < 1.0)
        selected = ties[int(wins[-1]) + 1] if len(wins) else ties[0]
        return scores.name_at(selected)
