"""``dralab autoscale``'s Cluster Autoscaler flags added for issue 31 (names, defaults
and value syntax as CA's config/flags/flags.go at cluster-autoscaler-release-1.37):
--expander chains, the priority expander's ConfigMap, --enforce-node-group-min-size,
--balance-similar-node-groups, --balancing-ignore-label, --expendable-pods-priority-cutoff,
--max-nodes-per-scaleup; one-line errors for bad values."""

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
  - name: small
    count: 0
    cpu: "4"
    memory: 16Gi
    autoscaling: {min: 0, max: 5}
  - name: big
    count: 0
    cpu: "16"
    memory: 64Gi
    autoscaling: {min: %(big_min)d, max: 5}
  - name: big-twin
    count: 0
    cpu: "16"
    memory: 64Gi
    labels: {team: b}
    autoscaling: {min: 0, max: 5}
"""

POD = """---
apiVersion: v1
kind: Pod
metadata: {name: %(name)s, namespace: default}
spec:
  %(priority)s
  containers:
  - name: c
    image: x
    resources: {requests: {cpu: "%(cpu)s", memory: 1Gi}}
"""

PRIORITIES = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-autoscaler-priority-expander, namespace: kube-system}
data:
  priorities: %s
"""


def write(tmp_path: Path, big_min: int = 0, pods: int = 1, cpu: str = "2",
          priority: int | None = None, priorities: str | None = None) -> list[str]:
    text = FLEET % {"big_min": big_min}
    for i in range(pods):
        text += POD % {"name": f"p{i}", "cpu": cpu,
                       "priority": "" if priority is None else f"priority: {priority}"}
    if priorities is not None:
        text += PRIORITIES % priorities
    path = tmp_path / "in.yaml"
    path.write_text(text)
    return ["-f", str(path)]


