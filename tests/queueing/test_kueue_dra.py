"""DRA devices in quota, mode by mode, as Kueue's DRA guide describes them."""

from __future__ import annotations

from typing import Any

import pytest

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.queueing.dra import DraAccounting, Inadmissible, claim_charges
from dralab.queueing.objects import KueueConfiguration, decode_kueue

GI = 1024 ** 3 * 1000  # milli-units of 1Gi


def _config(*mappings: dict[str, Any]) -> KueueConfiguration:
    obj = decode_kueue({"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
                        "resources": {"deviceClassMappings": list(mappings)}})
    assert isinstance(obj, KueueConfiguration)
    return obj


def _template(name: str, *requests: dict[str, Any]) -> Any:
    return decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                   "metadata": {"name": name, "namespace": "default"},
                   "spec": {"spec": {"devices": {"requests": list(requests)}}}})


def _class(name: str, extended: str | None = None) -> Any:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{name}"'}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return decode({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                   "metadata": {"name": name}, "spec": spec})


def _slice(devices: list[dict[str, Any]], driver: str = "gpu.example.com") -> Any:
    return decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                   "metadata": {"name": "s"},
                   "spec": {"driver": driver, "nodeName": "n1",
                            "pool": {"name": "n1", "resourceSliceCount": 1},
                            "devices": devices}})


def _pod(*templates: str) -> Pod:
    pod = decode({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "p", "namespace": "default"},
                  "spec": {"containers": [{"name": "c"}],
                           "resourceClaims": [{"name": f"c{i}", "resourceClaimTemplateName": t}
                                              for i, t in enumerate(templates)]}})
    assert isinstance(pod, Pod)
    return pod


def _charges(objects: list[Any], config: KueueConfiguration, *templates: str) -> dict[str, int]:
    return claim_charges(_pod(*templates).spec, "default", "main", 0,
                         DraAccounting.of(config, objects))


def _exact(cls: str = "gpu.example.com", **fields: Any) -> dict[str, Any]:
    return {"name": "gpu", "exactly": {"deviceClassName": cls} | fields}


COUNT = {"name": "example.com/gpu", "deviceClassNames": ["gpu.example.com", "gpu-b.example.com"]}


@pytest.mark.parametrize(("requests", "expected"), [
    ([_exact()], {"example.com/gpu": 1000}),                          # count defaults to 1
    ([_exact(count=3)], {"example.com/gpu": 3000}),
    ([_exact(count=2), _exact("gpu-b.example.com", count=1) | {"name": "b"}],
     {"example.com/gpu": 3000}),                                      # two classes, one name
])
def test_count_mode(requests: list[dict[str, Any]], expected: dict[str, int]) -> None:
    objects = [_template("t", *requests)]
    assert _charges(objects, _config(COUNT), "t") == expected


def test_count_mode_sums_templates_of_one_pod() -> None:
    objects = [_template("t", _exact(count=2))]
    assert _charges(objects, _config(COUNT), "t", "t") == {"example.com/gpu": 4000}


def test_unmapped_device_class_is_inadmissible_with_kueues_message() -> None:
    objects = [_template("t", _exact("unmapped.example.com"))]
    with pytest.raises(Inadmissible) as err:
        _charges(objects, _config(COUNT), "t")
    assert err.value.message == (
        'spec.podSets[0].template.spec.resourceClaims[0].resourceClaimTemplateName: Not found: '
        '"DeviceClass unmapped.example.com is not mapped in DRA configuration for podset main"')


def test_all_mode_is_inadmissible() -> None:
    objects = [_template("t", _exact(allocationMode="All"))]
    with pytest.raises(Inadmissible, match="allocationMode All"):
        _charges(objects, _config(COUNT), "t")


def test_missing_template_is_inadmissible() -> None:
    with pytest.raises(Inadmissible, match="ResourceClaimTemplate nope not found"):
        _charges([], _config(COUNT), "nope")


@pytest.mark.parametrize(("alternatives", "expected"), [
    # The same resource: the largest alternative.
    ([{"name": "big", "deviceClassName": "gpu.example.com", "count": 4},
      {"name": "small", "deviceClassName": "gpu.example.com", "count": 1}],
     {"example.com/gpu": 4000}),
    # Different resources: each at its largest (the envelope).
    ([{"name": "h100", "deviceClassName": "gpu.example.com", "count": 2},
      {"name": "mig", "deviceClassName": "mig.example.com", "count": 3}],
     {"example.com/gpu": 2000, "example.com/mig": 3000}),
])
def test_first_available_is_charged_as_its_largest_alternative(
        alternatives: list[dict[str, Any]], expected: dict[str, int]) -> None:
    objects = [_template("t", {"name": "gpu", "firstAvailable": alternatives})]
    config = _config(COUNT, {"name": "example.com/mig", "deviceClassNames": ["mig.example.com"]})
    assert _charges(objects, config, "t") == expected


COUNTER = {"name": "gpu.memory", "deviceClassNames": ["gpu.example.com"],
           "sources": [{"counter": {"name": "memory", "driver": "gpu.example.com",
                                    "deviceSelector": {"cel": {
                                        "expression": "device.driver == 'gpu.example.com'"}}}}]}


def _partition(name: str, memory: str, profile: str) -> dict[str, Any]:
    return {"name": name, "attributes": {"profile": {"string": profile}},
            "consumesCounters": [{"counterSet": "gpu-0", "counters": {
                "memory": {"value": memory}}}]}


