"""KAI's minruntime plugin tables, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/minruntime``:

* ``minruntime_test.go`` ("MinRuntime Plugin"): the preempt/reclaim victim filters and
  scenario validators on pod groups of createTestQueues' queues (plugin defaults 5 s
  preempt, 3 s reclaim, lca), asked of a session over those queues
  (``plugins.minruntime.victim_allowed`` / ``scenario_valid``, what the preempt and
  reclaim actions call); the start times are seconds before the session's now. And
  parseMinRuntime through the plugin's arguments (``plugin_arguments``).
* ``resolver_test.go`` ("MinRuntime Resolver", defaults 2 s preempt, 1 s reclaim): the
  runtime a victim queue gets (``preempt_min_runtime`` / ``reclaim_min_runtime``), a nil
  queue being an absent one (KAI logs the error and uses the default). The five
  getQueueHierarchyPath cases assert the resolver's internal walk, whose effect the
  other cases check: "not a decision".
"""

# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.peers.kai.plugin_helpers import Cite

from dralab.queueing.kai.framework import Session, SessionJob, SessionTask
from dralab.queueing.kai.model import KaiConfig, KaiJob, KaiPlugin, KaiQueue, KaiState, KaiTask
from dralab.queueing.kai.plugins.minruntime import (
    LCA,
    QUEUE,
    plugin_arguments,
    preempt_min_runtime,
    reclaim_min_runtime,
    scenario_valid,
    victim_allowed,
)


def _q(name: str, parent: str | None, preempt: float | None, reclaim: float | None) -> KaiQueue:
    return KaiQueue(name=name, parent=parent, preempt_min_runtime=preempt,
                    reclaim_min_runtime=reclaim)


# resolver_test.go createTestQueues (line 356)
QUEUES = {q.name: q for q in (
    _q("dev", None, 5, 10), _q("prod", None, 20, 30), _q("research", None, 4, 6),
    _q("dev-team1", "dev", None, 8), _q("dev-team2", "dev", 3, None),
    _q("prod-team1", "prod", None, 25), _q("prod-team2", "prod", 15, 35),
    _q("research-project", "research", 7, 9))}
NONEXISTENT = _q("nonexistent", "also-nonexistent", None, None)


def _r(file: str, function: str, case: str, line: int) -> Cite:
    return Cite(f"minruntime/{file}", function, case, line)


# --- resolver_test.go -------------------------------------------------------------------------

