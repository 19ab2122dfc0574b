"""What an offline packer could do with the pods that arrived: bounds to compare policies with.

The question: of the GPU requests that arrived by the time the arrived request
reaches x % of capacity, how much could *any* placement have allocated? The
unallocated share at x = 100 % is then at least 100 - that / capacity.

Everything here relaxes the problem so that the answers bound every policy:

* CPU, memory and node boundaries are ignored: a pod asking for k whole GPUs
  becomes k separate requests of 1000 milli, each GPU is a bin of 1000 milli.
  GPU models are ignored too, except by the model-aware exact bound.
* Order does not matter: the packer sees all arrived requests at once and may
  drop any.

What each number means:

* ``ceil_gpus``: ceil(total request / 1000), the fewest GPUs that could hold
  everything (volume bound; ignores that shares do not split).
* ``ffd``: first-fit decreasing into the cluster's GPUs, dropping what does not
  fit. A feasible packing of the relaxed problem, so an *upper* bound on its
  optimum unallocated share (and ``ffd_gpus``, the GPUs FFD would need to hold
  everything, an upper bound on the optimal bin count).
* ``exact`` (optional, needs OR-Tools: ``pip install 'dralab[bound]'``): the
  maximum volume that fits, from an arc-flow model of one GPU solved with
  CP-SAT; its best bound is a valid *lower* bound on the unallocated share of
  any policy, online or offline, at that arrival level. ``exact_by_model`` is
  the same with each request confined to GPUs of its allowed models (one graph
  per model); it is tighter where pods carry ``gpu_spec``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import reduce
from typing import Any

import numpy as np
import numpy.typing as npt

from dralab.policies import GPU_MILLI

from .protocol import draw_protocol
from .run import ReplayScenario

__all__ = [
    "ArcFlowResult",
    "BoundReport",
    "arrived_items",
    "arrived_items_by_model",
    "bounds",
    "exact_packing",
    "exact_packing_by_model",
    "ffd_packing",
]

I64 = npt.NDArray[np.int64]


def arrived_items(scenario: ReplayScenario, seed: int, arrived_pct: float = 100.0) -> Counter[int]:
    """Per-GPU requests (milli -> count) of the pods arrived by ``arrived_pct`` % of capacity.

    Uses the run's own arrival order for ``seed`` (the same draws as ``run``).
    Pure.
    """
    rng = np.random.default_rng(seed)
    proto = draw_protocol(scenario.pods, len(scenario.nodes), scenario.capacity_milli, rng,
                          scenario.ratio)
    limit = arrived_pct / 100.0 * scenario.capacity_milli
    total = 0
    items: Counter[int] = Counter()
    for p in proto.order:
        pod = scenario.pods[int(p)]
        if total + pod.gpu_request > limit:
            break
        total += pod.gpu_request
        if pod.num_gpu:
            items[pod.gpu_milli] += pod.num_gpu
    return items


def arrived_items_by_model(scenario: ReplayScenario, seed: int,
                           arrived_pct: float = 100.0) -> Counter[tuple[int, frozenset[str]]]:
    """``arrived_items`` keyed by (per-GPU share, allowed models; empty = any)."""
    rng = np.random.default_rng(seed)
    proto = draw_protocol(scenario.pods, len(scenario.nodes), scenario.capacity_milli, rng,
                          scenario.ratio)
    limit = arrived_pct / 100.0 * scenario.capacity_milli
    total = 0
    items: Counter[tuple[int, frozenset[str]]] = Counter()
    for p in proto.order:
        pod = scenario.pods[int(p)]
        if total + pod.gpu_request > limit:
            break
        total += pod.gpu_request
        if pod.num_gpu:
            items[(pod.gpu_milli, pod.gpu_spec)] += pod.num_gpu
    return items


def ffd_packing(items: Mapping[int, int], bins: int) -> tuple[int, int]:
    """First-fit decreasing of ``items`` into ``bins`` GPUs.

    Returns (volume placed, GPUs first-fit decreasing needs to place everything).
    """
    free = np.full(bins, GPU_MILLI, dtype=np.int64)
    extra: list[int] = []  # bins opened beyond the cluster, for the bin count
    placed = 0
    for size in sorted(items, reverse=True):
        for _ in range(items[size]):
            fits = free >= size
            if fits.any():
                free[int(fits.argmax())] -= size
                placed += size
                continue
            for i, f in enumerate(extra):
                if f >= size:
                    extra[i] -= size
                    break
            else:
                extra.append(GPU_MILLI - size)
    used = int((free < GPU_MILLI).sum())
    return placed, used + len(extra)


@dataclass(frozen=True, slots=True)
class ArcFlowResult:
    """The arc-flow optimum: volume placed by the best solution found, the solver's
    upper bound on it, and whether the solver proved optimality."""

    placed: int
    upper_bound: int
    optimal: bool


ModelItems = Mapping[tuple[int, frozenset[str]], int]


def exact_packing(items: Mapping[int, int], bins: int,
                  time_limit_s: float = 60.0, workers: int = 1) -> ArcFlowResult:
    """Maximum volume of ``items`` (per-GPU share -> count) packable into ``bins`` GPUs.

    ``exact_packing_by_model`` with one model that every item accepts.
    """
    return exact_packing_by_model({(s, frozenset()): n for s, n in items.items()},
                                  {"*": bins}, time_limit_s, workers)


def exact_packing_by_model(items: ModelItems, bins: Mapping[str, int],
                           time_limit_s: float = 60.0, workers: int = 1) -> ArcFlowResult:
    """Maximum volume packable when items may only use GPUs of their allowed models.

    ``items`` maps (per-GPU share, allowed models; empty = any) to a count and
    ``bins`` a model to its number of GPUs. CP-SAT on an arc-flow model per
    model: one GPU is a path from 0 to 1000 milli (in units of the gcd of the
    sizes); an item arc of size s may start only where items of size >= s can
    end, which removes symmetric orderings; loss arcs of one unit close each
    path. Integer assignment variables split each item kind's count over the
    models it accepts. Raises ImportError (with the install hint) if OR-Tools
    is not installed.
    """
    try:
        from ortools.sat.python import cp_model
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the exact bound needs OR-Tools: pip install 'dralab[bound]'") from exc
    kinds = {k: n for k, n in items.items() if n > 0}
    if not kinds:
        return ArcFlowResult(0, 0, True)
    unit = reduce(math.gcd, [*(s for s, _ in kinds), GPU_MILLI])
    width = GPU_MILLI // unit
    model = cp_model.CpModel()
    placed_terms: list[tuple[int, cp_model.IntVar]] = []
    takers: dict[tuple[int, frozenset[str]], list[cp_model.IntVar]] = {k: [] for k in kinds}
    for name, count in bins.items():
        if count <= 0:
            continue
        here = [k for k in kinds if not k[1] or name in k[1]]
        sizes = sorted({s for s, _ in here}, reverse=True)
        if not sizes:
            continue
        arcs = _arc_flow(model, cp_model, sizes, width, unit, count, name)
        for s in sizes:
            split = [model.new_int_var(0, kinds[k], f"y{k[0]}{sorted(k[1])}@{name}")
                     for k in here if k[0] == s]
            for k, var in zip([k for k in here if k[0] == s], split, strict=True):
                takers[k].append(var)
            model.add(sum(split) == sum(arcs[s]))
            placed_terms.extend((s, a) for a in arcs[s])
    for k, vars_ in takers.items():
        if vars_:
            model.add(sum(vars_) <= kinds[k])
    model.maximize(sum(s * a for s, a in placed_terms))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = workers
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(f"CP-SAT found no packing (status {solver.status_name(status)})")
    return ArcFlowResult(placed=round(solver.objective_value),
                         upper_bound=math.floor(solver.best_objective_bound + 1e-6),
                         optimal=status == cp_model.OPTIMAL)


def _arc_flow(model: Any, cp_model: Any, sizes: list[int], width: int, unit: int,
              bins: int, tag: str) -> dict[int, list[Any]]:
    """Add one model's GPU graph carrying ``bins`` paths; returns the item arcs by size."""
    out_arcs: dict[int, list[Any]] = {u: [] for u in range(width + 1)}
    in_arcs: dict[int, list[Any]] = {u: [] for u in range(width + 1)}
    by_size: dict[int, list[Any]] = {s: [] for s in sizes}
    reachable = {0}
    for s in sizes:
        step = s // unit
        frontier = sorted(reachable)
        seen = set(reachable)
        while frontier:
            nxt: list[int] = []
            for u in frontier:
                v = u + step
                if v > width:
                    continue
                arc = model.new_int_var(0, bins, f"{tag}:s{s}@{u}")
                out_arcs[u].append(arc)
                in_arcs[v].append(arc)
                by_size[s].append(arc)
                if v not in seen:
                    seen.add(v)
                    nxt.append(v)
            frontier = nxt
        reachable = seen
    for u in range(width):
        loss = model.new_int_var(0, bins, f"{tag}:loss@{u}")
        out_arcs[u].append(loss)
        in_arcs[u + 1].append(loss)
    model.add(sum(out_arcs[0]) == bins)
    model.add(sum(in_arcs[width]) == bins)
    for u in range(1, width):
        model.add(sum(in_arcs[u]) == sum(out_arcs[u]))
    return by_size


