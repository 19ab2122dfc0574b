"""Kueue's scheduler_preserve_flavor_scan_progress_test.go, ported whole.

Source: kubernetes-sigs/kueue at ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/scheduler/scheduler_preserve_flavor_scan_progress_test.go``,
``TestScheduleForPreserveFlavorScanProgress``: one pytest case per upstream case (id =
the upstream case name). Four scheduling cycles of dralab's ``KueuePolicy`` with fair
sharing and Kueue's TAS on (``KueuePolicy.tas``), the gate
``FlavorFungibilityPreserveScanProgress`` as the case sets it
(``KueuePolicy.preserve_scan_progress``). Between cycles, unless the case says no churn,
flavor-2's nominal quota flips between 5 and 4 (a new ClusterQueue object: Kueue's
AllocatableResourceGeneration advances); upstream then moves inadmissible workloads back
(``ProcessRequeues``), which dralab's policy does itself when the ClusterQueue changes
or the workload has flavors left to try. Compared as upstream: the flavor ``pending``
and ``blocker`` end up admitted on.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.peers.kueue.schedule_builders import cq, fq, group, milli, ps, rf

from dralab.queueing.kueue import KueuePolicy
from dralab.queueing.kueue.tas import TASNode
from dralab.queueing.kueue.tas_assign import TASProvider
from dralab.queueing.kueue.tas_domains import TASGates
from dralab.queueing.model import (
    ClusterQueueSpec,
    PreemptionPolicy,
    QueueingState,
    TopologyRequest,
    WorkloadSpec,
)

HOSTNAME = "kubernetes.io/hostname"
PRESERVE_PROGRESS_CYCLES = 4
EQUAL_TEST_PRIORITY = 10
NODES = tuple(TASNode(f"node-{f}", {"tas-node": "true", "tas-flavor": f, HOSTNAME: f"node-{f}"},
                      {"cpu": milli("2"), "pods": milli("10")}) for f in ("f1", "f2"))
FLAVORS = {f"tas-flavor-{i}": rf(f"tas-flavor-{i}", {"tas-flavor": f"f{i}"},
                                 topology="tas-single-level") for i in (1, 2)}
TOPOLOGIES = {"tas-single-level": (HOSTNAME,)}


def _cluster_queue(flavor_2_quota: str = "4") -> ClusterQueueSpec:
    return cq("tas-cq", group(fq("tas-flavor-1", cpu="4"), fq("tas-flavor-2", cpu=flavor_2_quota)),
              policy=PreemptionPolicy("LowerPriority", "Any"))


def _workload(name: str, created: float, node_selector: dict[str, str] | None) -> WorkloadSpec:
    pod_set = replace(ps("one", 1, {"cpu": "2"}, node_selector=node_selector),
                      topology=TopologyRequest(HOSTNAME, required=True))
    return WorkloadSpec(f"default/{name}", "default/tas-lq", None, EQUAL_TEST_PRIORITY, created,
                        (pod_set,))


# name, gate enabled, no churn, the flavor "pending" ends up admitted on ("" none)
CASES = [
    ("gate disabled", False, False, ""),
    ("gate enabled", True, False, "tas-flavor-2"),
    ("no generation churn, gate disabled", False, True, "tas-flavor-2"),
    ("no generation churn, gate enabled", True, True, "tas-flavor-2"),
]


@pytest.mark.parametrize(("name", "gate", "no_churn", "want_pending_flavor"), CASES,
                         ids=[c[0] for c in CASES])
def test_schedule_for_preserve_flavor_scan_progress(name: str, gate: bool, no_churn: bool,
                                                    want_pending_flavor: str) -> None:
    """TestScheduleForPreserveFlavorScanProgress: kubernetes-sigs/kueue ff69552e."""
    state = QueueingState(flavors=dict(FLAVORS), cluster_queues={"tas-cq": _cluster_queue()},
                          local_queues={"default/tas-lq": "tas-cq"})
    state.workloads["default/blocker"] = _workload("blocker", -60.0, {"tas-flavor": "f1"})
    state.workloads["default/pending"] = _workload("pending", 0.0, None)
    policy = KueuePolicy(fair_sharing=True)
    policy.preserve_scan_progress = gate
    policy.tas = TASProvider(FLAVORS, TOPOLOGIES, NODES, TASGates(), False)
    for cycle in range(PRESERVE_PROGRESS_CYCLES):
        policy.cycle(state, 0.0)
        if not no_churn:
            # a real quota change every cycle: Kueue's generation advances
            state.cluster_queues["tas-cq"] = _cluster_queue("5" if cycle % 2 == 0 else "4")

    def admitted_flavor(key: str) -> str:
        admission = state.admitted.get(key)
        if admission is None:
            return ""
        return next(iter(admission.pod_sets[0].flavors.values()), "")

    assert admitted_flavor("default/pending") == want_pending_flavor
    assert admitted_flavor("default/blocker") == "tas-flavor-1"
