"""Counts in a scenario that create pods are bounded before a run (issue 29).

A scenario's own counts (podsPerJob, arrivals, arrivalRate) are bounded by
MAX_SCENARIO_PODS (``tests/sim/test_limits.py``). A Workload in the ``spec.queueing``
Kueue file is not one of the run's jobs: its pods are never built, whatever its count,
even under KueueDRADeviceFeasibility, so an int32 count neither errors nor grows the run.
"""

from __future__ import annotations

import resource
from pathlib import Path
from typing import Any

import dralab
from cputime import cpu_budget

DATA = Path(__file__).parent.parent / "data" / "sim" / "queueing"
HUGE = """---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: huge, namespace: team-a}
spec:
  queueName: training
  podSets:
  - name: main
    count: 2147483647
    template:
      spec:
        containers:
        - {name: c, image: x, resources: {requests: {cpu: "1"}}}
"""


def test_a_kueue_file_workload_with_an_int32_count_builds_no_pods(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text((DATA / "kueue-feasibility.yaml").read_text() + HUGE)
    kind: dict[str, Any] = {"cpu": "8", "memory": "64Gi", "devices": {"type": "gpu", "count": 8},
                            "duration": {"distribution": "fixed", "mean": "1h"}}
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with cpu_budget(10.0):
        s = dralab.scenario({
            "duration": "3h", "compare": ["dra"], "sampleInterval": "10m",
            "queueing": {"kueue": "k.yaml"},
            "fleet": {"spec": {"pools": [{"name": "h100", "count": 1, "cpu": "64",
                                          "memory": "512Gi",
                                          "gpu": {"model": "h100-80gb-sxm", "count": 8}}]}},
            "workload": [{"name": "small", "arrivals": ["1s"], "queue": "team-b/training",
                          **kind}]}, base_dir=tmp_path)
        [mode] = dralab.simulate(s).modes
    assert [(p.key, p.start) for p in mode.pods] == [("sim/small-00000-0", 1.0)]
    # ru_maxrss is in KiB on Linux: the run grew this process by less than 200 MiB.
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 * 1024
