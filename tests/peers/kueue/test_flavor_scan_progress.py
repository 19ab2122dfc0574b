"""Kueue's flavor scan bookmark (LastAssignment / TriedFlavorIdx), ported case by case.

Source: kubernetes-sigs/kueue at ff69552e79ad21652c36caa97038382e55625cf7:

* ``pkg/scheduler/flavorassigner/flavorassigner_test.go``,
  ``TestFlavorScanRecordsLastTriedFlavorIdx`` and ``TestRecomputeRecordsLastTriedFlavorIdx``
  (fixtures ``bookmarkTestFlavors``, ``bookmarkTestNodes``, ``newBookmarkSnapshot``,
  ``bookmarkTestWorkload``, ``nodeUsageOnFlavorOne``), against
  ``flavors.assign_flavors(..., tas=..., nominated=...)`` and its ``last_tried()``;
* ``pkg/scheduler/scheduler_test.go``, ``TestLastAssignmentOutdated``, against
  ``scan.last_assignment_outdated``.

One pytest case per upstream case, ids = ``<TestFunction>/<upstream case name>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest
from tests.peers.kueue.schedule_builders import cq, fq, fungibility, group, milli, ps, rf

from dralab.queueing.kueue.flavors import AssignMode, PreemptionMode, assign_flavors
from dralab.queueing.kueue.quota import QuotaTree
from dralab.queueing.kueue.scan import START_OVER, ScanBookmark, last_assignment_outdated
from dralab.queueing.kueue.tas import TASFlavorSnapshot, TASNode
from dralab.queueing.kueue.tas_assign import TASContext
from dralab.queueing.model import ClusterQueueSpec, TopologyRequest, WorkloadSpec

HOSTNAME = "kubernetes.io/hostname"
FLAVORS = {"flavor-1": rf("flavor-1", {"flavor": "one"}, topology="topology-1"),
           "flavor-2": rf("flavor-2", {"flavor": "two"}, topology="topology-2")}
NODES = {"flavor-1": TASNode("node-1", {"flavor": "one", HOSTNAME: "node-1"},
                             {"cpu": milli("4"), "pods": milli("32")}),
         "flavor-2": TASNode("node-2", {"flavor": "two", HOSTNAME: "node-2"},
                             {"cpu": milli("4"), "pods": milli("32")})}
TNF_POB = fungibility("TryNextFlavor", "TryNextFlavor", "PreemptionOverBorrowing")
MSS_TNF_POB = fungibility("MayStopSearch", "TryNextFlavor", "PreemptionOverBorrowing")
MSS_POB = fungibility("MayStopSearch", "MayStopSearch", "PreemptionOverBorrowing")
BOOKMARK_TEST_CYCLE = 7
_MODES = {"Fit": AssignMode.FIT, "Preempt": AssignMode.PREEMPT, "NoFit": AssignMode.NO_FIT}
_POSSIBILITY = {"NoCandidates": PreemptionMode.NO_CANDIDATES, "Preempt": PreemptionMode.PREEMPT}


def _queue(nominal: str, fung: object) -> ClusterQueueSpec:
    return cq("cq", group(fq("flavor-1", cpu=nominal), fq("flavor-2", cpu=nominal)),
              cohort="cohort", flavor_fungibility=fung)  # type: ignore[arg-type]


class _Bookmark:
    """newBookmarkSnapshot: the ClusterQueue with ``nominal`` of each flavor, a sibling
    lending ``spare``, and each TAS flavor's snapshot over its one node."""

    def __init__(self, nominal: str, spare: str, fung: object) -> None:
        self.spec = _queue(nominal, fung)
        sibling = cq("sibling", group(fq("flavor-1", cpu=spare), fq("flavor-2", cpu=spare)),
                     cohort="cohort")
        self.tree = QuotaTree({"cq": self.spec, "sibling": sibling}, {})
        self.snapshots = {
            name: TASFlavorSnapshot(FLAVORS[name].topology or "", (HOSTNAME,), [NODES[name]])
            for name in FLAVORS}
        self.tas = TASContext.for_queue(list(FLAVORS), dict(self.snapshots))

    def node_usage_on_flavor_one(self, cpu: str) -> None:
        """nodeUsageOnFlavorOne: cpu taken on node-1 without charging quota."""
        self.snapshots["flavor-1"].add_tas_usage("node-1", {"cpu": milli(cpu)})

    def assign(self, workload: WorkloadSpec, simulation: dict[str, str],
               nominated: dict[str, dict[str, str]] | None = None):  # type: ignore[no-untyped-def]
        def oracle(fr: tuple[str, str], amount: int) -> tuple[PreemptionMode, int]:
            p = simulation.get(fr[0])
            return (_POSSIBILITY[p], 0) if p else (PreemptionMode.PREEMPT, 0)

        return assign_flavors(workload, self.spec, self.tree.cluster_queues["cq"], self.tree,
                              FLAVORS, oracle, False, self.tas, nominated=nominated)


