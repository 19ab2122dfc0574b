"""Packing bounds: first-fit decreasing, the exact arc-flow optimum, the per-run report."""

from __future__ import annotations

import pytest

from dralab.replay.bounds import arrived_items, bounds, exact_packing, ffd_packing
from dralab.replay.run import prepare


def test_ffd_by_hand() -> None:
    # 600 600 | 500 500 do not fit the 400 left | 400 400 fill both: 2000 placed;
    # holding everything takes one more GPU (500 + 500).
    assert ffd_packing({600: 2, 500: 2, 400: 2}, 2) == (2000, 3)


def test_exact_beats_ffd_where_ffd_is_greedy() -> None:
    pytest.importorskip("ortools")
    items = {500: 2, 400: 2, 300: 2}
    # FFD: 500+400, 500+400 -> 1800; best: 500+500, 400+300+300 -> 2000.
    assert ffd_packing(items, 2)[0] == 1800
    best = exact_packing(items, 2)
    assert (best.placed, best.upper_bound, best.optimal) == (2000, 2000, True)
    assert exact_packing({600: 2, 500: 2, 400: 2}, 3).placed == 3000
    assert exact_packing({}, 3).placed == 0


def test_default_trace_bounds_at_100_percent() -> None:
    sc = prepare("default")
    items = arrived_items(sc, 42)
    volume = sum(s * n for s, n in items.items())
    assert 6_200_000 < volume <= sc.capacity_milli
    report = bounds(sc, 42, exact=False)
    assert report.ceil_gpus == 6212
    assert report.ffd_gpus > 6212                 # shares do not combine perfectly
    assert 2.0 < report.ffd_unalloc_pct < 5.0
    assert report.exact_unalloc_pct is None


def test_default_trace_exact_bound() -> None:
    pytest.importorskip("ortools")
    report = bounds(prepare("default"), 42, exact=True)
    assert report.exact_unalloc_pct is not None and report.exact_optimal
    assert 2.0 < report.exact_unalloc_pct <= report.ffd_unalloc_pct
