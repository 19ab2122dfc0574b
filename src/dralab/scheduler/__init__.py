"""A kube-scheduler-style scheduling framework for pods with DRA claims.

``schedule(objects)`` builds the cluster from API objects (workloads expanded
into pods), schedules every pending pod with the default profile (or the
profiles of a KubeSchedulerConfiguration-shaped ``config``) and returns a
``ScheduleResult``. ``explain_pod`` / ``explain_claim`` say, per node, what kept
a pod off it and what would make it fit. Deterministic for a given ``seed``.

Layers (private modules): ``framework`` (statuses, cycle state, one Protocol per
extension point, the plugin factory's Handle and what it reaches, the Registry type
and the optional fast paths), ``profile`` (plugin configuration), ``runtime``
(running the plugins of one profile), ``cycle``, ``queue``, ``waiting`` and
``scheduler`` (the loop), ``plugins`` (in-tree plugins, ``plugins.dynamicresources``
and ``plugins.registry``), ``explain``/``targets`` (why a pod is where it is). The
cluster store is ``dralab.cluster``; building it from objects and what the
controllers do (workloads, resource claims) is ``dralab.controllers``, a layer below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dralab.api.base import KubeObject
from dralab.api.features import FeatureGates
from dralab.cluster import ClusterState
from dralab.controllers.snapshotbuild import build_cluster

from .explain import ClaimExplanation, Explanation, explain_claim, explain_pod
from .profile import ConfigError, SchedulerConfig, parse_config
from .result import Evicted, Placement, ScheduleResult, Unplaced
from .scheduler import Scheduler
from .summary import PodRow, pod_rows
from .targets import PodsExplanation, PodTarget, explain_pods, parse_pod_target

__all__ = [
    "ClaimExplanation",
    "ClusterState",
    "ConfigError",
    "Evicted",
    "Explanation",
    "Placement",
    "PodRow",
    "PodTarget",
    "PodsExplanation",
    "ScheduleResult",
    "Scheduler",
    "SchedulerConfig",
    "Unplaced",
    "build_cluster",
    "explain_claim",
    "explain_pod",
    "explain_pods",
    "parse_config",
    "parse_pod_target",
    "pod_rows",
    "schedule",
]


def schedule(objects: Iterable[KubeObject],
             config: SchedulerConfig | Mapping[str, Any] | None = None,
             features: FeatureGates | None = None, seed: int = 0) -> ScheduleResult:
    """Schedule every pending pod among ``objects`` (pods without spec.nodeName, and
    the pods of Jobs, Deployments, ... expanded) in queue order.

    ``config`` is a SchedulerConfig or a KubeSchedulerConfiguration mapping (None:
    the default profile). Raises ConfigError for an invalid config; "does not fit"
    is never an exception: such pods are in ``result.unplaced``.
    """
    from dataclasses import replace

    from dralab.controllers.suspended import suspended_job_warnings

    from .plugins.nvlinkgang import sizes_of, with_sizes
    from .plugins.registry import default_registry

    objects = list(objects)
    cluster, pending = build_cluster(objects, features, seed)
    # NVLinkDomainGang (opt-in) sizes a ComputeDomain's gang by its numNodes.
    registry = with_sizes(default_registry(), sizes_of(objects))
    result = Scheduler.build(cluster, config, seed, registry=registry).run(pending)
    suspended = suspended_job_warnings(objects)
    if not suspended:
        return result
    return replace(result, warnings=(*result.warnings, *suspended))
