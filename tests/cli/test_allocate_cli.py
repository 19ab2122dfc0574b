"""`dralab allocate`: the exact CLI contract (output List, exit codes 0/1/2/3), in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

from .golden import check_golden

ROOT = Path(__file__).parent.parent.parent
FLEET = str(ROOT / "examples" / "fleet")
CLAIMS = ROOT / "examples" / "claims"


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def results(list_yaml: str) -> list[list[tuple[str, str, str]]]:
    out = yaml.safe_load(list_yaml)
    return [[(r["request"], r["pool"], r["device"])
             for r in item["status"]["allocation"]["devices"]["results"]]
            for item in out["items"]]


def test_two_h100_golden() -> None:
    code, out, err = run("allocate", "-f", FLEET, "-f", str(CLAIMS / "two-h100.yaml"),
                         "--node", "h100-node-01")
    assert code == 0, err
    check_golden("allocate-two-h100.yaml", out)
    assert results(out) == [[("gpus", "h100-node-01", "gpu-0"), ("gpus", "h100-node-01", "gpu-1")]]


def test_mig_layout_on_one_gpu() -> None:
    code, out, err = run("allocate", "-f", FLEET, "-f", str(CLAIMS / "mig-mixed.yaml"),
                         "--node", "a100-mig-node-01")
    assert code == 0, err
    check_golden("allocate-mig-mixed.yaml", out)
    devices = [d for _, _, d in results(out)[0]]
    # Slices are tried in name order; gpu-1's slice name sorts first.
    assert devices == ["gpu-1-mig-1g5gb-19-0", "gpu-1-mig-1g5gb-19-1",
                       "gpu-1-mig-2g10gb-14-2", "gpu-1-mig-3g20gb-9-4"]


def test_unschedulable_exit_1_with_explanation() -> None:
    code, out, err = run("allocate", "-f", FLEET, "-f", str(CLAIMS / "two-gpus-one-pcie-root.yaml"),
                         "--node", "h100-node-01")
    assert code == 1
    assert out == ""
    check_golden("allocate-pcie-root.stderr", err)
    assert "request gpus:" in err


def test_wrong_node_is_unschedulable() -> None:
    code, _, err = run("allocate", "-f", FLEET, "-f", str(CLAIMS / "two-h100.yaml"),
                       "--node", "l4-node-01")
    assert code == 1
    assert "rejected by selector[0]" in err


def test_allocated_claims_are_in_use(tmp_path: Path) -> None:
    code, first, _ = run("allocate", "-f", FLEET, "-f", str(CLAIMS / "two-h100.yaml"),
                         "--node", "h100-node-01")
    assert code == 0
    allocated = tmp_path / "allocated.yaml"
    allocated.write_text(first)
    second = (CLAIMS / "two-h100.yaml").read_text().replace("name: two-h100", "name: two-more")
    code, out, err = run("allocate", "-f", FLEET, "-f", str(allocated), "-f", "-",
                         "--node", "h100-node-01", stdin=second)
    assert code == 0, err
    assert [d for _, _, d in results(out)[0]] == ["gpu-2", "gpu-3"]


def test_json_output() -> None:
    code, out, _ = run("allocate", "-f", FLEET, "-f", str(CLAIMS / "two-h100.yaml"),
                       "--node", "h100-node-01", "-o", "json")
    assert code == 0
    data = json.loads(out)
    assert data["kind"] == "List" and data["apiVersion"] == "v1"
    assert len(data["items"][0]["status"]["allocation"]["devices"]["results"]) == 2


def test_cel_runtime_error_is_exit_3() -> None:
    claim = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: typo, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors:
        - cel: {expression: 'device.attributes["gpu.nvidia.com"].prodName == "x"'}
"""
    code, out, err = run("allocate", "-f", FLEET, "-f", "-", "--node", "h100-node-01",
                         stdin=claim)
    assert code == 3
    assert out == ""
    assert err.startswith("error: ") and "no such key: prodName" in err
    assert err.count("\n") == 1


def test_missing_class_is_allocation_error() -> None:
    claim = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: nope, namespace: ml}
