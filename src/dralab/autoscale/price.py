"""Cluster Autoscaler's price expander (expander/price: price.go, preferred.go).

Each option is scored ``unfitness x (nodes' price + s) / (pods' price + s)`` for
the next hour, ``s`` the price of a stabilisation pod (500m CPU, 500 MiB); the
lowest score wins, equal scores are all kept. ``unfitness`` is how far the
group's node is from the preferred node size (the larger of the two CPU ratios,
``simple_node_unfitness``), damped as the option adds more nodes (``1 -
tanh((n - 1) / 15)``), and 1000 for a GPU node whatever its size; an option of a
node group that does not exist yet (auto-provisioning) scores twice as much. The
preferred node grows with the cluster (SimplePreferredNodeProvider: 1 CPU up to 2
nodes, 2 up to 6, 4 up to 20, 8 up to 60, 16 up to 200, else 32). An option whose
node or pods cannot be priced is dropped.

The pricing model is the cloud provider's. dralab's (``PoolPricing``): a node
costs its pool's ``pricePerHour``; a pod costs what CA's GCE model charges for its
requests on a perfectly matching machine (``GcePriceModel.PodPrice``'s base
prices: $0.033174 a core, $0.004446 a GiB of memory and $0.70 an nvidia.com/gpu
per hour), which is also what prices the stabilisation pod.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["PriceOption", "best_price_options", "pod_price", "preferred_node_cpu_m",
           "simple_node_unfitness"]

GIB = 1 << 30
MIB = 1 << 20
# gce_price_info.go's base prices (per hour).
CPU_PRICE_PER_HOUR = 0.033174
MEMORY_PRICE_PER_HOUR_PER_GB = 0.004446
GPU_PRICE_PER_HOUR = 0.700
# price.go: the stabilisation pod, the GPU override and the not-existing coefficient.
STABILIZATION_POD = {"cpu": 500, "memory": 500 * MIB * 1000}  # milli-units
GPU_UNFITNESS_OVERRIDE = 1000.0
NOT_EXIST_COEFFICIENT = 2.0


def preferred_node_cpu_m(node_count: int) -> int:
    """SimplePreferredNodeProvider.Node's CPU (millicores) for a cluster of
    ``node_count`` nodes."""
    for most, cores in ((2, 1), (6, 2), (20, 4), (60, 8), (200, 16)):
        if node_count <= most:
            return cores * 1000
    return 32 * 1000


def simple_node_unfitness(preferred_cpu_m: int, evaluated_cpu_m: int) -> float:
    """SimpleNodeUnfitness: the larger of the two CPU capacity ratios (+Inf for a node
    without CPU, as Go's float division)."""
    if preferred_cpu_m == 0 or evaluated_cpu_m == 0:
        return math.inf
    return max(preferred_cpu_m / evaluated_cpu_m, evaluated_cpu_m / preferred_cpu_m)


def pod_price(requests: Mapping[str, int]) -> float:
    """An hour of a pod's requests (milli-units, as ``PodInfo.requests``) at the GCE base
    prices: CPU, memory and nvidia.com/gpu."""
    return (requests.get("cpu", 0) / 1000 * CPU_PRICE_PER_HOUR
            + requests.get("memory", 0) / 1000 / GIB * MEMORY_PRICE_PER_HOUR_PER_GB
            + requests.get("nvidia.com/gpu", 0) / 1000 * GPU_PRICE_PER_HOUR)


@dataclass(frozen=True, slots=True)
class PriceOption:
    """What the price expander reads of one option. ``node_price`` None: the pricing
    model has no price for the group's node; a None among ``pod_prices``: none for
    that pod (either drops the option)."""

    name: str
    node_count: int
    node_price: float | None
    pod_prices: Sequence[float | None]
    node_cpu_m: int
    has_gpu: bool = False
    exists: bool = True


def _score(option: PriceOption, preferred_cpu_m: int, stabilization: float) -> float | None:
    if option.node_price is None or any(p is None for p in option.pod_prices):
        return None
    nodes_price = option.node_price * option.node_count
    pods_price = sum(p for p in option.pod_prices if p is not None)
    ratio = (nodes_price + stabilization) / (pods_price + stabilization)
    unfitness = simple_node_unfitness(preferred_cpu_m, option.node_cpu_m)
    suppressed = (unfitness - 1.0) * (1.0 - math.tanh((option.node_count - 1) / 15.0)) + 1.0
    if option.has_gpu:
        suppressed = GPU_UNFITNESS_OVERRIDE
    score = suppressed * ratio
    return score * NOT_EXIST_COEFFICIENT if not option.exists else score


def best_price_options(options: Sequence[PriceOption], preferred_cpu_m: int,
                       stabilization: float) -> list[int]:
    """The indexes of the options the price expander keeps (priceBased.BestOptions):
    the lowest score, every option with that score, in their order."""
    best: list[int] = []
    best_score = 0.0
    for i, option in enumerate(options):
        score = _score(option, preferred_cpu_m, stabilization)
        if score is None:
            continue
        if not best or score == best_score:
            best.append(i)
            best_score = score
        elif score < best_score:
            best, best_score = [i], score
    return best
