"""KAI Scheduler's dynamicresources plugin tests, ported case by case (20 cases).

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
pkg/scheduler/plugins/dynamicresources/dynamicresources_test.go
(TestDynamicResourceAllocationPreFilter, 12 cases) and
dynamicresources_statement_test.go (TestStatementAllocateRollback_WithDRAClaims 3,
TestStatementEvictUnevict_WithDRAClaims 3, TestStatementPipelineUnpipeline_WithDRAClaims
2). The tables are tables/plugins/dynamicresources/*.json (port_dra_tables.py).

* Pre-filter: for every pending task, the plugin's preFilter (``dra.pre_filter_error``)
  gives upstream's error text, or none (the session upstream builds has no predicates
  plugin, so only the DRA plugin's pre-predicate runs).
* Statements: on a session built from the table, allocating / evicting / pipelining the
  task gives it the status and node upstream asserts and an allocation with devices for
  each of its claims (allocate, pipeline); rolling back to the checkpoint restores its
  node, status and remembered claim allocations (device, driver, pool, request), as
  assertTaskStateRestored checks.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from dralab.api.resource import AllocationResult
from dralab.queueing.kai import dra
from dralab.queueing.kai.framework import Session, SessionTask
from dralab.queueing.kai.model import KaiConfig

from . import dra_objects, harness

PREFILTER = "plugins/dynamicresources/dynamicresources_test.json"
STATEMENT = "plugins/dynamicresources/dynamicresources_statement_test.json"


def _params(relative: str) -> list[Any]:
    return [pytest.param(case, id=f"{case['function']} {case['index']:03d} {case['name']}")
            for case in harness.load(relative)["cases"]]


@pytest.mark.parametrize("case", _params(PREFILTER))
def test_pre_filter(case: dict[str, Any]) -> None:
    values = case["values"]
    topology = values["topology"]
    claims, _, _ = dra_objects.build_dra(topology.get("TestDRAObjects"))
    config = KaiConfig(dynamic_resource_allocation=bool(values.get("enabled")))
    jobs = harness.build_jobs(list(topology.get("Jobs") or []))
    want = values.get("err") or None
    checked = 0
    for job in jobs.values():
        for task in job.tasks:
            if task.status == "Pending":
                got = dra.pre_filter_error(config, claims, job, task)
                assert got == want, harness.cite(case) + f"\n{task.name}: {got!r} != {want!r}"
                checked += 1
    assert checked, harness.cite(case) + ": no pending task"


def _session(topology: dict[str, Any]) -> Session:
    state = harness.build_state({"topology": topology, "session": {}}, topology)
    return Session(dra.with_dra_gpus(state))


def _task(session: Session, job: str, status: str | None = None) -> SessionTask:
    pods = session.jobs[job].pods
    return next(p for p in pods if status is None or p.status == status)


def _results(allocation: AllocationResult | None) -> list[tuple[str, str, str, str]]:
    if allocation is None:
        return []
    return [(r.device, r.driver, r.pool, r.request) for r in allocation.devices.results]


@dataclasses.dataclass
class _Before:
    node: str | None
    status: str
    claims: dict[str, AllocationResult | None]


def _capture(session: Session, pod: SessionTask) -> _Before:
    return _Before(pod.node, pod.status, dra.remembered_allocations(session, pod))


def _assert_restored(case: dict[str, Any], session: Session, pod: SessionTask,
                     before: _Before) -> None:
    """assertTaskStateRestored."""
    where = harness.cite(case)
    assert pod.node == before.node, where
    assert pod.status == before.status, where
    now = dra.remembered_allocations(session, pod)
    assert len(now) == len(before.claims), where
    for name, allocation in now.items():
        assert _results(allocation) == _results(before.claims.get(name)), f"{where}: {name}"


def _assert_allocated(case: dict[str, Any], session: Session, pod: SessionTask) -> None:
    """assertClaimAllocationsExist (and the pipeline test's pool check)."""
    for name, allocation in dra.remembered_allocations(session, pod).items():
        results = _results(allocation)
        assert results, f"{harness.cite(case)}: claim {name} has no devices"
        for device, driver, pool, _ in results:
            assert device and driver and pool, f"{harness.cite(case)}: claim {name}"


@pytest.mark.parametrize("case", _params(STATEMENT))
def test_statement(case: dict[str, Any]) -> None:
    values = case["values"]
    topology = values["topology"]
    function = case["function"]
    if values.get("bindRequest"):
        pytest.skip(harness.NOT_BUILT + "a BindRequest's claim allocations (a binding pod's "
                    "remembered allocations) in KaiState")
    session = _session(topology)
    stmt = session.statement("test")
    checkpoint = stmt.checkpoint()
    if function == "TestStatementAllocateRollback_WithDRAClaims":
        pod = _task(session, "job-test", "Pending")
        before = _capture(session, pod)
        assert len(before.claims) == len(topology["TestDRAObjects"]["ResourceClaims"])
        stmt.allocate(pod, values["nodeName"])
        assert (pod.node, pod.status) == (values["nodeName"], "Allocated"), harness.cite(case)
        assert len(dra.remembered_allocations(session, pod)) == len(before.claims)
        _assert_allocated(case, session, pod)
    elif function == "TestStatementEvictUnevict_WithDRAClaims":
        pod = _task(session, "test-job")
        before = _capture(session, pod)
        assert before.claims, harness.cite(case)
        stmt.evict(pod, "test eviction")
        assert pod.status == "Releasing", harness.cite(case)
        assert len(dra.remembered_allocations(session, pod)) == len(before.claims)
    else:
        pod = _task(session, "job-pending", "Pending")
        before = _capture(session, pod)
        assert before.claims, harness.cite(case)
        stmt.pipeline(pod, values["nodeName"], (), update_if_on_node=False)
        assert (pod.node, pod.status) == (values["nodeName"], "Pipelined"), harness.cite(case)
        assert len(dra.remembered_allocations(session, pod)) == len(before.claims)
        _assert_allocated(case, session, pod)
    stmt.rollback(checkpoint)
    _assert_restored(case, session, pod, before)
