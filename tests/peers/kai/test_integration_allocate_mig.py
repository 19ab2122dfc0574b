"""KAI Scheduler's allocateMIG_test.go, ported case by case (6 cases).

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
pkg/scheduler/actions/integration_tests/allocate/allocateMIG_test.go,
TestHandleMIGAllocation.

Each case is upstream's table entry
(tables/integration_tests/allocate/allocateMIG_test.json, written by port_tables.py), run as
upstream's integration runner (integration_tests_utils.RunTests): rounds of all five
actions, each on a session rebuilt from the previous round's outcome, and compared as
test_utils.MatchExpectedAndRealTasks compares (harness.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from . import harness

TABLE = "integration_tests/allocate/allocateMIG_test.json"


@pytest.mark.parametrize("case", harness.params(TABLE))
def test_case(case: dict[str, Any]) -> None:
    harness.check_case(case)
