"""NVLinkDomainGang: dralab's opt-in ComputeDomain gang in one NVLink domain (issue 36).

Beyond upstream: NVIDIA's k8s-dra-driver-gpu (22407113785e78c7763b4637689a201eb39c6199)
and kube-scheduler place a ComputeDomain's pods one by one, so without pod affinity
a job may span NVLink domains. The plugin is off by default; a profile that names
it holds the pods at Permit until all hold a node in one domain, the fullest that
fits first. Nodes are NVL72-shaped GB200 trays built in tests/scheduler/test_nvlink.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralab.api.base import KubeObject
from dralab.scheduler import ConfigError, schedule
from dralab.scheduler.plugins.nvlinkgang import NAME

from .test_nvlink import CLUSTER, compute_domain, fleet, obj, placed, worker

GANG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler",
                  "plugins": {"multiPoint": {"enabled": [{"name": NAME}]}}}]}

# Clique 0: three empty trays (room 3); clique 1: two lightly used trays (room 2).
# Default scoring (LeastAllocated) prefers the empty trays of clique 0.
TRAYS = (("a0", 0, "0"), ("a1", 0, "0"), ("a2", 0, "0"), ("b0", 1, "8"), ("b1", 1, "8"))


def job(num_nodes: int, count: int, trays: tuple[tuple[str, int, str], ...] = TRAYS
        ) -> list[KubeObject]:
    objects = fleet(*trays) + compute_domain("cd", num_nodes, "cd-channel")
    return objects + [worker(f"w-{i}", "cd-channel") for i in range(count)]


def cliques(where: dict[str, str | None]) -> set[str]:
    return {n[0] for n in where.values() if n}


def test_off_by_default_the_job_may_span_domains() -> None:
    """Upstream: no gang, pods one by one; the emptiest trays first, whatever the domain."""
    where = placed(schedule(job(2, 2, (("a0", 0, "0"), ("a1", 0, "60"), ("b0", 1, "8"),
                                        ("b1", 1, "60")))))
    assert where == {"w-0": "a0", "w-1": "b0"}


def test_on_the_job_lands_in_one_domain() -> None:
    where = placed(schedule(job(2, 2, (("a0", 0, "0"), ("a1", 0, "60"), ("b0", 1, "8"),
                                        ("b1", 1, "60"))), GANG))
    assert None not in where.values()
    assert len(cliques(where)) == 1


def test_on_the_fullest_domain_that_fits_comes_first() -> None:
    """Domain packing: clique 1 (room 2) holds the 2-node job exactly; clique 0's three
    empty trays are left whole, though LeastAllocated alone prefers them."""
    assert cliques(placed(schedule(job(2, 2)))) == {"a"}  # default: emptiest trays
    where = placed(schedule(job(2, 2), GANG))
    assert where == {"w-0": "b1", "w-1": "b0"} or where == {"w-0": "b0", "w-1": "b1"}


def test_on_a_job_no_domain_holds_waits_with_the_room_it_needs() -> None:
    """numNodes 4: no domain has 4 trays; no pod binds, each says what it needs."""
    result = schedule(job(4, 4), GANG)
    assert set(placed(result).values()) == {None}
    messages = {u.message for u in result.unplaced}
    assert any(f"needs 4 nodes in one NVLink domain; the largest free domain has 3 "
               f"({CLUSTER}.0)" in m for m in messages), messages


def test_off_the_same_job_binds_some_pods_across_domains() -> None:
    """Without the gang, 4 workers on 5 trays bind in both domains."""
    where = placed(schedule(job(4, 4)))
    assert None not in where.values()
    assert cliques(where) == {"a", "b"}


def test_gang_size_from_the_pods_when_num_nodes_is_zero() -> None:
    """numNodes 0 (any number of nodes): the gang is the CD's pods, three here; only
    clique 0 holds three, so all go there."""
    where = placed(schedule(job(0, 3), GANG))
    assert sorted(n for n in where.values() if n) == ["a0", "a1", "a2"]


def test_pod_outside_a_compute_domain_is_not_held() -> None:
    """A pod without a ComputeDomain claim binds as usual beside a CD short of pods."""
    plain = obj({"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "plain", "namespace": "default"},
                 "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                     "limits": {"nvidia.com/gpu": "4"}}}]}})
    result = schedule(fleet(*TRAYS) + compute_domain("cd", 2, "cd-channel")
                      + [worker("w-0", "cd-channel"), plain], GANG)
    where = placed(result)
    assert where["plain"] is not None
    assert where["w-0"] is None


def test_a_compute_domain_short_of_pods_waits_outside_the_queue() -> None:
    """numNodes 2 and one pod: the gang can never complete, so the pod is not tried;
    it says what it waits for."""
    result = schedule(fleet(*TRAYS) + compute_domain("cd", 2, "cd-channel")
                      + [worker("w-0", "cd-channel")], GANG)
    assert placed(result) == {"w-0": None}
    (message,) = {u.message for u in result.unplaced}
    assert "waiting for 2 pods of ComputeDomain" in message
    assert "(numNodes 2) to appear in scheduling queue; 1 so far" in message


def test_bad_timeout_is_a_config_error() -> None:
    config = {**GANG, "profiles": [{**GANG["profiles"][0], "pluginConfig": [
        {"name": NAME, "args": {"permitWaitingTimeSeconds": 0}}]}]}
    with pytest.raises(ConfigError, match="permitWaitingTimeSeconds"):
        schedule(job(2, 2), config)


def _gpu_hog(node: str) -> KubeObject:
    """A running pod that takes all 4 GPUs of ``node``: the tray is not free."""
    return obj({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"hog-{node}", "namespace": "other"},
                "spec": {"nodeName": node, "containers": [
                    {"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]},
                "status": {"phase": "Running"}})


@settings(max_examples=25, deadline=None, derandomize=True)
@given(busy=st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=3, max_size=3),
       size=st.integers(min_value=1, max_value=4))
def test_the_plugin_picks_the_domain_the_simulators_domain_packing_picks(
        busy: list[list[bool]], size: int) -> None:
    """Three NVLink domains of four trays, some trays taken: the plugin places a job of
    ``size`` trays in a domain of the fewest free trays that still holds it, the rule
    NVLinkScenario's ``domain-packing`` policy (sim.nvlink_run) models; no pod binds when
    no domain holds it."""
    trays = tuple((f"{'abc'[d]}{i}", d, "0") for d in range(3) for i in range(4))
    hogs = [_gpu_hog(f"{'abc'[d]}{i}") for d in range(3) for i in range(4) if busy[d][i]]
    objects = fleet(*trays) + compute_domain("cd", size, "cd-channel") + hogs
    objects += [worker(f"w-{i}", "cd-channel", gpus=4) for i in range(size)]
    where = placed(schedule(objects, GANG))
    free = {d: busy[d].count(False) for d in range(3)}
    fits = {d: n for d, n in free.items() if n >= size}
    if not fits:
        assert set(where.values()) == {None}
        return
    assert None not in where.values()
    tightest = {"abc"[d] for d, n in fits.items() if n == min(fits.values())}
    assert len(cliques(where)) == 1 and cliques(where) <= tightest, (where, free)
