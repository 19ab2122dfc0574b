"""GPU choice inside a chosen node: the rules the paper's policies share.

* k whole GPUs: the k lowest-indexed completely free GPUs.
* a sharing pod (one GPU, d < 1000): *best fit*, the GPU with the smallest free
  share that is still >= d, lowest index on ties.

Scalar functions take one node's free shares (no padding); vectorised ones take
(B, G) arrays padded with 0 (a padded slot never qualifies, since d >= 1).
All pure; the caller guarantees the pod fits.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .state import GPU_MILLI, PodDemand

__all__ = [
    "best_fit",
    "best_fit_free",
    "default_gpus",
    "lowest_free",
    "take_lowest_free",
]

I64 = npt.NDArray[np.int64]
# Larger than any free share: marks GPUs that cannot take the pod.
_NEVER = GPU_MILLI + 1


def lowest_free(gpus: Sequence[int], k: int) -> tuple[int, ...]:
    """The k lowest indices of completely free GPUs (fewer if there are not enough)."""
    return tuple(i for i, g in enumerate(gpus) if g == GPU_MILLI)[:k]


def best_fit(gpus: Sequence[int], d: int) -> int:
    """Index of the smallest free share >= d (lowest index on ties); -1 if none."""
    best, best_free = -1, _NEVER
    for i, g in enumerate(gpus):
        if d <= g < best_free:
            best, best_free = i, g
    return best


def default_gpus(gpus: Sequence[int], pod: PodDemand) -> tuple[int, ...]:
    """The shared GPU rule: best fit for a sharing pod, lowest free for whole GPUs."""
    if pod.num_gpu == 0:
        return ()
    if pod.sharing:
        i = best_fit(gpus, pod.gpu_milli)
        return (i,) if i >= 0 else ()
    return lowest_free(gpus, pod.num_gpu)


def best_fit_free(gpus: I64, d: int) -> tuple[I64, I64]:
    """Per row: (index, free share) of the best-fit GPU for share d; index -1 if none."""
    candidate = np.where(gpus >= d, gpus, _NEVER)
    index = candidate.argmin(axis=1)  # argmin keeps the lowest index among equals
    free = candidate[np.arange(gpus.shape[0]), index]
    return np.where(free < _NEVER, index, -1), free


def take_lowest_free(gpus: I64, k: int) -> I64:
    """Rows of ``gpus`` after taking each row's k lowest-indexed completely free GPUs."""
    full = gpus == GPU_MILLI
    taken = full & (np.cumsum(full, axis=1) <= k)
    return np.where(taken, 0, gpus)
