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


def test_no_pending_claims_gives_empty_list() -> None:
    code, out, _ = run("allocate", "-f", FLEET, "--node", "h100-node-01")
    assert code == 0
    assert yaml.safe_load(out)["items"] == []
