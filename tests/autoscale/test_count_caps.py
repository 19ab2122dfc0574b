"""``dralab autoscale`` expands workloads into pending pods through the workload
controllers, so MAX_CREATED_PODS (``dralab.api.limits``) holds there too: a count past it
is exit 2 with the object, field and limit named, before a pod is built (issue 29). A
Fleet pool's ``autoscaling.max`` is bounded by MAX_FLEET_NODES (``fleet.spec``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cputime import cpu_budget
from dralab.cli.main import cli

FLEET = str(Path(__file__).parent.parent / "data" / "autoscale" / "fleet.yaml")
LIMIT = "more than 100,000 (dralab's limit on pods created from workloads in one run)"
SPEC = """    spec:
      restartPolicy: {restart}
      containers:
      - {{name: c, image: x, resources: {{requests: {{cpu: "1"}}}}}}
"""

CASES = [
    ("job-parallelism", f"""apiVersion: batch/v1
kind: Job
metadata: {{name: big, namespace: default}}
spec:
  parallelism: 2147483647
  completions: 2147483647
  template:
{SPEC.format(restart="Never")}""",
     "Job default/big: spec.parallelism: 2,147,483,647 pods to create"),
    ("statefulset-replicas", f"""apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db, namespace: default}}
spec:
  replicas: 100001
  serviceName: db
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
{SPEC.format(restart="Always")}""",
     "StatefulSet default/db: spec.replicas: 100,001 pods to create"),
]


@pytest.mark.parametrize(("text", "start"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_autoscale_refuses_a_count_past_the_limit(text: str, start: str) -> None:
    with cpu_budget(5.0):
        result = CliRunner().invoke(cli, ["autoscale", "-f", FLEET, "-f", "-"], input=text)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"error: - {start}, {LIMIT}\n"  # stdin, one document


def test_autoscale_refuses_a_pool_max_past_the_fleet_limit() -> None:
    fleet = Path(FLEET).read_text().replace("max: 3,", "max: 5001,")
    with cpu_budget(5.0):
        result = CliRunner().invoke(cli, ["autoscale", "-f", "-"], input=fleet)
    assert result.exit_code == 2
    assert "autoscaling.max: 5,001 nodes, more than 5,000 (MAX_FLEET_NODES)" in result.stderr
