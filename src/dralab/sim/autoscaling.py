"""A scenario's node autoscaling: ``spec.autoscaling`` checked and typed, and the model
a run drives.

Autoscaling is on when the scenario's fleet has pools with ``autoscaling``
(``{min, max, pricePerHour, provisioningDelay, priority}``); ``spec.autoscaling``
then tunes it (every field optional)::

    autoscaling:
      model: cluster-autoscaler    # or karpenter
      expander: least-waste        # cluster-autoscaler's --expander
      scanInterval: 10s            # --scan-interval
      scaleDownUnneededTime: 10m   # --scale-down-unneeded-time
      scaleDownDelayAfterAdd: 10m  # --scale-down-delay-after-add
      scaleDownUtilizationThreshold: 0.5

Pools without ``autoscaling`` keep their size. The run's stage is
``stages.autoscaling``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dralab.autoscale import EXPANDERS, AutoscalerOptions, ClusterAutoscaler, Karpenter
from dralab.fleet import Fleet
from dralab.scheduler import Scheduler

from .spec import AUTOSCALING_MODELS, AutoscalingRef, ScenarioError, parse_duration, short_repr

__all__ = ["AutoscalingSettings", "Model", "build_model", "parse_autoscaling"]

Model = ClusterAutoscaler | Karpenter


@dataclass(frozen=True, slots=True)
class AutoscalingSettings:
    """``spec.autoscaling`` in seconds; ``pools`` are the fleet's autoscaled pools."""

    model: str = "cluster-autoscaler"
    expander: str = "least-waste"
    scan_interval: float = 10.0
    scale_down_unneeded_time: float = 600.0
    scale_down_delay_after_add: float = 600.0
    scale_down_utilization_threshold: float = 0.5
    pools: tuple[str, ...] = ()


def _seconds(value: object, path: str, source: str) -> float:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ScenarioError(source, path, str(exc)) from None


def parse_autoscaling(ref: AutoscalingRef | None, fleet: Fleet, source: str
                      ) -> AutoscalingSettings | None:
    """The run's autoscaling, or None when the fleet has no autoscaled pool (then
    ``spec.autoscaling`` is an error: it would do nothing)."""
    pools = tuple(p.name for p in fleet.spec.pools if p.autoscaling is not None)
    if not pools:
        if ref is not None:
            raise ScenarioError(source, "spec.autoscaling",
                                "the fleet has no pool with autoscaling (min, max, ...)")
        return None
    ref = ref if ref is not None else AutoscalingRef()
    path = "spec.autoscaling"
    if ref.model not in AUTOSCALING_MODELS:
        raise ScenarioError(source, f"{path}.model", f"unknown model {short_repr(ref.model)}: "
                            f"use {' or '.join(AUTOSCALING_MODELS)}")
    if ref.expander not in EXPANDERS:
        raise ScenarioError(source, f"{path}.expander", f"unknown expander "
                            f"{short_repr(ref.expander)} (known: {', '.join(EXPANDERS)})")
    scan = _seconds(ref.scan_interval, f"{path}.scanInterval", source)
    if scan < 1.0:
        # Bounded work: a day is at most 86,400 scans.
        raise ScenarioError(source, f"{path}.scanInterval", "must be at least 1s")
    threshold = ref.scale_down_utilization_threshold
    if not (math.isfinite(threshold) and 0.0 <= threshold <= 1.0):
        raise ScenarioError(source, f"{path}.scaleDownUtilizationThreshold",
                            f"must be between 0 and 1: {short_repr(threshold)}")
    return AutoscalingSettings(
        model=ref.model, expander=ref.expander, scan_interval=scan,
        scale_down_unneeded_time=_seconds(ref.scale_down_unneeded_time,
                                          f"{path}.scaleDownUnneededTime", source),
        scale_down_delay_after_add=_seconds(ref.scale_down_delay_after_add,
                                            f"{path}.scaleDownDelayAfterAdd", source),
        scale_down_utilization_threshold=threshold, pools=pools)


def build_model(settings: AutoscalingSettings, scheduler: Scheduler, fleet: Fleet,
                seed: int) -> Model:
    """The model a run calls each scan, over the run's scheduler and ``fleet`` (the fleet
    as the run's mode sees it: its template nodes are that mode's nodes)."""
    if settings.model == "karpenter":
        return Karpenter(scheduler, fleet, fleet_seed=seed)
    options = AutoscalerOptions(
        expander=settings.expander,
        scale_down_utilization_threshold=settings.scale_down_utilization_threshold,
        scale_down_unneeded_time=settings.scale_down_unneeded_time,
        scale_down_delay_after_add=settings.scale_down_delay_after_add, seed=seed)
    return ClusterAutoscaler(scheduler, fleet, options, fleet_seed=seed)
