"""GPU fragmentation of a node with respect to a target workload (the FGD paper's measure).

For a task shape m (CPU r, k GPUs of share d each, allowed models S) and a node
with free CPU c, model t and free GPU shares g_1..g_n (idle share I = sum g_j):

* m asks for no GPU                                      -> F(m) = I
* m cannot run (model not in S, c < r, or fewer than k GPUs with g_j >= d)
                                                         -> F(m) = I
* otherwise                                              -> F(m) = sum of g_j with g_j < d

i.e. the idle share the next task of shape m could not use. Over a workload M
of shapes with probabilities p_m: F(M) = sum p_m F(m). Memory is ignored.

Two implementations with one contract: ``node_fragmentation`` (plain Python,
one node, the readable reference) and ``fragmentation`` (numpy, many
hypothetical node states at once, what the replay uses). Both are pure.

*Fill fragmentation* (ours, used by FGD-FS) looks further than the next task:
the idle share that stays unusable if the node were filled with copies of m as
far as its GPUs *and its CPU* allow: F_fill(m) = I - n_m k_m d_m, with n_m the
number of copies that fit (by GPU: sum_j floor(g_j / d) for a sharing shape,
floor(free GPUs / k) for whole GPUs; by CPU: floor(c / r); the smaller of the
two; 0 if the model is not allowed). CPU-only shapes strand all of I, as above.
It sees what the one-step measure misses: GPUs a node can never use because
CPU runs out first, and remainders that copies of a share leave behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "Shape",
    "TargetWorkload",
    "fill_fragmentation",
    "fragmentation",
    "node_fill_fragmentation",
    "node_fragmentation",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Shape:
    """One task shape of M. ``allowed`` is a model bit set as in ``PodDemand`` (0 = any)."""

    cpu: int
    num_gpu: int
    gpu_milli: int
    allowed: int = 0


@dataclass(frozen=True, slots=True)
class TargetWorkload:
    """A distribution M over task shapes, as parallel arrays (probabilities sum to 1).

    ``levels`` are the distinct per-GPU shares of the GPU shapes and ``level`` the
    index of each GPU shape's share in it: the vectorised measure counts GPUs per
    share level once, not once per shape.
    """

    shapes: tuple[Shape, ...]
    prob: F64
    cpu: I64
    num_gpu: I64
    allowed: I64
    level: I64
    levels: I64
    gpu_rows: I64
    cpu_only_prob: float

    @classmethod
    def of(cls, shapes: Sequence[Shape], weights: Sequence[float]) -> TargetWorkload:
        """M from shapes and non-negative weights (normalised here)."""
        if len(shapes) != len(weights) or not shapes:
            raise ValueError("need one weight per shape and at least one shape")
        w = np.asarray(weights, dtype=np.float64)
        if (w < 0).any() or w.sum() <= 0:
            raise ValueError("weights must be non-negative with a positive sum")
        prob = w / w.sum()
        gpu_rows = np.asarray([i for i, s in enumerate(shapes) if s.num_gpu > 0], dtype=np.int64)
        levels = np.asarray(sorted({shapes[i].gpu_milli for i in gpu_rows}), dtype=np.int64)
        level_of = {int(v): i for i, v in enumerate(levels)}
        return cls(
            shapes=tuple(shapes),
            prob=prob,
            cpu=np.asarray([s.cpu for s in shapes], dtype=np.int64),
            num_gpu=np.asarray([s.num_gpu for s in shapes], dtype=np.int64),
            allowed=np.asarray([s.allowed for s in shapes], dtype=np.int64),
            level=np.asarray([level_of.get(s.gpu_milli, -1) if s.num_gpu else -1
                              for s in shapes], dtype=np.int64),
            levels=levels,
            gpu_rows=gpu_rows,
            cpu_only_prob=float(sum(prob[i] for i, s in enumerate(shapes) if s.num_gpu == 0)),
        )


def node_fragmentation(cpu: int, gpus: Sequence[int], model: int,
                       target: TargetWorkload) -> float:
    """F(M) of one node in milli-GPU: free CPU ``cpu``, free GPU shares ``gpus``, model code."""
    idle = sum(gpus)
    total = 0.0
    for shape, p in zip(target.shapes, target.prob, strict=True):
        stranded = idle
        if shape.num_gpu and (shape.allowed == 0 or (shape.allowed >> model) & 1) \
                and cpu >= shape.cpu \
                and sum(1 for g in gpus if g >= shape.gpu_milli) >= shape.num_gpu:
            stranded = sum(g for g in gpus if g < shape.gpu_milli)
        total += float(p) * stranded
    return total


def fragmentation(cpu: I64, gpus: I64, model: I64, target: TargetWorkload) -> F64:
    """F(M) of B node states at once: ``cpu`` (B,), ``gpus`` (B, G) padded with 0, ``model`` (B,).

    Returns float64 of shape (B,). Padded GPU slots (0 free) change nothing.
    """
    idle = gpus.sum(axis=1)
    result: F64 = idle * target.cpu_only_prob
    rows = target.gpu_rows
    if rows.size == 0 or cpu.shape[0] == 0:
        return result.astype(np.float64)
    g3 = gpus[:, :, None]
    lv = target.levels[None, None, :]
    enough = (g3 >= lv).sum(axis=1)                    # (B, U) GPUs with share >= level
    small = np.where(g3 < lv, g3, 0).sum(axis=1)      # (B, U) share stranded below level
    lvl = target.level[rows]
    allowed = target.allowed[rows][None, :]
    model_ok = (allowed == 0) | (((allowed >> model[:, None]) & 1) == 1)
    fits = model_ok & (cpu[:, None] >= target.cpu[rows][None, :]) \
        & (enough[:, lvl] >= target.num_gpu[rows][None, :])
    stranded = np.where(fits, small[:, lvl], idle[:, None])
    out: F64 = result + stranded.astype(np.float64) @ target.prob[rows]
    return out


def _copies(cpu: int, gpus: Sequence[int], model: int, shape: Shape) -> int:
    if not shape.num_gpu or not (shape.allowed == 0 or (shape.allowed >> model) & 1):
        return 0
    if shape.gpu_milli < 1000:
        by_gpu = sum(g // shape.gpu_milli for g in gpus)
    else:
        by_gpu = sum(1 for g in gpus if g >= 1000) // shape.num_gpu
    by_cpu = cpu // shape.cpu if shape.cpu else by_gpu
    return min(by_gpu, by_cpu)


def node_fill_fragmentation(cpu: int, gpus: Sequence[int], model: int,
                            target: TargetWorkload) -> float:
    """Fill fragmentation of one node in milli-GPU (see the module docstring)."""
    idle = sum(gpus)
    return sum(float(p) * (idle - _copies(cpu, gpus, model, s) * s.num_gpu * s.gpu_milli)
               for s, p in zip(target.shapes, target.prob, strict=True))


def fill_fragmentation(cpu: I64, gpus: I64, model: I64, target: TargetWorkload) -> F64:
    """``node_fill_fragmentation`` of B node states at once (shapes as in ``fragmentation``)."""
    idle = gpus.sum(axis=1)
    result: F64 = idle * target.cpu_only_prob
    rows = target.gpu_rows
    if rows.size == 0 or cpu.shape[0] == 0:
        return result.astype(np.float64)
    per_gpu = (gpus[:, :, None] // target.levels[None, None, :]).sum(axis=1)   # (B, U)
    whole = (gpus >= 1000).sum(axis=1)
    lvl = target.level[rows]
    k = target.num_gpu[rows]
    d = target.levels[lvl]
    by_gpu = np.where(d[None, :] < 1000, per_gpu[:, lvl], whole[:, None] // k[None, :])
    need = target.cpu[rows]
    # A shape asking for no CPU is limited by GPUs alone.
    by_cpu = np.where(need[None, :] > 0, cpu[:, None] // np.maximum(need, 1)[None, :], by_gpu)
    allowed = target.allowed[rows][None, :]
    model_ok = (allowed == 0) | (((allowed >> model[:, None]) & 1) == 1)
    usable = np.where(model_ok, np.minimum(by_gpu, by_cpu) * (k * d)[None, :], 0)
    stranded = idle[:, None] - usable
    out: F64 = result + stranded.astype(np.float64) @ target.prob[rows]
    return out
