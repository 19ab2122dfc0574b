"""Each policy's score and GPU choice on hand-made nodes, hand-computed from reference §6."""

from __future__ import annotations

import numpy as np
import pytest

from dralab.policies import (
    PAPER_POLICIES,
    BestFitPolicy,
    DotProdPolicy,
    FgdFsPolicy,
    FgdPolicy,
    GpuClusteringPolicy,
    GpuPackingPolicy,
    NodeArrays,
    Policy,
    PolicyContext,
    RandomPolicy,
    Scarcity,
    Shape,
    TargetWorkload,
    gpu_class,
    make_policy,
)
from dralab.policies.gpus import best_fit, default_gpus, lowest_free

from .builders import EXAMPLE_M, cluster, everything, pod

RNG = np.random.default_rng(0)
SHARE = 1 << gpu_class(1, 300)       # class bit of sharing pods
TWO = 1 << gpu_class(2, 1000)        # class bit of 2-GPU pods

# N1: idle 4-GPU node, 32 cores. N2: 16 cores, GPUs [1000, 400, 0, 1000], a sharing pod on it.
N1 = (32000, (1000, 1000, 1000, 1000))
N2 = (16000, (1000, 400, 0, 1000))
A = pod(4000, 300)                   # sharing, 0.3 GPU
B = pod(8000, 1000, num_gpu=2)       # two whole GPUs
C = pod(2000)                        # CPU only


def scores(policy: Policy, p: object, classes: tuple[int, int] = (0, SHARE)) -> list[int]:
    state = cluster(N1, N2, classes=list(classes))
    assert isinstance(p, type(A))
    vector: list[int] = policy.score_nodes(state, p, everything(state), RNG).tolist()
    scalar = [policy.place(state.view(i), p, RNG).score for i in range(len(state))]
    assert vector == scalar
    return vector


def test_gpu_rules() -> None:
    assert best_fit((1000, 400, 0, 1000), 300) == 1
    assert best_fit((600, 400, 400), 300) == 1          # lowest index among equals
    assert best_fit((200, 100), 300) == -1
    assert lowest_free((1000, 400, 1000, 1000), 2) == (0, 2)
    assert default_gpus(N2[1], A) == (1,)
    assert default_gpus(N2[1], B) == (0, 3)
    assert default_gpus(N2[1], C) == ()


def test_dotprod() -> None:
    # N1: v=(.25, .5), u=(4/128, .3/8): dot=.0265625 -> trunc(100(1-.01328125)) = 98.
    # N2: v=(.125, .3): dot=.01515625 -> 99 (less aligned free resources win).
    assert scores(DotProdPolicy(), A) == [98, 99]


def test_gpu_clustering() -> None:
    # q = trunc(25 (8000 - idle) / 8000): N1 idle 4000 -> 12; N2 idle 2400 -> 17.
    assert scores(GpuClusteringPolicy(), A) == [25 + 12, 75 + 17]       # empty / only mine
    assert scores(GpuClusteringPolicy(), B) == [25 + 12, 17]            # only other classes
    assert scores(GpuClusteringPolicy(), A, (0, SHARE | TWO)) == [37, 50 + 17]
    assert scores(GpuClusteringPolicy(), C) == [0, 0]


def test_gpu_packing() -> None:
    # N1 GPU-idle 4-GPU node: max(33 - 4, 4) = 29. N2: A fits GPU1 (400 free, partly used):
    # 100 - trunc(trunc(400 * 100 / 1000) / 10) = 96. B opens two free GPUs: 50 - 2 = 48.
    assert scores(GpuPackingPolicy(), A) == [29, 96]
    assert scores(GpuPackingPolicy(), B) == [29, 48]
    assert scores(GpuPackingPolicy(), C) == [0, 0]
    # A sharing pod that needs a fresh GPU on a used node: 50 - 1 = 49; idle sizes 8/2/1.
    assert scores(GpuPackingPolicy(), pod(1000, 700)) == [29, 49]
    state = cluster((8000, (1000,) * 8), (8000, (1000, 1000)), (8000, (1000,)))
    assert GpuPackingPolicy().score_nodes(state, A, everything(state), RNG).tolist() == \
        [25, 31, 32]


def test_best_fit() -> None:
    # N1: 1 - (.5 * 28000/128000 + .5 * 3700/8000) = .659375 -> 65; N2: 1 - .178125 -> 82.
    assert scores(BestFitPolicy(), A) == [65, 82]


def test_random_picks_one_node_uniformly() -> None:
    state = cluster(N1, N2, (8000, (1000,)))
    rng = np.random.default_rng(1)
    wins = np.zeros(3)
    for _ in range(600):
        s = RandomPolicy().score_nodes(state, A, everything(state), rng)
        assert sorted(s.tolist()) == [0, 0, 100]
        wins[int(s.argmax())] += 1
    assert wins.min() > 150
    gpus = {RandomPolicy().choose_gpus(state, 1, pod(1000, 300), rng) for _ in range(50)}
    assert gpus == {(0,), (1,), (3,)}  # uniform among GPUs with enough free share