spec: {devices: {requests: [{name: x, exactly: {deviceClassName: no-such-class}}]}}
"""
    code, _, err = run("allocate", "-f", FLEET, "-f", "-", "--node", "h100-node-01", stdin=claim)
    assert code == 3
    assert 'deviceclass.resource.k8s.io "no-such-class" not found' in err


@pytest.mark.parametrize(
    "args",
    [
        ["allocate", "-f", FLEET],  # --node missing
        ["allocate", "-f", FLEET, "--node", "n", "--feature-gates", "Bogus=true"],
        ["allocate", "-f", "/no/such/dir", "--node", "n"],
        ["allocate", "-f", str(ROOT / "tests" / "data" / "invalid" / "seeded.yaml"),
         "--node", "n"],
    ],
)
def test_bad_input_or_usage_is_exit_2(args: list[str]) -> None:
    code, out, _ = run(*args)
    assert code == 2
    assert out == ""


def test_no_claim_to_allocate_is_exit_2_in_one_line(tmp_path: Path) -> None:
    # Issue 10: an input without a pending claim used to print an empty List.
    code, out, err = run("allocate", "-f", FLEET, "--node", "h100-node-01")
    assert (code, out) == (2, "")
    assert err == ("error: nothing to allocate: the input has no ResourceClaim without "
                   "status.allocation\n")
    # Only allocated claims: still nothing to allocate.
    _, allocated, _ = run("allocate", "-f", FLEET, "-f", str(CLAIMS / "two-h100.yaml"),
                          "--node", "h100-node-01")
    (tmp_path / "allocated.yaml").write_text(allocated)
    code, out, err = run("allocate", "-f", FLEET, "-f", str(tmp_path / "allocated.yaml"),
                         "--node", "h100-node-01")
    assert (code, out) == (2, "")
    assert err.startswith("error: nothing to allocate") and err.count("\n") == 1


def test_node_nothing_names_is_exit_2_listing_named_nodes() -> None:
    code, out, err = run("allocate", "-f", FLEET, "-f", str(CLAIMS / "two-h100.yaml"),
                         "--node", "h100-node-1")
    assert (code, out) == (2, "")
    assert err == ("error: --node h100-node-1: no Node and no ResourceSlice in the input names "
                   "this node (named: a100-mig-node-01, h100-node-01, l4-node-01)\n")


CLUSTER_WIDE = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fpga.example.com}
spec:
  selectors:
  - cel: {expression: device.driver == "fpga.example.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: shared-fpgas}
spec:
  driver: fpga.example.com
  pool: {name: shared, generation: 1, resourceSliceCount: 1}
  allNodes: true
  devices:
  - name: fpga-0
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one-fpga, namespace: default}
spec:
  devices:
    requests:
    - name: fpga
      exactly: {deviceClassName: fpga.example.com}
"""


def test_bare_node_allowed_when_the_input_names_no_node() -> None:
    code, out, err = run("allocate", "-f", "-", "--node", "any-node", stdin=CLUSTER_WIDE)
    assert code == 0, err
    assert results(out) == [[("fpga", "shared", "fpga-0")]]


def test_node_named_only_by_a_slice_is_known() -> None:
    slice_only = CLUSTER_WIDE.replace("allNodes: true", "nodeName: fpga-node")
    code, out, err = run("allocate", "-f", "-", "--node", "fpga-node", stdin=slice_only)
    assert code == 0, err
    assert results(out) == [[("fpga", "shared", "fpga-0")]]
    code, _, err = run("allocate", "-f", "-", "--node", "fpga-nod", stdin=slice_only)
    assert code == 2
    assert "(named: fpga-node)" in err


# --- stored objects with a gate that is now off -----------------------------------------

GATES_DATA = ROOT / "tests" / "data" / "gates"
# (slices as the example driver publishes them, claim, gate turned off, exit code,
#  a field `dralab validate` reports as gated under the same gates)
STORED = [
    ("example-driver-partitions.yaml", "one-gpu-claim.yaml", "DRAPartitionableDevices", 1,
     "kind-worker-gpu.example.com-c7k2q: spec.sharedCounters: Forbidden: requires feature "
     "gate DRAPartitionableDevices"),
    ("example-driver-binding-conditions.yaml", "one-gpu-claim.yaml",
     "DRADeviceBindingConditions", 1,
     "spec.devices[0].bindingConditions: Forbidden: requires feature gate "
     "DRADeviceBindingConditions"),
    ("example-driver-multiple-allocations.yaml", "one-gpu-claim.yaml", "DRAConsumableCapacity",
     1, "spec.devices[0].allowMultipleAllocations: Forbidden: requires feature gate "
        "DRAConsumableCapacity"),
    ("example-driver-multiple-allocations.yaml", "small-share-claim.yaml",
     "DRAConsumableCapacity", 3,
     "small-share: spec.devices.requests[0].exactly.capacity: Forbidden: requires feature "
     "gate DRAConsumableCapacity"),
]


def _stored_args(slices: str, claim: str) -> list[str]:
    return ["-f", str(GATES_DATA / "deviceclass.yaml"), "-f", str(GATES_DATA / slices),
            "-f", str(GATES_DATA / claim)]