def run(*args: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(cli, ["autoscale", "-o", "json", *args])
    doc = json.loads(result.stdout) if result.exit_code in (0, 1) else {}
    return result.exit_code, doc, result.stderr


def ups(doc: dict) -> dict[str, int]:
    return {u["pool"]: u["add"] for u in doc["scaleUp"]}


def test_help_lists_every_ca_flag() -> None:
    out = CliRunner().invoke(cli, ["autoscale", "--help"]).stdout
    for flag in ("--enforce-node-group-min-size", "--balance-similar-node-groups",
                 "--balancing-ignore-label", "--expendable-pods-priority-cutoff",
                 "--max-nodes-per-scaleup", "--expander"):
        assert flag in out


def test_least_waste_by_default(tmp_path: Path) -> None:
    code, doc, _ = run(*write(tmp_path))
    assert code == 0 and ups(doc) == {"small": 1}


def test_priority_configmap_and_chain(tmp_path: Path) -> None:
    # CA's ConfigMap: data.priorities maps a priority to regular expressions searched in
    # group names; the highest matching priority wins, least-waste then breaks the tie.
    inputs = write(tmp_path, priorities='"10:\\n  - big.*\\n1:\\n  - sm.*\\n"')
    code, doc, err = run(*inputs, "--expander", "priority,least-waste")
    assert (code, err) == (0, "")
    assert list(ups(doc)) in (["big"], ["big-twin"])
    # the ConfigMap is read, so no "does not use ConfigMap" warning
    code, doc, err = run(*inputs, "--expander", "priority")
    assert code == 0 and err == "" and next(iter(ups(doc))).startswith("big")


def test_priority_configmap_only_for_the_priority_expander(tmp_path: Path) -> None:
    code, doc, _ = run(*write(tmp_path, priorities='"10:\\n  - big\\n"'),
                       "--expander", "least-waste")
    assert code == 0 and ups(doc) == {"small": 1}


@pytest.mark.parametrize(("priorities", "message"), [
    ('""', "data.priorities: priority configuration in cluster-autoscaler-priority-expander "
           "configmap is empty"),
    ('"10: [\\"big(\\"]"', "data.priorities[10]: Can't compile regexp rule for priority 10 "
                            "and rule big("),
    ('"a: [big]"', "data.priorities: Can't parse YAML with priorities in the configmap: "
                   "priority 'a' is not an integer"),
    ('"10: [big"', "data.priorities: Can't parse YAML with priorities in the configmap:"),
])
def test_bad_priorities_are_one_line_errors(tmp_path: Path, priorities: str,
                                            message: str) -> None:
    code, _, err = run(*write(tmp_path, priorities=priorities), "--expander", "priority")
    assert code == 2
    assert err.count("\n") == 1 and message in err and "ConfigMap" in err, err
    assert "cluster-autoscaler-priority-expander" in err and "in.yaml" in err


def test_configmap_without_priorities_key(tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(FLEET % {"big_min": 0} + "---\napiVersion: v1\nkind: ConfigMap\n"
                    "metadata: {name: cluster-autoscaler-priority-expander}\n"
                    "data: {other: x}\n")
    code, _, err = run("-f", str(path))
    assert code == 2 and err.count("\n") == 1
    assert "doesn't contain priorities key" in err


@pytest.mark.parametrize("value", ["priority,bogus", "", "least-waste,,random"])
def test_bad_expander_chain(tmp_path: Path, value: str) -> None:
    code, _, err = run(*write(tmp_path), "--expander", value)
    assert code == 2 and err.count("\n") == 1 and "unknown expander" in err


def test_enforce_node_group_min_size(tmp_path: Path) -> None:
    path = write(tmp_path, big_min=2, pods=0)
    code, doc, _ = run(*path)
    assert code == 0 and ups(doc) == {}
    code, doc, _ = run(*path, "--enforce-node-group-min-size")
    assert code == 0 and ups(doc) == {"big": 2}
    code, doc, _ = run(*path, "--enforce-node-group-min-size=false")
    assert ups(doc) == {}


def test_balance_similar_node_groups_and_ignore_label(tmp_path: Path) -> None:
    # Ten 3-CPU pods, the priority expander picking big; big and big-twin differ only by
    # the label "team" (five 3-CPU pods per 16-CPU node: two nodes).
    inputs = write(tmp_path, pods=10, cpu="3",
                   priorities='"10:\\n  - ^big$\\n"')
    code, doc, _ = run(*inputs, "--expander", "priority")
    assert code == 0 and ups(doc) == {"big": 2}
    code, doc, _ = run(*inputs, "--expander", "priority", "--balance-similar-node-groups")
    assert ups(doc) == {"big": 2}   # the label team tells the groups apart
    code, doc, _ = run(*inputs, "--expander", "priority", "--balance-similar-node-groups",
                       "--balancing-ignore-label", "team",
                       "--balancing-ignore-label", "unused.example.com/x")
    assert ups(doc) == {"big": 1, "big-twin": 1}


def test_expendable_pods_priority_cutoff(tmp_path: Path) -> None:
    inputs = write(tmp_path, priority=-5)
    code, doc, _ = run(*inputs)
    assert code == 0 and ups(doc) == {"small": 1}
    code, doc, _ = run(*inputs, "--expendable-pods-priority-cutoff", "0")
    assert code == 1 and ups(doc) == {}
    assert "expendable" in doc["pending"][0]["reason"]
    code, _, err = run(*inputs, "--expendable-pods-priority-cutoff", "x")
    assert code == 2 and err.count("\n") == 1


def test_max_nodes_per_scaleup(tmp_path: Path) -> None:
    inputs = write(tmp_path, pods=4, cpu="3", priorities='"10: [small]"')
    code, doc, _ = run(*inputs, "--expander", "priority")
    assert ups(doc) == {"small": 4}
    # The cap is per scale-up: dralab's loop then scales up again for the pods left
    # (CA would in its next loop), so the loop's total is the same, in two steps.
    code, doc, _ = run(*inputs, "--expander", "priority", "--max-nodes-per-scaleup", "2")
    assert ups(doc) == {"small": 4}
    code, doc, _ = run(*inputs, "--expander", "priority", "--max-nodes-per-scaleup", "0")
    assert ups(doc) == {"small": 4}
    code, _, err = run(*inputs, "--max-nodes-per-scaleup", "-1")
    assert code == 2 and err.count("\n") == 1
