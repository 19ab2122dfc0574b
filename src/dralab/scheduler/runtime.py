"""The framework runtime: one profile's plugins per extension point, and the loops
that run them with kube-scheduler's semantics.

Two optional plugin methods are fast paths, not extension points; each must give
the same answer as the Protocol methods it replaces:

* ``filter_relevant(pod) -> bool`` on a Filter plugin: False means its Filter would
  accept every node for this pod, so the cycle leaves it out.
* ``filter_nodes(state, pod, nodes) -> list[Status]`` on a Filter plugin: Filter for
  each of ``nodes`` (the same statuses, in order) in one call.
* ``score_nodes(state, pod, nodes) -> (scores, Status)`` on a Score plugin: the
  normalised scores of all ``nodes`` at once (Score then NormalizeScore).

Five more let the cycle skip per-node calls altogether; positions are indexes
into ``ClusterState.node_infos()``:

* ``filter_mask(state, pod) -> bool array | None`` on a Filter plugin, called
  after PreFilter: True at a position promises that Filter would return Success
  on that node in this cycle (False promises nothing: Filter is then called).
  The cycle only reads it, and it must not change while the cycle runs (a
  plugin hands out a copy of anything its own Filter calls update). None: no
  promise at all this cycle.
* ``filter_rejections(state, pod) -> (bool array, statuses) | None`` on the same
  plugin: True at a position promises that Filter would reject that node;
  ``statuses(positions)`` gives the rejections for a list of such positions.
  The same rules as for the mask.
* ``filter_vouched(state, pod, positions)`` on the same plugin: the feasible
  nodes (an int64 array of positions) whose Filter call its mask made
  unnecessary, so the plugin can record what Filter would have recorded in the
  cycle state.
* ``filter_visits(state, pod) -> (bool array, visit) | None`` on the same plugin:
  True at a position promises that Filter would return Success there but has a
  side effect that must happen in the order nodes are visited (e.g. drawing
  from the run's random generator); ``visit(positions)`` (an int64 array) does what
  Filter would do at those positions, in that order. The cycle calls it, in
  visiting order, for the nodes it lets through this way. Same rules as for the
  mask; True never overlaps the mask or the rejections.
* ``score_positions(state, pod, positions) -> (int64 array, Status) | None`` on a
  Score plugin: what ``score_nodes`` gives for the nodes at ``positions``; None
  when it cannot answer this way (``score_nodes`` or ``score`` is used).

Two protocols let preemption remember its dry runs (``plugins/dryruns.py``):
``DryRunKey`` on a Filter plugin names what, besides the node's own pods, its
answer for a pod depends on; ``DryRunInputs`` reports which nodes' answers
outside state (allocated devices) may have changed. ``dry_run_key``,
``dry_run_cursors``, ``dry_run_changed`` and ``dry_run_local`` below combine them
over the profile's Filter plugins; a Filter plugin without ``DryRunKey`` that
runs for a pod leaves that pod's dry runs unremembered.

``Framework`` is built by ``dralab.scheduler.profile`` and owns no scheduling
state: everything a cycle learns lives in its ``CycleState``. Each ``run_*``
method documents what it returns; none raises for "does not fit". A plugin that
raises is a bug and propagates.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dralab.cluster import ClusterState, NodeInfo, PodInfo

from .framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BatchFilter,
    BatchScore,
    BindPlugin,
    Code,
    CycleState,
    DryRunInputs,
    DryRunKey,
    FilterMask,
    FilterPlugin,
    FilterRejections,
    FilterRelevance,
    FilterVisits,
    FilterVouched,
    NodeScore,
    PermitPlugin,
    Plugin,
    PositionScore,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    Status,
    WaitingPodHandle,
)

__all__ = ["EXTENSION_POINTS", "Framework", "NodePluginScores", "ScoreTable", "implements"]

_SUCCESS = Status.success()

# Config key -> the Protocol a plugin must implement to sit at that point.
EXTENSION_POINTS: Mapping[str, type] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
}


def implements(plugin: Plugin, point: str) -> bool:
    return isinstance(plugin, EXTENSION_POINTS[point])


@dataclass(slots=True)
class NodePluginScores:
    """One feasible node's weighted scores: plugin -> score x weight, and their sum."""

    name: str
    scores: dict[str, int]
    total: int


