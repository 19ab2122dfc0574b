"""Random: any feasible node, uniformly; a sharing pod gets a uniformly chosen GPU that fits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .base import MAX_SCORE, PolicyVerdict
from .gpus import lowest_free
from .state import NodeArrays, PodDemand, PolicyNode

__all__ = ["RandomPolicy", "random_gpus"]

I64 = npt.NDArray[np.int64]


def random_gpus(gpus: Sequence[int], pod: PodDemand, rng: np.random.Generator) -> tuple[int, ...]:
    """Whole GPUs: the lowest free ones; a sharing pod: uniform among GPUs with enough share."""
    if not pod.sharing:
        return lowest_free(gpus, pod.num_gpu)
    fitting = [i for i, g in enumerate(gpus) if g >= pod.gpu_milli]
    return (fitting[int(rng.integers(len(fitting)))],) if fitting else ()


@dataclass(frozen=True, slots=True)
class RandomPolicy:
    """Paper §6.1. Not cacheable: every call draws from ``rng``.

    ``score_nodes`` gives 100 to one uniformly drawn node and 0 to the others, so
    the caller's tie-break never matters. ``place`` (one node at a time, as a
    Score plugin sees it) returns a uniform random score instead.
    """

    name: str = "Random"
    cacheable: bool = False

    def place(self, node: PolicyNode, pod: PodDemand, rng: np.random.Generator) -> PolicyVerdict:
        score = int(rng.integers(MAX_SCORE + 1))
        return PolicyVerdict(score, random_gpus(node.gpus, pod, rng))

    def score_nodes(self, state: NodeArrays, pod: PodDemand, nodes: I64,
                    rng: np.random.Generator) -> I64:
        scores = np.zeros(len(nodes), dtype=np.int64)
        if len(nodes):
            scores[int(rng.integers(len(nodes)))] = MAX_SCORE
        return scores

    def choose_gpus(self, state: NodeArrays, node: int, pod: PodDemand,
                    rng: np.random.Generator) -> tuple[int, ...]:
        return random_gpus(state.view(node).gpus, pod, rng)
