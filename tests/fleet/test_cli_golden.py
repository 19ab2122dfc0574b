"""`dralab fleet`: golden output per catalog model, exit codes, formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from cli.golden import check_golden
from dralab.api.io import read_documents
from dralab.cli.main import cli
from dralab.fleet import CATALOG, model_keys
from dralab.validation.check import validate_documents


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def one_node_spec(model: str) -> str:
    """One node of ``model``: DynamicMIG with one GPU if it has MIG, else four plain GPUs."""
    mig = CATALOG[model].mig is not None
    gpu = f"{{model: {model}, count: 1, mig: {{mode: dynamic}}}}" if mig \
        else f"{{model: {model}, count: 4}}"
    return ("apiVersion: dralab.dev/v1alpha1\nkind: Fleet\nmetadata: {name: golden}\n"
            "spec:\n  pools:\n"
            f"  - {{name: {model}, count: 1, cpu: '64', memory: 512Gi, gpu: {gpu}, "
            "topology: {zone: zone-a}}\n")


@pytest.mark.parametrize("model", model_keys())
def test_one_node_golden(model: str, tmp_path: Path) -> None:
    spec = tmp_path / "fleet.yaml"
    spec.write_text(one_node_spec(model))
    code, out, err = run("fleet", "-f", str(spec))
    assert code == 0, err
    check_golden(f"fleet-{model}.yaml", out)
    listed = tmp_path / "out.yaml"
    listed.write_text(out)
    assert validate_documents(read_documents([str(listed)])) == []


def test_default_fleet_and_json() -> None:
    code, out, _ = run("fleet", "--default", "-o", "json")
    assert code == 0
    data = json.loads(out)
    assert data["kind"] == "List" and data["apiVersion"] == "v1"
    kinds = [i["kind"] for i in data["items"]]
    assert kinds.count("Node") == 10 and kinds.count("DeviceClass") == 7
    assert kinds.count("ResourceSlice") == 4 * 2 + 2 * 9 + 4
    code, yaml_out, _ = run("fleet", "--default")
    assert yaml.safe_load(yaml_out) == data


def test_seed_changes_identities_only() -> None:
    _, a, _ = run("fleet", "--default", "-o", "json")
    _, b, _ = run("fleet", "--default", "-o", "json", "--seed", "5")
    assert a != b
    strip = ("uid", "uuid", "parentUUID", "name", "generateName")

    def shape(text: str) -> object:
        def walk(x: object) -> object:
            if isinstance(x, dict):
                return {k: walk(v) for k, v in x.items() if k not in strip}
            if isinstance(x, list):
                return [walk(v) for v in x]
            return x
        return walk(json.loads(text))

    assert shape(a) == shape(b)


def test_spec_from_stdin() -> None:
    code, out, err = run("fleet", "-f", "-", stdin=one_node_spec("l4"))
    assert code == 0, err
    assert "NVIDIA L4" in out


@pytest.mark.parametrize(("args", "stdin", "message"), [
    (["fleet"], None, "error: give exactly one of -f FILE and --default"),
    (["fleet", "--default", "-f", "x.yaml"], None, "error: give exactly one of"),
    (["fleet", "-f", "/no/such/file.yaml"], None, "error: /no/such/file.yaml: no such file"),
    (["fleet", "-f", "-"], "apiVersion: dralab.dev/v1alpha1\nkind: Fleet\nspec:\n  pools:\n"
     "  - {name: a, count: 1, gpu: {model: h100, count: 8, mig: {mode: static, "
     "profiles: [9g.90gb]}}}\n",
     "error: -: spec.pools[0].gpu.mig.profiles[0]: unknown MIG profile '9g.90gb'"),
    (["fleet", "-f", "-"], "kind: Fleet\n", "error: -: apiVersion: must be"),
    (["fleet", "--default", "-o", "xml"], None, "Invalid value for '-o'"),
])
def test_bad_input_is_exit_2(args: list[str], stdin: str | None, message: str) -> None:
    code, out, err = run(*args, stdin=stdin)
    assert code == 2
    assert out == ""
    assert message in err
    if message.startswith("error:"):
        assert err.startswith(message) and err.count("\n") == 1
