"""`dralab migrate plan` says what it leaves behind and stays consistent with its own run.

* Every number of the predicted effect comes from one simulation: pods started, pods
  not started, claims allocated (the started pods') and pending (the others'), waits
  over the started pods.
* A pilot pool holding fewer devices than its workloads ask is flagged (capacity SHORT).
* Workloads no pool serves are named with why; workloads dralab cannot convert that run
  on a pool are named with the pool.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import EXAMPLE, ROOT, run

CORPUS = ROOT / "tests" / "data" / "real-manifests"


def _dump_with_big_vllm(tmp_path: Path, replicas: int) -> Path:
    """The example dump with the L4 pool's vLLM Deployment scaled to ``replicas``."""
    dump = yaml.safe_load((EXAMPLE / "cluster-dump.yaml").read_text())
    items: list[dict[str, Any]] = dump["items"]
    for item in items:
        if item["kind"] == "Deployment" and item["metadata"]["name"] == "vllm-mistral-7b":
            item["spec"]["replicas"] = replicas
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(copy.deepcopy(dump)))
    return path


def test_capacity_short_and_consistent_numbers(tmp_path: Path) -> None:
    code, out, err = run("migrate", "plan", "-f", str(_dump_with_big_vllm(tmp_path, 12)),
                         "--out", str(tmp_path / "pilot"))
    assert code == 0, err
    assert "pilot pool: l4" in out
    # 12 vLLM pods (1 GPU each) + triton + KServe + the smoke test's GPU, on 8 L4 GPUs.
    assert "capacity SHORT: 14 whole GPU(s) asked, 8 in the pool: 6 short" in out
    dra = next(line.split() for line in out.splitlines() if line.startswith("dra "))
    pods, started, not_started = int(dra[1]), int(dra[2]), int(dra[3])
    claims_allocated, claims_pending = int(dra[6]), int(dra[7])
    assert started + not_started == pods and not_started > 0
    assert claims_pending > 0  # not "all claims allocated" next to pods not started
    report = (tmp_path / "pilot" / "pilot-report.md").read_text()
    assert f"{started} of {pods} pods started; {not_started} not started within 2h" in report
    assert f"{claims_allocated} claim(s) allocated (those of the started pods), " \
           f"{claims_pending} pending with their pods" in report
    assert "allocated and reserved within seconds" not in report
    assert "over the" in report and "pods that started" in report


def test_no_shortfall_on_the_example() -> None:
    code, out, _ = run("migrate", "plan", "-f", str(EXAMPLE / "cluster-dump.yaml"))
    assert code == 0 and "SHORT" not in out and "not served" not in out


@pytest.fixture(scope="module")
def corpus_plan() -> str:
    code, out, err = run("migrate", "plan", "-f", str(EXAMPLE / "cluster-dump.yaml"),
                         "-f", str(CORPUS))
    assert code == 1  # the unrendered Helm template is skipped
    assert err.startswith("skipped: ") and err.count("\n") == 1
    return out


def test_workloads_no_pool_serves_are_named(corpus_plan: str) -> None:
    assert "not served by any pool: 4 GPU workload(s)\n" in corpus_plan
    # GKE's accelerator label, which the example's L4 nodes do not carry
    assert "  Deployment llama-2-70b (multi-gpu-one-node): no GPU node matches its node " \
           "selector or affinity (cloud.google.com/gke-accelerator=nvidia-l4)\n" in corpus_plan
    # a MIG profile the A100 pool is not split into
    assert "  Job vllm-job (mig): no node it may use has MIG 3g.20gb for one pod\n" \
        in corpus_plan


def test_unconvertible_workloads_are_named_with_their_pool(corpus_plan: str) -> None:
    assert "pool h100: 2 workload(s) dralab cannot convert" in corpus_plan
    assert "LLMInferenceService qwen2-7b-instruct-single-no-scheduler, TrainJob lammps-flux" \
        in corpus_plan
