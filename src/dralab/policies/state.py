"""The compact numeric cluster state the policy kernels read.

One row per node, GPU shares in milli-GPU (0..1000 free per GPU), CPU in
milli-cores, memory in MiB. GPU slots beyond a node's GPU count are padded with
0 free share: a padded slot then behaves like a fully used GPU (it never fits,
adds nothing to idle share or to fragmentation), so kernels need no extra mask.

``NodeArrays`` is the one mutable object. Kernels only read it; the code that
runs a placement loop changes it through ``assign``, which also bumps the node's
``version`` so callers can cache per-node results and know when they go stale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "GPU_MILLI",
    "MAX_GPUS",
    "NodeArrays",
    "PodDemand",
    "PolicyNode",
    "gpu_class",
]

GPU_MILLI = 1000
MAX_GPUS = 8

I64 = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


def gpu_class(num_gpu: int, gpu_milli: int) -> int:
    """GpuClustering's pod class: 0 = no GPU, 1 = sharing one GPU, 1 + k = k whole GPUs."""
    if num_gpu == 0:
        return 0
    if gpu_milli < GPU_MILLI:
        return 1
    return 1 + num_gpu


@dataclass(frozen=True, slots=True)
class PodDemand:
    """What one pod asks for.

    ``gpu_milli`` is the share of each of the ``num_gpu`` GPUs (1000 for whole GPUs,
    below 1000 only with ``num_gpu`` == 1). ``allowed`` is a bit set over model
    codes of ``NodeArrays.models`` (bit ``1 << code``); 0 means any model.
    """

    cpu: int
    memory: int
    num_gpu: int = 0
    gpu_milli: int = 0
    allowed: int = 0

    @property
    def gpu_total(self) -> int:
        """Total GPU demand D = num_gpu x gpu_milli."""
        return self.num_gpu * self.gpu_milli

    @property
    def sharing(self) -> bool:
        return self.num_gpu == 1 and self.gpu_milli < GPU_MILLI

    @property
    def klass(self) -> int:
        return gpu_class(self.num_gpu, self.gpu_milli)

    def model_ok(self, model: int) -> bool:
        return self.allowed == 0 or bool((self.allowed >> model) & 1)


@dataclass(frozen=True, slots=True)
class PolicyNode:
    """One node's state as plain Python values: the input of the scalar kernels.

    ``gpus`` holds the free share of each of the node's GPUs (no padding);
    ``classes`` is the bit set of GpuClustering classes of GPU pods on the node;
    ``cpu_cap`` is the node's total CPU (0: unknown, taken as the free CPU).
    """

    cpu: int
    memory: int
    gpus: tuple[int, ...]
    model: int = 0
    classes: int = 0
    cpu_cap: int = 0

    @property
    def idle(self) -> int:
        return sum(self.gpus)

    def fits(self, pod: PodDemand) -> bool:
        """The trace's filter: CPU and memory fit; a GPU pod needs a node of an
        allowed model with ``num_gpu`` GPUs of free share >= ``gpu_milli``."""
        if self.cpu < pod.cpu or self.memory < pod.memory:
            return False
        if pod.num_gpu == 0:
            return True
        if not self.gpus or not pod.model_ok(self.model):
            return False
        return sum(1 for g in self.gpus if g >= pod.gpu_milli) >= pod.num_gpu


