"""Kueue's CRD schema bounds (``maxItems``, ``maxProperties``, ``maxLength``,
``minimum``, ``format: int32/int64``) and enums, enforced at read time with field
paths: each bound at its limit is accepted, one past is refused.

The bounds are kubernetes-sigs/kueue @ ff69552e79ad21652c36caa97038382e55625cf7,
``config/components/crd/bases/kueue.x-k8s.io_*.yaml``; the preemption strategy sets
are its ``pkg/config/validation.go`` ``validStrategySets``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dralab.cli.main import cli
from dralab.queueing.checks import kueue_problems
from dralab.queueing.objects import decode_kueue
from kueueinputs import cohort_chain, one_queue

Doc = dict[str, Any]
I32 = 2**31 - 1
I64 = 2**63 - 1


def obj(kind: str, body: Doc, version: str = "v1beta2", namespaced: bool = False) -> Doc:
    meta: Doc = {"name": "x"}
    if namespaced:
        meta["namespace"] = "default"
    return {"apiVersion": f"kueue.x-k8s.io/{version}", "kind": kind, "metadata": meta, **body}


def rf(**spec: Any) -> Doc:
    return obj("ResourceFlavor", {"spec": spec})


def groups(n_groups: int = 1, n_resources: int = 1, n_flavors: int = 1,
           flavor_name: str | None = None) -> list[Doc]:
    out = []
    for g in range(n_groups):
        resources = [f"r{g}-{r}" for r in range(n_resources)]
        flavors = [{"name": flavor_name or f"f{g}-{f}",
                    "resources": [{"name": r, "nominalQuota": 1} for r in resources]}
                   for f in range(n_flavors)]
        out.append({"coveredResources": resources, "flavors": flavors})
    return out


def cq(version: str = "v1beta2", **spec: Any) -> Doc:
    return obj("ClusterQueue", {"spec": {"namespaceSelector": {}, **spec}}, version)


def workload(version: str = "v1beta2", pod_set: Doc | None = None, n_pod_sets: int = 1,
             **spec: Any) -> Doc:
    pod_sets = [{"name": f"p{i}", "count": 1,
                 "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}
                for i in range(n_pod_sets)]
    pod_sets[0].update(pod_set or {})
    return obj("Workload", {"spec": {"queueName": "lq", "podSets": pod_sets, **spec}},
               version, namespaced=True)


def s(n: int) -> str:
    return "a" * n


# (case, path, build(value), value at the limit, value one past, message one past)
Case = tuple[str, str, Callable[[int], Doc], int, int, str]
CASES: list[Case] = [
    ("flavor nodeLabels", "spec.nodeLabels",
     lambda n: rf(nodeLabels={f"k{i}": "v" for i in range(n)}), 8, 9,
     "Too many: 9: must have at most 8 items"),
    ("flavor nodeTaints", "spec.nodeTaints",
     lambda n: rf(nodeTaints=[{"key": f"k{i}", "effect": "NoSchedule"} for i in range(n)]),
     8, 9, "Too many: 9: must have at most 8 items"),
    ("flavor tolerations", "spec.tolerations",
     lambda n: rf(tolerations=[{"key": f"k{i}", "operator": "Exists"} for i in range(n)]),
     8, 9, "Too many: 9: must have at most 8 items"),
    ("flavor tolerationSeconds int64", "spec.tolerations[0].tolerationSeconds",
     lambda n: rf(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": n}]), I64, I64 + 1,
     f"Invalid value: {I64 + 1}: must fit in a 64-bit signed integer"),
    ("flavor topologyName", "spec.topologyName", lambda n: rf(topologyName=s(n)), 253, 254,
     "Too long: may not be more than 253 bytes"),
    ("cq cohortName", "spec.cohortName", lambda n: cq(cohortName=s(n)), 253, 254,
     "Too long: may not be more than 253 bytes"),
    ("cq v1beta1 cohort", "spec.cohort", lambda n: cq("v1beta1", cohort=s(n)), 253, 254,
     "Too long: may not be more than 253 bytes"),
    ("cq maxPriorityThreshold int32", "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
     lambda n: cq(preemption={"reclaimWithinCohort": "Any", "borrowWithinCohort": {
         "policy": "LowerPriority", "maxPriorityThreshold": n}}), I32, I32 + 1,
     f"Invalid value: {I32 + 1}: must fit in a 32-bit signed integer"),
    ("cq resourceGroups", "spec.resourceGroups", lambda n: cq(resourceGroups=groups(n)), 16, 17,
     "Too many: 17: must have at most 16 items"),
    ("cq coveredResources", "spec.resourceGroups[0].coveredResources",
     lambda n: cq(resourceGroups=groups(n_resources=n)), 64, 65,
     "Too many: 65: must have at most 64 items"),
    ("cq flavor resources", "spec.resourceGroups[0].flavors[0].resources",
     lambda n: cq(resourceGroups=groups(n_resources=n)), 64, 65,
     "Too many: 65: must have at most 64 items"),
    ("cq flavors", "spec.resourceGroups[0].flavors",
     lambda n: cq(resourceGroups=groups(n_flavors=n)), 64, 65,
     "Too many: 65: must have at most 64 items"),
    ("cq flavors, the reproducer's 3,000", "spec.resourceGroups[0].flavors",
     lambda n: cq(resourceGroups=groups(n_flavors=n)), 64, 3000,
     "Too many: 3000: must have at most 64 items"),
    ("cq flavors minItems", "spec.resourceGroups[0].flavors",
     lambda n: cq(resourceGroups=groups(n_flavors=1 - n)), 0, 1,
     "Invalid value: 0: must have at least 1 items"),
    ("cq flavor name", "spec.resourceGroups[0].flavors[0].name",
     lambda n: cq(resourceGroups=groups(flavor_name=s(n))), 253, 254,
     "Too long: may not be more than 253 bytes"),
    ("cohort parentName", "spec.parentName",
     lambda n: obj("Cohort", {"spec": {"parentName": s(n)}}), 253, 254,
     "Too long: may not be more than 253 bytes"),
    ("cohort resourceGroups", "spec.resourceGroups",
     lambda n: obj("Cohort", {"spec": {"resourceGroups": groups(n)}}), 16, 17,
     "Too many: 17: must have at most 16 items"),
    ("localqueue clusterQueue", "spec.clusterQueue",
     lambda n: obj("LocalQueue", {"spec": {"clusterQueue": s(n)}}, namespaced=True), 253, 254,
     "Too long: may not be more than 253 bytes"),
    ("topology levels", "spec.levels",
     lambda n: obj("Topology", {"spec": {"levels": [{"nodeLabel": f"l{i}"} for i in range(n)]}}),
     16, 1001, "Too many: 1001: must have at most 16 items"),
    ("topology nodeLabel", "spec.levels[0].nodeLabel",
     lambda n: obj("Topology", {"spec": {"levels": [{"nodeLabel": s(n)}]}}), 316, 317,
     "Too long: may not be more than 316 bytes"),
    ("priority class value int32", "value",
     lambda n: obj("WorkloadPriorityClass", {"value": n}), I32, I32 + 1,
     f"Invalid value: {I32 + 1}: must fit in a 32-bit signed integer"),
    ("priority class value 2^63", "value",
     lambda n: obj("WorkloadPriorityClass", {"value": n}), I32, 2**63,
     f"Invalid value: {2**63}: must fit in a 32-bit signed integer"),
    ("priority class value int32 low", "value",
     lambda n: obj("WorkloadPriorityClass", {"value": -n}), I32 + 1, I32 + 2,
     f"Invalid value: {-(I32 + 2)}: must fit in a 32-bit signed integer"),
    ("priority class description", "description",
     lambda n: obj("WorkloadPriorityClass", {"value": 1, "description": s(n)}), 2048, 2049,
     "Too long: may not be more than 2048 bytes"),
    ("workload podSets", "spec.podSets", lambda n: workload(n_pod_sets=n), 18, 19,
     "Too many: 19: must have at most 18 items"),
    ("workload pod set name", "spec.podSets[0].name",
     lambda n: workload(pod_set={"name": s(n)}), 63, 64,
     "Too long: may not be more than 63 bytes"),
    ("workload count int32", "spec.podSets[0].count",
     lambda n: workload(pod_set={"count": n}), I32, I32 + 1,
     f"Invalid value: {I32 + 1}: must fit in a 32-bit signed integer"),
    ("workload count minimum", "spec.podSets[0].count",
     lambda n: workload(pod_set={"count": -n}), 0, 1,
     "Invalid value: -1: must be greater than or equal to 0"),
    ("workload minCount minimum", "spec.podSets[0].minCount",
     lambda n: workload(pod_set={"count": 2, "minCount": 1 - n}), 0, 1,
     "Invalid value: 0: must be greater than or equal to 1"),
    ("workload priority int32", "spec.priority", lambda n: workload(priority=n), I32, I32 + 1,
     f"Invalid value: {I32 + 1}: must fit in a 32-bit signed integer"),
    ("workload queueName", "spec.queueName", lambda n: workload(queueName=s(n)), 253, 254,
     "Too long: may not be more than 253 bytes"),
    ("workload required topology", "spec.podSets[0].topologyRequest.required",
     lambda n: workload(pod_set={"topologyRequest": {"required": s(n)}}), 63, 64,
     "Too long: may not be more than 63 bytes"),
    ("workload maximumExecutionTimeSeconds", "spec.maximumExecutionTimeSeconds",
     lambda n: workload(maximumExecutionTimeSeconds=1 - n), 0, 1,
     "Invalid value: 0: must be greater than or equal to 1"),
    ("workload admission count int32", "status.admission.podSetAssignments[0].count",
     lambda n: workload() | {"status": {"admission": {"clusterQueue": "q", "podSetAssignments": [
         {"name": "p0", "count": n, "flavors": {}, "resourceUsage": {}}]}}}, I32, I32 + 1,
     f"Invalid value: {I32 + 1}: must fit in a 32-bit signed integer"),
]


def problems(doc: Doc) -> list[tuple[str, str]]:
    return kueue_problems(decode_kueue(doc))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_schema_bound(case: Case) -> None:
    _, path, build, at_limit, past, message = case
    assert [p for p in problems(build(at_limit)) if p[0] == path] == []
    assert (path, message) in problems(build(past))


ENUMS: list[tuple[str, Doc, str, str]] = [
    ("localqueue stopPolicy",
     obj("LocalQueue", {"spec": {"clusterQueue": "q", "stopPolicy": "Pause"}}, namespaced=True),
     "spec.stopPolicy",
     'Unsupported value: "Pause": supported values: "None", "Hold", "HoldAndDrain"'),
    ("workload priorityClassRef group",
     workload(priorityClassRef={"group": "x.io", "kind": "PriorityClass", "name": "p"}),
     "spec.priorityClassRef.group",
     'Unsupported value: "x.io": supported values: "kueue.x-k8s.io", "scheduling.k8s.io"'),
    ("workload priorityClassRef kind",
     workload(priorityClassRef={"group": "kueue.x-k8s.io", "kind": "Nope", "name": "p"}),
     "spec.priorityClassRef.kind",
     'Unsupported value: "Nope": supported values: "WorkloadPriorityClass", "PriorityClass"'),
    ("v1beta1 whenCanBorrow", cq("v1beta1", flavorFungibility={"whenCanBorrow": "Preempt"}),
     "spec.flavorFungibility.whenCanBorrow",
     'Unsupported value: "Preempt": supported values: "MayStopSearch", "TryNextFlavor", '
     '"Borrow"'),
    ("v1beta1 whenCanPreempt", cq("v1beta1", flavorFungibility={"whenCanPreempt": "Borrow"}),
     "spec.flavorFungibility.whenCanPreempt",
     'Unsupported value: "Borrow": supported values: "MayStopSearch", "TryNextFlavor", '
     '"Preempt"'),
]


@pytest.mark.parametrize("case", ENUMS, ids=[c[0] for c in ENUMS])
def test_enum(case: tuple[str, Doc, str, str]) -> None:
    _, doc, path, message = case
    assert (path, message) in problems(doc)


def test_v1beta1_fungibility_old_names_accepted() -> None:
    assert problems(cq("v1beta1", flavorFungibility={"whenCanBorrow": "Borrow",
                                                     "whenCanPreempt": "Preempt"})) == []


def config(strategies: list[str]) -> Doc:
    return {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
            "fairSharing": {"preemptionStrategies": strategies}}


@pytest.mark.parametrize("strategies", [
    ["LessThanOrEqualToFinalShare"], ["LessThanInitialShare"],
    ["LessThanOrEqualToFinalShare", "LessThanInitialShare"], []])
def test_preemption_strategy_sets_accepted(strategies: list[str]) -> None:
    assert problems(config(strategies)) == []


@pytest.mark.parametrize(("strategies", "shown"), [
    (["Bogus"], '"Bogus"'),
    (["LessThanInitialShare", "LessThanOrEqualToFinalShare"],
     '"LessThanInitialShare", "LessThanOrEqualToFinalShare"'),
    (["LessThanInitialShare", "LessThanInitialShare"],
     '"LessThanInitialShare", "LessThanInitialShare"'),
])
def test_preemption_strategy_sets_refused(strategies: list[str], shown: str) -> None:
    assert problems(config(strategies)) == [(
        "fairSharing.preemptionStrategies",
        f"Unsupported value: []v1beta2.PreemptionStrategy{{{shown}}}: supported values: "
        '"LessThanOrEqualToFinalShare", "LessThanInitialShare", '
        '"LessThanOrEqualToFinalShare,LessThanInitialShare"')]


# -- the reproducers, through the CLI ----------------------------------------

QUEUE = one_queue(cohort="c0") + """---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: wl, namespace: default}
spec:
  queueName: lq
  podSets:
  - name: main
    count: COUNT
    template:
      spec:
        containers:
        - {name: c, image: x, resources: {requests: {cpu: "1"}}}
