"""Topology-aware placement: Kueue's required and preferred levels, BestFit among
domains, with the room in each domain measured by the scheduler (DRA devices count).

The fleet: 8 H100 nodes, 2 per rack, 2 racks per block (4 racks, 2 blocks). Pods
ask for 4 GPUs, so a node holds 2 and a rack 4. Occupants leave the racks with room
for 3, 4, 2 and 1 more pods (rack-01 .. rack-04).
"""

from __future__ import annotations

import pytest

from dralab.api.core import Pod
from dralab.queueing.feasibility import topology_assignment
from dralab.queueing.model import NodeTopology, TopologyAssignment, TopologyRequest
from dralab.queueing.placement import (
    GangFailure,
    GangPlacement,
    commit_pod_sets,
    place_pod_sets,
    topology_domains,
)
from dralab.queueing.writer import topology_assignment_doc
from dralab.scheduler.scheduler import Scheduler

from .fleets import BLOCK, HOST, RACK, contents, gpu_pod, h100_cluster

TOPOLOGY = NodeTopology("default", (BLOCK, RACK, HOST))
# Occupants (4 GPUs each) per node: rack-01 1, rack-02 0, rack-03 2, rack-04 3.
OCCUPIED = {"h100-01": 1, "h100-05": 1, "h100-06": 1, "h100-07": 2, "h100-08": 1}


def racks() -> Scheduler:
    scheduler = Scheduler.build(h100_cluster(8, nodes_per_rack=2, racks_per_block=2))
    for node, count in OCCUPIED.items():
        pods = [gpu_pod(f"occupant-{node}-{i}", 4, node_selector={HOST: node})
                for i in range(count)]
        assert isinstance(commit_pod_sets(scheduler, pods), GangPlacement)
    return scheduler


def pods(count: int, gpus: int = 4) -> list[Pod]:
    return [gpu_pod(f"w-{i}", gpus) for i in range(count)]


def rack_of(scheduler: Scheduler, node: str) -> str:
    return scheduler.cluster.nodes[node].node.metadata.labels[RACK]


def test_domains_are_grouped_by_every_broader_level() -> None:
    scheduler = racks()
    names = [d.name for d in topology_domains(scheduler, TOPOLOGY, RACK)]
    assert names == ["h100-block-01/h100-rack-01", "h100-block-01/h100-rack-02",
                     "h100-block-02/h100-rack-03", "h100-block-02/h100-rack-04"]
    assert len(topology_domains(scheduler, TOPOLOGY, HOST)) == 8


@pytest.mark.parametrize(("count", "rack"), [
    (1, "h100-rack-04"),   # fits everywhere; rack-04 has exactly one slot
    (2, "h100-rack-03"),   # rack-03 fits two exactly
    (3, "h100-rack-01"),   # rack-01 (room 3) beats rack-02 (room 4)
    (4, "h100-rack-02"),   # only the empty rack holds four
])
def test_required_rack_picks_the_fitting_rack_with_least_room(count: int, rack: str) -> None:
    scheduler = racks()
    placed = place_pod_sets(scheduler, pods(count), TOPOLOGY, TopologyRequest(RACK, required=True))
    assert isinstance(placed, GangPlacement)
    assert placed.domain is not None and placed.domain.name.endswith(rack)
    assert {rack_of(scheduler, node) for node in placed.nodes().values()} == {rack}


def test_required_rack_that_no_rack_can_hold_fails_with_each_racks_reason() -> None:
    scheduler = racks()
    before = contents(scheduler.cluster)
    failed = place_pod_sets(scheduler, pods(5), TOPOLOGY, TopologyRequest(RACK, required=True))
    assert isinstance(failed, GangFailure)
    assert failed.message.startswith(f"no {RACK} domain can hold all 5 pods: ")
    assert "h100-rack-01: pod " in failed.message and "cannot allocate all claims" in \
        failed.message
    assert contents(scheduler.cluster) == before
    # The same five pods fit the fleet without the constraint (10 slots are free).
    assert isinstance(place_pod_sets(scheduler, pods(5)), GangPlacement)


def test_preferred_rack_falls_back_to_a_block_then_anywhere() -> None:
    scheduler = racks()
    preferred = TopologyRequest(RACK)
    in_rack = place_pod_sets(scheduler, pods(3), TOPOLOGY, preferred)
    assert isinstance(in_rack, GangPlacement) and in_rack.domain is not None
    assert in_rack.domain.level == RACK
    # Five fit no rack; block-01 has room 7, block-02 room 3.
    in_block = place_pod_sets(scheduler, pods(5), TOPOLOGY, preferred)
    assert isinstance(in_block, GangPlacement) and in_block.domain is not None
    assert (in_block.domain.level, in_block.domain.name) == (BLOCK, "h100-block-01")
    # Nine fit no block, but the fleet has ten free slots.
    anywhere = place_pod_sets(scheduler, pods(9), TOPOLOGY, preferred)
    assert isinstance(anywhere, GangPlacement) and anywhere.domain is None
    assert len({rack_of(scheduler, n) for n in anywhere.nodes().values()}) == 4
    assert isinstance(place_pod_sets(scheduler, pods(11), TOPOLOGY, preferred), GangFailure)


