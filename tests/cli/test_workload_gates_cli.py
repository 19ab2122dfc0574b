"""`dralab schedule` and `dralab explain pod` on the example driver's PodGroup demo under the
workload gates, on a kind worker with two (or three) example GPUs.

* 1.37 defaults (GenericWorkload and DRAWorkloadResourceClaims off), or the claims gate
  alone: the API server drops the pods' schedulingGroup, so every pod gets its own GPU
  from the template: two GPUs serve two of the four pods.
* GenericWorkload on: each PodGroup is a gang of two. On three GPUs group-1 fits and
  group-2 only half: nothing of group-2 binds (upstream's PodGroup-cycle message).
* Both on: one claim per PodGroup, so two GPUs serve all four pods, two per GPU.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

DATA = Path(__file__).parent.parent / "data" / "gates"
DEMO = str(DATA / "upstream" / "podgroup-resourceclaimtemplate.yaml")
NS = "podgroup-resourceclaimtemplate"
MIN_COUNT = "0/1 nodes are available: 1 minCount (2) cannot be satisfied: 1 scheduled, 0 remaining."


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def three_gpus(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The two-GPU worker with a third device, gpu-2."""
    docs = list(yaml.safe_load_all((DATA / "example-driver-two-gpus.yaml").read_text()))
    for doc in docs:
        if doc and doc["kind"] == "ResourceSlice":
            extra = copy.deepcopy(doc["spec"]["devices"][1])
            extra["name"] = "gpu-2"
            extra["attributes"]["index"] = {"int": 2}
            extra["attributes"]["uuid"] = {"string": "gpu-00000000-0000-4000-8000-000000000002"}
            doc["spec"]["devices"].append(extra)
    path = tmp_path_factory.mktemp("fleet") / "three-gpus.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


@dataclass(frozen=True)
class Case:
    id: str
    gpus: int
    gates: str
    code: int
    devices: dict[str, list[str]]  # deployment -> devices of its placed pods, sorted
    unplaced: str | None = None     # how the message of every unplaced pod begins


CASES = [
    Case("defaults", 2, "", 1, {"group-1": ["gpu-0", "gpu-1"], "group-2": []},
         "0/1 nodes are available: 1 cannot allocate all claims."),
    Case("claims-gate-alone", 2, "DRAWorkloadResourceClaims=true", 1,
         {"group-1": ["gpu-0", "gpu-1"], "group-2": []},
         "0/1 nodes are available: 1 cannot allocate all claims."),
    Case("defaults-three-gpus", 3, "", 1,
         {"group-1": ["gpu-0", "gpu-1"], "group-2": ["gpu-2"]},
         "0/1 nodes are available: 1 cannot allocate all claims."),
    Case("gang-three-gpus", 3, "GenericWorkload=true", 1,
         {"group-1": ["gpu-0", "gpu-1"], "group-2": []}, MIN_COUNT),
    Case("both-gates", 2, "GenericWorkload=true,DRAWorkloadResourceClaims=true", 0,
         {"group-1": ["gpu-0", "gpu-0"], "group-2": ["gpu-1", "gpu-1"]}),
]


def _inputs(case: Case, three_gpus: str) -> list[str]:
    fleet = three_gpus if case.gpus == 3 else str(DATA / "example-driver-two-gpus.yaml")
    args = ["-f", str(DATA / "deviceclass.yaml"), "-f", fleet, "-f", DEMO]
    return args + (["--feature-gates", case.gates] if case.gates else [])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_schedule(case: Case, three_gpus: str) -> None:
    code, out, err = run("schedule", *_inputs(case, three_gpus))
    assert code == case.code, err
    items = yaml.safe_load(out)["items"]
    claims = {i["metadata"]["name"]: i for i in items if i["kind"] == "ResourceClaim"}
    found: dict[str, list[str]] = {"group-1": [], "group-2": []}
    for pod in (i for i in items if i["kind"] == "Pod" and i["spec"].get("nodeName")):
        for status in pod["status"]["resourceClaimStatuses"]:
            claim = claims[status["resourceClaimName"]]
            found[pod["metadata"]["name"][:7]] += [
                r["device"] for r in claim["status"]["allocation"]["devices"]["results"]]
    assert {k: sorted(v) for k, v in found.items()} == case.devices
    allocated = [c for c in claims.values() if c.get("status", {}).get("allocation")]
    # Every allocated claim is one pod's, or (both gates) one PodGroup's.
    kinds = {r["resource"] for c in allocated for r in c["status"]["reservedFor"]}
    assert kinds == ({"podgroups"} if case.code == 0 else {"pods"})
    assert all(len(c["status"]["reservedFor"]) == 1 for c in allocated)
    if case.unplaced is not None:
        lines = [line for line in err.splitlines() if line.startswith(f"{NS}/")]
        assert len(lines) == 4 - sum(map(len, case.devices.values()))
        assert all(f": Unschedulable: {case.unplaced}" in line for line in lines), err


def test_explain_names_the_gang(three_gpus: str) -> None:
    case = next(c for c in CASES if c.id == "gang-three-gpus")
    code, out, err = run("explain", "pod", *_inputs(case, three_gpus), "-n", NS,
                         "deployment/group-2")
    assert code == 1, err
    assert out.startswith(f"Deployment {NS}/group-2: 2 pod(s), 2 not scheduled\n")
    assert out.count(MIN_COUNT) == 2


def test_composite_pod_groups_are_refused() -> None:
    doc = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
           "metadata": {"name": "replica", "namespace": NS},
           "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 2}}}}
    result = CliRunner().invoke(cli, ["schedule", "-f", str(DATA / "deviceclass.yaml"),
                                      "-f", "-", "--feature-gates", "GenericWorkload=true"],
                                input=yaml.safe_dump(doc))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.strip().endswith(
        "kind: Forbidden: feature gate CompositePodGroup is not modelled by dralab yet")


def test_explain_claim_of_a_pod_group(three_gpus: str) -> None:
    case = next(c for c in CASES if c.id == "both-gates")
    code, out, err = run("explain", "claim", *_inputs(case, three_gpus), "-n", NS,
                         "group-1-548dc9f9d9-5n2lc/gpu")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"ResourceClaim {NS}/group-1-gpu-") and \
        lines[0].endswith(": allocated")
    assert lines[1] == (f'  generated for PodGroup {NS}/group-1 (spec.resourceClaims "gpu"), '
                        "shared by its pods")
    assert "  reserved for podgroups/group-1" in lines
    # Both pods of the group are explained as its users.
    assert out.count(f"Pod {NS}/group-1-") == 2
