"""`convert --verify` and `dralab migrate plan` on the shipped example."""

from __future__ import annotations

from pathlib import Path

import pytest

from dralab.api.features import FeatureGates
from dralab.api.io import read_documents
from dralab.migrate.convert import convert_files
from dralab.migrate.plan import make_plan
from dralab.migrate.verify import verify
from dralab.validation.check import validate_documents

from .conftest import EXAMPLE, MANIFESTS, ROOT, check_golden, run, tree_hashes

DEFAULT_FLEET = ROOT / "src" / "dralab" / "data" / "default-fleet.yaml"


def test_verify_reports_feasibility_changes_on_the_default_fleet() -> None:
    # The default fleet's A100s run DynamicMIG: the device plugin sees whole GPUs and no
    # MIG resources; DRA sees only MIG devices there. Both directions change.
    report = verify(convert_files([str(MANIFESTS)]), str(DEFAULT_FLEET))
    changed = {p.pod: (p.placed_before, p.placed_after) for p in report.changed}
    assert changed["inference/embeddings-mig-0"] == (False, True)
    assert any(pod.startswith("training/bert-ddp-worker") and v == (True, False)
               for pod, v in changed.items())


def test_verify_cli_exit_codes(tmp_path: Path) -> None:
    code, out, _ = run("migrate", "convert", "-f", str(MANIFESTS), "-o", str(tmp_path / "a"),
                       "--verify", str(EXAMPLE / "fleet.yaml"))
    assert code == 0 and "0 pod(s) changed feasibility" in out
    code, out, _ = run("migrate", "convert", "-f", str(MANIFESTS), "-o", str(tmp_path / "b"),
                       "--verify", str(DEFAULT_FLEET))
    assert code == 1 and "inference/embeddings-mig-0" in out


def test_verify_on_a_cluster_dump_uses_its_slices() -> None:
    # DRA is installed on the l4 pool only: there the converted pods still fit.
    report = verify(convert_files([str(MANIFESTS)]), str(EXAMPLE / "cluster-dump.yaml"))
    after = {p.pod for p in report.pods if p.placed_after}
    assert "inference/vllm-mistral-7b-1" in after
    assert "training/nightly-eval-0" not in after


@pytest.fixture(scope="module")
def plan_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("pilot")
    dump = EXAMPLE / "cluster-dump.yaml"
    before = tree_hashes(EXAMPLE)
    code, stdout, err = run("migrate", "plan", "-f", str(dump), "--out", str(out))
    assert code == 0, err
    assert tree_hashes(EXAMPLE) == before
    return out, stdout.replace(str(out), "OUT")


def test_plan_golden(plan_out: tuple[Path, str]) -> None:
    out, stdout = plan_out
    check_golden("plan.txt", stdout)
    check_golden("plan/pilot-report.md",
                 (out / "pilot-report.md").read_text().replace(str(EXAMPLE), "EXAMPLE"))
    for name in ("deviceclasses.yaml", "01-smoke-test.yaml", "resourceclaimtemplates.yaml",
                 "02-deployment-triton.yaml"):
        check_golden(f"plan/{name}", (out / name).read_text())


def test_plan_picks_the_low_risk_pool_and_orders_a_smoke_test_first() -> None:
    plan = make_plan(read_documents([str(EXAMPLE / "cluster-dump.yaml")]), "dump")
    assert plan.pilot.name == "l4"
    assert [c.name for c in plan.classes.all()] == ["l4-inference"]
    assert plan.order[0][0] == "Job dra-smoke-test"
    assert plan.blockers and "l4-node-01" in plan.blockers[0]
    dra, plugin = ({e.mode: e for e in plan.effect}[m] for m in ("dra", "device-plugin"))
    assert dra.started == plugin.started == dra.pods
    # the device plugin gives time-sliced notebooks whole GPUs: more allocated than asked for
    assert plugin.allocated > plugin.requested
    assert dra.allocated == pytest.approx(dra.requested, abs=1e-6)


def test_plan_outputs_validate_and_rerun(plan_out: tuple[Path, str]) -> None:
    out, _ = plan_out
    manifests = [str(p) for p in sorted(out.glob("*.yaml"))]
    assert validate_documents(read_documents(manifests), FeatureGates()) == []
    code, _, err = run("simulate", "--scenario", str(out / "simulation" / "scenario.yaml"),
                       "--out", str(out / "sim-report"), "--quiet")
    assert code == 0, err


def test_plan_mig_pool_classes_by_size() -> None:
    plan = make_plan(read_documents([str(EXAMPLE / "cluster-dump.yaml")]), "dump",
                     run_simulation=False)
    mig = next(p for p in plan.pools if p.name == "a100-mig")
    from dralab.migrate.pilot import pilot_classes
    classes = pilot_classes(mig)
    assert classes.gpu is None and list(classes.mig) == ["mig-small"]
    expr = classes.mig["mig-small"].spec.selectors[0].cel
    assert expr is not None and "'1g.5gb'" in expr.expression


def test_plan_bad_input_exit_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("apiVersion: v1\nkind: List\nitems: []\n")
    code, _, err = run("migrate", "plan", "-f", str(empty))
    assert code == 2 and err.count("\n") == 1 and "no GPU nodes" in err
