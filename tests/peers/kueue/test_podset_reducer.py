"""Kueue's pod-set reducer table, ported whole.

Source: kubernetes-sigs/kueue at ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/scheduler/flavorassigner/podset_reducer_test.go``, ``TestSearch``: one pytest case
per upstream case (id = the upstream case name). As upstream, ``fits`` sums the counts
it is given and accepts them when the sum is within the case's limit; the search must
return the largest such sum and whether it found one (upstream's zero count when not).
"""

from __future__ import annotations

import pytest

from dralab.queueing.kueue.reducer import reduce_pod_sets

FILE = "pkg/scheduler/flavorassigner/podset_reducer_test.go"

# name -> ((count, minCount or None), ...), countLimit, wantCount, wantFound
CASES: dict[str, tuple[tuple[tuple[int, int | None], ...], int, int, bool]] = {
    "empty": ((), 10, 0, False),
    "partial not available": (((1, None), (2, 2)), 2, 0, False),
    "partial available": (((5, 3), (5, 4), (5, 1), (5, 2)), 15, 15, True),
    "one partial available": (((5, 3), (5, None), (5, None), (5, None)), 19, 19, True),
    "to min": (((5, 3), (5, 4), (5, 1), (5, 2)), 10, 10, True),
    "to max": (((5, 3), (5, 4), (5, 1), (5, 2)), 20, 20, True),
    "no overflow": (tuple((150_000, 1) for _ in range(8)), 150_000, 150_000, True),
    "max pods on 1.27": (((150_000, 1), *((1, None),) * 7), 150_000, 150_000, True),
    "podset with replica count 0": (((0, 0),), 0, 0, False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_search(name: str) -> None:
    """TestSearch: kubernetes-sigs/kueue ff69552e, FILE, case ``name``."""
    pod_sets, limit, want_count, want_found = CASES[name]
    counts = [count for count, _ in pod_sets]
    minimums = [count if low is None else low for count, low in pod_sets]
    tried: list[list[int]] = []

    def fits(current: list[int]) -> tuple[int, bool]:
        tried.append(current)
        total = sum(current)
        return total, total <= limit

    got, found = reduce_pod_sets(counts, minimums, fits)
    assert (got or 0) == want_count
    assert found is want_found
    # Every try stays between the minimums and the counts.
    for current in tried:
        assert all(low <= c <= full for c, low, full in zip(current, minimums, counts,
                                                              strict=True))


def test_case_count() -> None:
    assert len(CASES) == 9
