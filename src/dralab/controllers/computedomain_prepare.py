"""What NVIDIA's compute-domain kubelet plugin does when it prepares a claim that the
scheduler allocated on a node: the opaque config it decodes, the error a pod's event
shows when that fails, and the IMEX channel device nodes it injects (issue 36).

Source: NVIDIA/k8s-dra-driver-gpu at 22407113785e78c7763b4637689a201eb39c6199
(Apache-2.0): ``cmd/compute-domain-kubelet-plugin/{driver,device_state,types}.go`` and
``api/nvidia.com/resource/v1beta1/{api,computedomainconfig}.go``.

Why this matters offline: the scheduler's decision is made before any of this runs.
A claim whose opaque parameters carry a field the driver does not know is allocated and
its pod bound (the driver's bats test sees it in ContainerCreating); only at prepare
does the plugin's strict decoder refuse it, and the pod never starts. Likewise a
ComputeDomain's ``allocationMode: All`` does not change what is allocated -- one
``channel-0`` device -- only how many channel device nodes the container sees.

Modelled: strict decoding of ComputeDomainChannelConfig / ComputeDomainDaemonConfig
(unknown fields, a non-string field, an unregistered kind, without the Go scheme's
name), their Validate (domainID required), the error wrapping up to the text kubelet
reports, and the injected channels (none on a node without a clique: "Do not inject
IMEX channel device nodes"). Not modelled: the checkpoint, the ComputeDomain namespace
and readiness assertions, CDI specs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dralab.api.computedomain import CD_API_VERSION, CHANNEL_CONFIG_KIND, DAEMON_CONFIG_KIND
from dralab.api.nvlink import COMPUTE_DOMAIN_DRIVER, IMEX_CHANNEL_COUNT
from dralab.api.resource import ResourceClaim

__all__ = ["PreparedChannels", "channel_device_nodes", "config_error", "prepare_claim"]

# The JSON fields of each registered config kind (TypeMeta inline plus the struct's).
_FIELDS: dict[str, tuple[str, ...]] = {
    CHANNEL_CONFIG_KIND: ("apiVersion", "kind", "domainID", "allocationMode"),
    DAEMON_CONFIG_KIND: ("apiVersion", "kind", "domainID"),
}
_JSON_TYPES = ((bool, "bool"), (int, "number"), (float, "number"), (dict, "object"),
               (list, "array"))


def _json_type(value: Any) -> str:
    for py, name in _JSON_TYPES:
        if isinstance(value, py):
            return name
    return "null" if value is None else "string"


def config_error(parameters: Any) -> str | None:
    """Why the plugin's StrictDecoder or the config's Validate refuses these opaque
    parameters (the innermost text of the error), None when it accepts them."""
    problem = _decode_error(parameters)
    if problem is None and not parameters.get("domainID"):
        return _EMPTY_DOMAIN
    return problem


_EMPTY_DOMAIN = "domainID cannot be empty"  # Validate of both config kinds


def _decode_error(parameters: Any) -> str | None:
    if not isinstance(parameters, Mapping):
        return "couldn't get version/kind; json parse error: not a JSON object"
    kind = parameters.get("kind")
    version = parameters.get("apiVersion")
    if version != CD_API_VERSION or kind not in _FIELDS:
        return f'no kind "{kind}" is registered for version "{version}"'
    fields = _FIELDS[str(kind)]
    for key in fields[2:]:
        value = parameters.get(key)
        if value is not None and not isinstance(value, str):
            # encoding/json's wording; Go names the struct, not the kind's group.
            return (f"json: cannot unmarshal {_json_type(value)} into Go struct field "
                    f"{kind}.{key} of type string")
    unknown = [key for key in parameters if key not in fields]
    if unknown:
        return "strict decoding error: " + ", ".join(f'unknown field "{k}"' for k in unknown)
    return None


def channel_device_nodes(allocation_mode: str, clique_id: str) -> tuple[str, ...]:
    """The /dev/nvidia-caps-imex-channels entries a prepared channel claim injects:
    channel0 only, all of the node's channels with allocationMode All (the allocated
    device is channel-0 either way), none on a node outside an NVLink clique."""
    if not clique_id:
        return ()
    count = IMEX_CHANNEL_COUNT if allocation_mode == "All" else 1
    return tuple(f"channel{i}" for i in range(count))


@dataclass(frozen=True)
class PreparedChannels:
    """The outcome of NodePrepareResources for one claim: the kubelet's error text
    (the pod's FailedPrepareDynamicResources event) or the channels injected."""

    error: str | None = None
    channels: tuple[str, ...] = ()


def prepare_claim(claim: ResourceClaim, clique_id: str) -> PreparedChannels:
    """What the compute-domain plugin on a node with clique label ``clique_id`` ("" for
    none) makes of an allocated claim. Configs are decoded (all of the driver's, class
    ones first) before any is validated, as prepareDevices does; a claim without an
    allocation is refused as driver.go refuses it."""
    namespace = claim.metadata.namespace or "default"
    where = f"'{namespace}/{claim.metadata.name}:{claim.metadata.uid or ''}'"
    allocation = claim.status.allocation if claim.status else None
    if allocation is None:
        return PreparedChannels(error=f"no allocation set in ResourceClaim "
                                   f"{claim.metadata.name} in namespace {namespace}")
    configs = [c for c in allocation.devices.config
               if c.opaque is not None and c.opaque.driver == COMPUTE_DOMAIN_DRIVER]
    configs.sort(key=lambda c: c.source != "FromClass")
    wrap = f"error preparing devices for claim {where}: prepare devices failed: "
    for config in configs:
        assert config.opaque is not None
        problem = _decode_error(config.opaque.parameters)
        if problem is not None:
            return PreparedChannels(error=wrap + "error generating configResultsMap: error "
                                 "getting opaque device configs: error decoding config "
                                 f"parameters: {problem}")
    channel_results = {r.request for r in allocation.devices.results
                       if r.driver == COMPUTE_DOMAIN_DRIVER and r.device.startswith("channel-")}
    if not channel_results:
        return PreparedChannels()
    # getConfigResultsMap: the last config naming the channel request (or naming no
    # request) applies, else the plugin's default config, whose domainID is empty;
    # only the applied config is validated.
    applied = [c.opaque.parameters for c in configs if c.opaque is not None
               and c.opaque.parameters.get("kind") == CHANNEL_CONFIG_KIND
               and (not c.requests or channel_results.intersection(c.requests))]
    params = applied[-1] if applied else {}
    if not params.get("domainID"):
        return PreparedChannels(error=wrap + "error validating config: " + _EMPTY_DOMAIN)
    mode = str(params.get("allocationMode") or "Single")
    return PreparedChannels(channels=channel_device_nodes(mode, clique_id))
