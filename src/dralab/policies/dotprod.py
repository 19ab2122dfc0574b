"""DotProd (Tetris-style alignment, as in the paper's artifact): paper §6.2.

Node vector v = (free CPU / 128 cores, idle GPU / 8 GPUs) *before* placement,
pod vector u = (CPU / 128 cores, GPU demand / 8 GPUs); score = trunc(100 (1 - v.u / 2)).
The smallest dot product wins: the node whose free resources are smallest
relative to the request, i.e. a packing heuristic. GPUs: the shared rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .base import PolicyVerdict
from .gpus import default_gpus
from .norms import CPU_NORM, GPU_NORM
from .state import NodeArrays, PodDemand, PolicyNode

__all__ = ["DotProdPolicy"]

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class DotProdPolicy:
    name: str = "DotProd"
    cacheable: bool = True

    def place(self, node: PolicyNode, pod: PodDemand, rng: np.random.Generator) -> PolicyVerdict:
        dot = (node.cpu / CPU_NORM) * (pod.cpu / CPU_NORM) \
            + (node.idle / GPU_NORM) * (pod.gpu_total / GPU_NORM)
        return PolicyVerdict(int(100 * (1 - dot / 2)), default_gpus(node.gpus, pod))

    def score_nodes(self, state: NodeArrays, pod: PodDemand, nodes: I64,
                    rng: np.random.Generator) -> I64:
        cpu = state.cpu[nodes] / CPU_NORM
        idle = state.gpus[nodes].sum(axis=1) / GPU_NORM
        dot = cpu * (pod.cpu / CPU_NORM) + idle * (pod.gpu_total / GPU_NORM)
        scores: I64 = np.trunc(100 * (1 - dot / 2)).astype(np.int64)
        return scores

    def choose_gpus(self, state: NodeArrays, node: int, pod: PodDemand,
                    rng: np.random.Generator) -> tuple[int, ...]:
        return default_gpus(state.view(node).gpus, pod)
