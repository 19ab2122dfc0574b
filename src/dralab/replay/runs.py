"""Replay grids as plain data: one picklable task per (workload, policy, seed), and the summary.

``run_cell`` is what a worker executes (a process-pool worker or a Dask
worker): it prepares the scenario once per process (cached), runs one policy on
one seed and returns only the binned curves (``RunCurves``, a few KB) instead
of the per-event arrays, so results stay cheap to ship between machines.

``ReplayResults`` collects the curves of a grid and derives everything the CLI
prints and writes: the mean +- sd table at the summary levels (the issue's JSON
contract), the CSV rows, and median / quartile bands for the plots.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from typing import Any, NamedTuple

import numpy as np

from dralab.api.errors import InputError
from dralab.policies import POLICIES, make_policy

from .curves import SUMMARY_LEVELS, SummaryRow, summarize_curves
from .run import ReplayScenario, prepare, run, trace_where
from .trace.alibaba import WORKLOADS, load_nodes, load_pods, resolve_trace_dir

__all__ = [
    "METRICS",
    "ReplayResults",
    "RunCurves",
    "RunSpec",
    "check_names",
    "check_traces",
    "grid",
    "run_cell",
]

# The binned curves each run keeps: unallocated GPU, fragmentation amount and rate.
METRICS: tuple[str, ...] = ("unalloc", "frag_amount", "frag_rate")


class RunSpec(NamedTuple):
    """One cell of a grid. ``node_limit`` keeps the first rows of the node list and
    ``pod_limit`` an evenly spaced sample of the pods: for quick tests only, the
    published protocol uses everything."""

    workload: str
    policy: str
    seed: int
    trace_dir: str | None = None
    node_limit: int | None = None
    pod_limit: int | None = None


@dataclass(frozen=True, slots=True)
class RunCurves:
    """The outcome of one run: counts, wall time, and each metric binned over 0..130 %."""

    workload: str
    policy: str
    seed: int
    events: int
    failed: int
    seconds: float
    curves: dict[str, tuple[float, ...]]


@lru_cache(maxsize=8)
def _scenario(workload: str, trace_dir: str | None, node_limit: int | None,
              pod_limit: int | None) -> ReplayScenario:
    if node_limit is None and pod_limit is None:
        return prepare(workload, trace_dir)
    pods = load_pods(workload, trace_dir)
    if pod_limit is not None:
        # Every k-th pod rather than the first rows: some files are sorted so that
        # their first rows are all CPU-only pods, which would never reach 130 %.
        pods = pods[::max(1, len(pods) // pod_limit)][:pod_limit]
    kept = ", ".join(f"{n} {what}" for n, what in ((node_limit, "nodes"), (pod_limit, "pods"))
                     if n is not None)
    return ReplayScenario.build(workload, load_nodes(trace_dir, node_limit), pods,
                          where=f"{trace_where(workload, trace_dir)} (limited to {kept})")


def run_cell(spec: RunSpec) -> RunCurves:
    """Run one cell (module-level, so process pools and Dask can ship it)."""
    started = time.perf_counter()
    sc = _scenario(spec.workload, spec.trace_dir, spec.node_limit, spec.pod_limit)
    r = run(sc, make_policy(spec.policy, sc.context), spec.seed)
    curves = {m: tuple(float(v) for v in r.curve(m)) for m in METRICS}
    return RunCurves(spec.workload, spec.policy, spec.seed, r.events, r.failed,
                     time.perf_counter() - started, curves)


def check_names(workloads: Sequence[str], policies: Sequence[str],
                trace_dir: str | None) -> None:
    """InputError (one line) for an unknown workload or policy or a missing trace dir,
    before any worker starts."""
    for w in workloads:
        if w not in WORKLOADS:
            raise InputError(f"unknown workload {w!r}; known: {', '.join(WORKLOADS)}")
    for p in policies:
        if p not in POLICIES:
            raise InputError(f"unknown policy {p!r}; known: {', '.join(POLICIES)}, all")
    resolve_trace_dir(trace_dir)


def check_traces(workloads: Sequence[str], trace_dir: str | None,
                 node_limit: int | None = None, pod_limit: int | None = None) -> None:
    """Read and check every workload's files (and the node list) before any run starts.

    LoadError or ProtocolError (one line naming file, line and column, or the
    workload) for a file that cannot be replayed. The prepared scenarios stay in
    this process's cache, which in-process runs and forked workers reuse.
    """
    for w in workloads:
        _scenario(w, trace_dir, node_limit, pod_limit)


def grid(workloads: Sequence[str], policies: Sequence[str], seeds: Sequence[int],
         trace_dir: str | None = None, node_limit: int | None = None,
         pod_limit: int | None = None) -> list[RunSpec]:
    """Every (workload, policy, seed) cell, in that nested order."""
    return [RunSpec(w, p, s, trace_dir, node_limit, pod_limit)
            for w, p, s in product(workloads, policies, seeds)]


@dataclass(frozen=True, slots=True)
class Band:
    """Median and 25-75 % quantiles over seeds of one metric per arrival level 0..130."""

    median: tuple[float, ...]
    q25: tuple[float, ...]
    q75: tuple[float, ...]


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


class ReplayResults:
    """The runs of a grid, grouped by (workload, policy) in first-seen order."""

    def __init__(self, runs: Iterable[RunCurves], levels: Sequence[int] = SUMMARY_LEVELS
                 ) -> None:
        self.runs = list(runs)
        self.levels = tuple(levels)
        self.groups: dict[tuple[str, str], list[RunCurves]] = {}
        for r in self.runs:
            self.groups.setdefault((r.workload, r.policy), []).append(r)

    @property
    def workloads(self) -> list[str]:
        return list(dict.fromkeys(w for w, _ in self.groups))

    def policies(self, workload: str) -> list[str]:
        return [p for w, p in self.groups if w == workload]

    def rows(self) -> list[SummaryRow]:
        """Unallocated GPU mean and sample sd over seeds per (workload, policy, level)."""
        return summarize_curves(
            ((w, p, [np.asarray(r.curves["unalloc"]) for r in rs])
             for (w, p), rs in self.groups.items()), self.levels)

    def band(self, workload: str, policy: str, metric: str) -> Band:
        stacked = np.vstack([np.asarray(r.curves[metric])
                             for r in self.groups[(workload, policy)]])
        # nanpercentile: the fragmentation rate is NaN once nothing is idle; an
        # all-NaN column stays NaN (numpy warns, the plot simply leaves a gap).
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            q = np.nanpercentile(stacked, [25, 50, 75], axis=0)
        return Band(tuple(q[1]), tuple(q[0]), tuple(q[2]))

    def seconds(self) -> float:
        """Summed wall time of all runs (CPU time the grid cost, not elapsed time)."""
        return math.fsum(r.seconds for r in self.runs)

    def results_json(self) -> list[dict[str, Any]]:
        """The ``results`` list of the JSON contract (NaN sd -> null)."""
        return [{"policy": r.policy, "arrived_pct": r.arrived_pct,
                 "unalloc_gpu_pct_mean": _finite(r.unalloc_gpu_pct_mean),
                 "unalloc_gpu_pct_sd": _finite(r.unalloc_gpu_pct_sd), "seeds": r.seeds}
                for r in self.rows()]

    def rows_json(self) -> list[dict[str, Any]]:
        """Like ``results_json`` with the workload in every row (sweeps span workloads)."""
        return [{"workload": r.workload, **d}
                for r, d in zip(self.rows(), self.results_json(), strict=True)]
