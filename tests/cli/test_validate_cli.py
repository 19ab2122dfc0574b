"""`dralab validate`: output lines, exit codes and the one-line error contract (in-process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dralab.cli.main import cli

from .golden import check_golden

ROOT = Path(__file__).parent.parent.parent
DATA = ROOT / "tests" / "data"


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_example_fleet_is_valid() -> None:
    code, out, _ = run("validate", "-f", str(ROOT / "examples" / "fleet"))
    assert code == 0
    assert out == "10 object(s) valid (2 DeviceClass, 3 Node, 5 ResourceSlice)\n"


def test_reference_examples_are_valid() -> None:
    code, out, _ = run("validate", "-f", str(DATA / "examples"))
    assert code == 0, out
    assert out.startswith("5 object(s) valid")


def test_seeded_errors_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run("validate", "-f", "tests/data/invalid/seeded.yaml")
    assert code == 2
    check_golden("validate-seeded.txt", out)
    assert err.strip().endswith("in 7 of 7 object(s)")
    # One problem per seeded document, each naming document, kind and object.
    for n in range(1, 8):
        assert f"tests/data/invalid/seeded.yaml:{n} " in out


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n", "invalid YAML"),
        ("{not json", "invalid"),
    ],
)
def test_malformed_input_is_one_line_exit_2(content: str, fragment: str) -> None:
    code, out, err = run("validate", "-f", "-", stdin=content)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("error: -") and fragment in err


def test_missing_file_exit_2() -> None:
    code, _, err = run("validate", "-f", "/no/such/file.yaml")
    assert code == 2
    assert err == "error: /no/such/file.yaml: no such file or directory\n"


def test_unknown_feature_gate_is_usage_error() -> None:
    code, _, err = run("validate", "-f", str(ROOT / "examples" / "fleet"),
                       "--feature-gates", "NoSuchGate=true")
    assert code == 2
    assert "NoSuchGate" in err


def test_wrong_types_are_reported_with_path() -> None:
    doc = ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
           "spec: {driver: d.example.com, allNodes: true, pool: {name: p, generation: 1,"
           " resourceSliceCount: 1}, devices: {name: x}}\n")
    code, out, _ = run("validate", "-f", "-", stdin=doc)
    assert code == 2
    assert out.startswith("- ResourceSlice s: spec.devices: ")