R_PREEMPT, R_RECLAIM = 2.0, 1.0
RESOLVER: list[tuple[str, int, Callable[[], float | None], float | None]] = [
    ("getPreemptMinRuntime / when queue has a set value (prod-team2)", 40,
     lambda: preempt_min_runtime(QUEUES, QUEUES["prod-team2"], R_PREEMPT), 15),
    ("getPreemptMinRuntime / when queue inherits from parent (prod-team1 from prod)", 48,
     lambda: preempt_min_runtime(QUEUES, QUEUES["prod-team1"], R_PREEMPT), 20),
    ("getPreemptMinRuntime / when queue inherits from parent (dev-team1 from dev)", 56,
     lambda: preempt_min_runtime(QUEUES, QUEUES["dev-team1"], R_PREEMPT), 5),
    ("getPreemptMinRuntime / when top-level queue has a set value (prod)", 64,
     lambda: preempt_min_runtime(QUEUES, QUEUES["prod"], R_PREEMPT), 20),
    ("getPreemptMinRuntime / when research queue has a set value", 72,
     lambda: preempt_min_runtime(QUEUES, QUEUES["research"], R_PREEMPT), 4),
    ("getPreemptMinRuntime / when no queue is found", 80,
     lambda: preempt_min_runtime(QUEUES, NONEXISTENT, R_PREEMPT), R_PREEMPT),
    ("getPreemptMinRuntime / when queue is nil", 89,
     lambda: preempt_min_runtime(QUEUES, None, R_PREEMPT), R_PREEMPT),
    ("getReclaimMinRuntime with queue method / when victim queue has a set value (pendingJob:dev-team1, victim:prod-team2)", 99,
     lambda: reclaim_min_runtime(QUEUES, QUEUE, QUEUES["dev-team1"], QUEUES["prod-team2"], R_RECLAIM), 35),
    ("getReclaimMinRuntime with queue method / when victim queue inherits from parent (pendingJob:dev-team1, victim:dev-team2)", 111,
     lambda: reclaim_min_runtime(QUEUES, QUEUE, QUEUES["dev-team1"], QUEUES["dev-team2"], R_RECLAIM), 10),
    ("getReclaimMinRuntime with queue method / when victim queue is not found (pendingJob:dev-team1, victim:nonexistent)", 123,
     lambda: reclaim_min_runtime(QUEUES, QUEUE, QUEUES["dev-team1"], NONEXISTENT, R_RECLAIM), R_RECLAIM),
    ("getReclaimMinRuntime with queue method / when queue is nil", 136,
     lambda: reclaim_min_runtime(QUEUES, QUEUE, None, QUEUES["dev-team2"], R_RECLAIM), R_RECLAIM),
    ("getReclaimMinRuntimeLCA / when pendingJob and victim are in different top-level queues (pendingJob:dev-team1, victim:prod-team2)", 150,
     lambda: reclaim_min_runtime(QUEUES, LCA, QUEUES["dev-team1"], QUEUES["prod-team2"], R_RECLAIM), 30),
    ("getReclaimMinRuntimeLCA / when LCA is dev and victim is dev-team1 with ReclaimMinRuntime set (pendingJob:dev-team2, victim:dev-team1)", 162,
     lambda: reclaim_min_runtime(QUEUES, LCA, QUEUES["dev-team2"], QUEUES["dev-team1"], R_RECLAIM), 8),
    ("getReclaimMinRuntimeLCA / when LCA is prod and victim is prod-team2 with ReclaimMinRuntime set (pendingJob:prod-team1, victim:prod-team2)", 173,
     lambda: reclaim_min_runtime(QUEUES, LCA, QUEUES["prod-team1"], QUEUES["prod-team2"], R_RECLAIM), 35),
    ("getReclaimMinRuntimeLCA / when pendingJob and victim are the same queue (pendingJob:prod-team2, victim:prod-team2)", 184,
     lambda: reclaim_min_runtime(QUEUES, LCA, QUEUES["prod-team2"], QUEUES["prod-team2"], R_RECLAIM), 35),
    ("getReclaimMinRuntimeLCA / when research queue is victim (pendingJob:dev-team1, victim:research-project)", 195,
     lambda: reclaim_min_runtime(QUEUES, LCA, QUEUES["dev-team1"], QUEUES["research-project"], R_RECLAIM), 6),
    ("getReclaimMinRuntimeLCA / when queue is nil", 206,
     lambda: reclaim_min_runtime(QUEUES, LCA, None, None, R_RECLAIM), R_RECLAIM),
    ("getQueueHierarchyPath / should return correct path for top-level queue (dev)", 215, lambda: None, None),
    ("getQueueHierarchyPath / should return correct path for leaf queue (dev-team1)", 221, lambda: None, None),
    ("getQueueHierarchyPath / should return correct path for different branch leaf queue (prod-team2)", 227, lambda: None, None),
    ("getQueueHierarchyPath / should return correct path for research project queue", 233, lambda: None, None),
    ("getQueueHierarchyPath / should handle queues with non-existent parent", 239, lambda: None, None),
]


def _both_methods(victim: str, queue_value: float, lca_value: float) -> Callable[[], float | None]:
    def run() -> float | None:
        got_queue = reclaim_min_runtime(QUEUES, QUEUE, QUEUES["dev-team1"], QUEUES[victim], R_RECLAIM)
        got_lca = reclaim_min_runtime(QUEUES, LCA, QUEUES["dev-team1"], QUEUES[victim], R_RECLAIM)
        return 1.0 if (got_queue, got_lca) == (queue_value, lca_value) else 0.0
    return run