PARTITIONS = _slice([_partition("gpu-0-1g", "10Gi", "1g.10gb"),
                     _partition("gpu-0-3g", "40Gi", "3g.40gb"),
                     _partition("gpu-0-7g", "80Gi", "7g.80gb")])


@pytest.mark.parametrize(("request_", "expected"), [
    # Conservative: the largest counter value among matching devices, times count.
    (_exact(), 80 * GI),
    (_exact(count=2), 160 * GI),
    # The request's own selector narrows to the profile it asks for.
    (_exact(selectors=[{"cel": {"expression":
                                "device.attributes['gpu.example.com'].profile == '1g.10gb'"}}]),
     10 * GI),
    (_exact(count=3, selectors=[{"cel": {"expression":
                                         "device.attributes['gpu.example.com'].profile "
                                         "== '3g.40gb'"}}]),
     120 * GI),
])
def test_counters_mode(request_: dict[str, Any], expected: int) -> None:
    objects = [_template("t", request_), _class("gpu.example.com"), PARTITIONS]
    assert _charges(objects, _config(COUNTER), "t") == {"gpu.memory": expected}


def test_counters_mode_without_matching_devices_is_inadmissible() -> None:
    objects = [_template("t", _exact()), _class("gpu.example.com")]
    with pytest.raises(Inadmissible, match="insufficient matching devices"):
        _charges(objects, _config(COUNTER), "t")


def test_counters_mode_without_the_counter_is_inadmissible() -> None:
    objects = [_template("t", _exact()), _class("gpu.example.com"),
               _slice([{"name": "gpu-0"}])]
    with pytest.raises(Inadmissible, match="no consumesCounters entry for counter memory"):
        _charges(objects, _config(COUNTER), "t")


CAPACITY = {"name": "gpu.memory", "deviceClassNames": ["gpu.example.com"],
            "sources": [{"capacity": {"name": "gpu.example.com/memory",
                                      "driver": "gpu.example.com",
                                      "deviceSelector": {"cel": {"expression": "true"}}}}]}


def _shared(name: str, memory: str, policy: dict[str, Any] | None = None) -> dict[str, Any]:
    capacity: dict[str, Any] = {"value": memory}
    if policy is not None:
        capacity["requestPolicy"] = policy
    return {"name": name, "allowMultipleAllocations": True,
            "capacity": {"memory": capacity}}


@pytest.mark.parametrize(("devices", "asked", "expected"), [
    # The documentation sample: 4Gi asked, no request policy.
    ([_shared("gpu-0", "80Gi")], "4Gi", 4 * GI),
    # Rounded up to the next valid value.
    ([_shared("gpu-0", "80Gi", {"validValues": ["5Gi", "10Gi", "20Gi"]})], "6Gi", 10 * GI),
    # Rounded up to the range's step above its minimum.
    ([_shared("gpu-0", "80Gi", {"validRange": {"min": "2Gi", "step": "4Gi"}})], "7Gi", 10 * GI),
    # Below the range's minimum: the minimum.
    ([_shared("gpu-0", "80Gi", {"validRange": {"min": "8Gi"}})], "1Gi", 8 * GI),
    # Nothing asked: the device's default, else its whole capacity.
    ([_shared("gpu-0", "80Gi", {"default": "16Gi", "validRange": {"min": "1Gi"}})], None,
     16 * GI),
    ([_shared("gpu-0", "80Gi")], None, 80 * GI),
    # Heterogeneous devices: the largest charge.
    ([_shared("gpu-0", "80Gi", {"validValues": ["8Gi"]}),
      _shared("gpu-1", "40Gi", {"validValues": ["20Gi"]})], "4Gi", 20 * GI),
])
def test_capacity_mode(devices: list[dict[str, Any]], asked: str | None, expected: int) -> None:
    request = _exact(count=1)
    if asked is not None:
        request["exactly"]["capacity"] = {"requests": {"gpu.example.com/memory": asked}}
    objects = [_template("t", request), _class("gpu.example.com"), _slice(devices)]
    assert _charges(objects, _config(CAPACITY), "t") == {"gpu.memory": expected}


def test_capacity_mode_beyond_every_device_is_inadmissible() -> None:
    request = _exact(capacity={"requests": {"gpu.example.com/memory": "100Gi"}})
    objects = [_template("t", request), _class("gpu.example.com"),
               _slice([_shared("gpu-0", "80Gi")])]
    with pytest.raises(Inadmissible, match="insufficient matching devices"):
        _charges(objects, _config(CAPACITY), "t")


def test_extended_resource_is_counted_once_under_its_own_name() -> None:
    dra = DraAccounting.of(_config(), [_class("gpu.example.com", extended="example.com/gpu")])
    assert dra.extended_resource_key("example.com/gpu") == "example.com/gpu"
    assert dra.extended_resource_key("cpu") == "cpu"


def test_extended_resource_of_a_mapped_class_takes_the_mapping_name() -> None:
    config = _config({"name": "gpus", "deviceClassNames": ["gpu.example.com"]})
    dra = DraAccounting.of(config, [_class("gpu.example.com", extended="example.com/gpu")])
    assert dra.extended_resource_key("example.com/gpu") == "gpus"


def test_extended_resource_of_a_class_with_sources_is_inadmissible() -> None:
    dra = DraAccounting.of(_config(COUNTER), [_class("gpu.example.com",
                                                     extended="example.com/gpu")])
    with pytest.raises(Inadmissible, match="sources"):
        dra.extended_resource_key("example.com/gpu")
