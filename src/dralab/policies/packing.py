"""GpuPacking: fill partly used GPUs first, then used nodes, then small idle nodes (paper §6.4).

For a GPU pod, with the GPUs the shared rule would pick:

* node GPU-idle (every GPU completely free; CPU-only pods do not count):
  max(33 - n, n) with n the node's GPU count (8 -> 25, 4 -> 29, 2 -> 31, 1 -> 32);
* some picked GPU is completely free: max(50 - u, 33), u = completely free GPUs used;
* otherwise (it fits into partly used GPUs):
  max(100 - trunc(sum_picked trunc(g 100 / 1000) / 10), 50), with g the picked
  GPU's free share before placement: the fuller, the higher.

CPU-only pods score 0 everywhere (the tie-break decides). GPUs: the shared rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .base import PolicyVerdict
from .gpus import best_fit_free, default_gpus
from .state import GPU_MILLI, NodeArrays, PodDemand, PolicyNode

__all__ = ["GpuPackingPolicy", "packing_score"]

I64 = npt.NDArray[np.int64]


def packing_score(gpus: tuple[int, ...], pod: PodDemand) -> int:
    if pod.num_gpu == 0:
        return 0
    if all(g == GPU_MILLI for g in gpus):
        return max(33 - len(gpus), len(gpus))
    picked = [gpus[i] for i in default_gpus(gpus, pod)]
    fresh = sum(1 for g in picked if g == GPU_MILLI)
    if fresh:
        return max(50 - fresh, 33)
    return max(100 - sum(g * 100 // GPU_MILLI for g in picked) // 10, 50)


@dataclass(frozen=True, slots=True)
class GpuPackingPolicy:
    name: str = "GpuPacking"
    cacheable: bool = True

    def place(self, node: PolicyNode, pod: PodDemand, rng: np.random.Generator) -> PolicyVerdict:
        return PolicyVerdict(packing_score(node.gpus, pod), default_gpus(node.gpus, pod))

    def score_nodes(self, state: NodeArrays, pod: PodDemand, nodes: I64,
                    rng: np.random.Generator) -> I64:
        if pod.num_gpu == 0:
            return np.zeros(len(nodes), dtype=np.int64)
        gpus = state.gpus[nodes]
        count = state.gpu_count[nodes]
        idle_node = gpus.sum(axis=1) == count * GPU_MILLI
        if pod.sharing:
            _, free = best_fit_free(gpus, pod.gpu_milli)
            used = np.where(free == GPU_MILLI, 49,
                            np.maximum(100 - (free * 100 // GPU_MILLI) // 10, 50))
        else:
            # Whole GPUs are always completely free ones.
            used = np.full(len(nodes), max(50 - pod.num_gpu, 33))
        return np.where(idle_node, np.maximum(33 - count, count), used).astype(np.int64)

    def choose_gpus(self, state: NodeArrays, node: int, pod: PodDemand,
                    rng: np.random.Generator) -> tuple[int, ...]:
        return default_gpus(state.view(node).gpus, pod)
