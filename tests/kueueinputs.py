"""Small Kueue inputs that the queueing, count-cap and fuzz tests share: one queue on one
flavor, and cohort chains with or without a cycle (issue 29's shapes); and one
``dralab admit`` run on such a snapshot, as the queueing CLI tests make it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


def one_queue(quota: str = "10", cohort: str | None = None) -> str:
    """ClusterQueue ``q`` (``quota`` cpu on flavor ``f``, in ``cohort`` if given), the
    ResourceFlavor ``f`` and the LocalQueue ``default/lq``: three YAML documents, ending
    with a newline and no separator."""
    member = f"  cohort: {cohort}\n" if cohort else ""
    return f"""apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: q}}
spec:
{member}  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f
      resources:
      - {{name: cpu, nominalQuota: "{quota}"}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {{name: f}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{name: lq, namespace: default}}
spec: {{clusterQueue: q}}
"""


def cohort_chain(n: int, cycle: bool) -> str:
    """Cohorts c0 -> c1 -> ... -> c(n-1) by ``spec.parentName``; with ``cycle`` the last
    one's parent is c0 again (n = 1: a cohort that is its own parent)."""
    docs = []
    for i in range(n):
        parent = f"c{i + 1}" if i + 1 < n else ("c0" if cycle else None)
        doc = f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {{name: c{i}}}\n"
        docs.append(doc + (f"spec: {{parentName: {parent}}}\n" if parent else ""))
    return "---\n".join(docs)


@dataclass(frozen=True)
class AdmitRun:
    """One ``dralab admit -f`` run on a written snapshot: the exit code, what it printed,
    and the objects of its YAML output (none after an input error, exit 2)."""

    exit_code: int
    output: str
    stderr: str
    items: list[dict[str, Any]]

    def by_name(self, kind: str | None = "Workload") -> dict[str, dict[str, Any]]:
        """The output's objects (of ``kind``; every kind with None) by name."""
        return {i["metadata"]["name"]: i for i in self.items
                if kind is None or i["kind"] == kind}


def run_admit(tmp_path: Path, text: str, *args: str) -> AdmitRun:
    """``dralab admit -f SNAPSHOT *args`` with ``text`` written to ``tmp_path/in.yaml``.
    Exit 0 or 1 (or 2 on bad input) is the caller's to check."""
    from click.testing import CliRunner

    from dralab.cli.main import cli

    snapshot = tmp_path / "in.yaml"
    snapshot.write_text(text)
    result = CliRunner().invoke(cli, ["admit", "-f", str(snapshot), *args])
    assert result.exit_code in (0, 1, 2), result.output
    items = yaml.safe_load(result.stdout)["items"] if result.exit_code != 2 else []
    return AdmitRun(result.exit_code, result.output, result.stderr, items)


def conditions(item: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """A Workload's status conditions: type -> (status, reason, message)."""
    return {c["type"]: (c["status"], c["reason"], c["message"])
            for c in item["status"].get("conditions", [])}


def default_queue(cpu: str, preemption: str | None = None) -> str:
    """The v1beta2 ResourceFlavor ``default``, ClusterQueue ``cq`` (``cpu`` nominal quota
    on it, ``spec.preemption`` as the flow mapping ``preemption`` if given) and the
    LocalQueue ``ns/q``: three YAML documents starting and ending with a newline."""
    policy = f"  preemption: {preemption}\n" if preemption else ""
    return f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
{policy}  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{{name: cpu, nominalQuota: "{cpu}"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: q, namespace: ns}}
spec: {{clusterQueue: cq}}
"""
