"""One replay run of the FGD paper's protocol (§3), and the summary over seeds.

A run = (workload, policy, seed). Pods arrive one at a time in the protocol's
order; each is placed on the best-scoring feasible node (ties: the per-seed node
priority) or fails and is dropped. Nothing departs; there is no clock. After
every arrival the run records the arrived and allocated GPU request and the
cluster fragmentation with respect to the workload's M.

``prepare`` reads the trace (the only I/O); ``run`` is the deterministic core
(same scenario, policy and seed -> same run); ``replay`` is both in one call.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from dralab.policies import (
    NodeArrays,
    PodDemand,
    Policy,
    PolicyContext,
    TargetWorkload,
    fragmentation,
    make_policy,
)

from .curves import LEVELS, SUMMARY_LEVELS, SummaryRow, bin_curve, summarize_curves
from .protocol import COVERAGE, TUNE_RATIO, check_replayable, draw_protocol, target_workload
from .trace.alibaba import (
    DEFAULT_WORKLOAD,
    TraceNode,
    TracePod,
    load_nodes,
    load_pods,
    resolve_trace_dir,
)

__all__ = [
    "SEED0",
    "ReplayRun",
    "ReplayScenario",
    "paper_seeds",
    "prepare",
    "replay",
    "run",
    "summarize",
    "trace_where",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

SEED0 = 42


def paper_seeds(n: int = 10) -> tuple[int, ...]:
    """The paper's seeds: 42, 43, ..., 42 + n - 1."""
    return tuple(range(SEED0, SEED0 + n))


@dataclass(frozen=True, slots=True, eq=False)
class ReplayScenario:
    """Everything a run needs besides policy and seed: cluster, pods, M. Immutable.

    ``demands[i]`` is pod i's request in the state's units and model codes;
    ``template`` is the empty cluster in node-file order; ``target`` is M and
    ``shapes`` the distribution of all shapes (``popular_shapes`` with coverage 1).
    """

    workload: str
    nodes: tuple[TraceNode, ...]
    pods: tuple[TracePod, ...]
    template: NodeArrays
    demands: tuple[PodDemand, ...]
    target: TargetWorkload
    shapes: TargetWorkload
    ratio: float = TUNE_RATIO

    @property
    def context(self) -> PolicyContext:
        """What policies are built from (``make_policy``)."""
        return PolicyContext(self.target, self.shapes, self.template)

    @property
    def capacity_milli(self) -> int:
        return int(self.template.gpu_count.sum()) * 1000

    @classmethod
    def build(cls, workload: str, nodes: Sequence[TraceNode], pods: Sequence[TracePod],
              coverage: float = COVERAGE, ratio: float = TUNE_RATIO,
              where: str | None = None) -> ReplayScenario:
        """A scenario from records (pure).

        ProtocolError (naming ``where``, default the workload) when no run could end:
        no GPU in the nodes, no GPU request among the pods, or more than
        MAX_REPLAY_ARRIVALS arrivals expected (``check_replayable``).
        """
        template = NodeArrays.build([n.cpu_milli for n in nodes], [n.memory_mib for n in nodes],
                                    [n.gpus for n in nodes], [n.model for n in nodes])
        check_replayable(pods, int(template.gpu_count.sum()) * 1000,
                         where or f"workload {workload}", ratio, num_nodes=len(nodes))
        demands = tuple(
            PodDemand(cpu=p.cpu_milli, memory=p.memory_mib, num_gpu=p.num_gpu,
                      gpu_milli=p.gpu_milli,
                      allowed=template.model_mask(p.gpu_spec))
            for p in pods)
        return cls(workload, tuple(nodes), tuple(pods), template, demands,
                   target_workload(pods, template.model_mask, coverage),
                   target_workload(pods, template.model_mask, 1.0), ratio)


def trace_where(workload: str, trace_dir: str | None) -> str:
    """How messages name a workload of a trace directory."""
    return f"{resolve_trace_dir(trace_dir)}: workload {workload}"


