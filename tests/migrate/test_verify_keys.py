"""`convert --verify`: pods told apart by workload kind, and pods pending in both models listed."""

from __future__ import annotations

from pathlib import Path

from dralab.migrate.convert import convert_files
from dralab.migrate.verify import verify

from .conftest import EXAMPLE, MANIFESTS, ROOT, run

INSTASLICE = ROOT / "tests" / "data" / "real-manifests" / "openshift+instaslice-operator"


def test_a_statefulset_and_a_pod_of_one_name_are_two_pods() -> None:
    # samples/test-pod.yaml (a Pod) and samples/test-statefulset.yaml (a StatefulSet) are
    # both named cuda-vectoradd-1: one pod each, neither lost.
    report = verify(convert_files([str(INSTASLICE)]), str(EXAMPLE / "fleet.yaml"))
    owners = [p.workload for p in report.pods]
    assert owners.count("Pod cuda-vectoradd-1") == 1
    assert owners.count("StatefulSet cuda-vectoradd-1") == 1
    assert len({p.pod for p in report.pods}) == len(report.pods) == 4
    assert all(p.placed_before and p.placed_after for p in report.pods
               if "cuda-vectoradd" in p.workload)


def test_pods_pending_in_both_models_are_listed(tmp_path: Path) -> None:
    code, out, _ = run("migrate", "convert", "-f", str(MANIFESTS), "-o", str(tmp_path / "o"),
                       "--verify", str(EXAMPLE / "fleet.yaml"))
    assert code == 0  # nothing changed feasibility: the contract's exit code is unchanged
    assert "pending in both models" in out
    assert "PyTorchJob training/bert-ddp" in out and "training/bert-ddp-worker-2" in out
    assert out.rstrip().endswith("placed 14 before, 14 after; 0 pod(s) changed feasibility, "
                                 "6 pending in both")
