"""``dralab autoscale --capacity-quotas-enabled``: CA's CapacityQuota objects
(autoscaling.x-k8s.io/v1beta1) read from -f, off by default as CA's flag; bad quotas
are one-line input errors (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dralab.cli.main import cli

FLEET = """apiVersion: dralab.dev/v1alpha1
kind: Fleet
metadata: {name: f}
spec:
  pools:
  - name: cpu
    count: 1
    cpu: "4"
    memory: 16Gi
    autoscaling: {min: 0, max: 10}
"""

QUOTA = """---
apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityQuota
metadata: {name: cpu-cap}
spec:
  selector: {matchLabels: {dralab.dev/pool: cpu}}
  limits: {resources: {cpu: %s}}
"""

POD = """---
apiVersion: v1
kind: Pod
metadata: {name: p%d}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}
"""


def _run(tmp_path: Path, limit: str, *flags: str) -> tuple[int, str]:
    path = tmp_path / "in.yaml"
    path.write_text(FLEET + QUOTA % limit + "".join(POD % i for i in range(4)))
    result = CliRunner().invoke(cli, ["autoscale", "-f", str(path), "-o", "json", *flags])
    return result.exit_code, result.output


def test_quota_caps_the_scale_up(tmp_path: Path) -> None:
    # One 4-core node holds p0; 12 cores allow two more nodes, not the three needed.
    code, out = _run(tmp_path, '"12"', "--capacity-quotas-enabled")
    doc = json.loads(out)
    assert code == 1
    assert [(u["pool"], u["add"]) for u in doc["scaleUp"]] == [("cpu", 2)]
    assert [p["reason"] for p in doc["pending"]] == [
        'cpu: exceeded quota: "CapacityQuota/cpu-cap", resources: cpu']


def test_quotas_are_off_by_default(tmp_path: Path) -> None:
    code, out = _run(tmp_path, '"12"')
    assert code == 0
    assert [(u["pool"], u["add"]) for u in json.loads(out.split("\n", 1)[1])["scaleUp"]] == [
        ("cpu", 3)]
    assert out.startswith("warning: dralab autoscale does not use CapacityQuota")


@pytest.mark.parametrize(("limit", "message"), [
    ('"1.5"', "spec.limits.resources[cpu]: All resource quantities must be non-negative "
              "integers."),
    ('"-2"', "spec.limits.resources[cpu]: All resource quantities must be non-negative "
             "integers."),
    ('"1000m"', "spec.limits.resources[cpu]: All resource quantities must be non-negative "
                "integers."),
])
def test_bad_quota_is_an_input_error(tmp_path: Path, limit: str, message: str) -> None:
    code, out = _run(tmp_path, limit, "--capacity-quotas-enabled")
    assert code == 2
    assert out.strip().endswith(f"in.yaml:2 CapacityQuota cpu-cap: {message}")
    assert "Traceback" not in out
