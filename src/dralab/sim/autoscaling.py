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
      ignoreDRARequests: true      # karpenter: its --ignore-dra-requests (false: claims
                                   # placed on the template nodes' ResourceSlices)
      nodePool: {...}              # karpenter: a karpenter.sh/v1 NodePool, or a path
      preferencePolicy: Respect    # karpenter: its --preference-policy (or Ignore)

Pools without ``autoscaling`` keep their size. The run's stage is
``stages.autoscaling``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dralab.api.errors import InputError
from dralab.api.io import read_documents
from dralab.autoscale import EXPANDERS, AutoscalerOptions, ClusterAutoscaler, Karpenter
from dralab.autoscale.inputs import NODEPOOL_API_VERSION
from dralab.autoscale.karpenter_nodepool import NodePoolSettings, parse_nodepool
from dralab.autoscale.karpenter_preferences import PREFERENCE_POLICIES
from dralab.fleet import Fleet
from dralab.scheduler import Scheduler

from .spec import AUTOSCALING_MODELS, AutoscalingRef, ScenarioError, parse_duration, short_repr
from .templates import TemplateError, resolve_path

__all__ = ["AutoscalingSettings", "Model", "build_model", "parse_autoscaling",
           "read_nodepool"]

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
    ignore_dra_requests: bool = True     # karpenter
    preference_policy: str = "Respect"   # karpenter
    nodepool: NodePoolSettings | None = None  # karpenter: spec.autoscaling.nodePool


def _seconds(value: object, path: str, source: str) -> float:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ScenarioError(source, path, str(exc)) from None


def read_nodepool(ref: AutoscalingRef | None, source: str, base_dir: str,
                  allow_outside: bool = True) -> NodePoolSettings | None:
    """``spec.autoscaling.nodePool``: inline, or a file of one NodePool (relative to the
    scenario). Only with ``model: karpenter``. ScenarioError naming the field."""
    if ref is None or ref.node_pool is None:
        return None
    path = "spec.autoscaling.nodePool"
    if ref.model != "karpenter":
        raise ScenarioError(source, path, "only with model: karpenter")
    data: Any = ref.node_pool
    where = f"{source}: {path}"
    if isinstance(data, str):
        try:
            file = resolve_path(data, base_dir, allow_outside)
            docs = read_documents([file])
        except (TemplateError, InputError, OSError) as exc:
            raise ScenarioError(source, path, str(exc)) from None
        if len(docs) != 1 or not isinstance(docs[0].data, dict):
            raise ScenarioError(source, path, f"{data}: expected one NodePool document, "
                                f"found {len(docs)}")
        data, where = docs[0].data, docs[0].describe()
    if data.get("kind") != "NodePool" or data.get("apiVersion") != NODEPOOL_API_VERSION:
        raise ScenarioError(source, path, f"expected apiVersion {NODEPOOL_API_VERSION}, "
                            f"kind NodePool, not {short_repr(data.get('apiVersion'))} "
                            f"{short_repr(data.get('kind'))}")
    return parse_nodepool(data, where)  # InputError: where, then the NodePool's field


def parse_autoscaling(ref: AutoscalingRef | None, fleet: Fleet, source: str,
                      nodepool: NodePoolSettings | None = None
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
    if ref.preference_policy not in PREFERENCE_POLICIES:
        raise ScenarioError(source, f"{path}.preferencePolicy", f"must be "
                            f"{' or '.join(PREFERENCE_POLICIES)}: "
                            f"{short_repr(ref.preference_policy)}")
    if not ref.ignore_dra_requests and ref.model != "karpenter":
        raise ScenarioError(source, f"{path}.ignoreDRARequests", "only with model: karpenter")
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
        scale_down_utilization_threshold=threshold, pools=pools,
        ignore_dra_requests=ref.ignore_dra_requests, nodepool=nodepool,
        preference_policy=ref.preference_policy)


def build_model(settings: AutoscalingSettings, scheduler: Scheduler, fleet: Fleet,
                seed: int) -> Model:
    """The model a run calls each scan, over the run's scheduler and ``fleet`` (the fleet
    as the run's mode sees it: its template nodes are that mode's nodes)."""
    if settings.model == "karpenter":
        model = Karpenter(scheduler, fleet, fleet_seed=seed,
                          ignore_dra_requests=settings.ignore_dra_requests,
                          preference_policy=settings.preference_policy)
        if settings.nodepool is not None:
            model.nodepool = settings.nodepool
        return model
    options = AutoscalerOptions(
        expander=settings.expander,
        scale_down_utilization_threshold=settings.scale_down_utilization_threshold,
        scale_down_unneeded_time=settings.scale_down_unneeded_time,
        scale_down_delay_after_add=settings.scale_down_delay_after_add, seed=seed)
    return ClusterAutoscaler(scheduler, fleet, options, fleet_seed=seed)
