"""KAI Scheduler's API objects, typed, as its CRDs serve them.

* ``scheduling.run.ai/v2`` Queue and ``scheduling.run.ai/v2alpha2`` PodGroup: the only
  served version of each (``deployments/kai-scheduler/crds``; older versions are gone
  from the CRDs, and the webhooks validate just these: ``QueueValidatedVersions``,
  ``PodGroupValidatedVersions``);
* ``kai.scheduler/v1`` SchedulingShard (placement strategy, kValue, actions and plugins,
  scheduler args) and the parts of ``kai.scheduler/v1`` Config that decide scheduling
  (``spec.admission.gpuSharing``; the rest is the operator's deployment settings);
* ``kai.scheduler/v1alpha1`` Topology (the levels a topologyConstraint names).

Frozen msgspec Structs in dralab's api style (camelCase on the wire, the document kept in
``raw``). The spec structs of Queue, PodGroup, SchedulingShard and Topology refuse unknown
fields as the API server's strict decoding does (kubectl's default ``--validate=strict``):
KAI's own docs spell a Queue's resources ``resourceQuota`` once, and the API server would
refuse that Queue rather than read it without resources. Field names are checked against
KAI's ``pkg/apis`` at 72de64fc8eca10fa8cca26a20156178f3edbe092.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from dralab.api.base import KubeObject, Spec
from dralab.api.codec import DecodeError

__all__ = [
    "KAI_GROUP",
    "KAI_KINDS",
    "RUNAI_GROUP",
    "SERVED",
    "KaiOperatorConfig",
    "KaiPodGroup",
    "KaiQueueObject",
    "KaiTopology",
    "SchedulingShard",
    "decode_kai",
    "is_kai_document",
]

RUNAI_GROUP = "scheduling.run.ai"
KAI_GROUP = "kai.scheduler"


class _Strict(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel",
              forbid_unknown_fields=True):
    """A spec struct whose unknown fields are refused (the CRD's structural schema)."""


# --- Queue (scheduling.run.ai/v2) --------------------------------------------------

class KaiQueueResourceSpec(_Strict, frozen=True):
    # float64 without omitempty in KAI's Go type: an absent field reads as 0
    quota: float = 0.0
    over_quota_weight: float = 0.0
    limit: float = 0.0


class KaiQueueResourcesSpec(_Strict, frozen=True):
    gpu: KaiQueueResourceSpec = KaiQueueResourceSpec()
    cpu: KaiQueueResourceSpec = KaiQueueResourceSpec()
    memory: KaiQueueResourceSpec = KaiQueueResourceSpec()


class KaiQueueSpec(_Strict, frozen=True):
    display_name: str | None = None
    parent_queue: str | None = None
    resources: KaiQueueResourcesSpec | None = None
    priority: int | None = None
    preempt_min_runtime: str | None = None
    reclaim_min_runtime: str | None = None


class KaiQueueObject(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = f"{RUNAI_GROUP}/v2"
    KIND: ClassVar[str] = "Queue"

    spec: KaiQueueSpec = KaiQueueSpec()
    status: dict[str, Any] = {}


# --- KaiPodGroup (scheduling.run.ai/v2alpha2) -----------------------------------------

class KaiTopologyConstraintSpec(_Strict, frozen=True):
    preferred_topology_level: str | None = None
    required_topology_level: str | None = None
    topology: str | None = None


class KaiSubGroupSpec(_Strict, frozen=True):
    name: str = ""
    min_member: int | None = None
    parent: str | None = None
    topology_constraint: KaiTopologyConstraintSpec | None = None


class KaiPodGroupSpec(_Strict, frozen=True):
    min_member: int | None = None
    queue: str | None = None
    priority_class_name: str | None = None
    preemptibility: str | None = None
    parallelism: int | None = None
    completions: int | None = None
    backoff_limit: int | None = None
    mark_unschedulable: bool | None = None
    scheduling_backoff: int | None = None
    topology_constraint: KaiTopologyConstraintSpec | None = None
    sub_groups: list[KaiSubGroupSpec] = []


class KaiPodGroup(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = f"{RUNAI_GROUP}/v2alpha2"
    KIND: ClassVar[str] = "PodGroup"
    NAMESPACED: ClassVar[bool] = True

    spec: KaiPodGroupSpec = KaiPodGroupSpec()
    status: dict[str, Any] = {}


# --- SchedulingShard (kai.scheduler/v1) --------------------------------------------

class PlacementStrategySpec(_Strict, frozen=True):
    gpu: str | None = None
    cpu: str | None = None


class MinRuntimeSpec(_Strict, frozen=True):
    preempt_min_runtime: str | None = None
    reclaim_min_runtime: str | None = None


class PluginConfigSpec(_Strict, frozen=True):
    enabled: bool | None = None
    priority: int | None = None
    arguments: dict[str, str] | None = None


class ActionConfigSpec(_Strict, frozen=True):
    enabled: bool | None = None
    priority: int | None = None


class SchedulingShardSpec(_Strict, frozen=True):
    args: dict[str, str] = {}
    placement_strategy: PlacementStrategySpec | None = None
    partition_label_value: str | None = None
    queue_depth_per_action: dict[str, int] = {}
    min_runtime: MinRuntimeSpec | None = None
    k_value: float | None = msgspec.field(default=None, name="kValue")
    # the usage database's client settings (time-based fair share): kept, not modelled
    usage_db_config: dict[str, Any] | None = msgspec.field(default=None, name="usageDBConfig")
    plugins: dict[str, PluginConfigSpec] = {}
    actions: dict[str, ActionConfigSpec] = {}


class SchedulingShard(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = f"{KAI_GROUP}/v1"
    KIND: ClassVar[str] = "SchedulingShard"

    spec: SchedulingShardSpec = SchedulingShardSpec()
    status: dict[str, Any] = {}


# --- Config (kai.scheduler/v1): only what decides scheduling -----------------------

class AdmissionConfigSpec(Spec, frozen=True):
    gpu_sharing: bool | None = msgspec.field(default=None, name="gpuSharing")


class GlobalConfigSpec(Spec, frozen=True):
    scheduler_name: str | None = None
    queue_label_key: str | None = None
    node_pool_label_key: str | None = None


class KaiConfigSpec(Spec, frozen=True):
    admission: AdmissionConfigSpec | None = None
    global_: GlobalConfigSpec | None = msgspec.field(default=None, name="global")


class KaiOperatorConfig(KubeObject, frozen=True):
    """KAI's operator Config (``kind: Config``; the chart names it ``kai-config``)."""

    API_VERSION: ClassVar[str] = f"{KAI_GROUP}/v1"
    KIND: ClassVar[str] = "Config"

    spec: KaiConfigSpec = KaiConfigSpec()


# --- Topology (kai.scheduler/v1alpha1) ---------------------------------------------

class KaiTopologyLevelSpec(_Strict, frozen=True):
    node_label: str = ""


class KaiTopologySpec(_Strict, frozen=True):
    levels: list[KaiTopologyLevelSpec] = []


class KaiTopology(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = f"{KAI_GROUP}/v1alpha1"
    KIND: ClassVar[str] = "Topology"

    spec: KaiTopologySpec = KaiTopologySpec()


# --- decoding ----------------------------------------------------------------------

KAI_KINDS: Mapping[tuple[str, str], type[KubeObject]] = {
    (RUNAI_GROUP, "Queue"): KaiQueueObject,
    (RUNAI_GROUP, "PodGroup"): KaiPodGroup,
    (KAI_GROUP, "SchedulingShard"): SchedulingShard,
    (KAI_GROUP, "Config"): KaiOperatorConfig,
    (KAI_GROUP, "Topology"): KaiTopology,
}
# The one version each CRD serves (deployments/kai-scheduler/crds).
SERVED: Mapping[tuple[str, str], str] = {
    (RUNAI_GROUP, "Queue"): "v2",
    (RUNAI_GROUP, "PodGroup"): "v2alpha2",
    (RUNAI_GROUP, "BindRequest"): "v1alpha2",
    (KAI_GROUP, "SchedulingShard"): "v1",
    (KAI_GROUP, "Config"): "v1",
    (KAI_GROUP, "Topology"): "v1alpha1",
}


def _group_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def is_kai_document(data: Mapping[str, Any]) -> bool:
    """Whether a plain document belongs to KAI's API groups."""
    api_version = data.get("apiVersion")
    return isinstance(api_version, str) and \
        _group_version(api_version)[0] in (RUNAI_GROUP, KAI_GROUP)


_PATH_SUFFIX = " - at `$"
_UNKNOWN = "Object contains unknown field `"


def decode_kai(data: Mapping[str, Any]) -> KubeObject:
    """A KAI document as its typed object; DecodeError (with the field path) for a
    version KAI does not serve, a kind dralab does not model, an unknown spec field or
    a type mismatch."""
    api_version = str(data.get("apiVersion", ""))
    kind = str(data.get("kind", ""))
    group, version = _group_version(api_version)
    served = SERVED.get((group, kind))
    if served is None:
        kinds = ", ".join(sorted(k for g, k in SERVED if g == group))
        raise DecodeError("", f'no matches for kind "{kind}" in group "{group}" '
                              f"(KAI serves {kinds})")
    if version != served:
        raise DecodeError("", f'no matches for kind "{kind}" in version "{api_version}" '
                              f"(KAI serves {group}/{served})")
    cls = KAI_KINDS.get((group, kind))
    if cls is None:
        raise DecodeError("", f'kind "{kind}" of {group} is not modelled by dralab')
    payload = dict(data)
    payload["__raw__"] = data
    try:
        return msgspec.convert(payload, cls)
    except msgspec.ValidationError as err:
        text = str(err)
        at = text.rfind(_PATH_SUFFIX)
        path = text[at + len(_PATH_SUFFIX):].rstrip("`").lstrip(".") if at >= 0 else ""
        message = text[:at] if at >= 0 else text
        if message.startswith(_UNKNOWN):
            # strict decoding's wording: the whole path of the unknown field
            field = message[len(_UNKNOWN):].rstrip("`")
            full = f"{path}.{field}" if path else field
            raise DecodeError("", f'strict decoding error: unknown field "{full}"') from None
        raise DecodeError(path, message) from None
