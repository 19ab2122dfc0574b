"""`dralab migrate inventory`: every workload of realistic manifests, its GPU demand and class."""

from __future__ import annotations

import json

import pytest

from dralab.api.io import Document
from dralab.migrate import inventory

from .conftest import DATA, check_golden, run


@pytest.mark.usefixtures("in_root")
@pytest.mark.parametrize("output", ["table", "json", "csv"])
def test_example_inventory_golden(output: str) -> None:
    code, out, err = run("migrate", "inventory", "-f", "examples/migrate/manifests", "-o", output)
    assert code == 0, err
    check_golden(f"inventory.{output}", out)


def _classes(out: str) -> dict[str, str]:
    return {f"{r['kind']} {r['name']}": r["class"] for r in json.loads(out)}


@pytest.mark.usefixtures("in_root")
def test_classes_of_the_example_workloads() -> None:
    _, out, _ = run("migrate", "inventory", "-f", "examples/migrate/manifests", "-o", "json")
    assert _classes(out) == {
        "Deployment feature-store-sync": "cpu-only",
        "Deployment triton": "whole-gpu",
        "Job ddp-2x8": "multi-node",                    # Indexed, parallelism 2
        "InferenceService huggingface-llama3": "whole-gpu",
        "Deployment embeddings-mig": "mig",
        "LeaderWorkerSet vllm-405b": "multi-node",
        "PyTorchJob bert-ddp": "multi-node",
        "CronJob nightly-eval": "whole-gpu",
        "StatefulSet notebooks": "shared",              # time-slicing label
        "Job llama-finetune-8gpu": "multi-gpu-one-node",
        "Deployment vllm-mistral-7b": "whole-gpu",
    }


def _doc(spec: dict, kind: str = "Deployment", **top: object) -> Document:
    data = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "w"},
            "spec": {**top, "template": {"spec": spec}}}
    return Document("t.yaml", None, data)


def _limits(**resources: object) -> dict:
    return {"containers": [{"name": "c", "resources": {"limits": dict(resources)}}]}


@pytest.mark.parametrize(("doc", "cls", "gpus"), [
    (_doc(_limits(**{"nvidia.com/gpu": 1})), "whole-gpu", 1),
    (_doc(_limits(**{"nvidia.com/gpu": "4"})), "multi-gpu-one-node", 4),
    (_doc(_limits(**{"nvidia.com/gpu.shared": 1})), "shared", 0),
    (_doc(_limits(**{"nvidia.com/mig-3g.20gb": 2})), "mig", 0),
    (_doc(_limits(cpu="2")), "cpu-only", 0),
    (_doc(_limits(**{"amd.com/gpu": 1})), "unsupported", 0),
    # a non-indexed Job with parallelism is independent pods, an Indexed one a gang
    (_doc(_limits(**{"nvidia.com/gpu": 1}), "Job", parallelism=4), "whole-gpu", 1),
    (_doc(_limits(**{"nvidia.com/gpu": 1}), "Job", parallelism=4, completionMode="Indexed"),
     "multi-node", 1),
    # init containers run before the app containers: the larger of the two counts
    (_doc({"initContainers": [{"name": "i", "resources": {"limits": {"nvidia.com/gpu": 2}}}],
           **_limits(**{"nvidia.com/gpu": 1})}), "multi-gpu-one-node", 2),
])
def test_class_table(doc: Document, cls: str, gpus: int) -> None:
    [entry] = inventory([doc])
    assert entry.cls == cls
    assert entry.demands[0].per_pod("gpus") == gpus


def test_kinds_dralab_cannot_read_are_listed_as_unsupported() -> None:
    code, out, _ = run("migrate", "inventory", "-f", str(DATA / "unknown-kind.yaml"), "-o",
                       "json")
    assert code == 0
    # Its GPUs are counted (each container found asking for them), its pods unknown.
    assert [(r["kind"], r["class"], r["pods"], r["gpusPerPod"]) for r in json.loads(out)] \
        == [("Workflow", "unsupported", None, 2)]


def test_bad_input_is_one_line_exit_2(tmp_path: object) -> None:
    code, out, err = run("migrate", "inventory", "-f", str(DATA / "no-such-file.yaml"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and "no-such-file.yaml" in err
