"""`dralab sweep`: trace grids (local and on a Dask LocalCluster) and scenario sweeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dralab.cli.main import cli
from dralab.sim.limits import MAX_SEEDS

from .test_simulate_cli import SCENARIO

SMALL = ["--limit-nodes", "60", "--limit-pods", "200"]


def test_trace_grid_on_a_dask_local_cluster(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, processes=False,
                                  dashboard_address=None) as cluster:
        result = CliRunner().invoke(cli, [
            "sweep", "alibaba-2023", "--workloads", "default,gpushare40",
            "--policies", "FGD,BestFit", "--seeds", "2", "-o", "json",
            "--dask", cluster.scheduler_address, "--out", str(tmp_path), *SMALL])
        # The runs went through the cluster's scheduler: one finished task per cell
        # (state_counts accumulates, so it survives the client forgetting the tasks).
        prefix = cluster.scheduler.task_prefixes.get("run_cell")
        ran = prefix.state_counts["memory"] if prefix is not None else 0
    assert result.exit_code == 0, result.output
    assert ran == 8
    doc = json.loads(result.stdout)
    assert doc["workloads"] == ["default", "gpushare40"]
    assert {(r["workload"], r["policy"]) for r in doc["results"]} == {
        (w, p) for w in ("default", "gpushare40") for p in ("FGD", "BestFit")}
    assert all(r["seeds"] == 2 for r in doc["results"])
    assert (tmp_path / "index.html").read_text().count("<svg") == 6


def test_trace_grid_locally_and_bad_names() -> None:
    result = CliRunner().invoke(cli, ["sweep", "alibaba-2023", "--policies", "FGD",
                                      "--seeds", "1", "--workers", "2", *SMALL])
    assert result.exit_code == 0, result.output
    assert "FGD" in result.stdout
    result = CliRunner().invoke(cli, ["sweep", "alibaba-2023", "--workloads", "default,x",
                                      *SMALL])
    assert result.exit_code == 2 and "'x'" in result.stderr


def test_scenarios_sweep(tmp_path: Path) -> None:
    a = tmp_path / "a.yaml"
    a.write_text(SCENARIO)
    b = tmp_path / "b.yaml"
    b.write_text(SCENARIO.replace("name: small", "name: other"))
    result = CliRunner().invoke(cli, ["sweep", "scenarios", "-f", str(a), "-f", str(b),
                                      "--seeds", "2", "-o", "json", "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["results"]
    assert [(r["scenario"], r["mode"], r["seeds"]) for r in rows] == [
        (s, m, 2) for s in ("small", "other") for m in ("device-plugin", "dra")]
    assert set(rows[0]["metrics"]["pods_started"]) == {"mean", "sd"}
    assert (tmp_path / "r" / "results.csv").stat().st_size > 0
    result = CliRunner().invoke(cli, ["sweep", "scenarios", "-f", str(tmp_path / "no.yaml")])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1


def test_dask_unreachable_is_exit_2() -> None:
    dask = pytest.importorskip("dask")
    pytest.importorskip("distributed")
    # A scheduler nobody listens on: fail fast instead of the 30 s default timeout.
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        result = CliRunner().invoke(cli, ["sweep", "alibaba-2023", "--policies", "FGD",
                                          "--dask", "tcp://127.0.0.1:9", *SMALL])
    assert result.exit_code == 2 and "Dask" in result.stderr


@pytest.mark.parametrize("command", [
    ["replay", "alibaba-2023"], ["sweep", "alibaba-2023"], ["sweep", "scenarios", "-f", "x"]])
@pytest.mark.parametrize("seeds", [str(MAX_SEEDS + 1), "99999999999999999999999"])
def test_seeds_are_bounded(command: list[str], seeds: str) -> None:
    # Found by the fuzz suite: a 23-digit --seeds gave exit 70 (replay) or built the seed
    # list until memory ran out (sweep scenarios). Refused before anything is read.
    result = CliRunner().invoke(cli, [*command, "--seeds", seeds])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: Invalid value for '--seeds': {seeds} is not in "
                                    f"the range 1<=x<={MAX_SEEDS}. (see ")
    assert result.stderr.count("\n") == 1
