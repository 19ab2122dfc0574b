"""GpuClustering: keep pods of one GPU class together (paper §6.3).

Classes: sharing one GPU, or k whole GPUs (``gpu_class``). With the bit set of
classes of the GPU pods already on a node and q = trunc(25 (8000 - idle) / 8000):
only this pod's class -> 75 + q; this class and others -> 50 + q; no GPU pod ->
25 + q; only other classes -> q. q uses the *absolute* idle share, so smaller
nodes get a larger q. CPU-only pods score 0 everywhere (the tie-break decides).
GPUs: the shared rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .base import PolicyVerdict
from .gpus import default_gpus
from .norms import GPU_NORM
from .state import NodeArrays, PodDemand, PolicyNode

__all__ = ["GpuClusteringPolicy", "clustering_score"]

I64 = npt.NDArray[np.int64]


def clustering_score(classes: int, idle: int, pod: PodDemand) -> int:
    if pod.num_gpu == 0:
        return 0
    q = 25 * (GPU_NORM - idle) // GPU_NORM
    mine = 1 << pod.klass
    if classes == mine:
        return 75 + q
    if classes & mine:
        return 50 + q
    if classes == 0:
        return 25 + q
    return q


@dataclass(frozen=True, slots=True)
class GpuClusteringPolicy:
    name: str = "GpuClustering"
    cacheable: bool = True

    def place(self, node: PolicyNode, pod: PodDemand, rng: np.random.Generator) -> PolicyVerdict:
        return PolicyVerdict(clustering_score(node.classes, node.idle, pod),
                         default_gpus(node.gpus, pod))

    def score_nodes(self, state: NodeArrays, pod: PodDemand, nodes: I64,
                    rng: np.random.Generator) -> I64:
        if pod.num_gpu == 0:
            return np.zeros(len(nodes), dtype=np.int64)
        q = 25 * (GPU_NORM - state.gpus[nodes].sum(axis=1)) // GPU_NORM
        classes = state.classes[nodes]
        mine = 1 << pod.klass
        base = np.select([classes == mine, (classes & mine) != 0, classes == 0],
                         [75, 50, 25], default=0)
        scores: I64 = (base + q).astype(np.int64)
        return scores

    def choose_gpus(self, state: NodeArrays, node: int, pod: PodDemand,
                    rng: np.random.Generator) -> tuple[int, ...]:
        return default_gpus(state.view(node).gpus, pod)