def _workload(request: str) -> WorkloadSpec:
    """bookmarkTestWorkload: one pod asking ``request`` cpu on a required hostname topology."""
    pod_set = replace(ps("main", 1, {"cpu": request}),
                      topology=TopologyRequest(HOSTNAME, required=True))
    return WorkloadSpec("default/wl", "main", "cq", 0, 0.0, (pod_set,))


@dataclass(frozen=True)
class ScanCase:
    name: str
    nominal: str
    spare: str
    request: str
    fung: object
    want_mode: str
    want_tried: int
    want_plan: bool = False
    cq_usage: str = ""          # cpu used of each flavor
    node_usage: str = ""        # cpu taken on node-1
    simulation: dict[str, str] = field(default_factory=dict)


SCAN_CASES = [
    ScanCase("quota and topology both fit on the first flavor: bookmark names it",
             "10", "0", "2", TNF_POB, "Fit", 0, want_plan=True),
    ScanCase("quota fits but the pod is larger than any node: bookmark still names the first "
             "flavor", "10", "0", "6", TNF_POB, "NoFit", 0),
    ScanCase("quota fits but the topology is fragmented: bookmark still names the first flavor",
             "10", "0", "3", TNF_POB, "Preempt", 0, node_usage="2"),
    ScanCase("fits only by borrowing: bookmark says start over",
             "1", "20", "2", TNF_POB, "Fit", START_OVER, want_plan=True),
    ScanCase("fits only by borrowing, but WhenCanBorrow is MayStopSearch: bookmark names the "
             "first flavor", "1", "20", "2", MSS_TNF_POB, "Fit", 0, want_plan=True),
    ScanCase("needs preemption and candidates exist: bookmark names the first flavor",
             "2", "0", "2", MSS_POB, "Preempt", 0, cq_usage="2",
             simulation={"flavor-1": "Preempt", "flavor-2": "Preempt"}),
    ScanCase("needs preemption but no candidates: bookmark says start over whatever the policy",
             "2", "0", "2", MSS_POB, "Preempt", START_OVER, cq_usage="2",
             simulation={"flavor-1": "NoCandidates", "flavor-2": "NoCandidates"}),
]


@pytest.mark.parametrize("case", SCAN_CASES,
                         ids=[f"TestFlavorScanRecordsLastTriedFlavorIdx/{c.name}"
                              for c in SCAN_CASES])
def test_flavor_scan_records_last_tried_flavor_idx(case: ScanCase) -> None:
    """TestFlavorScanRecordsLastTriedFlavorIdx: the bookmark the assignment records for
    the pod set's cpu, its mode, and whether a topology assignment was made."""
    setup = _Bookmark(case.nominal, case.spare, case.fung)
    if case.cq_usage:
        setup.tree.add_usage("cq", {("flavor-1", "cpu"): milli(case.cq_usage),
                                    ("flavor-2", "cpu"): milli(case.cq_usage)}, 1)
    if case.node_usage:
        setup.node_usage_on_flavor_one(case.node_usage)
    got = setup.assign(_workload(case.request), case.simulation)
    assert got.mode == _MODES[case.want_mode]
    tried = got.last_tried()
    assert tried and "cpu" in tried[0], "no bookmark recorded for cpu"
    assert tried[0]["cpu"] == case.want_tried
    assert ("main" in got.topology) is case.want_plan


