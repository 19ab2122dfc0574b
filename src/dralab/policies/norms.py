"""Normalisation constants of the paper's scores: the largest node shape of the trace."""

from __future__ import annotations

__all__ = ["CPU_NORM", "GPU_NORM"]

CPU_NORM = 128_000  # milli-CPU: 128 cores
GPU_NORM = 8_000    # milli-GPU: 8 GPUs
