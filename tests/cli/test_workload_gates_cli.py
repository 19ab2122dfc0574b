"""`dralab schedule` on the example driver's PodGroup demo under the workload gates.

Upstream with the 1.37 defaults (GenericWorkload and DRAWorkloadResourceClaims
off) drops the PodGroup fields, so every pod gets its own GPU from the template:
two GPUs serve two of the four pods. With either gate on dralab refuses the input
(exit 2) instead of silently answering as if it were off.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

DATA = Path(__file__).parent.parent / "data" / "gates"
INPUT = ["-f", str(DATA / "deviceclass.yaml"), "-f", str(DATA / "example-driver-two-gpus.yaml"),
         "-f", str(DATA / "upstream" / "podgroup-resourceclaimtemplate.yaml")]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_gates_off_one_gpu_per_pod() -> None:
    code, out, err = run("schedule", *INPUT)
    assert code == 1, err
    items = yaml.safe_load(out)["items"]
    placed = [i for i in items if i["kind"] == "Pod" and i["spec"].get("nodeName")]
    claims = [i for i in items if i["kind"] == "ResourceClaim"
              and i.get("status", {}).get("allocation")]
    assert len(placed) == 2
    devices = sorted(r["device"] for c in claims
                     for r in c["status"]["allocation"]["devices"]["results"])
    assert devices == ["gpu-0", "gpu-1"]
    # Every allocated claim belongs to one pod.
    assert all(len(c["status"]["reservedFor"]) == 1 for c in claims)
    assert err.count("cannot allocate all claims") == 2


@pytest.mark.parametrize("gates", ["DRAWorkloadResourceClaims=true", "GenericWorkload=true"])
def test_gate_on_is_refused(gates: str) -> None:
    code, out, err = run("schedule", *INPUT, "--feature-gates", gates)
    assert (code, out) == (2, "")
    gate = gates.split("=")[0]
    lines = err.splitlines()
    assert lines and all(line.startswith("error: ") for line in lines)
    assert all(line.endswith(f"feature gate {gate} is not modelled by dralab yet")
               for line in lines)
