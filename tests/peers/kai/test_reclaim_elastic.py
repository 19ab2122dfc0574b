"""KAI Scheduler's reclaim_elastic_test.go, ported case by case (11 cases).

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
pkg/scheduler/actions/reclaim/reclaim_elastic_test.go, TestHandleElasticReclaim.

Each case is upstream's table entry (tables/reclaim/reclaim_elastic_test.json, written by
port_tables.py), run as one session of the reclaim action (reclaim.New().Execute(ssn)), and
compared as test_utils.MatchExpectedAndRealTasks compares (harness.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from . import harness

TABLE = "reclaim/reclaim_elastic_test.json"


@pytest.mark.parametrize("case", harness.params(TABLE))
def test_case(case: dict[str, Any]) -> None:
    harness.check_case(case)