def test_fgd_picks_gpu_by_score_not_best_fit() -> None:
    state = cluster((8000, (1000, 700, 300, 0)))
    assert FgdPolicy(EXAMPLE_M).choose_gpus(state, 0, pod(2000, 500), RNG) == (0,)
    assert BestFitPolicy().choose_gpus(state, 0, pod(2000, 500), RNG) == (1,)


def scarce_context() -> PolicyContext:
    """n0: model a, 8 GPUs, 64 cores; n1: model b, 2 GPUs, 16 cores (see test_scarcity)."""
    state = NodeArrays.build([64000, 16000], [10**7] * 2, [8, 2], ["a", "b"])
    shapes = TargetWorkload.of(
        [Shape(1000, 1, 1000), Shape(1000, 1, 1000, allowed=0b10), Shape(60000, 8, 1000)],
        [3, 1, 1])
    return PolicyContext(shapes, shapes, state)


def test_scarcity() -> None:
    # Demand 3000 + 1000 + 8000: q = 1/4, 1/12, 2/3. Capacity 10 GPUs. The free shape adds 0;
    # the b-only shape 1/12 (10/2 - 1) = 1/3 to n1; the 8-GPU shape 2/3 (10/8 - 1) = 1/6 to n0.
    ctx = scarce_context()
    rho = Scarcity.of(ctx.shapes, ctx.cluster)
    assert rho.of_nodes(ctx.cluster, everything(ctx.cluster)) == pytest.approx([1 / 6, 1 / 3])
    assert [rho.of_view(ctx.cluster.view(i)) for i in (0, 1)] == pytest.approx([1 / 6, 1 / 3])


def test_fgd_fs_charges_scarce_capacity() -> None:
    ctx = scarce_context()
    plain = FgdFsPolicy(ctx.target, Scarcity.of(ctx.shapes, ctx.cluster), scarcity_weight=0)
    priced = FgdFsPolicy(ctx.target, Scarcity.of(ctx.shapes, ctx.cluster))
    one = pod(1000, 1000)
    nodes = everything(ctx.cluster)
    base = plain.score_nodes(ctx.cluster, one, nodes, RNG)
    cost = priced.score_nodes(ctx.cluster, one, nodes, RNG)
    assert (cost <= base).all() and cost[1] < base[1]
    assert [priced.place(ctx.cluster.view(i), one, RNG).score for i in (0, 1)] == cost.tolist()
    # CPU-only pods pay no scarcity cost.
    assert (priced.score_nodes(ctx.cluster, pod(1000), nodes, RNG) ==
            plain.score_nodes(ctx.cluster, pod(1000), nodes, RNG)).all()


@pytest.mark.parametrize("name", [*PAPER_POLICIES[1:], "FGD-FS"])
def test_vectorised_equals_scalar(name: str) -> None:
    """score_nodes == place per node, and choose_gpus == place's GPUs, on random states."""
    ctx = PolicyContext(EXAMPLE_M, EXAMPLE_M, cluster(N1, N2))
    policy = make_policy(name, ctx)
    rng = np.random.default_rng(3)
    for _ in range(40):
        nodes = [(int(rng.integers(2000, 40000)),
                  tuple(int(g) for g in rng.choice([0, 190, 500, 700, 1000], size=k)))
                 for k in rng.choice([1, 2, 4, 8], size=6)]
        state = cluster(*nodes, classes=[int(c) for c in rng.integers(0, 64, size=6)])
        for p in (pod(2000, 300), pod(4000, 500), pod(8000, 1000), pod(9000, 1000, 2),
                  pod(3000)):
            idx = np.flatnonzero(state.feasible(p))
            if not idx.size:
                continue
            vector = policy.score_nodes(state, p, idx, rng).tolist()
            for i, node in enumerate(idx):
                placement = policy.place(state.view(int(node)), p, rng)
                assert placement.score == vector[i]
                assert policy.choose_gpus(state, int(node), p, rng) == placement.gpus


def test_unknown_policy() -> None:
    with pytest.raises(ValueError, match="unknown policy"):
        make_policy("Nope", PolicyContext(EXAMPLE_M, EXAMPLE_M, cluster(N1)))


def test_model_mask() -> None:
    state = cluster((1000, (1000,)), (1000, (1000,)), models=["T4", "G2"])
    assert state.models == ("G2", "T4")
    assert state.model_mask(frozenset()) == 0
    assert state.model_mask(frozenset({"T4", "A100"})) == 0b10
    nowhere = state.model_mask(frozenset({"A100"}))
    assert nowhere and not state.feasible(pod(10, 500, allowed=nowhere)).any()
    assert state.feasible(pod(10, 500, allowed=0b10)).tolist() == [True, False]