@lru_cache(maxsize=8)
def _prepare(workload: str, trace_dir: str | None) -> ReplayScenario:
    return ReplayScenario.build(workload, load_nodes(trace_dir), load_pods(workload, trace_dir),
                          where=trace_where(workload, trace_dir))


def prepare(workload: str = DEFAULT_WORKLOAD,
            trace_dir: str | os.PathLike[str] | None = None) -> ReplayScenario:
    """The scenario of a trace workload, read from ``trace_dir`` (cached per process)."""
    return _prepare(workload, None if trace_dir is None else os.fspath(trace_dir))


@dataclass(frozen=True, slots=True, eq=False)
class ReplayRun:
    """The per-event record of one run. Arrays are aligned by event (arrival) number.

    ``pod``: index into the scenario's pods (copies repeat an index);
    ``node``: index into the scenario's nodes (file order), -1 if the pod failed;
    ``arrived_milli`` / ``used_milli``: cumulative arrived and allocated GPU
    request after the event; ``frag_milli``: cluster fragmentation after it.
    """

    workload: str
    policy: str
    seed: int
    capacity_milli: int
    trace_pods: int
    pod: I64
    node: I64
    arrived_milli: I64
    used_milli: I64
    frag_milli: F64
    _curves: dict[str, F64] = field(default_factory=dict, repr=False)

    @property
    def events(self) -> int:
        return int(self.pod.shape[0])

    @property
    def failed(self) -> int:
        return int((self.node < 0).sum())

    def arrived_pct(self) -> F64:
        return 100.0 * self.arrived_milli / self.capacity_milli

    def unalloc_pct(self) -> F64:
        """Unallocated GPU share, % of capacity: 100 - allocated."""
        return 100.0 - 100.0 * self.used_milli / self.capacity_milli

    def frag_amount_pct(self) -> F64:
        """Fragmentation, % of capacity."""
        return 100.0 * self.frag_milli / self.capacity_milli

    def frag_rate_pct(self) -> F64:
        """Fragmentation, % of the idle GPU share (NaN once nothing is idle)."""
        idle = (self.capacity_milli - self.used_milli).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            out: F64 = np.where(idle > 0, 100.0 * self.frag_milli / idle, np.nan)
        return out

    def curve(self, metric: str = "unalloc") -> F64:
        """The binned curve over arrival levels 0..130 of ``unalloc``, ``frag_amount``
        or ``frag_rate`` (computed once, then memoised)."""
        if metric not in self._curves:
            values = {"unalloc": self.unalloc_pct, "frag_amount": self.frag_amount_pct,
                      "frag_rate": self.frag_rate_pct}.get(metric)
            if values is None:
                raise ValueError(f"unknown metric {metric!r}")
            self._curves[metric] = bin_curve(self.arrived_pct(), values(), LEVELS)
        return self._curves[metric]

    def at(self, arrived_pct: int, metric: str = "unalloc") -> float:
        return float(self.curve(metric)[arrived_pct])


class _ScoreCache:
    """Scores of a cacheable policy per (node, pod request), valid while the node is unchanged.

    Only the node a pod lands on changes, so after the first pods of each request
    shape most scores are reused: this is what makes a run take seconds.
    """

    def __init__(self, num_nodes: int) -> None:
        self._columns: dict[tuple[int, int, int], int] = {}
        self._scores = np.zeros((num_nodes, 16), dtype=np.int64)
        self._versions = np.full((num_nodes, 16), -1, dtype=np.int64)
        self._n = num_nodes

    def _column(self, pod: PodDemand) -> int:
        key = (pod.cpu, pod.num_gpu, pod.gpu_milli)
        col = self._columns.get(key)
        if col is None:
            col = self._columns[key] = len(self._columns)
            if col >= self._scores.shape[1]:
                grow = self._scores.shape[1]
                self._scores = np.hstack([self._scores,
                                          np.zeros((self._n, grow), dtype=np.int64)])
                self._versions = np.hstack([self._versions,
                                            np.full((self._n, grow), -1, dtype=np.int64)])
        return col

    def scores(self, policy: Policy, state: NodeArrays, pod: PodDemand, nodes: I64,
               rng: np.random.Generator) -> I64:
        col = self._column(pod)
        current = state.version[nodes]
        stale = nodes[self._versions[nodes, col] != current]
        if stale.size:
            self._scores[stale, col] = policy.score_nodes(state, pod, stale, rng)
            self._versions[stale, col] = state.version[stale]
        out: I64 = self._scores[nodes, col]
        return out