class ScoreTable:
    """Weighted scores of the scored nodes: one column per plugin (in ``names`` order)
    and the per-node totals.

    Scores that plugins gave as arrays stay arrays until ``names``, ``columns`` or
    ``totals`` is read (most cycles read only which node has the best total:
    ``best``), and the names are taken from the nodes when first asked for."""

    __slots__ = ("_columns", "_names", "_nodes", "_totals")

    def __init__(self, names: Sequence[str] | None, columns: dict[str, Any],
                 totals: Any, nodes: Sequence[NodeInfo] | None = None) -> None:
        self._names = list(names) if names is not None else None
        self._nodes = nodes
        self._columns = columns  # plugin -> list[int] or int64 array
        self._totals = totals    # list[int] or int64 array

    @property
    def names(self) -> list[str]:
        if self._names is None:
            assert self._nodes is not None
            self._names = [n.name for n in self._nodes]
        return self._names

    def name_at(self, index: int) -> str:
        if self._names is None and self._nodes is not None:
            return self._nodes[index].name
        return self.names[index]

    @property
    def columns(self) -> dict[str, list[int]]:
        columns = self._columns
        for name, column in columns.items():
            if isinstance(column, np.ndarray):
                columns[name] = column.tolist()
        return columns

    @property
    def totals(self) -> list[int]:
        if isinstance(self._totals, np.ndarray):
            self._totals = self._totals.tolist()
        return self._totals  # type: ignore[no-any-return]

    def best(self) -> list[int]:
        """Indexes of the nodes with the highest total, in order."""
        totals = self._totals
        if isinstance(totals, np.ndarray):
            return np.flatnonzero(totals == totals.max()).tolist()
        top = max(totals)
        return [i for i, t in enumerate(totals) if t == top]

    def per_node(self) -> list[NodePluginScores]:
        columns, totals = self.columns, self.totals
        return [NodePluginScores(name, {p: c[i] for p, c in columns.items()}, totals[i])
                for i, name in enumerate(self.names)]


def _merge(a: PreFilterResult | None, b: PreFilterResult | None) -> PreFilterResult | None:
    # kube-scheduler intersects: each plugin's node set is a hard restriction.
    if a is None or a.node_names is None:
        return b if b is not None and b.node_names is not None else None
    if b is None or b.node_names is None:
        return a
    return PreFilterResult(a.node_names & b.node_names)


def _invalid_score(name: str, column: Sequence[Any]) -> Status:
    bad = next(v for v in column if not MIN_NODE_SCORE <= v <= MAX_NODE_SCORE)
    return Status.error(name, f"plugin \"{name}\" returns an invalid score {bad}, it should in "
                              f"the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after "
                              "normalizing")


MAX_PERMIT_WAIT = 15 * 60.0  # kube-scheduler's maxTimeout for a Permit Wait


