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
      # cluster-autoscaler: its other flags by their names in camelCase, CA's defaults:
      # scaleDownGpuUtilizationThreshold, scaleDownUnreadyTime, scaleDownUnreadyEnabled,
      # ignoreDaemonsetsUtilization, ignoreMirrorPodsUtilization, skipNodesWithSystemPods,
      # skipNodesWithLocalStorage, skipNodesWithCustomControllerPods,
      # blockingSystemPodDistruptionTimeout, maxScaleDownParallelism, maxDrainParallelism,
      # maxNodesPerScaleup, maxNodesTotal, coresTotal ("0:320000"), memoryTotal
      # ("0:6400000", GiB), enforceNodeGroupMinSize, balanceSimilarNodeGroups,
      # balancingIgnoreLabel [labels], expendablePodsPriorityCutoff,
      # fastpathBinpackingEnabled; expander may be a
      # chain (priority,least-waste)
      ignoreDRARequests: true      # karpenter: its --ignore-dra-requests (false: claims
                                   # placed on the template nodes' ResourceSlices)
      nodePool: {...}              # karpenter: a karpenter.sh/v1 NodePool, a list of
                                   # them, or a path to a file of them (several: each
                                   # autoscaled pool copied per NodePool, NODEPOOL-POOL)
      preferencePolicy: Respect    # karpenter: its --preference-policy (or Ignore)

Pools without ``autoscaling`` keep their size. The run's stage is
``stages.autoscaling``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from dralab.api.errors import InputError
from dralab.api.io import read_documents
from dralab.autoscale import AutoscalerOptions, ClusterAutoscaler, Karpenter
from dralab.autoscale.expanders import expander_error
from dralab.autoscale.inputs import NODEPOOL_API_VERSION
from dralab.autoscale.karpenter_nodepool import NodePoolSettings, parse_nodepool
from dralab.autoscale.karpenter_preferences import PREFERENCE_POLICIES
from dralab.autoscale.limits import parse_min_max
from dralab.autoscale.options import ca_options
from dralab.fleet import Fleet
from dralab.scheduler import Scheduler

from .spec import AUTOSCALING_MODELS, AutoscalingRef, ScenarioError, parse_duration, short_repr
from .templates import TemplateError, resolve_path

__all__ = ["AutoscalingSettings", "Model", "build_model", "parse_autoscaling",
           "read_nodepool", "read_nodepools"]

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
    nodepools: tuple[NodePoolSettings, ...] = ()  # karpenter: all of them (several)
    # cluster-autoscaler: every flag (the fields above included); None: CA's defaults
    # with the fields above.
    options: AutoscalerOptions | None = None
    currency: str = ""   # the unit of pricePerHour, for the report ("" when not given)


# spec.autoscaling's Cluster Autoscaler-only flags (those ``model: karpenter`` refuses
# when set to another value than CA's default).
_CA_ONLY = ("scale_down_gpu_utilization_threshold", "scale_down_unready_time",
            "scale_down_unready_enabled", "ignore_daemonsets_utilization",
            "ignore_mirror_pods_utilization", "skip_nodes_with_system_pods",
            "skip_nodes_with_local_storage", "skip_nodes_with_custom_controller_pods",
            "blocking_system_pod_distruption_timeout", "max_scale_down_parallelism",
            "max_drain_parallelism", "max_nodes_per_scaleup", "max_nodes_total",
            "cores_total", "memory_total", "enforce_node_group_min_size",
            "balance_similar_node_groups", "balancing_ignore_label",
            "expendable_pods_priority_cutoff", "fastpath_binpacking_enabled")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def _seconds(value: object, path: str, source: str) -> float:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ScenarioError(source, path, str(exc)) from None


def _one_nodepool(data: Any, where: str, source: str, path: str) -> NodePoolSettings:
    if not isinstance(data, dict) or data.get("kind") != "NodePool" or \
            data.get("apiVersion") != NODEPOOL_API_VERSION:
        got = data if isinstance(data, dict) else {}
        raise ScenarioError(source, path, f"expected apiVersion {NODEPOOL_API_VERSION}, "
                            f"kind NodePool, not {short_repr(got.get('apiVersion'))} "
                            f"{short_repr(got.get('kind'))}")
    return parse_nodepool(data, where)  # InputError: where, then the NodePool's field


def read_nodepools(ref: AutoscalingRef | None, source: str, base_dir: str,
                   allow_outside: bool = True) -> tuple[NodePoolSettings, ...]:
    """``spec.autoscaling.nodePool``: inline (one NodePool, or a list of them), or a file
    of NodePool documents (relative to the scenario). Only with ``model: karpenter``.
    ScenarioError naming the field; a name given twice is one."""
    if ref is None or ref.node_pool is None:
        return ()
    path = "spec.autoscaling.nodePool"
    if ref.model != "karpenter":
        raise ScenarioError(source, path, "only with model: karpenter")
    data: Any = ref.node_pool
    where = f"{source}: {path}"
    items: list[tuple[Any, str]]
    if isinstance(data, str):
        try:
            file = resolve_path(data, base_dir, allow_outside)
            docs = read_documents([file])
        except (TemplateError, InputError, OSError) as exc:
            raise ScenarioError(source, path, str(exc)) from None
        if not docs:
            raise ScenarioError(source, path, f"{data}: expected NodePool documents, "
                                "found none")
        items = [(d.data, d.describe()) for d in docs]
    elif isinstance(data, list):
        items = [(d, f"{where}[{i}]") for i, d in enumerate(data)]
    else:
        items = [(data, where)]
    out: list[NodePoolSettings] = []
    for item, item_where in items:
        settings = _one_nodepool(item, item_where, source, path)
        if any(n.name == settings.name for n in out):
            raise ScenarioError(source, path, f"a second NodePool named {settings.name!r}")
        out.append(settings)
    return tuple(out)


