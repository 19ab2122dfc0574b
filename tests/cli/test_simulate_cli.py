"""`dralab simulate`: files written, options, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from dralab.cli.main import cli

SCENARIO = """
apiVersion: dralab.dev/v1alpha1
kind: Scenario
metadata: {name: small}
spec:
  seed: 5
  duration: 2h
  sampleInterval: 10m
  fleet:
    spec:
      pools:
      - {name: l4, count: 2, cpu: "48", memory: 192Gi,
         gpu: {model: l4, count: 4, sharing: {consumableShares: memory}}}
  workload:
  - name: infer
    arrivalRate: 20/h
    duration: {distribution: exponential, mean: 30m}
    cpu: "2"
    memory: 4Gi
    devices: {type: share, memory: 4Gi}
"""


def test_simulate_writes_the_report(tmp_path: Path) -> None:
    scenario = tmp_path / "small.yaml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(scenario), "--out", str(out),
                                      "--quiet", "--seed", "9"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    for name in ("index.html", "metrics.json", "samples.csv", "pods.csv", "summary.csv",
                 "timings.json"):
        assert (out / name).stat().st_size > 0, name
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["seed"] == 9 and metrics["scenario"] == "small"
    assert [m["mode"] for m in metrics["modes"]] == ["device-plugin", "dra"]
    # Wall times live apart from the deterministic data (issue 16).
    timings = json.loads((out / "timings.json").read_text())
    assert [m["mode"] for m in timings["modes"]] == ["device-plugin", "dra"]
    assert all(m["wall_seconds"] > 0 for m in timings["modes"])
    assert all("wall_seconds" not in m for m in metrics["modes"])
    # Five seeds by default (9, 10, ...): the verdict and comparison are over them.
    seeds = (out / "seeds.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in seeds[1:]] == [str(s) for s in range(9, 14)
                                                         for _ in range(2)]


def test_simulate_default_prints_the_summary(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["simulate", "--out", str(tmp_path / "r"),
                                      "--compare", "dra", "--seeds", "2"])
    assert result.exit_code == 0, result.output
    assert "DRA (MIG + sharing)" in result.stdout and "Scheduling wait p90" in result.stdout
    assert "report: " in result.stdout
    # The verdict says there is nothing to compare.
    assert "2 seeds (1, 2), mean ± sd" in result.stdout
    assert "Verdict: DRA (MIG + sharing) only: there is nothing to compare." in result.stdout


def test_a_second_run_keeps_the_previous_report(tmp_path: Path) -> None:
    scenario = tmp_path / "small.yaml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "report"
    (out / "notes").mkdir(parents=True)
    runs = []
    for seed in ("2", "3"):
        runs.append(CliRunner().invoke(cli, ["simulate", "--scenario", str(scenario), "--out",
                                             str(out), "--quiet", "--seed", seed,
                                             "--seeds", "1"]))
        assert runs[-1].exit_code == 0, runs[-1].output
    assert runs[0].stderr == ""
    assert runs[1].stderr == f"the previous report is kept in {out / 'previous'}\n"
    # The last report in DIR, the one before in DIR/previous (older ones are gone: see
    # tests/report/test_outdir.py); other files in DIR are left alone.
    assert json.loads((out / "metrics.json").read_text())["seed"] == 3
    assert json.loads((out / "previous" / "metrics.json").read_text())["seed"] == 2
    assert sorted(p.name for p in out.iterdir()) == [
        "index.html", "metrics.json", "notes", "pods.csv", "previous", "samples.csv",
        "seeds.csv", "summary.csv", "timings.json"]
    page = (out / "index.html").read_text()
    assert "Only 1 seed (3)" in page


def test_seeds_give_the_verdict_over_them(tmp_path: Path) -> None:
    scenario = tmp_path / "small.yaml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(scenario), "--out",
                                      str(out), "--seeds", "3"])
    assert result.exit_code == 0, result.output
    assert "Verdict: DRA (MIG + sharing) against Device plugin (whole GPUs), over 3 seeds" \
        in result.stdout
    assert "\nDecide: " in result.stdout
    seeds = (out / "seeds.csv").read_text().splitlines()
    assert [line.split(",")[:2] for line in seeds[1:]] == [
        [s, m] for s in ("5", "6", "7") for m in ("device-plugin", "dra")]
    bad = CliRunner().invoke(cli, ["simulate", "--scenario", str(scenario), "--out", str(out),
                                   "--seeds", "0"])
    assert bad.exit_code == 2 and "--seeds" in bad.output


def test_bad_scenario_and_bad_compare_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SCENARIO.replace("duration: 2h", "duration: soon"))
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(bad), "--quiet",
                                      "--out", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "spec.duration" in result.stderr
    result = CliRunner().invoke(cli, ["simulate", "--compare", "dra,kueue", "--quiet",
                                      "--out", str(tmp_path / "r")])
    assert result.exit_code == 2 and "kueue" in result.stderr


TEMPLATE_SCENARIO = """
apiVersion: dralab.dev/v1alpha1
kind: Scenario
metadata: {name: demo}
spec:
  seed: 1
  duration: 2h
  sampleInterval: 10m
  fleet:
    spec:
      pools:
      - {name: ex, count: 1, driver: example, cpu: "16", memory: 64Gi, gpu: {count: 2}}
  workload:
  - name: sample
    arrivals: [0s, 0s, 0s]
    duration: {distribution: fixed, mean: 1h}
    template: manifests/job.yaml
"""


def test_template_without_device_plugin_equivalent_exits_2_unless_dra_only(
        tmp_path: Path) -> None:
    # Kueue's DRA sample (a Job with generateName and its ResourceClaimTemplate).
    upstream = Path(__file__).parents[1] / "sim" / "data" / "upstream"
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "job.yaml").write_text(
        (upstream / "kueue-sample-dra-rct-job.yaml").read_text())
    scenario = tmp_path / "demo.yaml"
    scenario.write_text(TEMPLATE_SCENARIO)
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(scenario), "--quiet",
                                      "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "spec.workload[0].template: job kind sample: claim gpu (ResourceClaimTemplate " \
           "single-gpu) request gpu: no device-plugin equivalent" in result.stderr
    assert not out.exists()
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(scenario), "--quiet",
                                      "--out", str(out), "--compare", "dra"])
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    (dra,) = metrics["modes"]
    # Two example GPUs: two pods run at once, the third an hour later.
    assert dra["summary"]["pods_started"] == 3
    assert sorted(p["start"] for p in dra["pods"]) == [0.0, 0.0, 3600.0]
