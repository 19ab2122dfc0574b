"""Scenario sweeps: every scenario x seed through ``simulate``, summarised per scenario and mode.

The parent process parses the scenario files and ships ``Scenario`` values (not
paths) to the workers, so a Dask worker on another machine needs no copy of the
files; a scenario whose fleet is given by ``fleet.file`` still reads that file
where it runs. Each task returns only the per-mode summary numbers.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .scenario import Scenario
from .simulate import simulate

__all__ = ["ScenarioRun", "ScenarioSummary", "run_scenario", "summarize_scenarios"]


@dataclass(frozen=True, slots=True)
class ScenarioRun:
    """The summary numbers of each mode of one (scenario, seed) simulation."""

    scenario: str
    seed: int
    modes: tuple[tuple[str, dict[str, float]], ...]


def run_scenario(item: tuple[str, Scenario, int]) -> ScenarioRun:
    """Simulate ``scenario`` with ``seed``, reported under ``label`` (module-level, so
    executors can ship it)."""
    label, scenario, seed = item
    result = simulate(scenario.with_seed(seed))
    return ScenarioRun(label, seed,
                       tuple((m.mode, {k: float(v) for k, v in m.summary().items()})
                             for m in result.modes))


@dataclass(frozen=True, slots=True)
class ScenarioSummary:
    """Mean and sample sd over seeds of every summary number of one scenario and mode."""

    scenario: str
    mode: str
    seeds: int
    mean: dict[str, float]
    sd: dict[str, float]

    def as_json(self) -> dict[str, Any]:
        def clean(x: float) -> float | None:
            return x if math.isfinite(x) else None

        return {"scenario": self.scenario, "mode": self.mode, "seeds": self.seeds,
                "metrics": {k: {"mean": clean(v), "sd": clean(self.sd[k])}
                            for k, v in self.mean.items()}}


def _stats(values: Sequence[float]) -> tuple[float, float]:
    # NaN (e.g. a wait percentile with no started pod) is left out, not propagated:
    # one seed without data should not blank the whole cell.
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return math.nan, math.nan
    sd = statistics.stdev(finite) if len(finite) > 1 else math.nan
    return statistics.fmean(finite), sd


def summarize_scenarios(runs: Iterable[ScenarioRun]) -> list[ScenarioSummary]:
    """Per (scenario, mode), in first-seen order."""
    groups: dict[tuple[str, str], list[dict[str, float]]] = {}
    for r in runs:
        for mode, numbers in r.modes:
            groups.setdefault((r.scenario, mode), []).append(numbers)
    out: list[ScenarioSummary] = []
    for (scenario, mode), rows in groups.items():
        keys = list(rows[0])
        stats = {k: _stats([row[k] for row in rows]) for k in keys}
        out.append(ScenarioSummary(scenario, mode, len(rows),
                                   {k: m for k, (m, _) in stats.items()},
                                   {k: s for k, (_, s) in stats.items()}))
    return out
