"""Unrendered Helm templates: reported per file with what to do, the other files processed.

Exit code (the migrate contract's partial result): 1 -- the verb's output covers the
other files; 2 stays for input that stops the whole run.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from dralab.api.errors import LoadError
from dralab.migrate.unrendered import read_rendered

from .conftest import ROOT, run

CORPUS = ROOT / "tests" / "data" / "real-manifests"
TEMPLATE = CORPUS / "vllm-project+production-stack" / "helm" / "templates" / \
    "deployment-vllm-multi.yaml"
POD = CORPUS / "NVIDIA+gpu-operator" / "tests" / "gpu-pod.yaml"
SKIP = (f"skipped: {TEMPLATE}: an unrendered Helm template ('{{{{' at line 1); render it "
        "first: helm template RELEASE CHART > rendered.yaml, then give rendered.yaml\n")


def test_inventory_lists_the_other_files_and_names_the_template() -> None:
    code, out, err = run("migrate", "inventory", "-f", str(TEMPLATE), "-f", str(POD))
    assert code == 1
    assert "gpu-operator-test" in out
    assert err == SKIP


def test_convert_writes_the_other_files_and_lists_the_template(tmp_path: Path) -> None:
    code, out, err = run("migrate", "convert", "-f", str(TEMPLATE), "-f", str(POD),
                         "-o", str(tmp_path / "out"))
    assert code == 1
    assert err == SKIP
    assert "Pod gpu-operator-test   converted" in out and "   skipped   " in out
    assert (tmp_path / "out" / "gpu-pod.yaml").exists()
    assert not (tmp_path / "out" / "deployment-vllm-multi.yaml").exists()
    summary = yaml.safe_load((tmp_path / "out" / "migration-summary.txt").read_text())
    assert summary["files"][-1] == {"input": str(TEMPLATE), "skipped": SKIP.split(": ", 2)[2]
                                    .rstrip("\n")}


def test_a_directory_with_a_template_is_still_read() -> None:
    code, out, err = run("migrate", "inventory", "-f", str(CORPUS))
    assert code == 1 and err == SKIP
    assert "LeaderWorkerSet" in out


def test_yaml_holding_template_braces_in_strings_is_read() -> None:
    # A ConfigMap of alert rules is valid YAML with {{ }} in its values: read as it is.
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: rules}\ndata:\n"
            "  rule: 'instance {{ $labels.instance }} down'\n")
    docs, skipped = read_rendered(["-"], stdin=io.StringIO(text))
    assert skipped == [] and docs[0].data["metadata"]["name"] == "rules"


def test_broken_yaml_without_template_actions_stays_an_error() -> None:
    with pytest.raises(LoadError, match="invalid YAML"):
        read_rendered(["-"], stdin=io.StringIO("a: [1\nb: 2\n"))


def test_a_template_on_stdin_is_named_as_stdin() -> None:
    docs, skipped = read_rendered(["-"], stdin=io.StringIO(TEMPLATE.read_text()))
    assert docs == [] and [s.path for s in skipped] == ["-"]


def test_check_and_plan_skip_the_template_too(tmp_path: Path) -> None:
    dump = ROOT / "examples" / "migrate" / "cluster-dump.yaml"
    code, out, err = run("migrate", "check", "-f", str(TEMPLATE), "-f", str(dump))
    assert code == 1 and err == SKIP and "l4-node-01" in out
    code, out, err = run("migrate", "plan", "-f", str(TEMPLATE), "-f", str(dump))
    assert code == 1 and err == SKIP and "pilot pool: l4" in out
