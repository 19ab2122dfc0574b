"""FGD-FS: FGD plus fill fragmentation plus scarcity (ours; not in the paper).

FGD scores a placement by how much it grows fragmentation for the *next* task.
Two things it cannot see cost it GPUs on the Alibaba trace:

* **CPU runs out before GPUs do.** A G2 node has 12 cores per GPU and the
  common whole-GPU tasks ask for 11.3; CPU-heavy sharing tasks (11.9 cores for
  0.47 GPU) or CPU-only tasks on it leave GPUs no task can use. The one-step
  measure notices only when the very next task stops fitting. The *fill*
  measure (``fill_fragmentation``) asks what stays unusable once the node is
  filled with copies of each shape, CPU included, so it steers CPU-heavy work to
  CPU-rich nodes (T4, A10, G3) early.
* **Some tasks can only go to a few nodes** (a GPU model, or 8 GPUs with 120
  cores). One-step fragmentation does not count capacity consumed there until
  it is gone. ``Scarcity`` prices it.

Gain of a placement (milli-GPU), per node and candidate GPU as in FGD:

    gain = [F(M) + w_fill F_fill(M)] before - after  -  w_scarce x D x min(1, rho_node)

with D the pod's GPU demand; score = trunc(100 sigmoid(gain / 1000)), GPU choice
as FGD. The weights (1/4 and 1) were chosen on the default trace with seeds
42-47 and checked on the other workloads; the integer truncation is kept on
purpose: exact scores (no truncation, no random ties) did clearly worse
(5.8 % vs 4.8 % unallocated at 100 % for plain FGD).

Cost: like FGD, cacheable (scores depend on node state and static node
capacities only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .base import PolicyVerdict
from .fgd import best_placement, fgd_scores, gains, node_gains
from .frag import (
    TargetWorkload,
    fill_fragmentation,
    fragmentation,
    node_fill_fragmentation,
    node_fragmentation,
)
from .gpus import lowest_free
from .scarcity import Scarcity
from .state import NodeArrays, PodDemand, PolicyNode

__all__ = ["FILL_WEIGHT", "SCARCITY_WEIGHT", "FgdFsPolicy"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

FILL_WEIGHT = 0.25
SCARCITY_WEIGHT = 1.0


@dataclass(frozen=True, slots=True, eq=False)
class FgdFsPolicy:
    """FGD-FS with target workload ``target`` (M) and node ``scarcity``."""

    target: TargetWorkload
    scarcity: Scarcity
    fill_weight: float = FILL_WEIGHT
    scarcity_weight: float = SCARCITY_WEIGHT
    name: str = "FGD-FS"
    cacheable: bool = field(default=True)

    def _measure(self, cpu: I64, gpus: I64, model: I64) -> F64:
        out: F64 = fragmentation(cpu, gpus, model, self.target)
        if self.fill_weight:
            out = out + self.fill_weight * fill_fragmentation(cpu, gpus, model, self.target)
        return out

    def _node_measure(self, cpu: int, gpus: Sequence[int], model: int) -> float:
        out = node_fragmentation(cpu, gpus, model, self.target)
        if self.fill_weight:
            out += self.fill_weight * node_fill_fragmentation(cpu, gpus, model, self.target)
        return out

    def _gains(self, state: NodeArrays, nodes: I64, pod: PodDemand) -> F64:
        gain = gains(state, nodes, pod, self._measure)
        if self.scarcity_weight and pod.num_gpu:
            rho = np.minimum(1.0, self.scarcity.of_nodes(state, nodes))
            gain = gain - (self.scarcity_weight * pod.gpu_total * rho)[:, None]
        return gain

    def place(self, node: PolicyNode, pod: PodDemand, rng: np.random.Generator) -> PolicyVerdict:
        cost = 0.0
        if self.scarcity_weight and pod.num_gpu:
            cost = self.scarcity_weight * pod.gpu_total * min(1.0, self.scarcity.of_view(node))
        return best_placement([(g, gain - cost)
                               for g, gain in node_gains(node, pod, self._node_measure)])

    def score_nodes(self, state: NodeArrays, pod: PodDemand, nodes: I64,
                    rng: np.random.Generator) -> I64:
        best: I64 = fgd_scores(self._gains(state, nodes, pod)).max(axis=1)
        return best

    def choose_gpus(self, state: NodeArrays, node: int, pod: PodDemand,
                    rng: np.random.Generator) -> tuple[int, ...]:
        if not pod.sharing:
            return lowest_free(state.view(node).gpus, pod.num_gpu)
        one = np.asarray([node], dtype=np.int64)
        return (int(fgd_scores(self._gains(state, one, pod))[0].argmax()),)
