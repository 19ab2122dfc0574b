"""No kind silently ignored in the manifests a scenario names (issue 38, part 3): a job
kind's template and the spec.queueing.kueue file say, once per kind, what they leave out,
in the words the verbs use (api/kindcount)."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from dralab.api.kindcount import UnusedKindWarning
from dralab.cli.main import cli
from dralab.sim.scenario import parse_scenario

ROOT = Path(__file__).parent.parent.parent
QUEUES = ROOT / "examples" / "scenarios" / "queues-dra-autoscaling"

TEMPLATE = """\
apiVersion: v1
kind: Namespace
metadata: {name: ml}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ml}
---
apiVersion: batch/v1
kind: Job
metadata: {name: trainer, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: x
        resources:
          requests: {cpu: "1", nvidia.com/gpu: "1"}
          limits: {nvidia.com/gpu: "1"}
"""

CONFIG_MAP = """\
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: ml}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: ml}
"""


def scenario_doc(spec: dict[str, Any]) -> dict[str, Any]:
    base: dict[str, Any] = {
        "seed": 2, "duration": "2h", "sampleInterval": "30m", "compare": ["device-plugin"],
        "fleet": {"spec": {"pools": [{"name": "h", "count": 1, "namePrefix": "h-",
                                      "cpu": "32", "memory": "256Gi",
                                      "gpu": {"model": "h100-80gb-sxm", "count": 8}}]}},
        "workload": [{"name": "k", "arrivals": ["0s"],
                      "duration": {"distribution": "fixed", "mean": "1h"}}]}
    return {"apiVersion": "dralab.dev/v1alpha1", "kind": "Scenario",
            "metadata": {"name": "t"}, "spec": {**base, **spec}}


def unused_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, UnusedKindWarning)]


def test_a_templates_unused_kinds_are_named_once_each(tmp_path: Path) -> None:
    template = tmp_path / "job.yaml"
    template.write_text(TEMPLATE + CONFIG_MAP)
    doc = scenario_doc({})
    doc["spec"]["workload"][0]["template"] = "job.yaml"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_scenario(doc, str(tmp_path / "s.yaml"), str(tmp_path))
    reader = "dralab simulate (the template of job kind k)"
    assert unused_warnings(caught) == [
        f"{reader} does not use Namespace (v1): 1 object ignored (the first at {template}:1)",
        f"{reader} does not use ConfigMap (v1): 3 objects ignored (the first at {template}:2)",
    ]


def test_a_template_of_used_kinds_gives_no_warning(tmp_path: Path) -> None:
    template = tmp_path / "job.yaml"
    template.write_text(TEMPLATE.split("---\n", 2)[2])  # the Job alone
    doc = scenario_doc({})
    doc["spec"]["workload"][0]["template"] = "job.yaml"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_scenario(doc, str(tmp_path / "s.yaml"), str(tmp_path))
    assert unused_warnings(caught) == []


def test_the_kueue_files_unused_kinds_are_warned_by_simulate(tmp_path: Path) -> None:
    kueue = tmp_path / "kueue.yaml"
    kueue.write_text((QUEUES / "kueue.yaml").read_text() + CONFIG_MAP)
    count = len([d for d in yaml.safe_load_all(kueue.read_text()) if d])
    doc = scenario_doc({"queueing": {"kueue": "kueue.yaml"}})
    doc["spec"]["workload"][0].update(
        queue="team-a/training", cpu="1", memory="1Gi", devices={"type": "gpu", "count": 1})
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(path), "--quiet",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        "warning: dralab simulate (spec.queueing.kueue) does not use ConfigMap (v1): "
        f"2 objects ignored (the first at {kueue}:{count - 1})"]


def test_the_example_kueue_file_uses_every_kind(tmp_path: Path) -> None:
    shutil.copy(QUEUES / "kueue.yaml", tmp_path / "kueue.yaml")
    doc = scenario_doc({"queueing": {"kueue": "kueue.yaml"}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_scenario(doc, str(tmp_path / "s.yaml"), str(tmp_path))
    assert unused_warnings(caught) == []
