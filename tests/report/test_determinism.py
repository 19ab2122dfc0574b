"""Two identical runs write byte-identical reports (issue 16); only timings.json may differ."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from dralab.cli.main import cli

SCENARIO = """\
apiVersion: dralab.dev/v1alpha1
kind: Scenario
metadata: {name: twice}
spec:
  seed: 3
  duration: 2h
  sampleInterval: 10m
  fleet:
    spec:
      pools:
      - {name: l4, count: 2, cpu: "48", memory: 192Gi,
         gpu: {model: l4, count: 4, sharing: {consumableShares: memory}}}
  workload:
  - name: infer
    arrivalRate: 30/h
    duration: {distribution: exponential, mean: 30m}
    cpu: "2"
    memory: 4Gi
    devices: {type: share, memory: 4Gi}
"""


def files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def twice(tmp_path: Path, *args: str) -> tuple[dict[str, bytes], dict[str, bytes]]:
    outs = []
    for n in (1, 2):
        out = tmp_path / f"run{n}"
        result = CliRunner().invoke(cli, [*args, "--out", str(out)])
        assert result.exit_code == 0, result.output
        outs.append(files(out))
    return outs[0], outs[1]


def test_simulate_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    first, second = twice(tmp_path, "simulate", "--scenario", str(scenario), "--quiet")
    assert set(first) == {"index.html", "metrics.json", "pods.csv", "samples.csv",
                          "seeds.csv", "summary.csv", "timings.json"}
    for name in sorted(set(first) - {"timings.json"}):
        assert first[name] == second[name], name
    assert b"wall_seconds" not in first["metrics.json"] + first["index.html"]
    timings = json.loads(first["timings.json"])
    assert [m["mode"] for m in timings["modes"]] == ["device-plugin", "dra"]
    assert all(m["wall_seconds"] > 0 for m in timings["modes"])
    # Each scheduling cycle's compute time, measured: as many as the cycles the run counts.
    metrics = json.loads(first["metrics.json"])
    for timed, mode in zip(timings["modes"], metrics["modes"], strict=True):
        cycles = timed["cycle_seconds"]
        assert cycles["count"] == mode["scheduling_attempts"] > 0
        assert 0 < cycles["p50"] <= cycles["p90"] <= cycles["p99"]
    assert b"cycle_seconds" not in first["metrics.json"]


def test_replay_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    first, second = twice(tmp_path, "replay", "alibaba-2023", "--policy", "FGD,BestFit",
                          "--seeds", "2", "--workers", "1", "--limit-nodes", "60",
                          "--limit-pods", "200")
    assert set(first) == {"index.html", "results.json", "results.csv", "curves.csv"}
    assert first == second


def test_sweep_scenarios_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    first, second = twice(tmp_path, "sweep", "scenarios", "-f", str(scenario), "--seeds", "2",
                          "--workers", "1")
    assert set(first) == {"index.html", "results.json", "results.csv"}
    assert first == second


def test_timings_on_page_shows_the_measured_cycles_only_when_asked(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    plain, measured = tmp_path / "plain", tmp_path / "measured"
    for out, extra in ((plain, ()), (measured, ("--timings-on-page",))):
        result = CliRunner().invoke(cli, ["simulate", "--scenario", str(scenario), "--quiet",
                                          "--seeds", "1", "--out", str(out), *extra])
        assert result.exit_code == 0, result.output
    assert b'id="measured"' not in (plain / "index.html").read_bytes()
    page = (measured / "index.html").read_text()
    assert '<section id="measured">' in page
    timings = json.loads((measured / "timings.json").read_text())
    for mode in timings["modes"]:
        cycles = mode["cycle_seconds"]
        # the page's row for the mode gives the same count and percentiles as timings.json
        assert f"<td>{cycles['count']:,}</td>" in page
        assert f"<td>{cycles['p99'] * 1000:.2f} ms</td>" in page