def run(scenario: ReplayScenario, policy: Policy, seed: int) -> ReplayRun:
    """One run of ``policy`` on ``scenario`` with ``seed`` (§3). Deterministic; no I/O."""
    rng = np.random.default_rng(seed)
    proto = draw_protocol(scenario.pods, len(scenario.nodes), scenario.capacity_milli, rng,
                          scenario.ratio)
    # Lay the nodes out in priority order, so that the first of equal scores
    # (numpy's argmax) is the lowest-ranked node: the protocol's tie-break.
    perm = proto.node_order
    state = scenario.template.take(perm)
    target = scenario.target
    node_frag = fragmentation(state.cpu, state.gpus, state.model, target)
    cache = _ScoreCache(len(state)) if policy.cacheable else None

    n = proto.order.shape[0]
    placed = np.full(n, -1, dtype=np.int64)
    arrived = np.zeros(n, dtype=np.int64)
    used = np.zeros(n, dtype=np.int64)
    frag = np.zeros(n, dtype=np.float64)
    arrived_total = used_total = 0
    frag_total = float(node_frag.sum())
    for e, p in enumerate(proto.order):
        pod = scenario.demands[int(p)]
        arrived_total += pod.gpu_total
        nodes = np.flatnonzero(state.feasible(pod))
        if nodes.size:
            if cache is not None:
                scores = cache.scores(policy, state, pod, nodes, rng)
            else:
                scores = policy.score_nodes(state, pod, nodes, rng)
            w = int(nodes[int(scores.argmax())])
            state.assign(w, pod, policy.choose_gpus(state, w, pod, rng))
            used_total += pod.gpu_total
            before = node_frag[w]
            node_frag[w] = fragmentation(state.cpu[w:w + 1], state.gpus[w:w + 1],
                                         state.model[w:w + 1], target)[0]
            frag_total += node_frag[w] - before
            placed[e] = perm[w]
        arrived[e] = arrived_total
        used[e] = used_total
        frag[e] = frag_total
    return ReplayRun(workload=scenario.workload, policy=policy.name, seed=seed,
                     capacity_milli=scenario.capacity_milli, trace_pods=len(scenario.pods),
                     pod=proto.order, node=placed, arrived_milli=arrived, used_milli=used,
                     frag_milli=frag)


PolicySpec = str | Callable[[PolicyContext], Policy]


def replay(workload: str = DEFAULT_WORKLOAD, policy: PolicySpec = "FGD", seed: int = SEED0,
           trace_dir: str | os.PathLike[str] | None = None) -> ReplayRun:
    """Read the trace (``prepare``) and ``run`` one policy on one seed.

    ``policy`` is a registered name (``make_policy``) or a factory taking the
    scenario's ``PolicyContext``.
    """
    scenario = prepare(workload, trace_dir)
    chosen = make_policy(policy, scenario.context) if isinstance(policy, str) \
        else policy(scenario.context)
    return run(scenario, chosen, seed)


def summarize(runs: Iterable[ReplayRun], levels: Sequence[int] = SUMMARY_LEVELS,
              metric: str = "unalloc") -> list[SummaryRow]:
    """Mean and sample sd over seeds of the binned ``metric`` per (workload, policy) at
    ``levels``; groups in first-seen order."""
    groups: dict[tuple[str, str], list[F64]] = {}
    for r in runs:
        groups.setdefault((r.workload, r.policy), []).append(r.curve(metric))
    return summarize_curves(((w, p, c) for (w, p), c in groups.items()), levels)
