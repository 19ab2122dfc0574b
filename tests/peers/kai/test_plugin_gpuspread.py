"""KAI's gpuspread plugin table, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/gpuspread/gpuspread_test.go`` ("GpuSpread scoring"): the GPU
order score of one GPU of a one-GPU node (the memory of every GPU ``totalMem``, used on
GPU "1000" ``usedMem``) with the plugin alone on (``placement.gpu_score``). A score
error (GPU memory below KAI's 100 units: "node <node> has invalid GPU memory") is
``None`` here: sortGPUs leaves that GPU out of the order, which is the decision.
"""

from __future__ import annotations

import pytest
from tests.peers.kai.plugin_helpers import Cite, only, usage

from dralab.queueing.kai.placement import WHOLE_GPU, gpu_score

# (name, line, totalMem, usedMem, gpuIdx, expected score or None for the error)
GPUSPREAD = [
    ("Whole GPU", 35, 1024, 0, WHOLE_GPU, 1.0),
    ("Free GPU", 41, 1024, 0, "1000", 1.0),
    ("Half allocated GPU", 47, 1024, 512, "1000", 0.5),
    ("Fully allocated GPU", 53, 1024, 1024, "1000", 0.0),
    ("Corrupted GPU memory", 59, 0, 0, "1000", None),
    ("Unsupported GPU memory", 66, 50, 0, "1000", None),
]


def _check(plugin: str, cite: Cite, total: int, used: int, gpu: str,
           expected: float | None) -> None:
    groups = {} if gpu == WHOLE_GPU else {gpu: used}
    node = usage("node", gpus=1, gpu_memory=total, shared_used=groups)
    assert gpu_score(node, gpu, only(plugin)) == expected, str(cite)


@pytest.mark.parametrize(("name", "line", "total", "used", "gpu", "expected"), GPUSPREAD,
                         ids=[c[0] for c in GPUSPREAD])
def test_gpuspread(name: str, line: int, total: int, used: int, gpu: str,
                   expected: float | None) -> None:
    _check("gpuspread", Cite("gpuspread/gpuspread_test.go", "GpuSpread scoring", name, line),
           total, used, gpu, expected)