@dataclass(frozen=True, slots=True)
class BoundReport:
    """Bounds for one (workload, seed) at one arrival level; shares in % of capacity."""

    workload: str
    seed: int
    arrived_pct: float
    arrived_gpus: float
    ceil_gpus: int
    ffd_gpus: int
    ffd_unalloc_pct: float
    exact_unalloc_pct: float | None
    exact_optimal: bool | None
    exact_by_model_unalloc_pct: float | None = None
    exact_by_model_optimal: bool | None = None


def bounds(scenario: ReplayScenario, seed: int, arrived_pct: float = 100.0,
           exact: bool = False, time_limit_s: float = 60.0) -> BoundReport:
    """All bounds for the arrivals of ``seed`` up to ``arrived_pct`` (see the module docstring)."""
    items = arrived_items(scenario, seed, arrived_pct)
    capacity = scenario.capacity_milli
    bins = capacity // GPU_MILLI
    volume = sum(s * n for s, n in items.items())
    ffd_placed, ffd_gpus = ffd_packing(items, bins)
    blind: ArcFlowResult | None = None
    aware: ArcFlowResult | None = None
    if exact:
        blind = exact_packing(items, bins, time_limit_s)
        by_model = arrived_items_by_model(scenario, seed, arrived_pct)
        if any(spec for _, spec in by_model):
            per_model: Counter[str] = Counter()
            for n in scenario.nodes:
                per_model[n.model] += n.gpus
            aware = exact_packing_by_model(by_model, per_model, time_limit_s)
        else:
            aware = blind

    def pct(r: ArcFlowResult | None) -> float | None:
        return None if r is None else 100.0 - 100.0 * r.upper_bound / capacity

    return BoundReport(
        workload=scenario.workload, seed=seed, arrived_pct=arrived_pct,
        arrived_gpus=volume / GPU_MILLI, ceil_gpus=-(-volume // GPU_MILLI), ffd_gpus=ffd_gpus,
        ffd_unalloc_pct=100.0 - 100.0 * ffd_placed / capacity,
        exact_unalloc_pct=pct(blind), exact_optimal=None if blind is None else blind.optimal,
        # Both are valid lower bounds; a time-limited solve may leave the tighter one looser.
        exact_by_model_unalloc_pct=(None if aware is None or blind is None
                                    else max(pct(aware) or 0.0, pct(blind) or 0.0)),
        exact_by_model_optimal=None if aware is None else aware.optimal)
