"""The report's CSV files as text: samples, pods and summary, each with a leading ``mode``.

Cells: None and NaN are empty, booleans ``true``/``false``, floats in Python's
shortest round-trip form, text that a spreadsheet would take for a formula
prefixed with ``'`` (``csvtext``), lines end in ``\\n``. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any

from dralab.sim.results import SUMMARY_KEYS, PodRecord, Sample, SimulationResult

from .csvtext import csv_text
from .numbers import NUMBER_KEYS
from .spread import SeedRuns

__all__ = ["PODS_COLUMNS", "SAMPLES_COLUMNS", "SEEDS_COLUMNS", "SUMMARY_COLUMNS", "pods_csv",
           "samples_csv", "seeds_csv", "summary_csv"]

SAMPLES_COLUMNS: tuple[str, ...] = ("mode", *(f.name for f in fields(Sample)))
PODS_COLUMNS: tuple[str, ...] = ("mode", *(f.name for f in fields(PodRecord)), "wait")
SUMMARY_COLUMNS: tuple[str, ...] = ("mode", "label", *SUMMARY_KEYS)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "" if not math.isfinite(value) else repr(value)
    return str(value)


def _csv(columns: Sequence[str], rows: Iterable[dict[str, Any]]) -> str:
    return csv_text(columns, ([_cell(row[c]) for c in columns] for row in rows))


def samples_csv(result: SimulationResult) -> str:
    """Every mode's timeline, one row per sample (columns ``SAMPLES_COLUMNS``)."""
    return _csv(SAMPLES_COLUMNS, ({"mode": m.mode, **r} for m in result.modes
                                  for r in m.samples_records()))


def pods_csv(result: SimulationResult) -> str:
    """Every mode's pods, one row per pod (columns ``PODS_COLUMNS``)."""
    return _csv(PODS_COLUMNS, ({"mode": m.mode, **r} for m in result.modes
                               for r in m.pods_records()))


def summary_csv(result: SimulationResult) -> str:
    """One row per mode with its summary numbers (columns ``SUMMARY_COLUMNS``)."""
    return _csv(SUMMARY_COLUMNS, result.summary_records())


POOLS_COLUMNS: tuple[str, ...] = ("mode", "pool", "t", "nodes", "price_per_hour")


def pools_csv(result: SimulationResult) -> str | None:
    """Every autoscaled pool's Ready nodes at each change, per mode (columns
    ``POOLS_COLUMNS``); None when no pool was autoscaled."""
    if all(m.autoscaling is None for m in result.modes):
        return None
    rows = ({"mode": m.mode, "pool": pool, "t": t, "nodes": n,
             "price_per_hour": p.price_per_hour}
            for m in result.modes if m.autoscaling is not None
            for pool, p in sorted(m.autoscaling.pools.items()) for t, n in p.nodes)
    return _csv(POOLS_COLUMNS, rows)


SEEDS_COLUMNS: tuple[str, ...] = ("seed", "mode", "label", *NUMBER_KEYS)


def seeds_csv(runs: SeedRuns) -> str:
    """One row per seed and mode with every compared number (columns ``SEEDS_COLUMNS``;
    a number undefined for the run, e.g. admission wait without queueing, is empty)."""
    return _csv(SEEDS_COLUMNS, ({"seed": seed, "mode": mode, "label": label, **numbers}
                                for seed, row in zip(runs.seeds, runs.numbers, strict=True)
                                for (mode, label), numbers in zip(runs.modes, row,
                                                                  strict=True)))
