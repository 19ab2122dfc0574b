"""`dralab migrate convert`: golden conversions, inputs untouched, outputs valid and schedulable."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from dralab.api.features import FeatureGates
from dralab.api.io import read_documents
from dralab.migrate.convert import convert_files
from dralab.migrate.verify import verify
from dralab.validation.check import validate_documents

from .conftest import DATA, EXAMPLE, MANIFESTS, ROOT, check_golden, run, tree_hashes

GPU_RESOURCES = ("nvidia.com/gpu", "nvidia.com/mig-")


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("converted")
    before = tree_hashes(MANIFESTS)
    # From the repository root with a relative input path: the table's column widths
    # follow the paths, so an absolute checkout path would change them.
    with pytest.MonkeyPatch.context() as patched:
        patched.chdir(ROOT)
        code, stdout, stderr = run("migrate", "convert", "-f",
                                   str(MANIFESTS.relative_to(ROOT)), "-o", str(out))
    assert code == 0, stderr
    assert tree_hashes(MANIFESTS) == before          # inputs untouched, byte for byte
    (out / "stdout.txt").write_text(stdout.replace(str(out), "OUT"))
    return out


@pytest.mark.parametrize("name", sorted(p.name for p in MANIFESTS.iterdir()))
def test_converted_manifest_golden(converted: Path, name: str) -> None:
    check_golden(f"convert/{name}", (converted / name).read_text())


@pytest.mark.parametrize("name", ["resourceclaimtemplates.yaml", "deviceclasses.yaml",
                                  "stdout.txt"])
def test_generated_files_golden(converted: Path, name: str) -> None:
    check_golden(f"convert/{name}", (converted / name).read_text())


def test_summary_golden(converted: Path) -> None:
    text = (converted / "migration-summary.txt").read_text().replace(str(MANIFESTS), "MANIFESTS")
    check_golden("convert/migration-summary.txt", text)


def test_outputs_pass_validate(converted: Path) -> None:
    docs = read_documents([str(converted)])
    assert validate_documents(docs, FeatureGates()) == []
    code, out, _ = run("validate", "-f", str(converted))
    assert code == 0, out


def test_no_gpu_extended_resources_left(converted: Path) -> None:
    for doc in read_documents([str(converted)]):
        if doc.data["kind"] == "DeviceClass":
            continue  # gpu.nvidia.com names nvidia.com/gpu as its extended resource (KEP-5004)
        text = json.dumps(doc.data)
        assert not re.search(r'"nvidia\.com/(gpu|gpu\.shared|mig-[^"]*)": ', text), doc.describe()


def test_comments_order_and_yaml11_strings_kept(converted: Path) -> None:
    out = (converted / "helm-rendered-triton.yaml").read_text()
    assert "# Source: triton-inference-server/templates/deployment.yaml" in out
    assert "checksum/config: 0969400e51393844" in out      # not .inf (YAML 1.2 float)
    assert "value: yes   # a YAML 1.1 boolean, kept as written" in out
    assert out.index("serviceAccountName") < out.index("tolerations") < out.index("containers")
    source = yaml.safe_load_all((MANIFESTS / "helm-rendered-triton.yaml").read_text())
    result = yaml.safe_load_all(out)
    for before, after in zip(source, result, strict=True):
        if before["kind"] != "Deployment":
            assert before == after                         # other objects kept as they were


def test_cpu_and_memory_unchanged(converted: Path) -> None:
    def resources(root: Path, name: str) -> list[dict]:
        out = []
        for doc in read_documents([str(root / name)]):
            stack = [doc.data]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    if "resources" in node and isinstance(node["resources"], dict):
                        out.append({s: {k: v for k, v in (node["resources"].get(s) or {}).items()
                                        if not k.startswith(GPU_RESOURCES)}
                                    for s in ("limits", "requests")})
                    stack += list(node.values())
                elif isinstance(node, list):
                    stack += node
        return out
    for path in MANIFESTS.iterdir():
        assert resources(MANIFESTS, path.name) == resources(converted, path.name), path.name


def test_converted_workloads_schedule_on_the_example_fleet() -> None:
    report = verify(convert_files([str(MANIFESTS)]), str(EXAMPLE / "fleet.yaml"))
    assert report.changed == []
    assert sum(p.placed_after for p in report.pods) == 14  # as many as before; the rest wait
    placed = {p.pod for p in report.pods if p.placed_after}
    assert placed == {p.pod for p in report.pods if p.placed_before}
    assert {"inference/vllm-mistral-7b-0", "inference/embeddings-mig-2",
            "data-science/notebooks-2", "inference/huggingface-llama3-predictor-0"} <= placed


def test_unconvertible_documents_are_reported_and_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # fractional.yaml (0.5 GPUs) is a Pod the API server refuses: exit 2, in test_refusals.
    inputs = [a for p in sorted(DATA.glob("*.y*ml")) if p.name != "fractional.yaml"
              for a in ("-f", str(p))]
    code, stdout, _ = run("migrate", "convert", *inputs, "-o", str(out))
    assert code == 1  # a workload was not converted
    assert "Workflow gpu-workflow" in stdout and "not converted" in stdout
    for name in ("unknown-kind.yaml", "amd.yaml"):
        assert (out / name).read_text() == (DATA / name).read_text()
    summary = yaml.safe_load((out / "migration-summary.txt").read_text())
    results = {w["name"]: w["result"] for f in summary["files"] for w in f["workloads"]}
    assert results["gpu-workflow"] == "not converted"
    kept = [k for f in summary["files"] for w in f["workloads"] if w["name"] == "two-terms"
            for p in w["podSets"] for k in p.get("kept", [])]
    assert kept and "ORed nodeSelectorTerms" in kept[0]


def test_json_input_keeps_key_order(tmp_path: Path) -> None:
    run("migrate", "convert", "-f", str(DATA / "pod.json"), "-o", str(tmp_path))
    data = json.loads((tmp_path / "pod.json").read_text())
    assert list(data) == ["kind", "apiVersion", "metadata", "spec"]
    assert data["spec"]["nodeSelector"] == {"disktype": "ssd"}
    assert data["spec"]["resourceClaims"] == [
        {"name": "gpu", "resourceClaimTemplateName": "gpu-2-a100-sxm4-40gb"}]


def test_list_dump_and_mig_me_profile(tmp_path: Path) -> None:
    run("migrate", "convert", "-f", str(DATA / "list-dump.yaml"), "-o", str(tmp_path))
    templates = read_documents([str(tmp_path / "resourceclaimtemplates.yaml")])
    exprs = {d.data["metadata"]["name"]: d.data["spec"]["spec"]["devices"]["requests"][0]
             for d in templates}
    mig = exprs["mig-1g-10gb-me"]["exactly"]
    assert mig["deviceClassName"] == "mig.nvidia.com"
    assert mig["selectors"][0]["cel"]["expression"].endswith('.profile == "1g.10gb+me"')


def test_never_writes_over_inputs(tmp_path: Path) -> None:
    src = tmp_path / "in"
    shutil.copytree(MANIFESTS, src)
    before = tree_hashes(src)
    code, _, err = run("migrate", "convert", "-f", str(src), "-o", str(src))
    assert code == 2 and err.count("\n") == 1 and "-o/--output-dir" in err \
        and f"is the input {src}" in err, err
    assert tree_hashes(src) == before


@pytest.mark.parametrize(("args", "needle"), [
    (["-f", "-"], "not stdin"),
    (["-f", "DATA/no-such.yaml"], "no such file"),
    (["-f", "DATA/README.md"], None),
    (["-f", "BAD"], "invalid YAML"),
    (["-f", "DATA/pod.json", "--share-memory", "lots"], "--share-memory"),
])
def test_bad_input_one_line_exit_2(tmp_path: Path, args: list[str], needle: str | None) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Pod\nmetadata: {name: [unclosed\n")
    args = [a.replace("DATA", str(DATA)).replace("BAD", str(bad)) for a in args]
    code, out, err = run("migrate", "convert", *args, "-o", str(tmp_path / "out"))
    if needle is None:  # a file that is not a manifest: read as YAML, nothing to convert
        assert code in (0, 2)
        return
    assert code == 2, out
    assert err.count("\n") == 1 and err.startswith("error: ") and needle in err, err
    assert not (tmp_path / "out").exists()
