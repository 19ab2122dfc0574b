"""KAI's nominatednode plugin table, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/nominatednode/nominatednode_test.go`` ("NominatedNode Scoring
tests"): a pod's status.nominatedNodeName (``KaiTask.nominated_node``) against a node
named worker-node, the plugin alone on (``placement.node_scores``):
scores.NominatedNode (1,000,000) on the nominated node, else 0.
"""

from __future__ import annotations

import pytest
from tests.peers.kai.plugin_helpers import Cite, only, usage

from dralab.queueing.kai.model import KaiTask
from dralab.queueing.kai.placement import node_scores

# (name, line, nominated node, expected)
CASES = [
    ("No nominated node", 31, None, 0.0),
    ("Different nominated node", 42, "other-node", 0.0),
    ("Matching nominated node", 55, "worker-node", 1000000.0),
]


@pytest.mark.parametrize(("name", "line", "nominated", "expected"), CASES,
                         ids=[c[0] for c in CASES])
def test_node_order(name: str, line: int, nominated: str | None, expected: float) -> None:
    cite = Cite("nominatednode/nominatednode_test.go", "NominatedNode Scoring tests", name,
                line)
    task = KaiTask(name="t", job="j", nominated_node=nominated)
    got = node_scores(task, [usage("worker-node")], only("nominatednode"))
    assert got == {"worker-node": expected}, str(cite)