RECOMPUTE_CASES = [
    ("quota still accepts the nominated flavor: bookmark keeps naming it", "", {}, 0),
    ("quota tightened as well: bookmark says start over", "10",
     {"flavor-1": "NoCandidates", "flavor-2": "NoCandidates"}, START_OVER),
]


@pytest.mark.parametrize(("name", "quota_usage", "simulation", "want_idx"), RECOMPUTE_CASES,
                         ids=[f"TestRecomputeRecordsLastTriedFlavorIdx/{c[0]}"
                              for c in RECOMPUTE_CASES])
def test_recompute_records_last_tried_flavor_idx(name: str, quota_usage: str,
                                                 simulation: dict[str, str],
                                                 want_idx: int) -> None:
    """TestRecomputeRecordsLastTriedFlavorIdx: the in-cycle recomputation (nominated
    flavors kept, the bookmark dropped) after node-1 filled up records where its scan
    stopped."""
    setup = _Bookmark("10", "0", TNF_POB)
    workload = _workload("3")
    nominated = setup.assign(workload, {})
    assert nominated.mode == AssignMode.FIT
    assert "main" in nominated.topology
    assert nominated.last_tried()[0]["cpu"] == 0
    setup.node_usage_on_flavor_one("2")
    if quota_usage:
        setup.tree.add_usage("cq", {("flavor-1", "cpu"): milli(quota_usage),
                                    ("flavor-2", "cpu"): milli(quota_usage)}, 1)
    mapping = {p.name: {r: f for r, f in p.flavors.items()} for p in nominated.pod_sets}
    recomputed = setup.assign(workload, simulation, nominated=mapping)
    assert recomputed.last_tried()[0]["cpu"] == want_idx
    assert recomputed.mode == AssignMode.PREEMPT


# -- TestLastAssignmentOutdated ------------------------------------------------------------------
# name, preserve progress, current cycle, (last generation, last cycle, last shape),
# current generation, current shape, want
OUTDATED_CASES = [
    ("Cluster queue allocatableResourceIncreasedGen increased", False, 5, (0, 1, None), 1, None,
     True),
    ("AllocatableResourceGeneration not increased", False, 5, (0, 1, None), 0, None, False),
    ("assignment from the immediately preceding cycle survives a generation bump", True, 5,
     (0, 4, None), 1, None, False),
    ("assignment from the current cycle survives a generation bump", True, 5, (0, 5, None), 1,
     None, False),
    ("assignment older than one cycle falls back to the generation check", True, 5,
     (0, 3, None), 1, None, True),
    ("a changed scheduling shape starts the scan over even in the preceding cycle", True, 5,
     (0, 4, "shape-a"), 0, "shape-b", True),
    ("an unchanged scheduling shape keeps the preceding cycle's assignment", True, 5,
     (0, 4, "shape-a"), 1, "shape-a", False),
    ("an unknown hash is not treated as a shape change", True, 5, (0, 4, None), 1, "shape-b",
     False),
    ("without the gate a changed scheduling shape is ignored", False, 5, (0, 4, "shape-a"), 0,
     "shape-b", False),
    ("without the gate the preceding cycle gets no special treatment", False, 5, (0, 4, None),
     1, None, True),
]


@pytest.mark.parametrize(("name", "preserve", "cycle", "last", "generation", "shape", "want"),
                         OUTDATED_CASES,
                         ids=[f"TestLastAssignmentOutdated/{c[0]}" for c in OUTDATED_CASES])
def test_last_assignment_outdated(name: str, preserve: bool, cycle: int,
                                  last: tuple[int, int, str | None], generation: int,
                                  shape: str | None, want: bool) -> None:
    """TestLastAssignmentOutdated: scheduler.go's lastAssignmentOutdated with
    FlavorFungibilityPreserveScanProgress as the case sets it."""
    bookmark = ScanBookmark(({"cpu": 0},), last[0], last[1], last[2])
    assert last_assignment_outdated(bookmark, generation, cycle, shape,
                                    preserve_progress=preserve) is want
