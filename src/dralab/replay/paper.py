"""The FGD paper's published numbers for the default trace, to print next to ours.

Source: the trace protocol notes §7.1 (recomputed from the authors' artifact,
10 seeds, default workload): mean unallocated GPU % at arrival levels 90, 95,
100, 110, 130 and the seed-to-seed sample sd where the artifact gives it
(no sd is published at 90 %).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["PAPER_LEVELS", "PAPER_MEAN", "PAPER_SD", "PAPER_WORKLOAD"]

PAPER_WORKLOAD = "default"
PAPER_LEVELS: tuple[int, ...] = (90, 95, 100, 110, 130)

PAPER_MEAN: Mapping[str, Mapping[int, float]] = MappingProxyType({
    name: MappingProxyType(dict(zip(PAPER_LEVELS, values, strict=True)))
    for name, values in {
        "Random": (14.98, 14.28, 13.70, 13.12, 12.53),
        "DotProd": (10.02, 9.42, 9.38, 9.30, 9.15),
        "GpuClustering": (10.02, 8.39, 8.35, 8.27, 8.12),
        "GpuPacking": (10.02, 8.26, 8.22, 8.14, 8.00),
        "BestFit": (10.01, 7.18, 7.14, 7.07, 6.92),
        "FGD": (10.02, 5.10, 4.77, 4.70, 4.61),
    }.items()})

PAPER_SD: Mapping[str, Mapping[int, float]] = MappingProxyType({
    name: MappingProxyType(dict(zip((95, 100, 110, 130), values, strict=True)))
    for name, values in {
        "Random": (0.34, 0.33, 0.34, 0.32),
        "DotProd": (0.19, 0.19, 0.20, 0.20),
        "GpuClustering": (0.61, 0.61, 0.63, 0.62),
        "GpuPacking": (0.53, 0.53, 0.55, 0.54),
        "BestFit": (0.15, 0.14, 0.13, 0.13),
        "FGD": (0.06, 0.11, 0.10, 0.08),
    }.items()})