def _nil_queue() -> float | None:
    ok = (preempt_min_runtime(QUEUES, None, R_PREEMPT) == R_PREEMPT
          and reclaim_min_runtime(QUEUES, LCA, None, None, R_RECLAIM) == R_RECLAIM)
    return 1.0 if ok else 0.0


def _no_reclaim_top() -> float | None:
    queues = {"no-reclaim": _q("no-reclaim", None, None, None),
              "leaf": _q("leaf", "no-reclaim", None, None)}
    return reclaim_min_runtime(queues, LCA, QUEUES["dev-team1"], queues["leaf"], R_RECLAIM)


RESOLVER += [
    ("getReclaimMinRuntime with both methods / should return different values for different methods (pendingJob:dev-team1, victim:prod-team2)", 248,
     _both_methods("prod-team2", 35, 30), 1.0),
    ("getReclaimMinRuntime with both methods / should handle different hierarchies with the research queue (pendingJob:dev-team1, victim:research-project)", 262,
     _both_methods("research-project", 9, 6), 1.0),
    ("Edge cases / with nil queue / should handle nil queue gracefully", 278, _nil_queue, 1.0),
    ("Edge cases / with orphaned victim queue (pendingJob:dev-team1, victim:orphan) / should use resolver default value when ancestor is missing", 290,
     lambda: reclaim_min_runtime(QUEUES, LCA, QUEUES["dev-team1"], _q("orphan", "nonexistent", None, 7), R_RECLAIM), 7),
    ("Edge cases / with top-level victim queue having no reclaim min runtime (pendingJob:dev-team1, victim:leaf) / should fall back to default value", 305,
     _no_reclaim_top, R_RECLAIM),
]


@pytest.mark.parametrize(("name", "line", "run", "expected"), RESOLVER, ids=[c[0] for c in RESOLVER])
def test_resolver(name: str, line: int, run: Callable[[], float | None],
                  expected: float | None) -> None:
    cite = _r("resolver_test.go", "MinRuntime Resolver", name, line)
    if name.startswith("getQueueHierarchyPath"):
        pytest.skip("not a decision: the resolver's internal queue path; the runtimes it "
                    "leads to are the other cases")
    assert run() == expected, str(cite)


# --- minruntime_test.go ------------------------------------------------------------------------

def _session(method: str = LCA) -> Session:
    plugin = KaiPlugin("minruntime", {"defaultPreemptMinRuntime": "5s",
                                      "defaultReclaimMinRuntime": "3s",
                                      "reclaimResolveMethod": method})
    return Session(KaiState(queues=dict(QUEUES), config=KaiConfig(plugins=(plugin,)), now=0.0))


def _pod_group(session: Session, name: str, queue: str, started_ago: float | None,
               min_available: int, pods: int) -> None:
    """createPodGroup: ``pods`` running pods, started ``started_ago`` seconds ago."""
    tasks = tuple(KaiTask(name=f"{name}-pod-{i}", job=name, status="Running")
                  for i in range(pods))
    job = KaiJob(name=name, queue=queue, min_member=min_available, tasks=tasks,
                 last_start=None if started_ago is None else -started_ago)
    session.state.jobs[name] = job
    session.jobs[name] = SessionJob(job, [SessionTask(name, t, t.status, None, (), i)
                                          for i, t in enumerate(tasks)])