@pytest.mark.parametrize(("slices", "claim", "gate", "exit_code", "gated"), STORED,
                         ids=[f"{s[2]}-{s[1]}" for s in STORED])
def test_stored_fields_of_a_disabled_gate(slices: str, claim: str, gate: str, exit_code: int,
                                          gated: str) -> None:
    args = _stored_args(slices, claim)
    off = f"{gate}=false"
    # With the gate on the same input allocates or, at worst, does not fit.
    code, _, err = run("allocate", *args, "--node", "kind-worker")
    assert code in (0, 1), err
    # Off: the allocator's outcome, not "invalid input".
    code, out, err = run("allocate", *args, "--node", "kind-worker", "--feature-gates", off)
    assert (code, out) == (exit_code, ""), err
    assert "Forbidden" not in err
    # `validate` still reports the field, as the API server would refuse it on create.
    code, out, _ = run("validate", *args, "--feature-gates", off)
    assert code == 2
    assert gated in out


def test_stored_gates_explanations_golden() -> None:
    blocks = []
    for slices, claim, gate, exit_code, _ in STORED:
        if exit_code != 1:
            continue
        _, _, err = run("allocate", *_stored_args(slices, claim), "--node", "kind-worker",
                        "--feature-gates", f"{gate}=false")
        blocks.append(f"# {slices} {claim} {gate}=false\n{err}")
    check_golden("allocate-stored-gates.stderr", "".join(blocks))


# --- admin access and workload gates -------------------------------------------------------

ADMIN_DEMO = GATES_DATA / "upstream" / "admin-access.yaml"
ADMIN_CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: all-gpus-admin, namespace: admin-access}
spec:
  devices:
    requests:
    - name: admin-gpu
      exactly: {deviceClassName: gpu.example.com, allocationMode: All, adminAccess: true}
"""


def test_admin_access_in_a_labelled_namespace_gets_every_gpu() -> None:
    # As the demo's README expects: all GPUs of the node, with admin access.
    code, out, err = run("allocate", "-f", str(ADMIN_DEMO),
                         "-f", str(GATES_DATA / "deviceclass.yaml"),
                         "-f", str(GATES_DATA / "example-driver-two-gpus.yaml"),
                         "-f", "-", "--node", "kind-worker", stdin=ADMIN_CLAIM)
    assert code == 0, err
    assert results(out) == [[("admin-gpu", "kind-worker", "gpu-0"),
                             ("admin-gpu", "kind-worker", "gpu-1")]]
    allocated = yaml.safe_load(out)["items"][0]["status"]["allocation"]["devices"]["results"]
    assert [r["adminAccess"] for r in allocated] == [True, True]


def test_admin_access_without_the_namespace_label_is_exit_2() -> None:
    demo = ADMIN_DEMO.read_text().replace('resource.kubernetes.io/admin-access: "true"',
                                          "team: ops")
    code, out, err = run("allocate", "-f", "-", "-f", str(GATES_DATA / "deviceclass.yaml"),
                         "-f", str(GATES_DATA / "example-driver-two-gpus.yaml"),
                         "--node", "kind-worker", stdin=demo + "\n---\n" + ADMIN_CLAIM)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "error: -:2 ResourceClaimTemplate admin-access/multiple-gpus-admin: "
        "spec.spec.devices.requests[0].exactly.adminAccess: Forbidden: admin access to devices "
        "requires the `resource.kubernetes.io/admin-access: true` label on the containing "
        "namespace",
        "error: -:4 ResourceClaim admin-access/all-gpus-admin: "
        "spec.devices.requests[0].exactly.adminAccess: Forbidden: admin access to devices "
        "requires the `resource.kubernetes.io/admin-access: true` label on the containing "
        "namespace",
    ]


@pytest.mark.parametrize("gates", ["", "DRAWorkloadResourceClaims=true",
                                   "GenericWorkload=true,DRAWorkloadResourceClaims=true"])
def test_workload_gates_leave_a_claims_allocation_alone(gates: str) -> None:
    # The PodGroups and their pods around it mean nothing to allocating one claim on one
    # node, whatever the workload gates (dralab models them since issue 12 item 4).
    args = ["-f", str(GATES_DATA / "deviceclass.yaml"),
            "-f", str(GATES_DATA / "example-driver-two-gpus.yaml"),
            "-f", str(GATES_DATA / "upstream" / "podgroup-resourceclaimtemplate.yaml"),
            "-f", str(GATES_DATA / "one-gpu-claim.yaml"), "--node", "kind-worker"]
    code, out, err = run("allocate", *args, *(["--feature-gates", gates] if gates else []))
    assert code == 0, err
    assert results(out) == [[("gpu", "kind-worker", "gpu-0")]]
