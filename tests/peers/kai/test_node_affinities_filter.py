"""KAI's node-affinities scenario filter, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/actions/common/solvers/accumulated_scenario_filters/node_affinities/
node_affinities_test.go`` (Apache-2.0): every test function, one pytest case each, and
``TestNodeAffinitiesFilter_Filter``'s table one case per entry (id = its name), against
``actions.solver``'s node-affinities filter (NodeAffinitiesFilter): a scenario is kept
only if every pending pod with a required node affinity or a node selector has a
matching node among the feasible nodes and the nodes its victims run on.

The model holds a required node affinity as the snapshot's nodes that satisfy it
(``KaiTask.node_names``, as ``reader._node_names`` decides it: () when every node does,
("",) when none does) and a nodeSelector as ``node_selector``; a preferred-only
affinity is no constraint (the reader leaves it out), so no filter is made for it.
``by_name``: the affinity names its nodes by metadata.name (matchFields), which
Kubernetes' NodeAffinity PreFilter turns into the node list the filter then looks up
among all of the cluster's nodes, feasible or not.
"""

# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Mapping

import pytest
from tests.peers.kai.actions_helpers import Cite

from dralab.queueing.kai.actions.solver import NodeAffinitiesFilter, VictimScenario
from dralab.queueing.kai.framework import Session, SessionJob, SessionTask
from dralab.queueing.kai.model import KaiJob, KaiNode, KaiState, KaiTask

FILE = "common/solvers/accumulated_scenario_filters/node_affinities/node_affinities_test.go"
A100 = {"gpu-type": "A100"}
V100 = {"gpu-type": "V100"}


def _affinity(nodes: Mapping[str, KaiNode], key: str, value: str) -> tuple[str, ...]:
    """reader._node_names for a required ``key In [value]`` term."""
    allowed = [n for n in sorted(nodes) if nodes[n].labels.get(key) == value]
    return () if len(allowed) == len(nodes) else (tuple(allowed) or ("",))


def _match_fields(nodes: Mapping[str, KaiNode], target: str) -> tuple[str, ...]:
    allowed = [n for n in sorted(nodes) if n == target]
    return () if len(allowed) == len(nodes) else (tuple(allowed) or ("",))


def _pending(job: str, tasks: list[KaiTask]) -> SessionJob:
    return SessionJob(KaiJob(job, "q", tasks=tuple(tasks)),
                      [SessionTask(job, t, "Pending", None, (), i) for i, t in enumerate(tasks)])


def _filter(all_nodes: dict[str, KaiNode], feasible: list[str], pending: list[KaiTask],
            victims_on: list[str]) -> bool | None:
    """The filter's answer on the scenario with the victims (None: no filter made, so
    the scenario is kept)."""
    session = Session(KaiState(nodes=all_nodes))
    job = _pending("job-1", pending)
    initial = VictimScenario(job, list(job.pods))
    made = NodeAffinitiesFilter.make(session, {n: session.nodes[n] for n in feasible}, initial)
    if made is None:
        return None
    scenario = VictimScenario(job, list(job.pods))
    scenario.add_potential([SessionTask("job-victim", KaiTask(f"victim-pod-{i}", "job-victim", status="Running", node=n), "Running", n, (), i)
                            for i, n in enumerate(victims_on)])
    return made.valid(scenario)


def test_new_node_affinities_filter_nil_scenario() -> None:
    pytest.skip("not a decision: NewNodeAffinitiesFilter(nil scenario) returns nil, a Go nil-argument guard (TestNewNodeAffinitiesFilter_NilScenario)")


def test_new_node_affinities_filter_no_pending_tasks_with_node_affinity() -> None:
    got = _filter({}, [], [KaiTask("plain-pod", "job-1")], [])
    assert got is None, Cite(FILE, "TestNewNodeAffinitiesFilter_NoPendingTasksWithNodeAffinity", "(single case)", 226)


