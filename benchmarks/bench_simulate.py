"""Simulator speed (issue: simulator): the default scenario, then fleets of growing size.

* the built-in default scenario (both modes), target <= 20 s;
* 1,000 nodes and about 20,000 pods, target <= 2 minutes (per mode);
* how run time grows with fleet and workload size (nodes and pods scaled together).

The scaled scenarios keep the default mix (H100 training, A100 MIG notebooks and
evaluation, shared L4 inference, CPU batch) and scale arrival rates with the fleet.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import yaml

from dralab.sim.default import default_scenario, default_scenario_text
from dralab.sim.scenario import Scenario, parse_scenario
from dralab.sim.simulate import run_mode, simulate


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


def timed_modes(scenario: Scenario) -> list[tuple[str, float, int]]:
    from dralab.sim.jobs import draw_arrivals

    arrivals = draw_arrivals(scenario)
    out = []
    for mode in scenario.compare:
        start = time.perf_counter()
        result = run_mode(scenario, mode, arrivals)
        out.append((mode, time.perf_counter() - start, len(result.pods)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,300,1000",
                        help="comma-separated fleet sizes (nodes)")
    args = parser.parse_args()
    start = time.perf_counter()
    simulate(default_scenario())
    print(f"default scenario, both modes: {time.perf_counter() - start:6.2f} s  (target <= 20 s)")
    print(f"{'nodes':>6} {'mode':<14} {'pods':>7} {'seconds':>8} {'ms/pod':>7}")
    for nodes in (int(n) for n in args.sizes.split(",")):
        for mode, seconds, pods in timed_modes(scaled(nodes)):
            target = "  (target <= 120 s)" if nodes == 1000 else ""
            print(f"{nodes:>6} {mode:<14} {pods:>7} {seconds:>8.2f} "
                  f"{1000 * seconds / max(pods, 1):>7.2f}{target}")


if __name__ == "__main__":
    main()
