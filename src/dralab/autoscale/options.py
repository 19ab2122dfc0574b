"""``AutoscalerOptions`` from Cluster Autoscaler's flags by name: the one builder behind
``dralab autoscale``'s flags and a scenario's ``spec.autoscaling``.

Flags are named as CA's, dashes as underscores (``max_nodes_per_scaleup``,
``blocking_system_pod_distruption_timeout``, ``balancing_ignore_label``), values
already parsed: durations in seconds, ``cores_total`` and ``memory_total`` as
(min, max) in cores and GiB (as the flags; converted to bytes here). A flag left out
keeps CA's default."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .capacityquota import CapacityQuota
from .clusterautoscaler import GIB, AutoscalerOptions

__all__ = ["CA_FLAGS", "ca_options"]

# CA's flag (dashes as underscores) -> the AutoscalerOptions field.
CA_FLAGS: dict[str, str] = {
    "expander": "expander",
    "scale_down_utilization_threshold": "scale_down_utilization_threshold",
    "scale_down_gpu_utilization_threshold": "scale_down_gpu_utilization_threshold",
    "scale_down_unneeded_time": "scale_down_unneeded_time",
    "scale_down_unready_time": "scale_down_unready_time",
    "scale_down_delay_after_add": "scale_down_delay_after_add",
    "scale_down_unready_enabled": "scale_down_unready_enabled",
    "ignore_daemonsets_utilization": "ignore_daemonsets_utilization",
    "ignore_mirror_pods_utilization": "ignore_mirror_pods_utilization",
    "skip_nodes_with_system_pods": "skip_nodes_with_system_pods",
    "skip_nodes_with_local_storage": "skip_nodes_with_local_storage",
    "skip_nodes_with_custom_controller_pods": "skip_nodes_with_custom_controller_pods",
    "blocking_system_pod_distruption_timeout": "blocking_system_pod_disruption_timeout",
    "max_scale_down_parallelism": "max_scale_down_parallelism",
    "max_drain_parallelism": "max_drain_parallelism",
    "max_nodes_per_scaleup": "max_nodes_per_scale_up",
    "max_nodes_total": "max_nodes_total",
    "cores_total": "cores_total",
    "memory_total": "memory_total",
    "enforce_node_group_min_size": "enforce_node_group_min_size",
    "balance_similar_node_groups": "balance_similar_node_groups",
    "balancing_ignore_label": "balancing_ignore_labels",
    "expendable_pods_priority_cutoff": "expendable_pods_priority_cutoff",
    "fastpath_binpacking_enabled": "fastpath_binpacking_enabled",
    "capacity_quotas_enabled": "capacity_quotas_enabled",
}


def ca_options(flags: Mapping[str, Any], *,
               expander_priorities: Mapping[int, tuple[str, ...]] | None = None,
               capacity_quotas: Iterable[CapacityQuota] = (), seed: int = 0
               ) -> AutoscalerOptions:
    """The options of ``flags`` (CA's names, see the module docstring) and the inputs'
    priority expander ConfigMap and CapacityQuotas. ValueError for an unknown flag or a
    value AutoscalerOptions refuses."""
    fields: dict[str, Any] = {}
    for name, value in flags.items():
        field = CA_FLAGS.get(name)
        if field is None:
            raise ValueError(f"not a Cluster Autoscaler flag dralab models: {name}")
        if name == "memory_total":
            value = (value[0] * GIB, value[1] * GIB)
        elif name == "balancing_ignore_label":
            value = tuple(value)
        fields[field] = value
    return AutoscalerOptions(**fields, expander_priorities=expander_priorities,
                             capacity_quotas=tuple(capacity_quotas), seed=seed)