# (Describe / Context / It, line, action, method, victim started ago, victim minAvailable,
#  victim pods, victim pods taken (None: the filter), expected)
PLUGIN: list[tuple[str, int, str, str, float | None, int, int, int | None, bool]] = [
    ("preemptFilterFn / when victim is protected by min-runtime / should return false for non-elastic job", 100, "preempt", LCA, 10, 1, 1, None, False),
    ("preemptFilterFn / when victim is not protected by min-runtime / should return true if victim started long ago", 118, "preempt", LCA, 30, 1, 1, None, True),
    ("preemptFilterFn / when victim is not protected by min-runtime / should return true if victim has no start time", 131, "preempt", LCA, None, 1, 1, None, True),
    ("reclaimFilterFn / when victim is protected by min-runtime / should return false for non-elastic job", 146, "reclaim", LCA, 20, 1, 1, None, False),
    ("reclaimFilterFn / when victim is not protected by min-runtime / should return true if victim started long ago", 164, "reclaim", LCA, 40, 1, 1, None, True),
    ("reclaimFilterFn / when using different resolve methods / should use LCA method when configured", 179, "reclaim", LCA, 20, 1, 1, None, False),
    ("reclaimFilterFn / when using different resolve methods / should use queue method when configured", 196, "reclaim", QUEUE, 20, 1, 1, None, False),
    ("preemptScenarioValidatorFn / when validating preemption scenario for elastic jobs / should return true if not enough tasks are being preempted", 216, "preempt", LCA, 10, 1, 3, 1, True),
    ("preemptScenarioValidatorFn / when validating preemption scenario for elastic jobs / should return false if too many tasks would be preempted", 242, "preempt", LCA, 10, 2, 3, 2, False),
    ("reclaimScenarioValidatorFn / when validating reclaim scenario for elastic jobs / should return true if not enough tasks are being reclaimed", 278, "reclaim", LCA, 20, 1, 3, 1, True),
    ("reclaimScenarioValidatorFn / when validating reclaim scenario for elastic jobs / should return false if too many tasks would be reclaimed", 304, "reclaim", LCA, 20, 2, 3, 2, False),
]


@pytest.mark.parametrize(("name", "line", "action", "method", "ago", "minimum", "pods", "taken", "expected"),
                         PLUGIN, ids=[c[0] for c in PLUGIN])
def test_plugin(name: str, line: int, action: str, method: str, ago: float | None, minimum: int,
                pods: int, taken: int | None, expected: bool) -> None:
    cite = _r("minruntime_test.go", "MinRuntime Plugin", name, line)
    session = _session(method)
    _pod_group(session, "pending-job", "dev-team1", None, 1, 1)
    _pod_group(session, "victim-job", "prod-team2", ago, minimum, pods)
    preemptor, victim = session.jobs["pending-job"], session.jobs["victim-job"]
    if taken is None:
        got = victim_allowed(session, action, preemptor, victim)
    else:
        got = scenario_valid(session, action, preemptor, {"victim-job": victim.pods[:taken]})
    assert got is expected, str(cite)


# parseMinRuntime (line 341): the strings each It feeds the plugin's arguments
PARSE = [
    ("parseMinRuntime / Sanity - parse passes", 342, "defaultReclaimMinRuntime",
     ["5s", "10s", "10m5s", "1m", "1.5s", "2m30s", "1h", "1h30m", "2h45m15s", "2d4h30m", "5w4d12h"], False),
    ("parseMinRuntime / Invalid durations should return zero", 357, "defaultPreemptMinRuntime",
     ["5", "1h2", "2h45m15", "abc", "1h-30m", "dfdsfdfdf"], True),
    ("parseMinRuntime / Invalid negative durations", 372, "defaultReclaimMinRuntime",
     ["-5s", "-10m", "-1h", "-2d", "-3w"], True),
]


@pytest.mark.parametrize(("name", "line", "key", "values", "zero"), PARSE, ids=[c[0] for c in PARSE])
def test_parse_min_runtime(name: str, line: int, key: str, values: list[str], zero: bool) -> None:
    cite = _r("minruntime_test.go", "MinRuntime Plugin", name, line)
    for value in values:
        args = plugin_arguments({key: value})
        got = args.default_reclaim if key == "defaultReclaimMinRuntime" else args.default_preempt
        assert (got == 0) is zero, f"{cite}: {value!r} -> {got}"