@dataclass(slots=True)
class NodeArrays:
    """Free resources of every node (see the module docstring for the contract).

    Arrays: free ``cpu`` and ``memory``, ``gpu_count``, ``model`` (code into
    ``models``), ``classes`` (GpuClustering class bits), ``version`` (bumped by
    ``assign``), and the node's total ``cpu_cap`` and ``memory_cap``, all of shape
    (N,); ``gpus`` (free share per GPU slot) of shape (N, MAX_GPUS).
    """

    cpu: I64
    memory: I64
    gpus: I64
    gpu_count: I64
    model: I64
    classes: I64
    version: I64
    cpu_cap: I64
    memory_cap: I64
    models: tuple[str, ...]

    @classmethod
    def build(cls, cpu: Sequence[int], memory: Sequence[int], gpu_count: Sequence[int],
              model: Sequence[str]) -> NodeArrays:
        """Empty nodes (all GPUs free). Model codes follow sorted model names."""
        models = tuple(sorted(set(model)))
        code = {m: i for i, m in enumerate(models)}
        n = len(cpu)
        counts = np.asarray(gpu_count, dtype=np.int64)
        if n and (counts.max(initial=0) > MAX_GPUS or counts.min(initial=0) < 0):
            raise ValueError(f"GPU count must be 0..{MAX_GPUS}")
        slots = np.arange(MAX_GPUS)[None, :] < counts[:, None]
        return cls(
            cpu=np.asarray(cpu, dtype=np.int64).copy(),
            memory=np.asarray(memory, dtype=np.int64).copy(),
            gpus=np.where(slots, GPU_MILLI, 0).astype(np.int64),
            gpu_count=counts.copy(),
            model=np.asarray([code[m] for m in model], dtype=np.int64),
            classes=np.zeros(n, dtype=np.int64),
            version=np.zeros(n, dtype=np.int64),
            cpu_cap=np.asarray(cpu, dtype=np.int64).copy(),
            memory_cap=np.asarray(memory, dtype=np.int64).copy(),
            models=models,
        )

    def __len__(self) -> int:
        return int(self.cpu.shape[0])

    def model_mask(self, names: frozenset[str] | set[str]) -> int:
        """The ``allowed`` bit set for model names; 0 (any model) for an empty set.

        Names the cluster lacks never match; a non-empty set naming none of its
        models gets a bit no node has (0 would mean "any").
        """
        bits = 0
        for i, m in enumerate(self.models):
            if m in names:
                bits |= 1 << i
        if names and not bits:
            bits = 1 << len(self.models)
        return bits

    def view(self, node: int) -> PolicyNode:
        k = int(self.gpu_count[node])
        return PolicyNode(cpu=int(self.cpu[node]), memory=int(self.memory[node]),
                        gpus=tuple(int(g) for g in self.gpus[node, :k]),
                        model=int(self.model[node]), classes=int(self.classes[node]),
                        cpu_cap=int(self.cpu_cap[node]))

    def feasible(self, pod: PodDemand) -> Mask:
        """The trace's filter for all nodes at once (see ``PolicyNode.fits``)."""
        ok: Mask = (self.cpu >= pod.cpu) & (self.memory >= pod.memory)
        if pod.num_gpu == 0:
            return ok
        if pod.allowed:
            ok &= ((pod.allowed >> self.model) & 1).astype(np.bool_)
        enough: Mask = (self.gpus >= pod.gpu_milli).sum(axis=1) >= pod.num_gpu
        return ok & enough

    def assign(self, node: int, pod: PodDemand, gpus: Sequence[int]) -> None:
        """Commit ``pod`` to ``node`` on GPU slots ``gpus``. The only mutator.

        Raises ValueError if the placement does not fit (a caller bug); the state
        is unchanged then.
        """
        if len(gpus) != pod.num_gpu or len(set(gpus)) != len(gpus):
            raise ValueError(f"pod needs {pod.num_gpu} distinct GPUs, got {tuple(gpus)}")
        if not self.view(node).fits(pod) or any(
                g >= self.gpu_count[node] or self.gpus[node, g] < pod.gpu_milli for g in gpus):
            raise ValueError(f"pod does not fit node {node} on GPUs {tuple(gpus)}")
        self.cpu[node] -= pod.cpu
        self.memory[node] -= pod.memory
        for g in gpus:
            self.gpus[node, g] -= pod.gpu_milli
        if pod.num_gpu:
            self.classes[node] |= 1 << pod.klass
        self.version[node] += 1

    def take(self, rows: npt.NDArray[np.int64]) -> NodeArrays:
        """A new, independent state of the nodes ``rows`` in that order (e.g. a permutation)."""
        return NodeArrays(self.cpu[rows], self.memory[rows], self.gpus[rows],
                          self.gpu_count[rows], self.model[rows], self.classes[rows],
                          self.version[rows], self.cpu_cap[rows], self.memory_cap[rows],
                          self.models)

    def copy(self) -> NodeArrays:
        return self.take(np.arange(len(self), dtype=np.int64))
