"""KAI's topology tree built at session open, ported.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/topology/topology_plugin_test.go`` (Apache-2.0):
TestTopologyPlugin_initializeTopologyTree (not a table: one case). Three nodes with
block/rack labels, one Topology of those two levels; the tree is
``KaiTopologyTree.build`` over the session's nodes (the test's informer cache and
fake clients only feed the session, which the snapshot is here).
"""

from __future__ import annotations

from tests.peers.kai.topology_helpers import Cite

from dralab.queueing.kai.framework import Session
from dralab.queueing.kai.model import KaiNode, KaiState
from dralab.queueing.kai.topology import KaiTopologyTree

FILE = "topology_plugin_test.go"
BLOCK, RACK = "test-topology-label/block", "test-topology-label/rack"


def test_topology_plugin_initialize_topology_tree() -> None:
    cite = Cite(FILE, "TestTopologyPlugin_initializeTopologyTree",
                "TestTopologyPlugin_initializeTopologyTree", 29)
    nodes = {
        "test-node-0": KaiNode("test-node-0", gpus=1, cpu_milli=1000,
                               labels={BLOCK: "test-block-1", RACK: "test-rack-1"}),
        "test-node-1": KaiNode("test-node-1", gpus=1, cpu_milli=1000,
                               labels={BLOCK: "test-block-1", RACK: "test-rack-2"}),
        "test-node-2": KaiNode("test-node-2", gpus=3, cpu_milli=1000,
                               labels={BLOCK: "test-block-2", RACK: "test-rack-1"}),
    }
    session = Session(KaiState(nodes=nodes, topologies={"test-topology": (BLOCK, RACK)}))
    trees = {name: KaiTopologyTree.build(name, levels, session.nodes)
             for name, levels in session.state.topologies.items()}
    assert len(trees) == 1, cite
    tree = trees["test-topology"]
    assert tree.name == "test-topology", cite
    assert len(tree.domains) == 3, cite
    blocks, racks = tree.domains[BLOCK], tree.domains[RACK]
    assert blocks["test-block-1"].level == BLOCK, cite
    assert len(blocks["test-block-1"].children) == 2, cite
    assert len(racks["test-block-1.test-rack-1"].children) == 0, cite
    assert len(racks["test-block-1.test-rack-2"].children) == 0, cite
    assert len(blocks["test-block-2"].children) == 1, cite
    assert len(racks["test-block-2.test-rack-1"].children) == 0, cite
