"""A pool's ``ephemeralStorage``: read, validated, written on the Nodes, and checked by
NodeResourcesFit as kube-scheduler does (a node without any fits no pod that asks some)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from dralab.api.quantity import parse_quantity
from dralab.cli.main import cli
from dralab.fleet import FleetSpecError, generate, parse_fleet


def fleet(**pool: Any) -> dict[str, Any]:
    return {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
            "spec": {"pools": [{"name": "p", "count": 1, "gpu": {"count": 0}, **pool}]}}


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_default_is_none_as_before() -> None:
    [node] = generate(parse_fleet(fleet(), "f.yaml")).nodes
    assert "ephemeral-storage" not in node.status.capacity
    assert "ephemeral-storage" not in node.status.allocatable


def test_capacity_and_allocatable_written() -> None:
    spec = fleet(ephemeralStorage="2Ti", reserved={"ephemeral-storage": "100Gi", "cpu": "1"})
    parsed = parse_fleet(spec, "f.yaml")
    assert parsed.spec.pools[0].ephemeral_storage == "2Ti"
    [node] = generate(parsed).nodes
    assert node.status.capacity["ephemeral-storage"] == parse_quantity("2Ti")
    assert node.status.allocatable["ephemeral-storage"] == parse_quantity("1948Gi")
    assert str(node.status.allocatable["cpu"]) == "63"


ERRORS = [
    ({"ephemeralStorage": "-1Gi"},
     "f.yaml: spec.pools[0].ephemeralStorage: must not be negative: '-1Gi'"),
    ({"ephemeralStorage": "lots"}, "f.yaml: spec.pools[0].ephemeralStorage: not a quantity: "
                                   "'lots'"),
    ({"ephemeralStorage": [1]},
     "f.yaml: spec.pools[0].ephemeralStorage: Expected int | str | null, got array"),
    ({"ephemeralStorage": "1Ti", "reserved": {"ephemeral-storage": "2Ti"}},
     "f.yaml: spec.pools[0].reserved.ephemeral-storage: exceeds the node's ephemeral-storage"),
    ({"ephemeralStorage": "1Ti", "reserved": {"ephemeral-storage": "x"}},
     "f.yaml: spec.pools[0].reserved.ephemeral-storage: not a quantity: 'x'"),
    ({"reserved": {"ephemeral-storage": "10Gi"}},
     "f.yaml: spec.pools[0].reserved.ephemeral-storage: the node has no ephemeral-storage: "
     "set ephemeralStorage too"),
    # The pool field is camelCase like every field; reserved is keyed by resource name.
    ({"ephemeral-storage": "1Ti"}, "f.yaml: spec.pools[0].ephemeral-storage: unknown field"),
]


@pytest.mark.parametrize(("pool", "message"), ERRORS, ids=[m.split(": ")[1] + str(i)
                                                           for i, (_, m) in enumerate(ERRORS)])
def test_errors_name_the_field(pool: dict[str, Any], message: str) -> None:
    with pytest.raises(FleetSpecError) as info:
        parse_fleet(fleet(**pool), "f.yaml")
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


def test_cli_bad_quantity_is_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet(ephemeralStorage="-5Gi")))
    code, out, err = run("fleet", "-f", str(path))
    assert code == 2 and out == ""
    assert err == f"error: {path}: spec.pools[0].ephemeralStorage: must not be negative: " \
                  "'-5Gi'\n"


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: scratch, namespace: default}
spec:
  nodeSelector: {dralab.dev/pool: %s}
  containers:
  - name: c
    image: x
    resources: {requests: {cpu: '1', ephemeral-storage: 800Gi}}
"""


@pytest.mark.parametrize(("storage", "placed", "reason"), [
    ("2Ti", True, ""),
    ("500Gi", False, "Insufficient ephemeral-storage"),
    (None, False, "Insufficient ephemeral-storage"),  # no ephemeral-storage at all
])
def test_scheduling_checks_the_node_ephemeral_storage(storage: str | None, placed: bool,
                                                      reason: str, tmp_path: Path) -> None:
    pool = {"ephemeralStorage": storage} if storage is not None else {}
    spec = tmp_path / "fleet.yaml"
    spec.write_text(yaml.safe_dump(fleet(**pool)))
    code, nodes, err = run("fleet", "-f", str(spec))
    assert code == 0, err
    code, out, err = run("schedule", "-f", "-", "-o", "yaml",
                         stdin=nodes + "\n---\n" + POD % "p")
    [pod] = [o for o in yaml.safe_load(out)["items"] if o["kind"] == "Pod"]
    if placed:
        assert code == 0, err
        assert pod["spec"]["nodeName"] == "p-01"
    else:
        assert code == 1
        assert "nodeName" not in pod["spec"]
        [condition] = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert reason in condition["message"], condition
