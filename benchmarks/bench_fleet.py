"""Fleet generation benchmark (issue: fleets): 5,000 nodes, 40,000 H100 GPUs with DynamicMIG.

Every GPU is published as 1 full GPU + 25 MIG placements, so the fleet has
1,040,000 devices in 45,000 ResourceSlices. Measures, each case in a fresh
process:
  * generation only (objects in memory), target <= 20 s
  * generation + YAML / JSON dump of the v1 List to a string (``dralab.api.io.dumps``).
    Dumping runs at about 1.4 MB/s (YAML) and 20 MB/s (JSON), so it is measured on
    ``--dump-nodes`` nodes (default 100) and scaled linearly to the full fleet.
Prints figures; asserts nothing. ``--nodes N`` scales the fleet.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

TARGET_S = 20.0


def fleet_spec(nodes: int) -> dict[str, object]:
    return {
        "apiVersion": "dralab.dev/v1alpha1",
        "kind": "Fleet",
        "metadata": {"name": "bench"},
        "spec": {"pools": [{
            "name": "h100", "count": nodes, "cpu": "192", "memory": "2Ti",
            "gpu": {"model": "h100-80gb-sxm", "count": 8, "mig": {"mode": "dynamic"}},
            "topology": {"zone": "zone-a", "nodesPerRack": 4, "racksPerBlock": 8},
        }]},
    }


def run_case(case: str, nodes: int) -> tuple[float, int]:
    from dralab.api.io import dumps, to_list
    from dralab.fleet import generate, parse_fleet

    fleet = parse_fleet(fleet_spec(nodes))
    start = time.perf_counter()
    generated = generate(fleet)
    size = sum(len(s.spec.devices) for s in generated.slices)
    if case != "generate":
        text = dumps(to_list(generated.objects()), case)
        size = len(text)
    return time.perf_counter() - start, size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--dump-nodes", type=int, default=100)
    parser.add_argument("--case", choices=["generate", "yaml", "json"])
    args = parser.parse_args()
    if args.case:
        elapsed, size = run_case(args.case, args.nodes)
        print(f"{elapsed:.3f} {size}")
        return
    print(f"fleet of {args.nodes:,} nodes x 8 H100 (DynamicMIG)")
    for case, label in (("generate", "generation only"), ("json", "generation + JSON dump"),
                        ("yaml", "generation + YAML dump")):
        nodes = args.nodes if case == "generate" else min(args.dump_nodes, args.nodes)
        out = subprocess.run([sys.executable, __file__, "--case", case, "--nodes", str(nodes)],
                             capture_output=True, text=True, check=True).stdout.split()
        elapsed, size = float(out[0]), int(out[1])
        if case == "generate":
            print(f"  {label:<24} {elapsed:8.2f} s   {size:,} devices "
                  f"(target <= {TARGET_S:.0f} s)")
            continue
        scale = args.nodes / nodes
        print(f"  {label:<24} {elapsed:8.2f} s   {size / 1e6:,.0f} MB for {nodes:,} nodes; "
              f"about {elapsed * scale:,.0f} s and {size * scale / 1e9:,.1f} GB "
              f"for {args.nodes:,}")


if __name__ == "__main__":
    main()
