"""KAI's predicates plugin tables, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/predicates/predicates_test.go``:

* Test_predicatesPlugin_evaluateTaskOnPredicates: a task of a job built by jobs_fake on a
  node built by nodes_fake (here the action-table harness's builders), checked by
  evaluateTaskOnPredicates -- ``actions.common.predicate_error``, with the test's
  over-capacity function passed in as upstream passes it (always schedulable, or always
  "overcapacity" / "custom error details"); the fit error's message compared. A node
  with GpuMemorySynced false is one without the GPU memory label (``gpu_memory_mib``
  0); MaxTaskNum is the node's pod cap as given (0 included). The two "fail on predicate
  HostPorts with error" cases inject fake k8s predicates that fail: the session runs no
  k8s HostPorts predicate.
* Test_evaluateTaskOnPrePredicate: fake k8s pre-filters (predicates_fake) and how their
  failures are joined; the session runs no k8s pre-filters: "not built".
* TestMaxPodsWithReleasingPods: a node of 110 pods with 109 running and 1 releasing
  takes one more pod on idle-or-releasing resources (``NodeUsage``).
"""

# ruff: noqa: E501

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from tests.peers.kai.harness import build_jobs, build_nodes
from tests.peers.kai.plugin_helpers import Cite

from dralab.queueing.kai.actions.common import predicate_error
from dralab.queueing.kai.framework import Session
from dralab.queueing.kai.model import KaiNode, KaiState, KaiTask
from dralab.queueing.kai.placement import NodeUsage

FILE = "predicates/predicates_test.go"
EVAL = "Test_predicatesPlugin_evaluateTaskOnPredicates"
MIG = {"nvidia.com/mig-1g.5gb": 1}
MIXED = {"MigInstances": MIG, "MigStrategy": "mixed"}
SINGLE = {"GPUs": 7, "MigStrategy": "single"}
NON_MIG = {"GPUs": 8}
NOT_MIXED = "non MIG jobs cant run on a node with MigStrategy='mixed'"
NOT_SINGLE = "only whole gpu jobs can run on a node with MigStrategy='single'"
OVER = "node does not have enough capacity. Reason: overcapacity, Details: custom error details"
NOT_SYNCED = ("node is not a gpu node or the gpu memory count on the node was not synced yet,"
              " task: </j1-0>, node: <n1>")
PODS = "Node pod number exceeded"   # api.NodePodNumberExceeded
WHOLE: dict[str, Any] = {"RequiredGPUsPerTask": 1}
FRACTION: dict[str, Any] = {"RequiredGPUsPerTask": 0.5}
MEMORY: dict[str, Any] = {"RequiredGpuMemory": 500}
CPU: dict[str, Any] = {"RequiredCPUsPerTask": 1000}
MIG_TASK: dict[str, Any] = {"task": {"RequiredMigInstances": MIG}}

# (name, line, job fields (+ "task": task fields), node fields, over capacity, expected error;
#  expected None: fits; "not built: ...": skipped)
CASES: list[tuple[str, int, dict[str, Any], dict[str, Any], bool, str | None]] = [
    ("Empty predicates", 286, {}, {}, False, None),
    ("fail on non-preemptible over capacity", 323, {}, {}, True, OVER),
    ("node resources type predicate - Whole GPU task on MIG node with mixed strategy", 361, WHOLE, MIXED, False, NOT_MIXED),
    ("node resources type predicate - Fraction task on MIG node with mixed strategy", 405, FRACTION, MIXED, False, NOT_MIXED),
    ("node resources type predicate - GPU memory task on MIG node with mixed strategy", 449, MEMORY, MIXED, False, NOT_MIXED),
    ("node resources type predicate - MIG task on MIG node with mixed strategy", 493, MIG_TASK, MIXED, False, None),
    ("node resources type predicate - CPU task on MIG node with mixed strategy", 538, CPU, MIXED, False, None),
    ("node resources type predicate - Whole GPU task on MIG node with single strategy", 581, WHOLE, SINGLE, False, None),
    ("node resources type predicate - Fraction task on MIG node with single strategy", 622, FRACTION, SINGLE, False, NOT_SINGLE),
    ("node resources type predicate - GPU memory task on MIG node with single strategy", 664, MEMORY, SINGLE, False, NOT_SINGLE),
    ("node resources type predicate - MIG task on MIG node with single strategy", 706, MIG_TASK, SINGLE, False, NOT_SINGLE),
    ("node resources type predicate - CPU task on MIG node with single strategy", 750, CPU, SINGLE, False, None),
    ("node resources type predicate - Whole GPU task on non MIG node", 791, WHOLE, NON_MIG, False, None),
    ("node resources type predicate - Fraction task on non MIG node", 831, FRACTION, NON_MIG, False, None),
    ("node resources type predicate - GPU memory task on non MIG node", 871, MEMORY, NON_MIG, False, None),
    ("node resources type predicate - MIG task on non MIG node", 911, MIG_TASK, NON_MIG, False, "MIG job cannot be scheduled on non-MIG node"),
    ("node resources type predicate - CPU task on non MIG node", 954, CPU, NON_MIG, False, None),
    ("fail on gpu memory not synced", 994, {"RequiredGpuMemory": 1024}, {"GpuMemorySynced": False}, False, NOT_SYNCED),
    ("fail on max pods - cpu only task", 1036, {}, {"MaxTaskNum": 0}, False, PODS),
    ("fail on max pods - fraction task", 1075, FRACTION, {"MaxTaskNum": 1}, False, PODS),
    ("fail on predicate HostPorts with error", 1115, {}, {}, False,
     "not built: k8s predicates in the KAI session (the case injects a fake HostPorts predicate that fails with an error)"),
    ("fail on predicate HostPorts with error", 1152, {}, {}, False,
     "not built: k8s predicates in the KAI session (the case injects a fake HostPorts predicate that fails with reasons)"),
]

