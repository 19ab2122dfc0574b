"""Generate the bulk-load benchmark input: 5,000 ResourceSlices holding 80,000 GPU devices.

Each slice is one node's pool of 16 devices shaped like the NVIDIA DRA driver's
(12 attributes, 2 capacities), with the metadata `kubectl get -o yaml` prints.
Writes ``bench-data/slices.yaml`` (about 57 MB) and ``bench-data/slices.json``.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from random import Random
from typing import Any

import yaml

NODES = 5000
DEVICES = 16


def slice_for(node: int, rng: Random) -> dict[str, Any]:
    name = f"gpu-node-{node:05d}"
    devices = []
    for i in range(DEVICES):
        devices.append({
            "name": f"gpu-{i}",
            "attributes": {
                "architecture": {"string": "Hopper"},
                "brand": {"string": "Nvidia"},
                "cudaComputeCapability": {"version": "9.0.0"},
                "cudaDriverVersion": {"version": "13.0.0"},
                "driverVersion": {"version": "580.105.8"},
                "index": {"int": i},
                "minor": {"int": i},
                "productName": {"string": rng.choice(
                    ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L4"])},
                "resource.kubernetes.io/pciBusID": {"string": f"0000:{16 + i:02x}:00.0"},
                "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{i // 2:02x}"},
                "type": {"string": "gpu"},
                "uuid": {"string": f"GPU-{uuid.UUID(int=rng.getrandbits(128))}"},
            },
            "capacity": {"memory": {"value": "81559Mi"}, "multiprocessors": {"value": "132"}},
        })
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {
            "creationTimestamp": "2026-11-01T10:00:00Z",
            "generateName": f"{name}-gpu.nvidia.com-",
            "generation": 1,
            "name": f"{name}-gpu.nvidia.com-{node:05x}",
            "ownerReferences": [{"apiVersion": "v1", "controller": True, "kind": "Node",
                                 "name": name, "uid": str(uuid.UUID(int=rng.getrandbits(128)))}],
            "resourceVersion": str(100000 + node),
            "uid": str(uuid.UUID(int=rng.getrandbits(128))),
        },
        "spec": {
            "devices": devices,
            "driver": "gpu.nvidia.com",
            "nodeName": name,
            "pool": {"generation": 1, "name": name, "resourceSliceCount": 1},
        },
    }


def main(out_dir: str = "bench-data") -> None:
    rng = Random(42)
    slices = [slice_for(n, rng) for n in range(NODES)]
    out = Path(out_dir)
    out.mkdir(exist_ok=True)
    with open(out / "slices.yaml", "w") as fh:
        yaml.dump_all(slices, fh, Dumper=yaml.CSafeDumper, sort_keys=True)
    with open(out / "slices.json", "w") as fh:
        json.dump({"apiVersion": "v1", "kind": "List", "items": slices}, fh)
    for f in ("slices.yaml", "slices.json"):
        print(f"{out / f}: {(out / f).stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main(*sys.argv[1:])
