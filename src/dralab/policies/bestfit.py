"""BestFit: least weighted leftover after placement wins (paper §6.5).

raw = trunc(100 (1 - [0.5 (cpu_free - r) / 128 cores + 0.5 (idle - D) / 8 GPUs])).
The artifact rescales raw scores min-max to 0..100 across feasible nodes. Raw
scores span at most 0..100, so that rescale is strictly increasing on them and
never changes the winner or the ties; the kernels return the raw score and leave
the rescale to a NormalizeScore step if an engine wants 0..100. GPUs: the shared rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .base import PolicyVerdict
from .gpus import default_gpus
from .norms import CPU_NORM, GPU_NORM
from .state import NodeArrays, PodDemand, PolicyNode

__all__ = ["BestFitPolicy"]

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class BestFitPolicy:
    name: str = "BestFit"
    cacheable: bool = True

    def place(self, node: PolicyNode, pod: PodDemand, rng: np.random.Generator) -> PolicyVerdict:
        left = 0.5 * (node.cpu - pod.cpu) / CPU_NORM + 0.5 * (node.idle - pod.gpu_total) / GPU_NORM
        return PolicyVerdict(int(100 * (1 - left)), default_gpus(node.gpus, pod))

    def score_nodes(self, state: NodeArrays, pod: PodDemand, nodes: I64,
                    rng: np.random.Generator) -> I64:
        cpu_left = state.cpu[nodes] - pod.cpu
        gpu_left = state.gpus[nodes].sum(axis=1) - pod.gpu_total
        left = 0.5 * cpu_left / CPU_NORM + 0.5 * gpu_left / GPU_NORM
        scores: I64 = np.trunc(100 * (1 - left)).astype(np.int64)
        return scores

    def choose_gpus(self, state: NodeArrays, node: int, pod: PodDemand,
                    rng: np.random.Generator) -> tuple[int, ...]:
        return default_gpus(state.view(node).gpus, pod)
