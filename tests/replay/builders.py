"""Small builders for the replay tests: nodes, pods, M, and the worked example of §5.1."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dralab.policies import NodeArrays, PodDemand, PolicyNode, Shape, TargetWorkload
from dralab.replay.trace import TraceNode, TracePod

BIG_MEMORY = 10**7


def pod(cpu: int, gpu_milli: int = 0, num_gpu: int | None = None, memory: int = 0,
        allowed: int = 0) -> PodDemand:
    """A pod asking for ``cpu`` milli-cores and, unless ``gpu_milli`` is 0, GPUs."""
    if num_gpu is None:
        num_gpu = 1 if gpu_milli else 0
    return PodDemand(cpu=cpu, memory=memory, num_gpu=num_gpu, gpu_milli=gpu_milli,
                     allowed=allowed)


def view(cpu: int, gpus: Sequence[int], model: int = 0, classes: int = 0,
         cpu_cap: int = 0) -> PolicyNode:
    return PolicyNode(cpu=cpu, memory=BIG_MEMORY, gpus=tuple(gpus), model=model,
                    classes=classes, cpu_cap=cpu_cap)


def cluster(*nodes: tuple[int, Sequence[int]], models: Sequence[str] | None = None,
            classes: Sequence[int] | None = None) -> NodeArrays:
    """A state with nodes given as (free cpu, free share per GPU); capacity = free."""
    state = NodeArrays.build([c for c, _ in nodes], [BIG_MEMORY] * len(nodes),
                             [len(g) for _, g in nodes],
                             list(models) if models else ["m"] * len(nodes))
    for i, (_, gpus) in enumerate(nodes):
        state.gpus[i, :len(gpus)] = gpus
    if classes:
        state.classes[:] = classes
    return state


def everything(state: NodeArrays) -> np.ndarray:
    return np.arange(len(state), dtype=np.int64)


# §5.1: A = 4 cores 1 x 500 (p .5), B = 8 cores 1 x 1000 (p .3), C = 2 cores, no GPU (p .2).
EXAMPLE_M = TargetWorkload.of(
    [Shape(4000, 1, 500), Shape(8000, 1, 1000), Shape(2000, 0, 0)], [0.5, 0.3, 0.2])
NODE_X = (8000, (1000, 700, 300, 0))
NODE_Y = (16000, (1000, 1000))


def node_record(name: str, cpu: int = 96000, gpus: int = 8, model: str = "G2",
                memory: int = 393216) -> TraceNode:
    return TraceNode(name, cpu, memory, gpus, model)


def pod_record(name: str, cpu: int = 4000, num_gpu: int = 1, gpu_milli: int = 1000,
               spec: str = "", memory: int = 1024) -> TracePod:
    return TracePod(name, cpu, memory, num_gpu, gpu_milli if num_gpu else 0,
                     frozenset(m for m in spec.split("|") if m), spec)