def test_new_node_affinities_filter_preferred_only_node_affinity_returns_nil() -> None:
    # a preferred-only node affinity: the model's task carries no required constraint
    got = _filter({}, [], [KaiTask("pod-1", "job-1")], [])
    assert got is None, Cite(FILE, "TestNewNodeAffinitiesFilter_PreferredOnlyNodeAffinityReturnsNil", "(single case)", 237)


def _nodes(**labels: Mapping[str, str] | None) -> dict[str, KaiNode]:
    return {name.replace("_", "-"): KaiNode(name.replace("_", "-"), labels=dict(value or {})) for name, value in labels.items()}


ONE_A100 = _nodes(node_a100=A100)
ONE_V100 = _nodes(node_v100=V100)
BOTH = _nodes(node_a100=A100, node_v100=V100)
SPECIFIC = _nodes(node_specific=None, node_other=None)
OTHER = _nodes(node_other=None)

# (name, line, all nodes, feasible nodes, pending pods, victims' nodes, wantFilterResult)
CASES: list[tuple[str, int, dict[str, KaiNode], list[str], list[KaiTask], list[str], bool]] = [
    ("pending pod matches node selector - filter passes", 258, ONE_A100, ["node-a100"],
     [KaiTask("pod-1", "job-1", node_selector=A100)], [], True),
    ("pending pod node selector has no matching node - filter fails", 269, ONE_V100, ["node-v100"],
     [KaiTask("pod-1", "job-1", node_selector=A100)], [], False),
    ("pending pod with NodeAffinity matches node - filter passes", 280, ONE_A100, ["node-a100"],
     [KaiTask("pod-1", "job-1", node_names=_affinity(ONE_A100, "gpu-type", "A100"))], [], True),
    ("mixed pending pods: affinity pod matches, pod without affinity is skipped - filter passes", 291, ONE_A100, ["node-a100"],
     [KaiTask("pod-affinity", "job-1", node_selector=A100), KaiTask("pod-plain", "job-1")], [], True),
    ("mixed pending pods: affinity pod has no matching node - filter fails", 305, ONE_V100, ["node-v100"],
     [KaiTask("pod-affinity", "job-1", node_selector=A100), KaiTask("pod-plain", "job-1")], [], False),
    ("victim running on matching node expands feasible set - filter passes", 319, BOTH, ["node-v100"],
     [KaiTask("pod-1", "job-1", node_selector=A100)], ["node-a100"], True),
    ("MatchFields targets node that exists in cluster but is not feasible - filter passes", 341, SPECIFIC, ["node-other"],
     [KaiTask("pod-1", "job-1", node_names=_match_fields(SPECIFIC, "node-specific"), node_names_by_name=True)], [], True),
    ("MatchFields targets node absent from the cluster - filter fails", 356, OTHER, ["node-other"],
     [KaiTask("pod-1", "job-1", node_names=_match_fields(OTHER, "node-specific"), node_names_by_name=True)], [], False),
    ("victim on non-matching node does not satisfy affinity - filter fails", 367, BOTH, ["node-v100"],
     [KaiTask("pod-1", "job-1", node_selector=A100)], ["node-v100"], False),
    ("mixed pending pods: required affinity matches, preferred-only pod present - filter passes", 386, ONE_A100, ["node-a100"],
     [KaiTask("pod-required", "job-1", node_names=_affinity(ONE_A100, "gpu-type", "A100")), KaiTask("pod-preferred", "job-1")], [], True),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_node_affinities_filter_filter(case: tuple[str, int, dict[str, KaiNode], list[str], list[KaiTask], list[str], bool]) -> None:
    name, line, all_nodes, feasible, pending, victims_on, expected = case
    got = _filter(all_nodes, feasible, pending, victims_on)
    # no filter made (the affinity allows every node): the scenario is kept
    assert (True if got is None else got) == expected, Cite(FILE, "TestNodeAffinitiesFilter_Filter", name, line)
