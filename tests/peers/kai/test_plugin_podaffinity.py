"""KAI's podaffinity plugin table, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/podaffinity/podaffinity_test.go`` ("Preferred Pod Affinity /
Pod Affinity"): one node, one existing pod on it, a pending pod in namespace "test";
the plugin's node score after its pre-order (``plugins.podaffinity.session_scores`` on
a session holding them): k8s InterPodAffinity's raw score times scores.K8sPlugins. The
affinity is exampleAffinity: a preferred term of weight 10 selecting my-label=a on the
topology key node-label.
"""

from __future__ import annotations

import pytest
from tests.peers.kai.plugin_helpers import Cite

from dralab.queueing.kai.framework import Session
from dralab.queueing.kai.model import (
    KaiAffinityTerm,
    KaiJob,
    KaiNode,
    KaiPodAffinity,
    KaiState,
    KaiTask,
)
from dralab.queueing.kai.plugins.podaffinity import K8S_PLUGINS, session_scores

LABELS = {"my-label": "a"}
AFFINITY = KaiPodAffinity(preferred=(KaiAffinityTerm(LABELS, "node-label", weight=10),))

# (name, line, node labels, existing pod (labels, affinity), task (labels, affinity), expected)
CASES: list[tuple[str, int, dict[str, str], tuple[dict[str, str], KaiPodAffinity | None],
                  tuple[dict[str, str], KaiPodAffinity | None], float]] = [
    ("No Pod Affinity", 64, {}, ({}, None), ({}, None), 0.0),
    ("Not fitting Pod Affinity", 91, {"node-label": "node-1"}, (LABELS, AFFINITY), ({}, None),
     0.0),
    ("Matching Pod Affinity", 123, {"node-label": "node-1"}, (LABELS, AFFINITY),
     (LABELS, AFFINITY), 2 * 10 * K8S_PLUGINS),
]


@pytest.mark.parametrize(("name", "line", "node_labels", "existing", "incoming", "expected"),
                         CASES, ids=[c[0] for c in CASES])
def test_preferred_pod_affinity(name: str, line: int, node_labels: dict[str, str],
                                existing: tuple[dict[str, str], KaiPodAffinity | None],
                                incoming: tuple[dict[str, str], KaiPodAffinity | None],
                                expected: float) -> None:
    cite = Cite("podaffinity/podaffinity_test.go", "Preferred Pod Affinity / Pod Affinity",
                name, line)
    node = KaiNode(name="node-1", labels=node_labels)
    old = KaiTask(name="existing-pod-1", job="existing", status="Running", node="node-1",
                  labels=existing[0], pod_affinity=existing[1])
    new = KaiTask(name="test-pod", job="pending", labels=incoming[0], pod_affinity=incoming[1])
    state = KaiState(nodes={"node-1": node}, jobs={
        "existing": KaiJob(name="existing", queue="q", namespace="test", tasks=(old,)),
        "pending": KaiJob(name="pending", queue="q", namespace="test", tasks=(new,))})
    session = Session(state)
    job = session.jobs["pending"]
    got = session_scores(session, job, job.pods[0], [node])
    assert got == {"node-1": expected}, str(cite)