"""


cohorts = cohort_chain


REPRODUCERS = {
    "wpc": (QUEUE.replace("COUNT", "1") + "---\napiVersion: kueue.x-k8s.io/v1beta1\n"
            "kind: WorkloadPriorityClass\nmetadata: {name: p}\nvalue: 9223372036854775808\n",
            2, "error: FILE:5 WorkloadPriorityClass p: value: Invalid value: "
               "9223372036854775808: must fit in a 32-bit signed integer\n"),
    "count2p31": (QUEUE.replace("COUNT", "2147483648"), 2,
                  "error: FILE:4 Workload default/wl: spec.podSets[0].count: Invalid value: "
                  "2147483648: must fit in a 32-bit signed integer\n"),
    "strategy": (QUEUE.replace("COUNT", "1") + "---\napiVersion: config.kueue.x-k8s.io/v1beta1"
                 "\nkind: Configuration\nfairSharing:\n  enable: true\n"
                 "  preemptionStrategies: [Bogus]\n", 2,
                 "error: FILE:5 Configuration <no name>: fairSharing.preemptionStrategies: "
                 'Unsupported value: []v1beta2.PreemptionStrategy{"Bogus"}: supported values: '
                 '"LessThanOrEqualToFinalShare", "LessThanInitialShare", '
                 '"LessThanOrEqualToFinalShare,LessThanInitialShare"\n'),
    "topology": (QUEUE.replace("COUNT", "1") + "---\napiVersion: kueue.x-k8s.io/v1beta1\n"
                 "kind: Topology\nmetadata: {name: t}\nspec:\n  levels:\n"
                 + "".join(f"  - {{nodeLabel: l{i}}}\n" for i in range(1001)), 2,
                 "error: FILE:5 Topology t: spec.levels: Too many: 1001: must have at most 16 "
                 "items\n"),
    "chain": (QUEUE.replace("COUNT", "1") + "---\n" + cohorts(3000, False), 0, ""),
    "cycle": (QUEUE.replace("COUNT", "1") + "---\n" + cohorts(1500, True), 1, ""),
}


@pytest.mark.parametrize("name", sorted(REPRODUCERS))
def test_reproducer_admit(name: str, tmp_path: Path) -> None:
    text, code, err = REPRODUCERS[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["admit", "-f", str(path)])
    assert (result.exit_code, result.stderr) == (code, err.replace("FILE", str(path))), \
        result.stderr


def test_cycle_explain_workload_says_why(tmp_path: Path) -> None:
    path = tmp_path / "cycle.yaml"
    path.write_text(REPRODUCERS["cycle"][0])
    result = CliRunner().invoke(cli, ["explain", "workload", "default/wl", "-f", str(path)])
    assert (result.exit_code, result.stderr) == (1, "")
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "Workload default/wl (Workload default/wl): Pending",
        "  ClusterQueue q is inactive",
        "  ClusterQueue q is inactive (HasCycle): its cohort c0 is in a cycle of 1500 cohort(s) "
        "through spec.parentName (c0 -> c1 -> c2 -> c3 -> ... (1496 more) -> c0); Kueue admits "
        "nothing under the cycle until it is removed"]


def test_self_parent_is_a_cycle_not_an_input_error(tmp_path: Path) -> None:
    # Kueue's webhook accepts a self-parent (TestCycles "self-cycle"): the queue is inactive.
    path = tmp_path / "self.yaml"
    path.write_text(QUEUE.replace("COUNT", "1") + "---\napiVersion: kueue.x-k8s.io/v1beta1\n"
                    "kind: Cohort\nmetadata: {name: c0}\nspec: {parentName: c0}\n")
    result = CliRunner().invoke(cli, ["admit", "-f", str(path)])
    assert (result.exit_code, result.stderr) == (1, "")
    assert "message: ClusterQueue q is inactive" in result.stdout
