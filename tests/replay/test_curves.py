"""Binning per arrival level (§3.9) and the seed summary."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dralab.replay.curves import bin_curve, summarize_curves


def test_binning_rounds_then_falls_back_to_neighbours() -> None:
    arrived = np.array([0.4, 0.6, 1.4, 3.0])
    values = np.array([1.0, 2.0, 3.0, 4.0])
    curve = bin_curve(arrived, values, np.arange(6))
    assert curve[:5].tolist() == [1.0, 2.5, 3.5, 4.0, 4.0]
    assert math.isnan(curve[5])


def test_summary_mean_and_sample_sd() -> None:
    a = np.zeros(131)
    b = np.zeros(131)
    a[100], b[100] = 4.0, 6.0
    (row,) = summarize_curves([("default", "FGD", [a, b])], levels=(100,))
    assert (row.workload, row.policy, row.arrived_pct, row.seeds) == ("default", "FGD", 100, 2)
    assert row.unalloc_gpu_pct_mean == 5.0
    assert row.unalloc_gpu_pct_sd == pytest.approx(math.sqrt(2))
    assert set(row.as_dict()) == {"workload", "policy", "arrived_pct", "unalloc_gpu_pct_mean",
                                  "unalloc_gpu_pct_sd", "seeds"}
