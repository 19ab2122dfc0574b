"""Many runs at once: the (workload x policy x seed) grid, optionally over worker processes.

Each worker prepares a scenario once per workload (``prepare`` caches per
process) and returns whole ``ReplayRun`` records; results come back in grid
order whatever the completion order, so a grid is as reproducible as one run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from itertools import product

from dralab.api.workerpool import map_in_order, worker_pool

from .run import ReplayRun, replay

__all__ = ["Cell", "run_grid"]

Cell = tuple[str, str, int]


def _one(cell: Cell, trace_dir: str | None) -> ReplayRun:
    workload, policy, seed = cell
    return replay(workload, policy, seed, trace_dir)


def run_grid(workloads: Sequence[str], policies: Sequence[str], seeds: Sequence[int],
             trace_dir: str | os.PathLike[str] | None = None,
             workers: int = 1) -> list[ReplayRun]:
    """Runs for every (workload, policy, seed), in that nested order.

    ``workers`` > 1 uses a process pool of that size (the runs are CPU-bound
    Python, so threads would not help). Policies are given by registered name,
    which is what crosses the process boundary.
    """
    cells: list[Cell] = list(product(workloads, policies, seeds))
    path = None if trace_dir is None else os.fspath(trace_dir)
    if workers <= 1:
        return [_one(c, path) for c in cells]
    with worker_pool(workers) as pool:
        return map_in_order(pool, _one, cells, [path] * len(cells))
