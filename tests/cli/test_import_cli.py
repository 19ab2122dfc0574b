"""`dralab import`: kubectl output from an older driver/API becomes current v1 objects."""

from __future__ import annotations

import yaml
from click.testing import CliRunner
from tests.fleet.test_importer import OLD_SLICE

from dralab.api.io import _documents_from_text
from dralab.cli.main import cli
from dralab.validation.check import validate_documents

NODE = """
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
"""


def test_import_upgrades_old_slices_and_passes_others_through() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n" + "".join(
        "- " + "\n  ".join(doc.strip().splitlines()) + "\n" for doc in (OLD_SLICE, NODE))
    result = CliRunner().invoke(cli, ["import", "-f", "-"], input=text)
    assert result.exit_code == 0, result.stderr
    out = yaml.safe_load(result.stdout)
    kinds = [(i["apiVersion"], i["kind"]) for i in out["items"]]
    assert kinds == [("resource.k8s.io/v1", "ResourceSlice"), ("v1", "Node")]
    names = [d["name"] for d in out["items"][0]["spec"]["devices"]]
    assert "gpu-0-mig-3g20gb-9-4" in names  # old MIG name gets the profile
    attrs = out["items"][0]["spec"]["devices"][0]["attributes"]
    assert "pcieBusID" not in attrs and "resource.kubernetes.io/pciBusID" in attrs
    assert result.stderr.startswith("imported node-a-gpu.nvidia.com-abcde: normalised")
    assert validate_documents(_documents_from_text(result.stdout, "out", False)) == []


def test_import_bad_input_exit_2() -> None:
    result = CliRunner().invoke(cli, ["import", "-f", "/no/such.yaml"])
    assert result.exit_code == 2
