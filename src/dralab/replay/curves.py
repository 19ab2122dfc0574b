"""Per-event metrics, binned curves and the seed summary (paper §3.9-3.10, §4).

Binning: for each integer arrival level x = 0..130 (% of cluster GPU capacity),
a run's value is the mean over the events whose arrived request rounds to x;
if no event does, the mean over events within x +- 1; if none of those either,
NaN. Across seeds the summary gives the mean and the sample standard deviation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["LEVELS", "SUMMARY_LEVELS", "SummaryRow", "bin_curve", "summarize_curves"]

F64 = npt.NDArray[np.float64]

LEVELS = np.arange(0, 131)
SUMMARY_LEVELS: tuple[int, ...] = (90, 95, 100, 110, 130)


def bin_curve(arrived_pct: F64, values: F64, levels: npt.NDArray[np.int64] = LEVELS) -> F64:
    """The binned curve of ``values`` over ``levels`` (see the module docstring). Pure."""
    rounded = np.rint(arrived_pct).astype(np.int64)
    out = np.full(levels.shape, np.nan)
    for i, x in enumerate(levels):
        hit = rounded == x
        if not hit.any():
            hit = np.abs(arrived_pct - x) <= 1.0
        if hit.any():
            out[i] = float(values[hit].mean())
    return out


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One line of the summary table: a metric at one arrival level over seeds."""

    workload: str
    policy: str
    arrived_pct: int
    unalloc_gpu_pct_mean: float
    unalloc_gpu_pct_sd: float
    seeds: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize_curves(groups: Iterable[tuple[str, str, Sequence[F64]]],
                     levels: Sequence[int] = SUMMARY_LEVELS) -> list[SummaryRow]:
    """Rows per (workload, policy, level) from each group's per-seed curves over ``LEVELS``.

    The sd is the sample sd (ddof 1); NaN with a single seed.
    """
    rows: list[SummaryRow] = []
    for workload, policy, curves in groups:
        stacked = np.vstack(curves)
        for x in levels:
            col = stacked[:, int(x)]
            sd = float(col.std(ddof=1)) if len(col) > 1 else math.nan
            rows.append(SummaryRow(workload, policy, int(x), float(col.mean()), sd, len(col)))
    return rows
