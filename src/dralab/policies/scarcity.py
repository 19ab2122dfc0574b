"""Scarcity: how much of a node's GPU capacity is spoken for by tasks that cannot go elsewhere.

Some task shapes fit only a small part of the cluster: a GPU-model constraint
(``gpu_spec``), or a request only big nodes can hold (8 GPUs with 120 cores fits
the 39 G3 nodes and nothing else). If flexible tasks use that part first, the
inflexible ones fail later although the cluster as a whole has room.

For each shape m of the workload with share q_m of the GPU demand, let E_m be
the nodes an *empty* node of which could host m (model allowed, CPU capacity
>= r_m, GPU count >= k_m; memory ignored, as in M) and cap(E_m) their GPU
capacity. Spread over E_m, m asks for q_m x C / cap(E_m) of each unit there,
against q_m if it could go anywhere. A node's scarcity is the excess summed
over the shapes it can host:

    rho_n = sum over m with n in E_m of q_m (C / cap(E_m) - 1)      (>= 0)

It is 0 everywhere when every shape fits every node (the default trace, apart
from its few 8-GPU pods), and about 1 or more where constrained demand alone
would fill the capacity (T4 in gpuspec33). Static: it depends on node
capacities and the workload only, never on the current state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .frag import TargetWorkload
from .state import NodeArrays, PolicyNode

__all__ = ["Scarcity"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

# Shapes whose excess is below this change no decision; dropping them keeps kernels fast.
_NEGLIGIBLE = 1e-4


@dataclass(frozen=True, slots=True, eq=False)
class Scarcity:
    """rho per node, from the shapes that contribute (see the module docstring)."""

    cpu: I64
    num_gpu: I64
    allowed: I64
    excess: F64

    @classmethod
    def of(cls, shapes: TargetWorkload, cluster: NodeArrays) -> Scarcity:
        """From all task shapes of a workload (weighted by pod count) and the empty cluster."""
        share = np.asarray([s.num_gpu * s.gpu_milli for s in shapes.shapes], dtype=np.float64)
        demand = shapes.prob * share
        total = demand.sum()
        capacity = float(cluster.gpu_count.sum() * 1000)
        keep: list[int] = []
        excess: list[float] = []
        if total > 0:
            for i, s in enumerate(shapes.shapes):
                if not demand[i]:
                    continue
                hosts = _eligible(s.allowed, s.cpu, s.num_gpu, cluster.model,
                                  cluster.cpu_cap, cluster.gpu_count)
                supply = float(cluster.gpu_count[hosts].sum() * 1000)
                if supply == 0:
                    continue  # no node can ever host it: nothing to protect
                value = demand[i] / total * (capacity / supply - 1.0)
                if value > _NEGLIGIBLE:
                    keep.append(i)
                    excess.append(value)
        rows = np.asarray(keep, dtype=np.int64)
        return cls(cpu=shapes.cpu[rows], num_gpu=shapes.num_gpu[rows],
                   allowed=shapes.allowed[rows], excess=np.asarray(excess, dtype=np.float64))

    def of_nodes(self, state: NodeArrays, nodes: I64) -> F64:
        """rho of the node indices ``nodes``. Pure."""
        if self.excess.size == 0:
            return np.zeros(len(nodes))
        hosts = _eligible(self.allowed[None, :], self.cpu[None, :], self.num_gpu[None, :],
                          state.model[nodes][:, None], state.cpu_cap[nodes][:, None],
                          state.gpu_count[nodes][:, None])
        out: F64 = hosts.astype(np.float64) @ self.excess
        return out

    def of_view(self, node: PolicyNode) -> float:
        """rho of one node given as a view (its ``cpu_cap`` must be set)."""
        cap = node.cpu_cap or node.cpu
        return float(sum(e for a, c, k, e in zip(self.allowed, self.cpu, self.num_gpu,
                                                 self.excess, strict=True)
                         if (a == 0 or (a >> node.model) & 1) and cap >= c
                         and len(node.gpus) >= k))


def _eligible(allowed: npt.ArrayLike, cpu: npt.ArrayLike, num_gpu: npt.ArrayLike,
              model: npt.ArrayLike, cpu_cap: npt.ArrayLike,
              gpu_count: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    a, m = np.asarray(allowed), np.asarray(model)
    ok: npt.NDArray[np.bool_] = ((a == 0) | (((a >> m) & 1) == 1)) \
        & (np.asarray(cpu_cap) >= np.asarray(cpu)) & (np.asarray(gpu_count) >= np.asarray(num_gpu))
    return ok