# Test_evaluateTaskOnPrePredicate (line 38)
PRE = [("All pre-predicates empty", 50), ("One failing pre predicate", 70),
       ("One failing pre predicate - error the same s reason", 91),
       ("One failing pre predicate - no reasons", 113), ("Multiple failing pre predicate", 134)]


def _node(fields: dict[str, Any]) -> KaiNode:
    given = {k: v for k, v in fields.items() if k not in ("GpuMemorySynced", "MaxTaskNum")}
    node = build_nodes({"n1": given})["n1"]
    if fields.get("GpuMemorySynced") is False:
        node = dataclasses.replace(node, gpu_memory_mib=0)   # no GPU memory label
    if "MaxTaskNum" in fields:
        node = dataclasses.replace(node, max_pods=int(fields["MaxTaskNum"]))
    return node


def _over_capacity(refuse: bool) -> Any:
    def check(*_: Any) -> str | None:
        return "overcapacity, Details: custom error details" if refuse else None
    return check


@pytest.mark.parametrize(("name", "line", "job", "node", "refuse", "expected"), CASES,
                         ids=[f"{c[1]} {c[0]}" for c in CASES])
def test_evaluate_task_on_predicates(name: str, line: int, job: dict[str, Any],
                                     node: dict[str, Any], refuse: bool,
                                     expected: str | None) -> None:
    cite = Cite(FILE, EVAL, name, line)
    if expected is not None and expected.startswith("not built: "):
        pytest.skip(expected)
    fields = {k: v for k, v in job.items() if k != "task"}
    task = {"NodeName": "n1", **job.get("task", {})}
    jobs = build_jobs([{"Name": "j1", **fields, "Tasks": [task]}])
    state = KaiState(nodes={"n1": _node(node)}, jobs=jobs)
    session = Session(state)
    session_job = session.jobs["j1"]
    pod = next(p for p in session_job.pods if p.name == "j1-0")
    got = predicate_error(session, session_job, pod, session.nodes["n1"],
                          over_capacity=_over_capacity(refuse))
    assert got == expected, str(cite)


@pytest.mark.parametrize(("name", "line"), PRE, ids=[c[0] for c in PRE])
def test_evaluate_task_on_pre_predicate(name: str, line: int) -> None:
    pytest.skip("not built: k8s pre-filters in the KAI session (the case injects fake "
                "pre-predicates, predicates_fake, and checks how their failures are joined)")


def test_max_pods_with_releasing_pods() -> None:
    cite = Cite(FILE, "TestMaxPodsWithReleasingPods", "TestMaxPodsWithReleasingPods", 192)
    node = NodeUsage.of(KaiNode(name="n1", cpu_milli=16000, memory_bytes=32e9, max_pods=110))
    for i in range(110):
        status = "Running" if i < 109 else "Releasing"
        pod = KaiTask(name=f"pod-{i}", job="job1", status=status, node="n1", cpu_milli=100,
                      memory_bytes=100e6)
        node.add(("job1", pod.name), pod, pod.status, ())
    preemptor = KaiTask(name="preemptor-pod", job="job2", cpu_milli=100, memory_bytes=100e6)
    assert node.fits_idle_or_releasing(preemptor), str(cite)
