"""The compute-domain kubelet plugin's prepare, modelled (controllers.computedomain_prepare):
strict decoding and Validate of the opaque configs, the error's wrapping, the injected
channels. NVIDIA/k8s-dra-driver-gpu 22407113785e78c7763b4637689a201eb39c6199:
cmd/compute-domain-kubelet-plugin/{driver,device_state}.go, api/nvidia.com/resource/
v1beta1/{api,computedomainconfig}.go."""

from __future__ import annotations

from typing import Any

import pytest

from dralab.api.codec import decode
from dralab.api.resource import ResourceClaim
from dralab.controllers.computedomain_prepare import (
    channel_device_nodes,
    config_error,
    prepare_claim,
)

API = "resource.nvidia.com/v1beta1"
CHANNEL = {"apiVersion": API, "kind": "ComputeDomainChannelConfig", "domainID": "u1"}


@pytest.mark.parametrize(("parameters", "expected"), [
    (CHANNEL, None),
    (CHANNEL | {"allocationMode": "All"}, None),
    ({"apiVersion": API, "kind": "ComputeDomainDaemonConfig", "domainID": "u1"}, None),
    # computedomainconfig.go Validate
    (CHANNEL | {"domainID": ""}, "domainID cannot be empty"),
    # StrictDecoder (api.go: json.SerializerOptions{Strict: true})
    (CHANNEL | {"unexpectedField": "foo"},
     'strict decoding error: unknown field "unexpectedField"'),
    ({"apiVersion": API, "kind": "ComputeDomainDaemonConfig", "domainID": "u1",
      "allocationMode": "All"}, 'strict decoding error: unknown field "allocationMode"'),
    (CHANNEL | {"domainID": 7}, "json: cannot unmarshal number into Go struct field "
     "ComputeDomainChannelConfig.domainID of type string"),
    ({"apiVersion": API, "kind": "GpuConfig"},
     f'no kind "GpuConfig" is registered for version "{API}"'),
])
def test_config_error(parameters: dict[str, Any], expected: str | None) -> None:
    assert config_error(parameters) == expected


def test_channel_device_nodes() -> None:
    assert channel_device_nodes("Single", "c.0") == ("channel0",)
    every = channel_device_nodes("All", "c.0")
    assert (len(every), every[0], every[-1]) == (2048, "channel0", "channel2047")
    # device_state.go: no clique -> "Do not inject IMEX channel device nodes".
    assert channel_device_nodes("All", "") == ()


def _claim(configs: list[dict[str, Any]], allocated: bool = True) -> ResourceClaim:
    doc: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "rc", "namespace": "ns", "uid": "1234"},
        "spec": {"devices": {"requests": [{"name": "channel", "exactly": {
            "deviceClassName": "compute-domain-default-channel.nvidia.com"}}]}}}
    if allocated:
        doc["status"] = {"allocation": {"devices": {
            "results": [{"request": "channel", "driver": "compute-domain.nvidia.com",
                         "pool": "n1", "device": "channel-0"}],
            "config": [{"source": "FromClaim", "requests": ["channel"],
                        "opaque": {"driver": "compute-domain.nvidia.com",
                                   "parameters": p}} for p in configs]}}}
    claim = decode(doc)
    assert isinstance(claim, ResourceClaim)
    return claim


def test_prepare_claim_outcomes() -> None:
    assert prepare_claim(_claim([CHANNEL]), "c.0").channels == ("channel0",)
    assert len(prepare_claim(_claim([CHANNEL | {"allocationMode": "All"}]), "c.0").channels) \
        == 2048
    # The last config naming the request applies.
    assert prepare_claim(_claim([CHANNEL | {"allocationMode": "All"}, CHANNEL]),
                         "c.0").channels == ("channel0",)
    wrap = "error preparing devices for claim 'ns/rc:1234': prepare devices failed: "
    assert prepare_claim(_claim([CHANNEL | {"x": 1}]), "c.0").error == (
        wrap + "error generating configResultsMap: error getting opaque device configs: "
        'error decoding config parameters: strict decoding error: unknown field "x"')
    # No config: the plugin's default channel config has no domainID.
    assert prepare_claim(_claim([]), "c.0").error == (
        wrap + "error validating config: domainID cannot be empty")
    assert prepare_claim(_claim([], allocated=False), "c.0").error == (
        "no allocation set in ResourceClaim rc in namespace ns")
