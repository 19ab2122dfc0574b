"""Which validator handles which (apiVersion, kind), and the public entry point."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from dralab.api.codec import nulls_as_unset, resolve_kind
from dralab.api.errors import ErrorType, FieldError
from dralab.api.features import FeatureGates
from dralab.api.versions import CONVERTIBLE, Served
from dralab.validation._cluster import (
    validate_namespace,
    validate_node,
    validate_priority_class,
)
from dralab.validation._context import Ctx
from dralab.validation._pod import validate_pod
from dralab.validation._resource import (
    validate_device_class,
    validate_device_taint_rule,
    validate_resource_claim,
    validate_resource_claim_template,
)
from dralab.validation._scheduling import validate_pod_group, validate_workload
from dralab.validation._slice import validate_resource_slice
from dralab.validation._versions import validate_converted
from dralab.validation._workloads import (
    validate_cron_job,
    validate_daemon_set,
    validate_deployment,
    validate_job,
    validate_replica_set,
    validate_stateful_set,
)

__all__ = ["SUPPORTED_KINDS", "validate_object"]

Validator = Callable[[Ctx, Mapping[str, Any]], None]

_RESOURCE_V1: Final = "resource.k8s.io/v1"
_VALIDATORS: Final[Mapping[tuple[str, str], Validator]] = MappingProxyType({
    (_RESOURCE_V1, "DeviceClass"): validate_device_class,
    (_RESOURCE_V1, "ResourceSlice"): validate_resource_slice,
    (_RESOURCE_V1, "ResourceClaim"): validate_resource_claim,
    (_RESOURCE_V1, "ResourceClaimTemplate"): validate_resource_claim_template,
    (_RESOURCE_V1, "DeviceTaintRule"): validate_device_taint_rule,
    ("v1", "Pod"): validate_pod,
    ("v1", "Node"): validate_node,
    ("v1", "Namespace"): validate_namespace,
    ("scheduling.k8s.io/v1", "PriorityClass"): validate_priority_class,
    ("scheduling.k8s.io/v1beta1", "Workload"): validate_workload,
    ("scheduling.k8s.io/v1beta1", "PodGroup"): validate_pod_group,
    ("batch/v1", "Job"): validate_job,
    ("batch/v1", "CronJob"): validate_cron_job,
    ("apps/v1", "Deployment"): validate_deployment,
    ("apps/v1", "StatefulSet"): validate_stateful_set,
    ("apps/v1", "ReplicaSet"): validate_replica_set,
    ("apps/v1", "DaemonSet"): validate_daemon_set,
})

# The hub versions above, and the older versions 1.37 serves, validated in their v1 form.
SUPPORTED_KINDS: Final = frozenset(_VALIDATORS) | frozenset(
    (version, kind) for kind, versions in CONVERTIBLE.items() for version in versions)

_DEFAULT_GATES: Final = FeatureGates()


def validate_object(obj: Mapping[str, Any], *,
                    features: FeatureGates | None = None) -> list[FieldError]:
    """Check one decoded object as the Kubernetes 1.37 API server would on create.

    ``obj`` is the document as loaded from YAML/JSON (camelCase keys). Returns
    every problem found, in document order, as FieldErrors; an empty list means
    valid. Objects of an older served version (resource.k8s.io/v1beta1, ...)
    are checked in their v1 form and reported with their own field paths. A
    removed or unknown version of a modelled group is one error at
    ``apiVersion``. Kinds dralab does not model yield no errors: they are
    passed through elsewhere. Never raises on malformed input: wrong types are
    reported as errors at their path. Pure: ``obj`` is not modified.
    """
    if not isinstance(obj, Mapping):
        ctx = Ctx(features or _DEFAULT_GATES)
        ctx.type_invalid("", obj, "object")
        return ctx.errors
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return []
    resolution = resolve_kind(api_version, kind)
    if resolution.served is Served.NOT_SERVED:
        return [FieldError(path="apiVersion", type=ErrorType.NOT_SUPPORTED, value=api_version,
                           detail=resolution.message)]
    validator = _VALIDATORS.get((resolution.hub, kind))
    if validator is None:
        return []
    ctx = Ctx(features or _DEFAULT_GATES)

    def check_hub(c: Ctx, hub_obj: Mapping[str, Any]) -> None:
        # The v1 form as the API server decodes it: a null is unset, a null map value or
        # list item its zero value (so `requests: [null]` lacks a name, as upstream says).
        validator(c, nulls_as_unset(hub_obj))

    if resolution.served is Served.CONVERT:
        validate_converted(ctx, obj, check_hub)
    else:
        check_hub(ctx, obj)
    return ctx.errors
