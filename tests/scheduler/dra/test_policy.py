"""Device-scoring policies: first-fit (upstream) versus pack."""

from __future__ import annotations

import pytest

from dralab.scheduler.framework import PluginArgsError
from dralab.scheduler.plugins.dynamicresources.devicepolicy import FirstFit, Pack, make_policy

from .builders import Harness, claim, claims_of, cluster, devices_of, gpus, mig_slices, node, pod
from .builders import template as tpl


def _mig_cluster(policy: str) -> Harness:
    state = cluster([node("n")], mig_slices("n", gpu_count=2, parts=4),
                    templates=[tpl("tpl")],
                    claims=[claim("busy", allocated=[("n", "gpu-1-mig-0")], on="n")])
    return Harness(state, args={"devicePolicy": policy})


@pytest.mark.parametrize(("policy", "expected"), [
    ("first-fit", ("n", "gpu-0-mig-0")),  # upstream: first partition of the idle GPU
    ("pack", ("n", "gpu-1-mig-1")),  # fill the GPU that is already in use
])
def test_partition_choice(policy: str, expected: tuple[str, str]) -> None:
    h = _mig_cluster(policy)
    info = h.add(pod("p", templates={"gpu": "tpl"}))
    assert h.schedule(info).node == "n"
    [c] = claims_of(h.cluster, info)
    assert devices_of(c) == [expected]


def test_pack_keeps_a_whole_gpu_free() -> None:
    h = _mig_cluster("pack")
    for i in range(3):
        assert h.schedule(pod(f"p{i}", templates={"gpu": "tpl"})).node == "n"
    used = {d for c in h.cluster.claims.values() if c.status.allocation for d in devices_of(c)}
    assert {d for _, d in used} == {f"gpu-1-mig-{i}" for i in range(4)}


@pytest.mark.parametrize(("policy", "expected"), [("first-fit", "a"), ("pack", "b")])
def test_node_choice(policy: str, expected: str) -> None:
    state = cluster([node("a"), node("b")], [gpus("a", 4), gpus("b", 4)],
                    templates=[tpl("tpl")],
                    claims=[claim("busy", allocated=[("b", "gpu-0")], on="b")])
    h = Harness(state, args={"devicePolicy": policy})
    attempt = h.schedule(pod("p", templates={"gpu": "tpl"}))
    assert attempt.node == expected
    if policy == "pack":
        assert attempt.scores == {"a": 0, "b": 100}


def test_policies_by_name() -> None:
    assert isinstance(make_policy("first-fit"), FirstFit)
    assert isinstance(make_policy("pack"), Pack)
    with pytest.raises(ValueError, match="unknown device policy"):
        make_policy("best")
    with pytest.raises(PluginArgsError, match="devicePolicy"):
        Harness(cluster(), args={"devicePolicy": "best"})
    with pytest.raises(PluginArgsError, match="maxSteps"):
        Harness(cluster(), args={"maxSteps": 0})
