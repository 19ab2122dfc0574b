"""KAI Scheduler's allocate_test.go, ported case by case (23 cases).

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
pkg/scheduler/actions/allocate/allocate_test.go, TestHandleAllocation,
TestHandleElasticJobCommitFailure.

Each case is upstream's table entry (tables/allocate/allocate_test.json, written by
port_tables.py), run as one session of the allocate action (allocate.New().Execute(ssn)),
and compared as test_utils.MatchExpectedAndRealTasks compares (harness.py).

TestHandleElasticJobCommitFailure is not a table case; it is listed and skipped (not
applicable offline).
"""

from __future__ import annotations

from typing import Any

import pytest

from . import harness

TABLE = "allocate/allocate_test.json"


@pytest.mark.parametrize("case", harness.params(TABLE))
def test_case(case: dict[str, Any]) -> None:
    harness.check_case(case)
