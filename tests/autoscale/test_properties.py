"""Properties of the binpacking estimate on whole-GPU pods (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from .helpers import PRODUCT, fleet, pod, run, template


@settings(max_examples=15, deadline=None)
@given(pods=st.integers(min_value=1, max_value=30), gpus=st.sampled_from([1, 2, 4, 8]),
       max_size=st.integers(min_value=1, max_value=3))
def test_whole_gpu_pods_take_ceil_nodes_up_to_max(pods: int, gpus: int, max_size: int) -> None:
    claim = template("h100s", count=gpus, cel=f"{PRODUCT}.contains('H100')")
    decisions = run(fleet("cpu", "h100", h100={"autoscaling": {"max": max_size}}), claim,
                    *[pod(f"p{i:02d}", "h100s") for i in range(pods)])
    per_node = 8 // gpus
    nodes = min(max_size, -(-pods // per_node))
    helped = min(pods, nodes * per_node)
    assert [(u.pool, u.add, len(u.pods)) for u in decisions.scale_ups] == [
        ("h100", nodes, helped)]
    assert len(decisions.pending) == pods - helped
    assert all(p.reason == f"h100: max size {max_size} reached" for p in decisions.pending)
    # Arrival order decides who is left pending: the last pods.
    assert sorted(p.pod for p in decisions.pending) == \
        [f"default/p{i:02d}" for i in range(helped, pods)]
