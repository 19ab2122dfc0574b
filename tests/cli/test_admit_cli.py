"""``dralab admit``: exit codes, the one-line errors, and a golden run of the
two-team cohort example."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

from .golden import check_golden

KUEUE = Path(__file__).parent.parent / "data" / "kueue"


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["admit", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def files(*names: str) -> list[str]:
    out = []
    for name in names:
        out += ["-f", str(KUEUE / name)]
    return out


def test_all_admitted_is_exit_0() -> None:
    code, out, err = run(*files("admin-single-clusterqueue-setup.yaml",
                                "jobs-sample-job.yaml"))
    assert (code, err) == (0, "")
    items = yaml.safe_load(out)["items"]
    workload, job = items
    assert workload["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    assert workload["status"]["admission"]["podSetAssignments"] == [{
        "name": "main", "count": 3, "flavors": {"cpu": "default-flavor",
                                                "memory": "default-flavor"},
        "resourceUsage": {"cpu": "3", "memory": "600Mi"}}]
    assert workload["metadata"]["ownerReferences"][0]["name"] == job["metadata"]["name"]
    assert job["spec"]["suspend"] is False


def test_some_pending_is_exit_1_and_golden() -> None:
    code, out, err = run(*files("dralab-two-team-cohort.yaml"))
    assert (code, err) == (1, "")
    check_golden("admit-two-team-cohort.yaml", out)


def test_unmapped_device_class_is_pending_exit_1() -> None:
    code, out, _ = run(*files("dra-sample-dra-queues.yaml", "dra-sample-dra-rct-job.yaml"))
    assert code == 1
    workload, job = yaml.safe_load(out)["items"]
    (condition,) = workload["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == \
        ("QuotaReserved", "False", "Misconfigured")
    assert job["spec"]["suspend"] is True


def test_mapped_device_class_is_admitted_json() -> None:
    code, out, _ = run(*files("dra-sample-dra-queues.yaml", "dra-sample-dra-rct-job.yaml",
                              "dralab-dra-config.yaml"), "-o", "json")
    assert code == 0
    workload = yaml.safe_load(out)["items"][0]
    usage = workload["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]
    assert usage["example.com/gpu"] == "1"


@pytest.mark.parametrize(("document", "line"), [
    ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
     "spec: {queueingStrategy: LIFO}\n",
     'error: - ClusterQueue cq: spec.queueingStrategy: Unsupported value: "LIFO": supported '
     'values: "StrictFIFO", "BestEffortFIFO"'),
    ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\n"
     "spec: {cohortName: x}\n",
     "error: - ClusterQueue cq: spec.cohortName: unknown field in kueue.x-k8s.io/v1beta1 "
     "(use spec.cohort)"),
    ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
     "spec: {resourceGroups: [{coveredResources: [cpu], flavors: [{name: f, resources: "
     "[{name: cpu, nominalQuota: lots}]}]}]}\n",
     "error: - ClusterQueue cq: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota:"),
    ("apiVersion: kueue.x-k8s.io/v1alpha1\nkind: LocalQueue\nmetadata: {name: q}\n",
     'error: - LocalQueue q: no matches for kind "LocalQueue" in version '
     '"kueue.x-k8s.io/v1alpha1"'),
    ("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nresources:\n"
     "  deviceClassMappings: [{name: gpu}]\n",
     "error: - Configuration <no name>: resources.deviceClassMappings[0].deviceClassNames: "
     "Required value"),
    ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: default}\n"
     "spec: {parallelism: -1, template: {spec: {containers: [{name: c, image: i}], "
     "restartPolicy: Never}}}\n",
     "error: - Job default/j: spec.parallelism:"),
])
def test_invalid_input_is_exit_2_with_one_line_per_problem(document: str, line: str) -> None:
    code, out, err = run("-f", "-", stdin=document)
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(line), lines[0]


def test_usage_errors_are_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Without -f admit reads the current context's cluster (tests/cli/test_live_cli.py);
    # with no kubeconfig anywhere that is one line and exit 2.
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    code, _, err = run()
    assert code == 2
    assert err.startswith("error: no cluster to read: no -f given and no kubeconfig found")
    assert len(err.splitlines()) == 1
    code, _, err = run("-f", str(KUEUE / "dralab-two-team-cohort.yaml"), "-o", "xml")
    assert code == 2
    assert len(err.splitlines()) == 1


def test_missing_file_is_exit_2() -> None:
    code, _, err = run("-f", str(KUEUE / "no-such-file.yaml"))
    assert code == 2
    assert err.startswith("error: ") and len(err.splitlines()) == 1


def test_existing_admitted_workload_holds_quota(tmp_path: Path) -> None:
    # First run: pretrain and serve-eval admitted. Feed the Workloads back together
    # with a new job: the earlier admissions still hold their quota.
    _, out, _ = run(*files("dralab-two-team-cohort.yaml"))
    admitted = [w for w in yaml.safe_load(out)["items"]
                if w["kind"] == "Workload" and "admission" in w["status"]]
    snapshot = tmp_path / "admitted.yaml"
    snapshot.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                                        "items": admitted}))
    code, out, _ = run(*files("dralab-two-team-cohort.yaml"), "-f", str(snapshot))
    assert code == 1
    items = yaml.safe_load(out)["items"]
    names = [w["metadata"]["name"] for w in items if w["kind"] == "Workload"]
    assert len(names) == len(set(names)) == 3
    conditions = {w["metadata"]["name"]: w["status"]["conditions"][0]["lastTransitionTime"]
                  for w in items if w["kind"] == "Workload" and "admission" in w["status"]}
    assert len(conditions) == 2


def test_later_burst_falls_back_to_the_next_flavor(tmp_path: Path) -> None:
    _, first, _ = run(*files("dralab-two-team-cohort.yaml"))
    step1 = tmp_path / "step1.yaml"
    step1.write_text(first)
    code, out, _ = run(*files("dralab-two-team-cohort.yaml"), "-f", str(step1),
                       *files("dralab-two-team-burst.yaml"))
    assert code == 1  # finetune still waits for H100s
    workloads = {w["metadata"]["name"].rsplit("-", 1)[0]: w
                 for w in yaml.safe_load(out)["items"] if w["kind"] == "Workload"}
    burst = workloads["job-batch-infer"]["status"]["admission"]["podSetAssignments"][0]
    assert burst["flavors"]["nvidia.com/gpu"] == "a100"
    assert "admission" not in workloads["job-finetune"]["status"]
    assert workloads["job-pretrain"]["status"]["admission"]["podSetAssignments"][0][
        "resourceUsage"]["nvidia.com/gpu"] == "12"


def test_reclaim_preempts_the_borrower(tmp_path: Path) -> None:
    # team-b keeps only its H100s and may stop at a flavor where it can preempt: a
    # 4-GPU job of team-b reclaims the 4 H100s team-a's pretrain borrowed.
    docs = list(yaml.safe_load_all((KUEUE / "dralab-two-team-cohort.yaml").read_text()))
    for doc in docs:
        if doc["kind"] == "ClusterQueue" and doc["metadata"]["name"] == "team-b":
            doc["spec"]["flavorFungibility"] = {"whenCanPreempt": "Preempt"}
            del doc["spec"]["resourceGroups"][0]["flavors"][1:]
    setup = tmp_path / "setup.yaml"
    setup.write_text(yaml.safe_dump_all(docs))
    burst = yaml.safe_load((KUEUE / "dralab-two-team-burst.yaml").read_text())
    burst["spec"]["parallelism"] = 1
    (tmp_path / "burst.yaml").write_text(yaml.safe_dump(burst))
    _, first, _ = run("-f", str(setup))
    (tmp_path / "step1.yaml").write_text(first)
    code, out, _ = run("-f", str(setup), "-f", str(tmp_path / "step1.yaml"),
                       "-f", str(tmp_path / "burst.yaml"))
    assert code == 1
    workloads = {w["metadata"]["name"].rsplit("-", 1)[0]: w
                 for w in yaml.safe_load(out)["items"] if w["kind"] == "Workload"}
    assert "admission" in workloads["job-batch-infer"]["status"]
    pretrain = workloads["job-pretrain"]["status"]
    assert "admission" not in pretrain
    conditions = {c["type"]: c for c in pretrain["conditions"]}
    assert (conditions["Evicted"]["status"], conditions["Evicted"]["reason"]) == \
        ("True", "Preempted")
    assert conditions["Preempted"]["reason"] == "InCohortReclamation"
    assert conditions["Preempted"]["message"] == (
        "Preempted to accommodate a workload (UID: UNKNOWN, JobUID: "
        "0b7c1a52-3f7e-4d55-9a51-2d0a8c1e4f04) due to reclamation within the cohort; "
        "preemptor path: /research/team-b; preemptee path: /research/team-a")
    # Requeued and tried again: Kueue's reason for what it waits for (its
    # UnadmittedWorkloadsObservability gate, on by default), no longer plain Pending.
    assert (conditions["QuotaReserved"]["status"], conditions["QuotaReserved"]["reason"]) == \
        ("False", "WaitingForQuota")
    jobs = {j["metadata"]["name"]: j for j in yaml.safe_load(out)["items"] if j["kind"] == "Job"}
    assert jobs["pretrain"]["spec"]["suspend"] is True


DATA = Path(__file__).parent.parent / "data"
FLEET = Path(__file__).parent.parent.parent / "examples" / "fleet"


def test_feasibility_gate_keeps_an_unplaceable_pod_set_pending() -> None:
    """featureGates.KueueDRADeviceFeasibility in the Kueue Configuration: before quota is
    reserved, every pod of the set must fit the snapshot's nodes with its devices. The
    fleet has one 8-GPU H100 node: the 5 x 8-GPU job waits, the 2 x 4-GPU one runs."""
    code, out, err = run("-f", str(DATA / "queueing" / "big-gang-feasibility.yaml"),
                         "-f", str(FLEET))
    assert (code, err) == (1, "")
    items = {i["metadata"]["name"]: i for i in yaml.safe_load(out)["items"]}
    big = items["job-big-train-65434"]["status"]
    assert "admission" not in big
    [pending] = [c for c in big["conditions"] if c["type"] == "QuotaReserved"]
    assert pending["status"] == "False" and pending["message"].startswith(
        "pod set main cannot be placed on the nodes now (1 of 5 pods fit): pod "
        "default/job-big-train-65434-main-1: 0/3 nodes are available: 3 cannot allocate "
        "all claims.")
    zonal = items["job-zonal-f1b05"]["status"]["admission"]
    assert zonal["clusterQueue"] == "gpus"
    # The flavor's Topology ends in the hostname level: Kueue writes that level only.
    assert zonal["podSetAssignments"][0]["topologyAssignment"] == {
        "levels": ["kubernetes.io/hostname"],
        "domains": [{"values": ["h100-node-01"], "count": 2}]}
    assert items["big-train"]["spec"]["suspend"] is True
    assert items["zonal"]["spec"]["suspend"] is False


def test_without_the_gate_quota_alone_decides() -> None:
    code, _, err = run("-f", str(DATA / "queueing" / "big-gang.yaml"), "-f", str(FLEET))
    assert (code, err) == (0, "")


def test_a_workload_admitted_before_keeps_its_topology_assignment(tmp_path: Path) -> None:
    feasibility = str(DATA / "queueing" / "big-gang-feasibility.yaml")
    _, first, _ = run("-f", feasibility, "-f", str(FLEET))
    admitted = [w for w in yaml.safe_load(first)["items"]
                if w["kind"] == "Workload" and "admission" in w["status"]]
    assigned = admitted[0]["status"]["admission"]["podSetAssignments"][0]
    assigned["topologyAssignment"]["domains"][0]["values"] = ["as-kueue-wrote-it"]
    (tmp_path / "admitted.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "v1", "kind": "List", "items": admitted}))
    _, out, _ = run("-f", feasibility, "-f", str(FLEET), "-f", str(tmp_path / "admitted.yaml"))
    items = {i["metadata"]["name"]: i for i in yaml.safe_load(out)["items"]}
    again = items["job-zonal-f1b05"]["status"]["admission"]["podSetAssignments"][0]
    assert again["topologyAssignment"] == assigned["topologyAssignment"]


def test_a_second_configuration_is_refused_not_ignored() -> None:
    # big-gang.yaml opens with a Configuration without the feasibility gate; a second one
    # that turns it on would have been ignored (the first won) and admission would differ.
    config = ("apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
              "featureGates: {KueueDRADeviceFeasibility: true}\n")
    gang = DATA / "queueing" / "big-gang.yaml"
    code, out, err = run("-f", str(gang), "-f", "-", stdin=config)
    assert (code, out) == (2, "")
    assert err == (f"error: - Configuration <no name>: a second Kueue Configuration (the first "
                   f"is {gang}:1): Kueue reads one\n")
