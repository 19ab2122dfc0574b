"""The fragmentation measure and FGD's score: the worked example of reference §5.1, and ours."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from dralab.policies import (
    FgdPolicy,
    fill_fragmentation,
    fragmentation,
    node_fill_fragmentation,
    node_fragmentation,
)

from .builders import EXAMPLE_M, NODE_X, NODE_Y, cluster, everything, pod, view

RNG = np.random.default_rng(0)


def test_worked_example_node_values() -> None:
    assert node_fragmentation(*NODE_X, 0, EXAMPLE_M) == pytest.approx(850)
    assert node_fragmentation(*NODE_Y, 0, EXAMPLE_M) == pytest.approx(400)
    state = cluster(NODE_X, NODE_Y)
    assert fragmentation(state.cpu, state.gpus, state.model, EXAMPLE_M) == \
        pytest.approx([850, 400])


def test_worked_example_per_shape_parts() -> None:
    # F_X(A) = 300, F_X(B) = 1000, F_X(C) = 2000 (one shape at a time).
    for shape, expected in zip(EXAMPLE_M.shapes, (300, 1000, 2000), strict=True):
        only = type(EXAMPLE_M).of([shape], [1.0])
        assert node_fragmentation(*NODE_X, 0, only) == pytest.approx(expected)


# (arriving pod, node, GPU the pod gets, score) from the table of §5.1.
FGD_TABLE = [
    (pod(2000, 500), NODE_X, (0,), 48),   # GPU0 1000 -> 500 beats GPU1 700 -> 200 (46)
    (pod(2000, 500), NODE_Y, (0,), 48),
    (pod(2000, 300), NODE_X, (2,), 50),   # exact hole fill
    (pod(2000, 300), NODE_Y, (0,), 46),
    (pod(8000, 1000), NODE_X, (0,), 46),
    (pod(8000, 1000), NODE_Y, (0,), 54),
    (pod(2000), NODE_X, (), 42),
    (pod(2000), NODE_Y, (), 50),
]


@pytest.mark.parametrize(("p", "node", "gpus", "score"), FGD_TABLE)
def test_fgd_worked_example_scores(p, node, gpus, score) -> None:  # type: ignore[no-untyped-def]
    fgd = FgdPolicy(EXAMPLE_M)
    placement = fgd.place(view(*node), p, RNG)
    assert (placement.score, placement.gpus) == (score, gpus)
    state = cluster(node)
    assert fgd.score_nodes(state, p, everything(state), RNG).tolist() == [score]
    assert fgd.choose_gpus(state, 0, p, RNG) == gpus


def test_fgd_other_gpus_of_the_table() -> None:
    """The rows for the GPUs FGD does not pick: X GPU1 for 500 (46), X GPU1 for 300 (41)."""
    from dralab.policies.fgd import node_gains

    def measure(cpu: int, gpus: Sequence[int], model: int) -> float:
        return node_fragmentation(cpu, list(gpus), model, EXAMPLE_M)

    by_gpu = {g: s for g, s in node_gains(view(*NODE_X), pod(2000, 500), measure)}
    assert by_gpu[(1,)] == pytest.approx(-150)
    by_gpu = {g: s for g, s in node_gains(view(*NODE_X), pod(2000, 300), measure)}
    assert by_gpu[(1,)] == pytest.approx(-350)
    assert by_gpu[(2,)] == pytest.approx(0)


def test_fill_fragmentation_hand_computed() -> None:
    # X: A fits twice by CPU (8 / 4) -> uses 1000 of 2000; B once -> 1000 left; C all.
    assert node_fill_fragmentation(*NODE_X, 0, EXAMPLE_M) == pytest.approx(
        0.5 * 1000 + 0.3 * 1000 + 0.2 * 2000)
    # Y: A four times, B twice: only C strands anything.
    assert node_fill_fragmentation(*NODE_Y, 0, EXAMPLE_M) == pytest.approx(400)
    state = cluster(NODE_X, NODE_Y)
    assert fill_fragmentation(state.cpu, state.gpus, state.model, EXAMPLE_M) == \
        pytest.approx([1200, 400])


def test_model_constraint_strands_everything() -> None:
    only_b = type(EXAMPLE_M).of([EXAMPLE_M.shapes[0].__class__(4000, 1, 500, allowed=0b10)],
                                [1.0])
    assert node_fragmentation(*NODE_Y, 0, only_b) == 2000
    assert node_fragmentation(*NODE_Y, 1, only_b) == 0
    assert node_fill_fragmentation(*NODE_Y, 0, only_b) == 2000


def test_vectorised_equals_scalar_on_random_states() -> None:
    rng = np.random.default_rng(7)
    gpus = rng.choice([0, 50, 190, 300, 470, 530, 810, 1000], size=(300, 8))
    counts = rng.choice([1, 2, 4, 8], size=300)
    gpus[np.arange(8)[None, :] >= counts[:, None]] = 0
    cpu = rng.integers(0, 20000, size=300)
    model = rng.integers(0, 2, size=300)
    fast = fragmentation(cpu, gpus, model, EXAMPLE_M)
    fill = fill_fragmentation(cpu, gpus, model, EXAMPLE_M)
    for i in range(300):
        row = [int(g) for g in gpus[i, :counts[i]]]
        assert fast[i] == pytest.approx(node_fragmentation(int(cpu[i]), row, int(model[i]),
                                                           EXAMPLE_M))
        assert fill[i] == pytest.approx(node_fill_fragmentation(int(cpu[i]), row,
                                                                int(model[i]), EXAMPLE_M))
