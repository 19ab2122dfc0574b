"""The replay protocol's pieces: M, pod order and inflation, node priority, determinism."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dralab.replay.protocol import (
    MAX_REPLAY_ARRIVALS,
    MAX_REPLAY_NODE_ARRIVALS,
    ProtocolError,
    arrival_order,
    check_replayable,
    draw_protocol,
    expected_arrivals,
    popular_shapes,
)
from dralab.replay.run import prepare

from .builders import pod_record


def test_default_m_has_35_shapes_covering_95_26() -> None:
    sc = prepare("default")
    shapes, covered = popular_shapes(sc.pods)
    assert len(shapes) == 35
    assert round(100 * covered, 2) == 95.26
    top = [(s.cpu, s.num_gpu, s.gpu_milli) for s in shapes[:6]]
    assert top == [(3152, 1, 810), (11300, 1, 1000), (11400, 1, 1000), (3152, 1, 1000),
                   (11908, 1, 470), (12500, 0, 0)]
    # Renormalised: the most common shape is 13.5 % of M, then 11.3 %.
    assert sc.target.prob[:2] == pytest.approx([0.1348, 0.1125], abs=5e-4)
    assert sc.target.prob.sum() == pytest.approx(1.0)


@pytest.mark.parametrize(("workload", "count"),
                         [("gpushare100", 21), ("multigpu50", 43), ("gpuspec33", 127)])
def test_m_of_variants(workload: str, count: int) -> None:
    assert len(prepare(workload).target.shapes) == count


def test_inflation_reaches_130_percent_and_keeps_the_trace_first() -> None:
    sc = prepare("default")
    cap = sc.capacity_milli
    assert cap == 6_212_000 and len(sc.nodes) == 1213
    order = arrival_order(sc.pods, np.random.default_rng(42), cap)
    n = len(sc.pods)
    assert sorted(order[:n].tolist()) == list(range(n))     # every trace pod once, first
    total = sum(sc.pods[int(i)].gpu_request for i in order)
    assert 1.3 * cap - 1000 < total <= 1.3 * cap             # default: all draws single-GPU
    assert 10_000 < len(order) < 11_500


def test_inflation_stop_rule_uses_the_per_gpu_share() -> None:
    """The artifact's quirk: the stop test adds a draw's per-GPU share, not its total."""
    pods = [pod_record("a", num_gpu=1), pod_record("b", num_gpu=2)]
    target = 1.3 * 10_000
    over = 0
    for seed in range(60):
        order = arrival_order(pods, np.random.default_rng(seed), 10_000)
        total = sum(pods[int(i)].gpu_request for i in order)
        assert total + 1000 > target          # stopped at the first draw passing the target
        assert total <= target + 1000         # a 2-GPU draw may pass it by one GPU
        over += total > target
    assert over > 0


def test_trimming_when_the_workload_is_too_big() -> None:
    sc = prepare("multigpu50")
    order = arrival_order(sc.pods, np.random.default_rng(42), sc.capacity_milli)
    assert len(set(order.tolist())) == len(order) < len(sc.pods)
    total = sum(sc.pods[int(i)].gpu_request for i in order)
    assert 1.3 * sc.capacity_milli - 8000 < total <= 1.3 * sc.capacity_milli


def test_draws_are_deterministic_per_seed() -> None:
    sc = prepare("default")
    a = draw_protocol(sc.pods, len(sc.nodes), sc.capacity_milli, np.random.default_rng(42))
    b = draw_protocol(sc.pods, len(sc.nodes), sc.capacity_milli, np.random.default_rng(42))
    c = draw_protocol(sc.pods, len(sc.nodes), sc.capacity_milli, np.random.default_rng(43))
    assert np.array_equal(a.order, b.order) and np.array_equal(a.node_order, b.node_order)
    assert not np.array_equal(a.order, c.order)
    assert sorted(a.node_order.tolist()) == list(range(len(sc.nodes)))


def test_pod_order_does_not_depend_on_file_order() -> None:
    """Pods are sorted by name before the shuffle, so a reordered file replays the same."""
    pods = [pod_record(f"p{i:02d}", gpu_milli=100 * (i % 9 + 1)) for i in range(30)]
    a = arrival_order(pods, np.random.default_rng(5), 10_000)
    back = pods[::-1]
    b = arrival_order(back, np.random.default_rng(5), 10_000)
    assert [pods[int(i)].name for i in a] == [back[int(i)].name for i in b]


# --- termination and bounds (issue 16) ---------------------------------------------------

def test_cpu_only_pods_cannot_inflate_and_say_so() -> None:
    pods = [pod_record("p0", cpu=1000, num_gpu=0, gpu_milli=0)]
    with pytest.raises(ProtocolError, match="no pod requests a GPU"):
        arrival_order(pods, np.random.default_rng(0), 2000)
    with pytest.raises(ProtocolError, match="w: no pod requests a GPU"):
        check_replayable(pods, 2000, "w")
    assert expected_arrivals(pods, 2000) == float("inf")


def test_inflation_stops_at_max_arrivals() -> None:
    pods = [pod_record("p0", cpu=1, num_gpu=1, gpu_milli=1)]
    with pytest.raises(ProtocolError, match="more than 50 arrivals"):
        arrival_order(pods, np.random.default_rng(0), 1000, max_arrivals=50)
    assert len(arrival_order(pods, np.random.default_rng(0), 10)) == 13


@pytest.mark.parametrize(("capacity", "nodes", "message"), [
    (0, 1, "the nodes have no GPU"),
    (1_000_000, 1, "1,300,000 arrivals, more than 1,000,000 (MAX_REPLAY_ARRIVALS)"),
    (1_000, 10_000_000, "MAX_REPLAY_NODE_ARRIVALS"),
])
def test_check_replayable(capacity: int, nodes: int, message: str) -> None:
    pods = [pod_record("p0", cpu=1, num_gpu=1, gpu_milli=1),
            pod_record("p1", cpu=1, num_gpu=0, gpu_milli=0)]
    with pytest.raises(ProtocolError, match=re.escape(message)):
        check_replayable(pods[:1], capacity, "w", num_nodes=nodes)
    # Expected arrivals: the trace, then one draw per mean request (here 0.5 milli-GPU).
    assert expected_arrivals(pods, 100) == pytest.approx(2 + (130 - 1) / 0.5)


def test_the_default_workload_is_well_within_the_bounds() -> None:
    sc = prepare("default")
    expected = expected_arrivals(sc.pods, sc.capacity_milli)
    assert 10_000 < expected < 12_000
    assert expected * len(sc.nodes) < MAX_REPLAY_NODE_ARRIVALS / 50
    assert expected < MAX_REPLAY_ARRIVALS / 50
