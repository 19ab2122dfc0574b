"""Simulator speed (issue 15, item 3): the default scenario, then the growth table.

* the built-in default scenario (both modes), target <= 20 s;
* the growth table: the default mix scaled to 100, 300, 1,000 (target <= 20 s in DRA
  mode), 3,000 and 10,000 nodes (target <= 5 minutes and 8 GB), about 20 pods per node
  over 5 simulated hours: per mode, process CPU time, wall time, peak memory (the
  run's own process, so each figure is that run's) and pods.

The scaled scenarios keep the default mix (H100 training, A100 MIG notebooks and
evaluation, shared L4 inference, CPU batch) and scale arrival rates with the fleet.
Each (size, mode) runs in a fresh process; on a terminal it shows the simulator's
progress bar (the one ``dralab simulate`` shows). Past 5,000 nodes the scaled
workload is above the scenario limit MAX_SCENARIO_PODS (100,000 pods per mode), so
those sizes need ``--lift-limits``, which raises it for the benchmark process only.
Prints figures; asserts nothing.

    python benchmarks/bench_simulate.py                         # default + 100..1,000
    python benchmarks/bench_simulate.py --sizes 100,300,1000,3000,10000 --lift-limits
    python benchmarks/bench_simulate.py --markdown              # the README's table
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from dralab.sim.default import default_scenario, default_scenario_text
from dralab.sim.scenario import Scenario, parse_scenario
from dralab.sim.simulate import run_mode, simulate

MODES = ("dra", "device-plugin")
DRA_1000_TARGET_S = 20.0
FLEET_TARGET_S = 300.0
FLEET_TARGET_GB = 8.0


def scaled(nodes: int) -> Scenario:
    """The default scenario on ``nodes`` nodes (30 % H100, 20 % A100 MIG, 50 % L4), 5 h."""
    doc: dict[str, Any] = yaml.safe_load(default_scenario_text())
    spec = doc["spec"]
    pools = spec["fleet"]["spec"]["pools"]
    shares = {"h100": 0.3, "a100-mig": 0.2, "l4": 0.5}
    for pool in pools:
        pool["count"] = max(1, round(nodes * shares[pool["name"]]))
        pool.get("topology", {}).pop("nodesPerRack", None)
        pool.get("topology", {}).pop("racksPerBlock", None)
    factor = nodes / 10  # the default fleet has 10 nodes
    for kind in spec["workload"]:
        number, _, unit = str(kind["arrivalRate"]).partition("/")
        kind["arrivalRate"] = f"{float(number) * factor:g}/{unit}"
    # The default mix brings about 50 pods per node in 12 h; 5 h gives the ~20 pods per node
    # of the 1,000-node / 20,000-pod shape.
    spec["duration"] = "5h"
    spec["sampleInterval"] = "10m"
    doc["metadata"]["name"] = f"scaled-{nodes}"
    return parse_scenario(doc, f"<scaled {nodes}>")


def lift_limits() -> None:
    """Raise MAX_SCENARIO_PODS and MAX_FLEET_NODES for this process (10,000 nodes, past
    Kubernetes' 5,000-node limit, bring ~200,000 pods)."""
    from dralab.fleet import spec as fleet_spec
    from dralab.sim import jobs, limits, scenario

    for module in (limits, jobs, scenario):
        module.MAX_SCENARIO_PODS = 1_000_000  # type: ignore[attr-defined]
    fleet_spec.MAX_FLEET_NODES = 100_000  # type: ignore[misc]


def one_run(nodes: int, mode: str, bar: bool) -> dict[str, Any]:
    """Simulate ``scaled(nodes)`` in ``mode`` in this process; the figures as a dict."""
    from dralab.sim.jobs import draw_arrivals

    scenario = scaled(nodes)
    arrivals = draw_arrivals(scenario)
    cpu, wall = time.process_time(), time.perf_counter()
    if bar:
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as progress:
            task = progress.add_task(f"{nodes:,} nodes, {mode}", total=1.0)
            result = run_mode(scenario, mode, arrivals,
                              progress=lambda _, done: progress.update(task, completed=done))
    else:
        result = run_mode(scenario, mode, arrivals)
    return {"nodes": nodes, "mode": mode, "pods": len(result.pods),
            "cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
            # Linux reports KiB: the peak of this process (fleet, scenario and run).
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def measured(nodes: int, mode: str, lift: bool) -> dict[str, Any]:
    """``one_run`` in a fresh process, so its peak memory is its own."""
    command = [sys.executable, str(Path(__file__).resolve()), "--one", str(nodes), mode]
    if lift:
        command.append("--lift-limits")
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        return {"nodes": nodes, "mode": mode, "error": f"exit {done.returncode}"}
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def target_of(figures: dict[str, Any]) -> str:
    nodes, mode = figures["nodes"], figures["mode"]
    if nodes == 1000 and mode == "dra":
        met = figures["cpu"] <= DRA_1000_TARGET_S
        return f"target <= {DRA_1000_TARGET_S:.0f} s: {'met' if met else 'not met'}"
    if nodes == 10000:
        met = figures["cpu"] <= FLEET_TARGET_S and figures["peak_mb"] <= FLEET_TARGET_GB * 1024
        return f"target <= {FLEET_TARGET_S:.0f} s, {FLEET_TARGET_GB:.0f} GB: " \
               f"{'met' if met else 'not met'}"
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="100,300,1000",
                        help="comma-separated fleet sizes (nodes); the full table: "
                             "100,300,1000,3000,10000")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated modes")
    parser.add_argument("--lift-limits", action="store_true",
                        help="raise MAX_SCENARIO_PODS in the benchmark's processes")
    parser.add_argument("--skip-default", action="store_true",
                        help="only the growth table")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    parser.add_argument("--one", nargs=2, metavar=("NODES", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.lift_limits:
        lift_limits()
    if args.one:
        figures = one_run(int(args.one[0]), args.one[1], sys.stderr.isatty())
        print(json.dumps(figures))
        return
    if not args.skip_default:
        cpu = time.process_time()
        simulate(default_scenario())
        print(f"default scenario, both modes: {time.process_time() - cpu:6.2f} s CPU "
              "(target <= 20 s)")
    sizes = [int(n) for n in args.sizes.split(",")]
    modes = args.modes.split(",")
    rows = [measured(n, m, args.lift_limits) for n in sizes for m in modes]
    if args.markdown:
        print("| nodes | mode | pods | CPU s | wall s | ms/pod | peak MB | |")
        print("|---:|---|---:|---:|---:|---:|---:|---|")
    else:
        print(f"{'nodes':>6} {'mode':<14} {'pods':>7} {'CPU s':>8} {'wall s':>8} "
              f"{'ms/pod':>7} {'peak MB':>8}")
    for row in rows:
        if "error" in row:
            print(f"{row['nodes']:>6} {row['mode']:<14} {row['error']}")
            continue
        per_pod = 1000 * row["cpu"] / max(row["pods"], 1)
        if args.markdown:
            print(f"| {row['nodes']:,} | {row['mode']} | {row['pods']:,} | {row['cpu']:.1f} | "
                  f"{row['wall']:.1f} | {per_pod:.2f} | {row['peak_mb']:,.0f} | "
                  f"{target_of(row)} |")
        else:
            print(f"{row['nodes']:>6} {row['mode']:<14} {row['pods']:>7} {row['cpu']:>8.2f} "
                  f"{row['wall']:>8.2f} {per_pod:>7.2f} {row['peak_mb']:>8.0f}  "
                  f"{target_of(row)}")


if __name__ == "__main__":
    main()
