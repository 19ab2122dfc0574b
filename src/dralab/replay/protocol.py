"""The replay protocol's inputs: the target workload M and the arrival order (paper §3.3-3.7).

Random draws, all from one ``numpy.random.Generator`` seeded per run, happen in
this order (``draw_protocol``): shuffle the pods (after sorting them by name),
inflate or trim the list to the target GPU request, then draw the node
tie-break permutation. A policy's own draws (Random) come after these.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dralab.api.errors import InputError
from dralab.policies import Shape, TargetWorkload

from .trace.alibaba import TracePod

__all__ = [
    "COVERAGE",
    "MAX_REPLAY_ARRIVALS",
    "MAX_REPLAY_NODE_ARRIVALS",
    "TUNE_RATIO",
    "Draws",
    "ProtocolError",
    "ShapeCount",
    "arrival_order",
    "check_replayable",
    "draw_protocol",
    "expected_arrivals",
    "popular_shapes",
    "target_workload",
]

COVERAGE = 0.95
TUNE_RATIO = 1.3
# The most pods one run may see arrive (trace pods plus resampled copies). The paper's
# default workload needs about 11,000; a run costs about 0.1 ms per arrival and 40 bytes
# of per-event record, so a million is minutes and tens of MB, not hours or gigabytes.
MAX_REPLAY_ARRIVALS = 1_000_000
# Every arrival looks at every node: arrivals x nodes bounds a run's time (the paper's
# default is 10,844 x 1,213, about 13 million; this allows about 75 times that, minutes
# per run at worst).
MAX_REPLAY_NODE_ARRIVALS = 1_000_000_000

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class ShapeCount:
    """A task shape of a workload (memory ignored) and how many of its pods have it.

    ``gpu_spec_text`` is the trace's spelling of the model constraint: shapes are
    grouped by it, as in the paper's artifact (``A|B`` and ``A|B|B`` stay apart).
    """

    cpu: int
    num_gpu: int
    gpu_milli: int
    gpu_spec: frozenset[str]
    gpu_spec_text: str
    count: int


def popular_shapes(pods: Sequence[TracePod],
                   coverage: float = COVERAGE) -> tuple[tuple[ShapeCount, ...], float]:
    """The most common shapes that together cover at least ``coverage`` of the pods.

    Shapes are ranked by pod count, most common first, equal counts in order of
    first appearance in ``pods``. Returns (shapes, covered fraction of pods).
    Pure; ValueError for an empty pod list.
    """
    if not pods:
        raise ValueError("no pods")
    counts: dict[tuple[int, int, int, str], int] = {}
    specs: dict[str, frozenset[str]] = {}
    for p in pods:
        key = (p.cpu_milli, p.num_gpu, p.gpu_milli if p.num_gpu else 0, p.gpu_spec_text)
        counts[key] = counts.get(key, 0) + 1
        specs.setdefault(p.gpu_spec_text, p.gpu_spec)
    # sorted() is stable, so equal counts keep first-appearance order.
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    chosen: list[ShapeCount] = []
    covered = 0
    for (cpu, num_gpu, gpu_milli, text), n in ranked:
        if covered >= coverage * len(pods):
            break
        chosen.append(ShapeCount(cpu, num_gpu, gpu_milli, specs[text], text, n))
        covered += n
    return tuple(chosen), covered / len(pods)


def target_workload(pods: Sequence[TracePod], model_mask: Callable[[frozenset[str]], int],
                    coverage: float = COVERAGE) -> TargetWorkload:
    """M (§3.3): the popular shapes with renormalised frequencies.

    ``model_mask`` turns a set of model names into the state's model bit set
    (``NodeArrays.model_mask``).
    """
    shapes, _ = popular_shapes(pods, coverage)
    return TargetWorkload.of(
        [Shape(s.cpu, s.num_gpu, s.gpu_milli, model_mask(s.gpu_spec)) for s in shapes],
        [s.count for s in shapes])


class ProtocolError(InputError):
    """A trace the protocol cannot replay: no GPU capacity or demand, or too many arrivals."""


def expected_arrivals(pods: Sequence[TracePod], capacity_milli: int,
                      ratio: float = TUNE_RATIO) -> float:
    """How many pods ``arrival_order`` lets arrive, in expectation (inf if it never ends).

    Inflation draws pods uniformly until the GPU request reaches the target, so it
    takes about (target - trace total) / (mean GPU request per pod) extra draws.
    Pure.
    """
    target = ratio * capacity_milli
    total = sum(p.gpu_request for p in pods)
    if total >= target:
        return float(len(pods))
    mean = total / len(pods) if pods else 0.0
    return float("inf") if mean <= 0 else len(pods) + (target - total) / mean


def check_replayable(pods: Sequence[TracePod], capacity_milli: int, where: str,
                     ratio: float = TUNE_RATIO,
                     max_arrivals: int = MAX_REPLAY_ARRIVALS, num_nodes: int = 0) -> None:
    """ProtocolError (naming ``where``) unless a run of these pods on a cluster of
    ``capacity_milli`` (over ``num_nodes`` nodes) ends, with at most ``max_arrivals``
    arrivals and MAX_REPLAY_NODE_ARRIVALS arrivals x nodes expected."""
    if capacity_milli <= 0:
        raise ProtocolError(f"{where}: the nodes have no GPU: arrivals are measured "
                            "against the cluster's GPU capacity")
    if not any(p.gpu_request for p in pods):
        raise ProtocolError(f"{where}: no pod requests a GPU: the protocol adds pods until "
                            f"their GPU request reaches {ratio:.0%} of the capacity")
    expected = expected_arrivals(pods, capacity_milli, ratio)
    if expected > max_arrivals:
        raise ProtocolError(f"{where}: reaching {ratio:.0%} of {capacity_milli // 1000:,} GPUs "
                            f"takes about {expected:,.0f} arrivals, more than "
                            f"{max_arrivals:,} (MAX_REPLAY_ARRIVALS)")
    if expected * num_nodes > MAX_REPLAY_NODE_ARRIVALS:
        raise ProtocolError(f"{where}: about {expected:,.0f} arrivals on {num_nodes:,} nodes, "
                            f"more than {MAX_REPLAY_NODE_ARRIVALS:,} arrivals x nodes "
                            "(MAX_REPLAY_NODE_ARRIVALS)")


def arrival_order(pods: Sequence[TracePod], rng: np.random.Generator, capacity_milli: int,
                  ratio: float = TUNE_RATIO, max_arrivals: int = MAX_REPLAY_ARRIVALS) -> I64:
    """Indices into ``pods`` in arrival order (§3.5-3.6); an index repeats for resampled copies.

    Sort by name, shuffle, then: while the total GPU request is below
    ``ratio`` x capacity, draw a pod uniformly (with replacement) and append a copy,
    stopping at the first draw that would pass the target (that draw is dropped).
    As in the paper's artifact the stop test adds the drawn pod's *per-GPU* share,
    not its total, which only matters for a multi-GPU draw. If the total starts
    above the target, remove uniformly drawn pods until it is at most the target.

    Inflation needs a pod with GPU demand: without one (or past ``max_arrivals``
    arrivals) it raises ProtocolError instead of drawing forever; ``check_replayable``
    says so before any run.
    """
    by_name = sorted(range(len(pods)), key=lambda i: pods[i].name)
    order = [int(i) for i in rng.permutation(np.asarray(by_name, dtype=np.int64))]
    target = ratio * capacity_milli
    total = sum(p.gpu_request for p in pods)
    if total < target:
        if not any(p.gpu_request for p in pods):
            raise ProtocolError("no pod requests a GPU: the workload can never reach "
                                f"{ratio:.0%} of the GPU capacity")
        while True:
            if len(order) >= max_arrivals:
                raise ProtocolError(f"more than {max_arrivals:,} arrivals "
                                    "(MAX_REPLAY_ARRIVALS) before reaching "
                                    f"{ratio:.0%} of the GPU capacity")
            drawn = order[int(rng.integers(len(order)))] if order else -1
            if drawn < 0 or total + pods[drawn].gpu_milli > target:
                break
            order.append(drawn)
            total += pods[drawn].gpu_request
    else:
        while total > target and order:
            gone = order.pop(int(rng.integers(len(order))))
            total -= pods[gone].gpu_request
    return np.asarray(order, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class Draws:
    """The random choices of one run: arrival order and node tie-break priority.

    ``node_order[r]`` is the node with rank r: on equal scores the node with the
    lowest rank wins.
    """

    order: I64
    node_order: I64


def draw_protocol(pods: Sequence[TracePod], num_nodes: int, capacity_milli: int,
                  rng: np.random.Generator, ratio: float = TUNE_RATIO) -> Draws:
    """All protocol draws of a run, in the documented order, from ``rng``."""
    order = arrival_order(pods, rng, capacity_milli, ratio)
    return Draws(order=order, node_order=rng.permutation(num_nodes).astype(np.int64))
