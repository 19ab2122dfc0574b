"""KAI's action benchmarks, listed so the ported tally accounts for every test file
under pkg/scheduler/actions.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/actions/benchmark_test.go`` and
``pkg/scheduler/actions/integration_tests/reclaim/reclaim_benchmark_test.go``
(Apache-2.0): Go benchmarks (``func Benchmark...(b *testing.B)``) that time the actions
on generated clusters and assert nothing about what is decided, so each is listed as
"not a decision". dralab's own timing of its KAI session is in benchmarks/.
"""

from __future__ import annotations

import pytest

RECLAIM = "integration_tests/reclaim/reclaim_benchmark_test.go"

BENCHMARKS: list[tuple[str, str, int]] = [
    ("benchmark_test.go", "BenchmarkAllocateAction_SmallCluster", 31),
    ("benchmark_test.go", "BenchmarkAllocateAction_MediumCluster", 36),
    ("benchmark_test.go", "BenchmarkAllocateAction_LargeCluster", 41),
    ("benchmark_test.go", "BenchmarkReclaimAction_SmallCluster", 60),
    ("benchmark_test.go", "BenchmarkReclaimAction_MediumCluster", 65),
    ("benchmark_test.go", "BenchmarkPreemptAction_SmallCluster", 84),
    ("benchmark_test.go", "BenchmarkPreemptAction_MediumCluster", 89),
    ("benchmark_test.go", "BenchmarkConsolidationAction_SmallCluster", 108),
    ("benchmark_test.go", "BenchmarkConsolidationAction_MediumCluster", 113),
    ("benchmark_test.go", "BenchmarkFullSchedulingCycle_SmallCluster", 132),
    ("benchmark_test.go", "BenchmarkFullSchedulingCycle_MediumCluster", 137),
    ("benchmark_test.go", "BenchmarkFullSchedulingCycle_LargeCluster", 142),
    ("benchmark_test.go", "BenchmarkManyQueues_MediumCluster", 169),
    ("benchmark_test.go", "BenchmarkGangScheduling_MediumCluster", 184),
    (RECLAIM, "BenchmarkReclaimLargeJobs_10Node", 26),
    (RECLAIM, "BenchmarkReclaimLargeJobs_50Node", 30),
    (RECLAIM, "BenchmarkReclaimLargeJobs_100Node", 34),
    (RECLAIM, "BenchmarkReclaimLargeJobs_200Node", 38),
    (RECLAIM, "BenchmarkReclaimLargeJobs_500Node", 42),
    (RECLAIM, "BenchmarkReclaimLargeJobs_1000Node", 46),
]


@pytest.mark.parametrize("case", BENCHMARKS, ids=[c[1] for c in BENCHMARKS])
def test_action_benchmark(case: tuple[str, str, int]) -> None:
    path, function, line = case
    pytest.skip(f"not a decision: a Go benchmark timing the actions, it asserts no outcome "
                f"(pkg/scheduler/actions/{path}:{line} {function})")
