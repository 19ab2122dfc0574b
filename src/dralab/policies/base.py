"""The policy kernel interface: one pod, scored against nodes, plus the GPU choice.

A policy answers two questions, matching the two places a kube-scheduler-style
engine needs them: *which node* (a Score plugin: ``score_nodes`` / ``place``)
and *which GPUs inside it* (the device choice of the DynamicResources plugin:
``choose_gpus``). Keeping both in one object matters because some policies
(FGD) pick the GPU as a by-product of scoring the node.

Contracts common to every policy:

* Scores are integers in 0..``MAX_SCORE``; higher is better. Ties are *not*
  broken by the policy: the caller does it (the replay uses a per-seed random
  node priority).
* Kernels are called only for nodes where the pod fits (``NodeArrays.feasible``);
  what they return for other nodes is unspecified.
* Kernels never mutate the state. Randomness comes only from the ``rng`` passed
  in, so a seed reproduces a run.
* ``cacheable`` policies promise that a node's score depends only on that node's
  state and on the pod's CPU and GPU request (not memory, not the model
  constraint, not ``rng``), so callers may cache scores per node until the
  node's ``version`` changes.

Wrapping a policy in a scheduler framework: in PreScore/Score, build a
``PolicyNode`` per node from the engine's view of it (free CPU and memory; per
GPU device, capacity minus the ``consumedCapacity`` of allocated claims; the
``model`` attribute as a code; the classes of GPU pods on it; total CPU) and
call ``place``; keep the returned ``PolicyVerdict.gpus`` in the cycle state so the
DynamicResources plugin allocates exactly those devices. ``score_nodes`` is the
same computation for many nodes at once (what the trace replay uses).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .state import NodeArrays, PodDemand, PolicyNode

__all__ = ["MAX_SCORE", "Policy", "PolicyVerdict"]

MAX_SCORE = 100

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class PolicyVerdict:
    """A policy's verdict for one pod on one node: the node score and the GPU slots to use."""

    score: int
    gpus: tuple[int, ...]


@runtime_checkable
class Policy(Protocol):
    """A node-scoring and GPU-choosing policy (see the module docstring for the contract)."""

    @property
    def name(self) -> str: ...

    @property
    def cacheable(self) -> bool: ...

    def place(self, node: PolicyNode, pod: PodDemand, rng: np.random.Generator) -> PolicyVerdict:
        """Score of ``pod`` on one node and the GPUs it would take there. Pure."""
        ...

    def score_nodes(self, state: NodeArrays, pod: PodDemand, nodes: I64,
                    rng: np.random.Generator) -> I64:
        """Scores of ``pod`` on the node indices ``nodes`` (all feasible), aligned with them.

        Same values as ``place`` on each node, computed at once (Random excepted:
        it gives 100 to one uniformly drawn node and 0 to the rest).
        """
        ...

    def choose_gpus(self, state: NodeArrays, node: int, pod: PodDemand,
                    rng: np.random.Generator) -> tuple[int, ...]:
        """The GPU slots ``pod`` takes on ``node`` (empty for CPU-only pods)."""
        ...
