"""Several seeds of one scenario: each mode's numbers per seed, their mean and spread,
and whether a difference between two modes is beyond that spread.

Every mode of one seed runs on the same arrivals and run times (``jobs.draw_arrivals``),
so modes are compared seed by seed: the difference of a number between two modes is
taken per seed, then its mean and sample standard deviation over the seeds. A
difference is *beyond the spread* when it has the same sign in every seed and its mean
is more than twice the standard deviation of the per-seed differences; with fewer than
``MIN_SEEDS`` seeds nothing is (one or two runs cannot tell a difference from noise).
With five seeds, one sign in all of them happens by chance 2 times in 32 when the
modes do not differ; the second condition keeps one outlying seed from carrying it.
Pure.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from dralab.sim.results import SimulationResult

from .metrics import MetricSpec
from .numbers import NUMBER_KEYS, mode_numbers

__all__ = ["MIN_SEEDS", "Difference", "SeedRuns", "Spread", "seed_runs"]

MIN_SEEDS = 3


@dataclass(frozen=True, slots=True)
class Spread:
    """Mean, sample sd (NaN with one value), min and max of a number's finite values."""

    mean: float
    sd: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        finite = [v for v in values if math.isfinite(v)]
        if not finite:
            return cls(math.nan, math.nan, math.nan, math.nan, 0)
        sd = statistics.stdev(finite) if len(finite) > 1 else math.nan
        return cls(statistics.fmean(finite), sd, min(finite), max(finite), len(finite))


@dataclass(frozen=True, slots=True)
class Difference:
    """``other - base`` of one number, per seed: its ``spread`` and whether it is
    ``beyond`` the seeds' spread (see the module docstring)."""

    key: str
    spread: Spread
    beyond: bool

    @property
    def sign(self) -> int:
        m = self.spread.mean
        return 0 if not math.isfinite(m) or m == 0 else (1 if m > 0 else -1)


@dataclass(frozen=True, slots=True)
class SeedRuns:
    """Per seed (in run order) and mode (in comparison order), ``mode_numbers``.

    ``modes``: (mode name, label) pairs; ``numbers[i][j]`` the numbers of seed
    ``seeds[i]`` in mode ``modes[j]``.
    """

    scenario: str
    seeds: tuple[int, ...]
    modes: tuple[tuple[str, str], ...]
    numbers: tuple[tuple[dict[str, float], ...], ...]
    cost_unit: str = "pricePerHour units"   # what costs are in (AutoscalingMetrics)

    def label(self, spec: MetricSpec) -> str:
        """``spec``'s label, with the unit of costs for a cost."""
        return f"{spec.label} ({self.cost_unit})" if spec.kind == "money" else spec.label

    def values(self, mode: int, key: str) -> list[float]:
        return [row[mode][key] for row in self.numbers]

    def spread(self, mode: int, key: str) -> Spread:
        return Spread.of(self.values(mode, key))

    def difference(self, base: int, other: int, key: str) -> Difference:
        pairs = [(row[base][key], row[other][key]) for row in self.numbers]
        deltas = [b - a for a, b in pairs if math.isfinite(a) and math.isfinite(b)]
        spread = Spread.of(deltas)
        beyond = False
        if spread.n >= MIN_SEEDS and spread.n == len(self.seeds):
            one_sign = all(d > 0 for d in deltas) or all(d < 0 for d in deltas)
            sd = spread.sd if math.isfinite(spread.sd) else 0.0
            beyond = one_sign and abs(spread.mean) > 2 * sd
        return Difference(key, spread, beyond)

    def defined(self, key: str) -> bool:
        """Whether ``key`` has a value in some mode and seed (rows without are hidden)."""
        return any(math.isfinite(v) for row in self.numbers for n in row for v in (n[key],))


def seed_runs(results: Sequence[SimulationResult]) -> SeedRuns:
    """The ``SeedRuns`` of ``results`` (one per seed, the same scenario and modes).
    Raises ValueError for no result or results whose modes differ."""
    if not results:
        raise ValueError("no simulation result")
    modes = tuple((m.mode, m.label) for m in results[0].modes)
    for r in results[1:]:
        if tuple((m.mode, m.label) for m in r.modes) != modes:
            raise ValueError(f"seed {r.seed} ran other modes than seed {results[0].seed}")
    numbers = tuple(tuple(mode_numbers(m) for m in r.modes) for r in results)
    assert all(set(n) == set(NUMBER_KEYS) for row in numbers for n in row)
    units = [m.autoscaling.cost_unit for m in results[0].modes if m.autoscaling is not None]
    return SeedRuns(results[0].scenario, tuple(r.seed for r in results), modes, numbers,
                    *units[:1])