class Framework:
    """One profile: ordered plugins per extension point plus score weights.

    Lists are fixed at construction. ``plugins`` maps every instantiated plugin by
    name (the same instance serves all of its points).
    """

    def __init__(self, profile_name: str, plugins: Mapping[str, Plugin],
                 points: Mapping[str, Sequence[str]], weights: Mapping[str, int],
                 percentage_of_nodes_to_score: int | None) -> None:
        self.profile_name = profile_name
        self.plugins = dict(plugins)
        self.points = {p: tuple(points.get(p, ())) for p in EXTENSION_POINTS}
        self.weights = dict(weights)
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.cluster: ClusterState | None = None  # set by the profile builder

        def of(point: str) -> list[tuple[str, Any]]:
            out: list[tuple[str, Any]] = []
            for name in self.points[point]:
                plugin = self.plugins[name]
                if not implements(plugin, point):
                    raise TypeError(f"plugin {name!r} does not implement {point}")
                out.append((name, plugin))
            return out

        self.pre_enqueue: list[tuple[str, PreEnqueuePlugin]] = of("preEnqueue")
        sorters: list[tuple[str, QueueSortPlugin]] = of("queueSort")
        self.queue_sort: QueueSortPlugin | None = sorters[0][1] if sorters else None
        self.pre_filter: list[tuple[str, PreFilterPlugin]] = of("preFilter")
        self.filter: list[tuple[str, FilterPlugin]] = of("filter")
        self.post_filter: list[tuple[str, PostFilterPlugin]] = of("postFilter")
        self.pre_score: list[tuple[str, PreScorePlugin]] = of("preScore")
        self.score: list[tuple[str, ScorePlugin]] = of("score")
        self.reserve: list[tuple[str, ReservePlugin]] = of("reserve")
        self.permit: list[tuple[str, PermitPlugin]] = of("permit")
        self.pre_bind: list[tuple[str, PreBindPlugin]] = of("preBind")
        self.bind: list[tuple[str, BindPlugin]] = of("bind")
        # Bound methods resolved once: the filter loop runs per node, per pod.
        self._filter_fns: tuple[tuple[str, Callable[[CycleState, PodInfo, NodeInfo], Status]],
                                ...] = tuple((n, p.filter) for n, p in self.filter)
        self._extensions: tuple[tuple[str, PreFilterExtensions], ...] = tuple(
            (n, ext) for n, p in self.pre_filter
            if (ext := p.pre_filter_extensions()) is not None)
        # Optional fast paths (framework.py declares them), resolved once: a Filter
        # plugin with ``filter_relevant(pod) -> bool`` is left out of a cycle where it
        # would accept every node anyway, and so on.
        self._relevance: tuple[tuple[str, Callable[[PodInfo], bool]], ...] = tuple(
            (n, p.filter_relevant) for n, p in self.filter if isinstance(p, FilterRelevance))
        self._batch_filters: dict[str, Callable[[CycleState, PodInfo, Sequence[NodeInfo]],
                                                 list[Status]]] = {
            n: p.filter_nodes for n, p in self.filter if isinstance(p, BatchFilter)}
        self._masks: dict[str, Callable[[CycleState, PodInfo], Any]] = {
            n: p.filter_mask for n, p in self.filter if isinstance(p, FilterMask)}
        self._rejections: dict[str, Callable[[CycleState, PodInfo], Any]] = {
            n: p.filter_rejections for n, p in self.filter if isinstance(p, FilterRejections)}
        self._vouched: dict[str, Callable[[CycleState, PodInfo, Any], None]] = {
            n: p.filter_vouched for n, p in self.filter if isinstance(p, FilterVouched)}
        self._visits: dict[str, Callable[[CycleState, PodInfo], Any]] = {
            n: p.filter_visits for n, p in self.filter if isinstance(p, FilterVisits)}
        self._position_scores: dict[str, Callable[[CycleState, PodInfo, Any],
                                                  tuple[Any, Status] | None]] = {
            n: p.score_positions for n, p in self.score if isinstance(p, PositionScore)}
        self._batch_scores: dict[str, Callable[[CycleState, PodInfo, Sequence[NodeInfo]],
                                               tuple[list[int], Status]]] = {
            n: p.score_nodes for n, p in self.score if isinstance(p, BatchScore)}
        # Preemption's remembered dry runs (plugins/dryruns.py): every Filter plugin of a
        # cycle must give a key; some also report changes outside the nodes' pods.
        self._dry_run_keys: dict[str, Callable[[CycleState, PodInfo], Hashable | None]] = {
            n: p.dry_run_key for n, p in self.filter if isinstance(p, DryRunKey)}
        self._dry_run_inputs: tuple[tuple[str, DryRunInputs], ...] = tuple(
            (n, p) for n, p in self.filter if isinstance(p, DryRunInputs))
        # Pods preemption nominated to a node, by node name; shared with the Scheduler.
        self.nominated: dict[str, list[PodInfo]] = {}
        # The Scheduler's pods waiting at Permit (bound by the Scheduler; None for a
        # framework run without one). Plugins reach it through ``Handle.waiting_pods``.
        self.waiting_pods: Iterable[WaitingPodHandle] | None = None

    # --- queueing -------------------------------------------------------------------
    def has_score_plugins(self) -> bool:
        return bool(self.score)

    def has_filter_plugins(self) -> bool:
        return bool(self.filter)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter)

    def run_pre_enqueue(self, pod: PodInfo) -> Status:
        """Success, or the first rejection (with its plugin): the pod stays out of the queue."""
        for name, plugin in self.pre_enqueue:
            status = plugin.pre_enqueue(pod)
            if not status.is_success():
                return status.with_plugin(name)
        return _SUCCESS

    # --- filtering ------------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                       ) -> tuple[PreFilterResult | None, Status, frozenset[str]]:
        """Run every PreFilter plugin; returns (merged node restriction, status, plugins).

        Skip adds the plugin to ``state.skip_filter``. UnschedulableAndUnresolvable
        stops at once; Unschedulable is remembered and the rest still run (preemption
        needs their state). ``plugins`` is the set of rejecting plugins on rejection,
        else the plugins that restricted the node set.
        """
        result: PreFilterResult | None = None
        restricting: set[str] = set()
        rejected: Status | None = None
        for name, plugin in self.pre_filter:
            r, status = plugin.pre_filter(state, pod, cluster)
            code = status.code
            if code is Code.SKIP:
                state.skip_filter.add(name)
                continue
            if code is not Code.SUCCESS:
                status = status.with_plugin(name)
                if code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, status, frozenset({name})
                if code is Code.UNSCHEDULABLE:
                    rejected = rejected or status
                    continue
                return None, Status.error(name, f"running PreFilter plugin \"{name}\": "
                                                f"{status.message}"), frozenset()
            if r is not None and r.node_names is not None:
                restricting.add(name)
                result = _merge(result, r)
                if result is not None and result.node_names is not None \
                        and not result.node_names:
                    names = sorted(restricting)
                    msg = (f"node(s) didn't satisfy plugin {names[0]}" if len(names) == 1 else
                           f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] "
                           "simultaneously")
                    return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,)), \
                        frozenset(restricting)
        if rejected is not None:
            return None, rejected, frozenset({rejected.plugin})
        return result, _SUCCESS, frozenset(restricting)

    def filters_for(self, state: CycleState, pod: PodInfo | None = None
                    ) -> tuple[tuple[str, Callable[[CycleState, PodInfo, NodeInfo], Status]], ...]:
        """The Filter plugins of this cycle, in order: those PreFilter did not skip and,
        when ``pod`` is given, whose ``filter_relevant(pod)`` (if they have one) is true."""
        skip = state.skip_filter
        fns = self._filter_fns if not skip else tuple(
            f for f in self._filter_fns if f[0] not in skip)
        if pod is None or not self._relevance:
            return fns
        irrelevant = {name for name, check in self._relevance if not check(pod)}
        return fns if not irrelevant else tuple(f for f in fns if f[0] not in irrelevant)

    def batch_filter(self, name: str
                     ) -> Callable[[CycleState, PodInfo, Sequence[NodeInfo]], list[Status]] | None:
        """The plugin's ``filter_nodes`` fast path, if it has one."""
        return self._batch_filters.get(name)

    def filter_masks(self, state: CycleState, pod: PodInfo,
                     filters: Sequence[tuple[str, Any]]) -> list[Any] | None:
        """Each of ``filters``' ``filter_mask`` for this cycle, or None unless every one
        of them gave a mask (one plugin without a promise means calling Filter on
        every node anyway)."""
        masks: list[Any] = []
        for name, _ in filters:
            fn = self._masks.get(name)
            mask = fn(state, pod) if fn is not None else None
            if mask is None:
                return None
            masks.append(mask)
        return masks

    def filter_rejections(self, state: CycleState, pod: PodInfo,
                          filters: Sequence[tuple[str, Any]]) -> list[Any]:
        """Each of ``filters``' ``filter_rejections`` for this cycle (None where a
        plugin has none or makes no promise)."""
        out: list[Any] = []
        for name, _ in filters:
            fn = self._rejections.get(name)
            out.append(fn(state, pod) if fn is not None else None)
        return out

    def filter_visits(self, state: CycleState, pod: PodInfo,
                      filters: Sequence[tuple[str, Any]]) -> list[Any]:
        """Each of ``filters``' ``filter_visits`` for this cycle (None where a plugin
        has none or makes no promise)."""
        visits = self._visits
        if not visits:
            return [None] * len(filters)
        out: list[Any] = []
        for name, _ in filters:
            fn = visits.get(name)
            out.append(fn(state, pod) if fn is not None else None)
        return out

    def vouched(self, name: str) -> Callable[[CycleState, PodInfo, Any], None] | None:
        """The plugin's ``filter_vouched`` hook, if it has one."""
        return self._vouched.get(name)

    def dry_run_key(self, state: CycleState, pod: PodInfo) -> tuple[Hashable, ...] | None:
        """The keys of this cycle's Filter plugins (``DryRunKey``), or None when one of
        them has none: then what Filter answers on a node may depend on more than the
        node, and preemption's dry runs are not remembered."""
        keys: list[Hashable] = [frozenset(state.skip_filter)]
        for name, _ in self.filters_for(state, pod):
            fn = self._dry_run_keys.get(name)
            key = fn(state, pod) if fn is not None else None
            if key is None:
                return None
            keys.append((name, key))
        return tuple(keys)

    def dry_run_cursors(self) -> tuple[object, ...]:
        """Now, for every Filter plugin with inputs outside the nodes' pods."""
        return tuple(p.dry_run_cursor() for _, p in self._dry_run_inputs)

    def dry_run_changed(self, cursors: tuple[object, ...]) -> set[str] | None:
        """The nodes those plugins' inputs changed for since ``cursors`` (None: any)."""
        changed: set[str] = set()
        for (_, plugin), cursor in zip(self._dry_run_inputs, cursors, strict=True):
            nodes = plugin.dry_run_changed(cursor)
            if nodes is None:
                return None
            changed |= nodes
        return changed

    def dry_run_local(self, state: CycleState) -> bool:
        """After a dry run with ``state``: did every plugin's answer depend on the node only?"""
        return all(p.dry_run_local(state) for _, p in self._dry_run_inputs)

    def run_filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Success, the first rejection (with its plugin), or Error."""
        for name, fn in self.filters_for(state, pod):
            status = fn(state, pod, node)
            if status.code is not Code.SUCCESS:
                return self.filter_failure(name, status)
        return _SUCCESS

    def run_filter_with_nominated(self, state: CycleState, pod: PodInfo,
                                  node: NodeInfo) -> Status:
        """``run_filter`` that also counts pods nominated to ``node`` with priority >= the
        pod's as present (on clones), so a pod does not take room preemption freed
        for another. The pod must fit both with and without them."""
        waiting = self.nominated.get(node.name)
        others = [p for p in waiting if p is not pod and p.priority >= pod.priority] \
            if waiting else None
        if not others:
            return self.run_filter(state, pod, node)
        with_state = state.clone()
        with_node = node.clone()
        for other in others:
            with_node.add_pod(other)
            status = self.run_pre_filter_extension_add_pod(with_state, pod, other, with_node)
            if not status.is_success():
                return status
        status = self.run_filter(with_state, pod, with_node)
        if not status.is_success():
            return status
        return self.run_filter(state, pod, node)

    def run_filter_all(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> list[Status]:
        """Every Filter plugin's rejection on ``node`` (not stopping at the first); for
        ``explain``. Empty when the node fits."""
        out: list[Status] = []
        for name, fn in self.filters_for(state):
            status = fn(state, pod, node)
            if status.code is not Code.SUCCESS:
                out.append(self.filter_failure(name, status))
        return out

    @staticmethod
    def filter_failure(name: str, status: Status) -> Status:
        """A Filter plugin's non-success as the framework reports it: rejections carry
        the plugin's name; anything else becomes Error."""
        if status.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
            return status if status.plugin else status.with_plugin(name)
        return Status.error(name, f"running \"{name}\" filter plugin: {status.message}")

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: PodInfo,
                                         to_add: PodInfo, node: NodeInfo) -> Status:
        for name, ext in self._extensions:
            if name in state.skip_filter:
                continue
            status = ext.add_pod(state, pod, to_add, node)
            if not status.is_success():
                return Status.error(name, f"running AddPod on PreFilter plugin \"{name}\": "
                                          f"{status.message}")
        return _SUCCESS

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: PodInfo,
                                            to_remove: PodInfo, node: NodeInfo) -> Status:
        for name, ext in self._extensions:
            if name in state.skip_filter:
                continue
            status = ext.remove_pod(state, pod, to_remove, node)
            if not status.is_success():
                return Status.error(name, f"running RemovePod on PreFilter plugin \"{name}\": "
                                          f"{status.message}")
        return _SUCCESS

    def run_post_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState,
                        statuses: Mapping[str, Status]
                        ) -> tuple[PostFilterResult | None, Status]:
        """First Success wins; UnschedulableAndUnresolvable or Error stop; otherwise
        Unschedulable with every plugin's reasons (the first rejecting plugin named)."""
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for name, plugin in self.post_filter:
            r, status = plugin.post_filter(state, pod, cluster, statuses)
            if status.is_success():
                return r, status
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, status.with_plugin(name)
            if not status.is_rejected():
                return None, Status.error(name, status.message)
            if r is not None and r.nominated_node_name is not None:
                result = r
            reasons.extend(status.reasons)
            rejector = rejector or name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    # --- scoring --------------------------------------------------------------------
    def run_pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        """Success or Error; Skip adds the plugin to ``state.skip_score``."""
        for name, plugin in self.pre_score:
            status = plugin.pre_score(state, pod, nodes)
            if status.code is Code.SKIP:
                state.skip_score.add(name)
            elif not status.is_success():
                return Status.error(name, f"running PreScore plugin \"{name}\": {status.message}")
        return _SUCCESS

    def run_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo],
                  positions: Any = None) -> tuple[ScoreTable, Status]:
        """Weighted scores per node (in ``nodes`` order), or Error.

        Each plugin scores every node, NormalizeScore maps its column into
        [0, 100], then scores are multiplied by the plugin's weight and summed.
        A plugin with ``score_nodes`` scores all nodes in one call instead, and
        with ``positions`` (the nodes' indexes in ``node_infos()``, an int64
        array) one with ``score_positions`` answers with an array.
        """
        count = len(nodes)
        columns: dict[str, Any] = {}
        table = ScoreTable(None, columns, [0] * count, nodes)
        skip = state.skip_score
        # Array columns are summed as arrays (scores <= 100 times weights <= 100: exact
        # in int64); once a plugin answers with a list, the sums go on in Python
        # numbers exactly as they always did.
        totals: Any = np.zeros(count, np.int64) if positions is not None else table.totals
        for name, plugin in self.score:
            if name in skip:
                continue
            column: Any = None
            by_position = self._position_scores.get(name) if positions is not None else None
            if by_position is not None:
                answer = by_position(state, pod, positions)
                if answer is not None:
                    column, status = answer
                    if status.code is not Code.SUCCESS:
                        return table, Status.error(name, f"running Score plugin \"{name}\": "
                                                         f"{status.message}")
            if column is None:
                batch = self._batch_scores.get(name)
                if batch is not None:
                    column, status = batch(state, pod, nodes)
                    if status.code is not Code.SUCCESS:
                        return table, Status.error(name, f"running Score plugin \"{name}\": "
                                                         f"{status.message}")
                else:
                    column, status = self._score_one_by_one(name, plugin, state, pod, nodes)
                    if status.code is not Code.SUCCESS:
                        return table, status
            weight = self.weights.get(name, 1)
            if isinstance(column, np.ndarray):
                if len(column) != count:
                    raise ValueError(f"Score plugin {name!r} gave {len(column)} scores "
                                     f"for {count} nodes")
                if count and (int(column.max()) > MAX_NODE_SCORE
                              or int(column.min()) < MIN_NODE_SCORE):
                    return table, _invalid_score(name, column.tolist())
                values = column * weight if weight != 1 else column
                if isinstance(totals, np.ndarray):
                    columns[name] = values
                    totals = totals + values
                    continue
                column = columns[name] = values.tolist()
            else:
                if column and (max(column) > MAX_NODE_SCORE or min(column) < MIN_NODE_SCORE):
                    return table, _invalid_score(name, column)
                if weight != 1:
                    column = [v * weight for v in column]
                columns[name] = column
                if isinstance(totals, np.ndarray):
                    totals = totals.tolist()
            totals = [t + v for t, v in zip(totals, column, strict=True)]
        table._totals = totals
        return table, _SUCCESS

    @staticmethod
    def _score_one_by_one(name: str, plugin: ScorePlugin, state: CycleState, pod: PodInfo,
                          nodes: Sequence[NodeInfo]) -> tuple[list[int], Status]:
        fn = plugin.score
        column: list[int] = []
        for node in nodes:
            value, status = fn(state, pod, node)
            if status.code is not Code.SUCCESS:
                return [], Status.error(name, f"running Score plugin \"{name}\": "
                                              f"{status.message}")
            column.append(value)
        ext = plugin.score_extensions()
        if ext is not None:
            listed = [NodeScore(n.name, v) for n, v in zip(nodes, column, strict=True)]
            status = ext.normalize_score(state, pod, listed)
            if not status.is_success():
                return [], Status.error(name, f"running Normalize on Score plugin "
                                              f"\"{name}\": {status.message}")
            column = [s.score for s in listed]
        return column, _SUCCESS

    # --- reserving and binding ------------------------------------------------------
    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Success, or the first non-success (with its plugin); the caller unreserves."""
        for name, plugin in self.reserve:
            status = plugin.reserve(state, pod, node_name)
            if not status.is_success():
                return status.with_plugin(name)
        return _SUCCESS

    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Every Reserve plugin's Unreserve, in reverse order."""
        for _, plugin in reversed(self.reserve):
            plugin.unreserve(state, pod, node_name)

    def run_permit(self, state: CycleState, pod: PodInfo, node_name: str
                   ) -> tuple[Status, dict[str, float]]:
        """Success, a rejection or Error (with the plugin); with Success, the plugins
        that said Wait and their timeouts (capped at 15 minutes, as upstream)."""
        waits: dict[str, float] = {}
        for name, plugin in self.permit:
            status = plugin.permit(state, pod, node_name)
            if status.code is Code.SUCCESS:
                continue
            if status.code is Code.WAIT:
                waits[name] = min(max(status.timeout, 0.0), MAX_PERMIT_WAIT)
                continue
            if status.is_rejected():
                return status.with_plugin(name), {}
            return Status.error(name, f"running Permit plugin \"{name}\": {status.message}"), {}
        return _SUCCESS, waits

    def run_pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        for name, plugin in self.pre_bind:
            status = plugin.pre_bind(state, pod, node_name)
            if status.code is Code.SKIP:
                continue
            if not status.is_success():
                return Status.error(name, f"running PreBind plugin \"{name}\": {status.message}")
        return _SUCCESS

    def run_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """The first Bind plugin that does not Skip decides."""
        for name, plugin in self.bind:
            status = plugin.bind(state, pod, node_name)
            if status.code is Code.SKIP:
                continue
            if not status.is_success():
                return Status.error(name, f"running Bind plugin \"{name}\": {status.message}")
            return status
        return Status.error("", "no bind plugin bound the pod")

    def plugin_names(self) -> Iterable[str]:
        return self.plugins.keys()
