"""FGD, Fragmentation Gradient Descent (paper §6.6): the node whose fragmentation grows least.

For each feasible node, F(M) now and F'(M) after hypothetically placing the pod;
score = trunc(100 sigmoid((F - F') / 1000)). Hypothetical placements:

* sharing pod: each GPU with free share >= d in turn; the node keeps the best
  score and the GPU that produced it (lowest index among equal scores) is the one
  the pod gets;
* k whole GPUs: the k lowest-indexed completely free GPUs (which ones does not
  change F);
* CPU-only pod: only the CPU changes, which can only raise F (shapes stop fitting).

Integer scores create many ties (one point is about 0.04 GPU of fragmentation
near zero); the caller's tie-break decides them. The gradient helpers here are
shared with our FGD-FS, which differs only in the measure and an extra cost.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .base import MAX_SCORE, PolicyVerdict
from .frag import TargetWorkload, fragmentation, node_fragmentation
from .gpus import lowest_free, take_lowest_free
from .state import NodeArrays, PodDemand, PolicyNode

__all__ = [
    "FgdPolicy",
    "Measure",
    "NodeMeasure",
    "best_placement",
    "fgd_score",
    "fgd_scores",
    "gains",
    "node_gains",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

# A fragmentation measure over B node states: (cpu (B,), gpus (B, G), model (B,)) -> (B,).
Measure = Callable[[I64, I64, I64], F64]
# The same for one node: (cpu, free shares, model) -> milli-GPU.
NodeMeasure = Callable[[int, Sequence[int], int], float]


def fgd_score(gain: float) -> int:
    """trunc(100 sigmoid(gain / 1000)), gain = fragmentation before - after (milli-GPU)."""
    return int(MAX_SCORE * (1.0 / (1.0 + math.exp(-gain / 1000.0))))


def fgd_scores(gain: F64) -> I64:
    """``fgd_score`` elementwise; -1 where gain is -inf (the pod does not fit there)."""
    finite = np.isfinite(gain)
    sig = 1.0 / (1.0 + np.exp(-np.where(finite, gain, 0.0) / 1000.0))
    return np.where(finite, np.trunc(MAX_SCORE * sig), -1).astype(np.int64)


def gains(state: NodeArrays, nodes: I64, pod: PodDemand, measure: Measure) -> F64:
    """Fragmentation before minus after placing ``pod``, per node and candidate GPU slot.

    Shape (B, G) for a sharing pod (slot j = putting it on GPU j; -inf where the
    slot's free share is too small), (B, 1) otherwise. Pure.
    """
    cpu, gpus, model = state.cpu[nodes], state.gpus[nodes], state.model[nodes]
    before = measure(cpu, gpus, model)
    if pod.sharing:
        rows, slots = np.nonzero(gpus >= pod.gpu_milli)
        after_gpus = gpus[rows].copy()
        after_gpus[np.arange(rows.size), slots] -= pod.gpu_milli
        after = measure(cpu[rows] - pod.cpu, after_gpus, model[rows])
        out = np.full(gpus.shape, -np.inf)
        out[rows, slots] = before[rows] - after
        return out
    after_gpus = take_lowest_free(gpus, pod.num_gpu) if pod.num_gpu else gpus
    return (before - measure(cpu - pod.cpu, after_gpus, model))[:, None]


def node_gains(node: PolicyNode, pod: PodDemand,
               measure: NodeMeasure) -> list[tuple[tuple[int, ...], float]]:
    """``gains`` for one node: (GPU slots taken, gain) per candidate, in slot order."""
    before = measure(node.cpu, node.gpus, node.model)
    cpu = node.cpu - pod.cpu
    if not pod.sharing:
        chosen = lowest_free(node.gpus, pod.num_gpu)
        after = tuple(0 if i in chosen else g for i, g in enumerate(node.gpus))
        return [(chosen, before - measure(cpu, after, node.model))]
    out: list[tuple[tuple[int, ...], float]] = []
    for j, g in enumerate(node.gpus):
        if g >= pod.gpu_milli:
            after = (*node.gpus[:j], g - pod.gpu_milli, *node.gpus[j + 1:])
            out.append(((j,), before - measure(cpu, after, node.model)))
    return out


def best_placement(candidates: list[tuple[tuple[int, ...], float]]) -> PolicyVerdict:
    """The candidate with the highest integer score, the first among equals."""
    best = PolicyVerdict(-1, ())
    for gpus, gain in candidates:
        score = fgd_score(gain)
        if score > best.score:
            best = PolicyVerdict(score, gpus)
    return best


@dataclass(frozen=True, slots=True, eq=False)
class FgdPolicy:
    """FGD with target workload ``target`` (M). Cacheable: scores depend on node state only."""

    target: TargetWorkload
    name: str = "FGD"
    cacheable: bool = field(default=True)

    def _measure(self, cpu: I64, gpus: I64, model: I64) -> F64:
        return fragmentation(cpu, gpus, model, self.target)

    def _node_measure(self, cpu: int, gpus: Sequence[int], model: int) -> float:
        return node_fragmentation(cpu, gpus, model, self.target)

    def place(self, node: PolicyNode, pod: PodDemand, rng: np.random.Generator) -> PolicyVerdict:
        return best_placement(node_gains(node, pod, self._node_measure))

    def score_nodes(self, state: NodeArrays, pod: PodDemand, nodes: I64,
                    rng: np.random.Generator) -> I64:
        best: I64 = fgd_scores(gains(state, nodes, pod, self._measure)).max(axis=1)
        return best

    def choose_gpus(self, state: NodeArrays, node: int, pod: PodDemand,
                    rng: np.random.Generator) -> tuple[int, ...]:
        if not pod.sharing:
            return lowest_free(state.view(node).gpus, pod.num_gpu)
        one = np.asarray([node], dtype=np.int64)
        return (int(fgd_scores(gains(state, one, pod, self._measure))[0].argmax()),)