def read_nodepool(ref: AutoscalingRef | None, source: str, base_dir: str,
                  allow_outside: bool = True) -> NodePoolSettings | None:
    """The first of ``read_nodepools``, or None."""
    nodepools = read_nodepools(ref, source, base_dir, allow_outside)
    return nodepools[0] if nodepools else None


def parse_autoscaling(ref: AutoscalingRef | None, fleet: Fleet, source: str,
                      nodepool: NodePoolSettings | None = None,
                      nodepools: tuple[NodePoolSettings, ...] = ()
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
    if ref.model == "karpenter":
        defaults = AutoscalingRef()
        for name in _CA_ONLY:
            if getattr(ref, name) != getattr(defaults, name):
                raise ScenarioError(source, f"{path}.{_camel(name)}",
                                    "only with model: cluster-autoscaler")
    if not ref.ignore_dra_requests and ref.model != "karpenter":
        raise ScenarioError(source, f"{path}.ignoreDRARequests", "only with model: karpenter")
    problem = expander_error(ref.expander) if isinstance(ref.expander, str) else \
        f"expected a string: {short_repr(ref.expander)}"
    if problem is not None:
        raise ScenarioError(source, f"{path}.expander", problem)
    scan = _seconds(ref.scan_interval, f"{path}.scanInterval", source)
    if scan < 1.0:
        # Bounded work: a day is at most 86,400 scans.
        raise ScenarioError(source, f"{path}.scanInterval", "must be at least 1s")
    threshold = ref.scale_down_utilization_threshold
    if not (math.isfinite(threshold) and 0.0 <= threshold <= 1.0):
        raise ScenarioError(source, f"{path}.scaleDownUtilizationThreshold",
                            f"must be between 0 and 1: {short_repr(threshold)}")
    expander = ",".join(part.strip() for part in ref.expander.split(","))
    unneeded = _seconds(ref.scale_down_unneeded_time, f"{path}.scaleDownUnneededTime",
                        source)
    delay = _seconds(ref.scale_down_delay_after_add, f"{path}.scaleDownDelayAfterAdd", source)
    options = None
    if ref.model == "cluster-autoscaler":
        options = replace(_ca_options(ref, source, path), expander=expander,
                          scale_down_utilization_threshold=threshold,
                          scale_down_unneeded_time=unneeded,
                          scale_down_delay_after_add=delay)
    return AutoscalingSettings(
        model=ref.model, expander=expander, scan_interval=scan,
        scale_down_unneeded_time=unneeded, scale_down_delay_after_add=delay,
        scale_down_utilization_threshold=threshold, pools=pools,
        ignore_dra_requests=ref.ignore_dra_requests, nodepool=nodepool, nodepools=nodepools,
        preference_policy=ref.preference_policy, options=options,
        currency=_currency(ref.currency, source, path))


def _currency(text: Any, source: str, path: str) -> str:
    """``spec.autoscaling.currency``: a short printable name (USD, EUR, credits)."""
    if not isinstance(text, str) or len(text) > 16 or not all(
            c.isalnum() or c in " $€£¥._-" for c in text):
        raise ScenarioError(source, f"{path}.currency", "must be a short name of the "
                            f"unit of pricePerHour (letters, digits, up to 16): "
                            f"{short_repr(text)}")
    return text.strip()


def _ca_options(ref: AutoscalingRef, source: str, path: str) -> AutoscalerOptions:
    """Cluster Autoscaler's flags of ``spec.autoscaling``, checked as ``dralab
    autoscale`` checks the flags (ScenarioError naming the field)."""
    gpu = ref.scale_down_gpu_utilization_threshold
    if not (math.isfinite(gpu) and 0.0 <= gpu <= 1.0):
        raise ScenarioError(source, f"{path}.scaleDownGpuUtilizationThreshold",
                            f"must be between 0 and 1: {short_repr(gpu)}")
    for name in ("max_scale_down_parallelism", "max_drain_parallelism",
                 "max_nodes_per_scaleup", "max_nodes_total"):
        if getattr(ref, name) < 0:
            raise ScenarioError(source, f"{path}.{_camel(name)}",
                                f"must be 0 or more: {getattr(ref, name)}")
    totals = []
    for name in ("cores_total", "memory_total"):
        try:
            totals.append(parse_min_max(getattr(ref, name)))
        except ValueError as exc:
            raise ScenarioError(source, f"{path}.{_camel(name)}", str(exc)) from None
    cores, memory = totals
    flags = {name: getattr(ref, name) for name in _CA_ONLY}
    flags.update(
        cores_total=cores, memory_total=memory,
        scale_down_unready_time=_seconds(ref.scale_down_unready_time,
                                         f"{path}.scaleDownUnreadyTime", source),
        blocking_system_pod_distruption_timeout=_seconds(
            ref.blocking_system_pod_distruption_timeout,
            f"{path}.blockingSystemPodDistruptionTimeout", source))
    return ca_options(flags)


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
        if len(settings.nodepools) > 1:
            model.nodepools = settings.nodepools
        return model
    # settings.options: every CA flag of spec.autoscaling (None for settings made
    # without parse_autoscaling: CA's defaults with the fields above).
    options = replace(settings.options, seed=seed) if settings.options is not None else \
        ca_options({
            "expander": settings.expander,
            "scale_down_utilization_threshold": settings.scale_down_utilization_threshold,
            "scale_down_unneeded_time": settings.scale_down_unneeded_time,
            "scale_down_delay_after_add": settings.scale_down_delay_after_add}, seed=seed)
    return ClusterAutoscaler(scheduler, fleet, options, fleet_seed=seed)