def test_required_block_and_required_host() -> None:
    scheduler = racks()
    block = place_pod_sets(scheduler, pods(3), TOPOLOGY, TopologyRequest(BLOCK, required=True))
    # block-02 (room 3) is the exact fit.
    assert isinstance(block, GangPlacement) and block.domain is not None
    assert block.domain.name == "h100-block-02"
    host = place_pod_sets(scheduler, pods(2), TOPOLOGY, TopologyRequest(HOST, required=True))
    assert isinstance(host, GangPlacement)
    (node,) = set(host.nodes().values())
    assert node in {"h100-02", "h100-03", "h100-04"}  # the empty nodes
    assert host.domain is not None and host.domain.name.endswith(node)


def test_devices_count_not_just_node_resources() -> None:
    # Every node has plenty of cpu and memory; only the GPUs (DRA devices published in
    # ResourceSlices) decide. An 8-GPU pod fits only on an untouched node: racks 01
    # and 02 have one, so a pair of 8-GPU pods fits only in rack-02.
    scheduler = racks()
    placed = place_pod_sets(scheduler, pods(2, gpus=8), TOPOLOGY,
                            TopologyRequest(RACK, required=True))
    assert isinstance(placed, GangPlacement)
    assert sorted(placed.nodes().values()) == ["h100-03", "h100-04"]
    assert isinstance(place_pod_sets(scheduler, pods(3, gpus=8), TOPOLOGY,
                                     TopologyRequest(RACK, required=True)), GangFailure)


def test_commit_keeps_the_chosen_domain_and_its_node_selectors() -> None:
    scheduler = racks()
    done = commit_pod_sets(scheduler, pods(2), TOPOLOGY, TopologyRequest(RACK, required=True))
    assert isinstance(done, GangPlacement)
    for placed in done.pods:
        pod = scheduler.cluster.pods[placed.pod].pod
        assert rack_of(scheduler, pod.spec.node_name or "") == "h100-rack-03"
        assert pod.spec.node_selector == {BLOCK: "h100-block-02", RACK: "h100-rack-03"}


def test_unknown_level_unconstrained_and_conflicting_selector() -> None:
    scheduler = racks()
    failed = place_pod_sets(scheduler, pods(1), TOPOLOGY, TopologyRequest("zone", required=True))
    assert isinstance(failed, GangFailure) and "has no level 'zone'" in failed.message
    free = place_pod_sets(scheduler, pods(9), TOPOLOGY, TopologyRequest(unconstrained=True))
    assert isinstance(free, GangPlacement) and free.domain is None
    pinned = [gpu_pod("w", 4, node_selector={RACK: "h100-rack-04"})]
    placed = place_pod_sets(scheduler, pinned, TOPOLOGY, TopologyRequest(RACK, required=True))
    assert isinstance(placed, GangPlacement) and placed.domain is not None
    assert placed.domain.name.endswith("h100-rack-04")


# --- Kueue's topologyAssignment of a placement ------------------------------------------

@pytest.mark.parametrize(("topology", "count", "request_", "levels", "domains"), [
    # Hostname is the lowest level: Kueue writes only that level.
    (TOPOLOGY, 4, TopologyRequest(RACK, required=True), (HOST,),
     ((("h100-03",), 2), (("h100-04",), 2))),
    (TOPOLOGY, 3, TopologyRequest(RACK, required=True), (HOST,),
     ((("h100-01",), 1), (("h100-02",), 2))),
    # Without a hostname level: every level, counted per rack.
    (NodeTopology("racks", (BLOCK, RACK)), 4, TopologyRequest(RACK, required=True),
     (BLOCK, RACK), ((("h100-block-01", "h100-rack-02"), 4),)),
    (NodeTopology("racks", (BLOCK, RACK)), 6, TopologyRequest(BLOCK, required=True),
     (BLOCK, RACK), ((("h100-block-01", "h100-rack-01"), 2),
                     (("h100-block-01", "h100-rack-02"), 4))),
])
def test_topology_assignment_counts_pods_per_lowest_level_domain(
        topology: NodeTopology, count: int, request_: TopologyRequest,
        levels: tuple[str, ...], domains: tuple[tuple[tuple[str, ...], int], ...]) -> None:
    scheduler = racks()
    placed = place_pod_sets(scheduler, pods(count), topology, request_)
    assert isinstance(placed, GangPlacement)
    assigned = topology_assignment(scheduler, topology, placed)
    assert assigned == TopologyAssignment(levels, domains)
    assert sum(n for _, n in assigned.domains) == count
    assert topology_assignment_doc(assigned) == {
        "levels": list(levels),
        "domains": [{"values": list(values), "count": n} for values, n in domains]}


def test_no_topology_assignment_when_a_pod_lands_outside_the_topology() -> None:
    # A preferred request that spilled over onto nodes without the levels' labels.
    scheduler = racks()
    placed = place_pod_sets(scheduler, pods(2), None, None)
    assert isinstance(placed, GangPlacement)
    missing = NodeTopology("zones", ("topology.kubernetes.io/zone",))
    assert topology_assignment(scheduler, missing, placed) is None
