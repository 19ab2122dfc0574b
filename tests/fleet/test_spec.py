"""Fleet spec parsing: strict, one-line errors naming file and field path."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from dralab.api.errors import InputError, LoadError
from dralab.fleet import FleetSpecError, default_fleet, load_fleet, parse_fleet

BASE: dict[str, Any] = {
    "apiVersion": "dralab.dev/v1alpha1",
    "kind": "Fleet",
    "metadata": {"name": "t"},
    "spec": {"pools": [{"name": "h100", "count": 2, "cpu": "192", "memory": "2Ti",
                        "gpu": {"model": "h100", "count": 8}}]},
}


def with_(path: str, value: Any) -> dict[str, Any]:
    """BASE with the value at dotted ``path`` (list indexes as numbers) set."""
    data = copy.deepcopy(BASE)
    keys = path.split(".")
    node: Any = data
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
    last = keys[-1]
    if isinstance(node, list):
        if int(last) == len(node):
            node.append(value)
        else:
            node[int(last)] = value
    else:
        node[last] = value
    return data


ERRORS = [
    ("apiVersion", "v1", "f.yaml: apiVersion: must be dralab.dev/v1alpha1, not 'v1'"),
    ("kind", "Cluster", "f.yaml: kind: must be Fleet"),
    ("spec.pools.0.gpu.modle", "x", "f.yaml: spec.pools[0].gpu.modle: unknown field"),
    ("spec.pools.0.count", "two", "f.yaml: spec.pools[0].count: Expected int, got str"),
    ("spec.pools.0.count", 0, "f.yaml: spec.pools[0].count: must be at least 1: 0"),
    ("spec.pools.0.gpu.model", "h300", "f.yaml: spec.pools[0].gpu.model: unknown GPU model "
                                       "'h300' (known: h100-80gb-sxm"),
    ("spec.pools.0.memory", "lots", "f.yaml: spec.pools[0].memory: not a quantity: 'lots'"),
    ("spec.pools.0.gpu.mig", {"mode": "half"},
     "f.yaml: spec.pools[0].gpu.mig.mode: Invalid enum value 'half'; must be one of dynamic, "
     "off, static"),
    ("spec.pools.0.gpu.mig", {"mode": "static", "profiles": ["1g.5gb"]},
     "f.yaml: spec.pools[0].gpu.mig.profiles[0]: unknown MIG profile '1g.5gb' for h100-80gb-sxm"),
    ("spec.pools.0.gpu.mig", {"mode": "static", "perGpu": [["7g.80gb"]]},
     "f.yaml: spec.pools[0].gpu.mig.perGpu: has 1 lists for 8 GPUs"),
    ("spec.pools.0.gpu.mig", {"mode": "static", "profiles": ["4g.40gb", "4g.40gb"]},
     "f.yaml: spec.pools[0].gpu.mig.profiles: no valid MIG layout"),
    ("spec.pools.0.gpu.mig", {"mode": "static", "profiles": ["3g.40gb@2"]},
     "f.yaml: spec.pools[0].gpu.mig.profiles: no valid MIG layout for ['3g.40gb@2'] "
     "(3g.40gb cannot start at memory slot 2)"),
    ("spec.pools.0.gpu.mig", {"mode": "off", "profiles": ["1g.10gb"]},
     "f.yaml: spec.pools[0].gpu.mig.profiles: MIG profiles given but mig.mode is off"),
    ("spec.pools.0.gpu", {"model": "l4", "count": 4, "mig": {"mode": "dynamic"}},
     "f.yaml: spec.pools[0].gpu.mig.mode: l4 has no modelled MIG geometry"),
    ("spec.pools.0.gpu.sharing", {"consumableShares": "lots"},
     "f.yaml: spec.pools[0].gpu.sharing.consumableShares: must be unlimited, memory or a "
     "positive integer: 'lots'"),
    ("spec.pools.0.gpu", {"model": "h100", "count": 8, "mig": {"mode": "dynamic"},
                          "sharing": {"mps": True}},
     "f.yaml: spec.pools[0].gpu.sharing.mps: the driver's MPSSupport gate excludes DynamicMIG"),
    ("spec.pools.0.name", "H100", "f.yaml: spec.pools[0].name: not a DNS label: 'H100'"),
    ("spec.pools.0.namePrefix", "x" * 70,
     "f.yaml: spec.pools[0].namePrefix: node names like"),
    ("spec.pools.0.reserved", {"cpu": "500"},
     "f.yaml: spec.pools[0].reserved.cpu: exceeds the node's cpu"),
    ("spec.pools.0.nics", {"count": 2, "driver": "mlx"},
     "f.yaml: spec.pools[0].nics.driver: Invalid enum value 'mlx'; must be one of dranet, "
     "sriov"),
    ("spec.pools.0.topology", {"racksPerBlock": 2},
     "f.yaml: spec.pools[0].topology.racksPerBlock: blocks are made of racks"),
    ("spec.pools.0.gpu.partitions", 4,
     "f.yaml: spec.pools[0].gpu: partitions/multipleAllocations/bindingConditions are "
     "example-driver settings"),
    ("spec.pools.1", {"name": "h100", "count": 1},
     "f.yaml: spec.pools[1].name: duplicate pool name (also spec.pools[0])"),
    ("spec.pools", [], "f.yaml: spec.pools: at least one pool is required"),
    ("spec.kubernetesVersion", "1.30",
     "f.yaml: spec.kubernetesVersion: resource.k8s.io/v1 needs Kubernetes 1.34 or newer"),
    ("spec.nvidia", {"driverVersion": "latest"},
     "f.yaml: spec.nvidia.driverVersion: not a version"),
    ("spec.deviceClasses", [{"name": "gpu.nvidia.com"}],
     "f.yaml: spec.deviceClasses[0].name: 'gpu.nvidia.com' is installed by a driver"),
    ("spec.deviceClasses", [{"name": "x", "models": ["nope"]}],
     "f.yaml: spec.deviceClasses[0].models[0]: unknown GPU model 'nope'"),
    ("spec.deviceClasses", [{"name": "x", "type": "mig", "models": ["h100"],
                             "profiles": ["1g.5gb"]}],
     "f.yaml: spec.deviceClasses[0].profiles[0]: no selected model has MIG profile '1g.5gb'"),
    ("spec.deviceClasses", [{"name": "x", "sharing": {"strategy": "MPS", "interval": "Long"}}],
     "f.yaml: spec.deviceClasses[0].sharing.interval: interval is TimeSlicing's"),
    ("spec.pools.0.taints", [{"value": "x"}],
     "f.yaml: spec.pools[0].taints[0].key: required field missing"),
    ("spec.pools.0.nodeNames", ["a", "b", "c"],
     "f.yaml: spec.pools[0].count: is 2 but nodeNames has 3 names"),
    ("spec.pools.0.nodeNames", ["a", "B"],
     "f.yaml: spec.pools[0].nodeNames[1]: not a node name (a DNS subdomain of at most 63 "
     "characters): 'B'"),
    ("spec.pools.0.nodeNames", ["a", "a"],
     "f.yaml: spec.pools[0].nodeNames[1]: duplicate node name (also nodeNames[0])"),
    ("spec.pools.0.nodeNames", ["n" * 64, "b"],
     "f.yaml: spec.pools[0].nodeNames[0]: not a node name"),
    ("spec.pools.1", {"name": "b", "nodeNames": ["h100-02"]},
     "f.yaml: spec.pools[1]: node name 'h100-02' is also a node of spec.pools[0]"),
    ("spec.pools.1", {"name": "b"},
     "f.yaml: spec.pools[1].count: required field missing (or give nodeNames)"),
    ("spec.pools.1", {"name": "b", "count": 1, "driver": "example",
                      "gpu": {"count": 1, "bindingConditions": "yes"}},
     "f.yaml: spec.pools[1].gpu.bindingConditions: Expected bool"),
    ("spec.example", {"extendedResourceName": "gpu"},
     "f.yaml: spec.example.extendedResourceName: not an extended resource name like "
     "example.com/gpu: 'gpu'"),
    ("spec.deviceClasses", [{"name": "x", "extendedResourceName": "kubernetes.io/gpu"}],
     "f.yaml: spec.deviceClasses[0].extendedResourceName: not an extended resource name"),
    ("spec.pools.0.extendedResources", {"fpga": 2},
     "f.yaml: spec.pools[0].extendedResources: not an extended resource name like "
     "example.com/gpu: 'fpga'"),
    ("spec.pools.0.extendedResources", {"example.com/fpga": -1},
     "f.yaml: spec.pools[0].extendedResources.example.com/fpga: must not be negative: -1"),
    ("spec.pools.0.extendedResources", {"example.com/fpga": "2"},
     "f.yaml: spec.pools[0].extendedResources[...]: Expected int, got str"),
]


@pytest.mark.parametrize(("path", "value", "message"), ERRORS,
                         ids=[f"{p}={v!r}"[:60] for p, v, _ in ERRORS])
def test_errors_name_file_and_field(path: str, value: Any, message: str) -> None:
    with pytest.raises(FleetSpecError) as info:
        parse_fleet(with_(path, value), "f.yaml")
    text = str(info.value)
    assert text.startswith(message), text
    assert "\n" not in text
    assert isinstance(info.value, InputError)


def test_not_a_mapping() -> None:
    with pytest.raises(FleetSpecError, match="a Fleet must be a mapping, not list"):
        parse_fleet([], "f.yaml")


def test_valid_spec_and_defaults() -> None:
    fleet = parse_fleet(BASE, "f.yaml")
    pool = fleet.spec.pools[0]
    assert pool.node_names() == ["h100-01", "h100-02"]
    assert pool.gpu.mig.mode == "off" and pool.pods == 110
    assert fleet.spec.kubernetes_version == "1.36"


def test_exact_node_names() -> None:
    data = copy.deepcopy(BASE)
    pool = data["spec"]["pools"][0]
    del pool["count"]
    pool["nodeNames"] = ["gpu-node-7", "gpu-node-9.rack2"]
    fleet = parse_fleet(data, "f.yaml")
    (parsed,) = fleet.spec.pools
    assert parsed.node_names() == ["gpu-node-7", "gpu-node-9.rack2"] and parsed.count == 2
    # count may also be given, when it agrees.
    pool["count"] = 2
    assert parse_fleet(data, "f.yaml").spec.pools[0].node_names() == parsed.node_names()
    pool["namePrefix"] = "gpu-"
    with pytest.raises(FleetSpecError, match=r"^f.yaml: spec.pools\[0\].namePrefix: only for "
                                             r"generated names; not with nodeNames$"):
        parse_fleet(data, "f.yaml")


def test_load_fleet_from_file(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text("apiVersion: dralab.dev/v1alpha1\nkind: Fleet\nspec:\n  pools:\n"
                    "  - {name: a, count: 1, gpu: {model: l4, count: 1}}\n")
    assert load_fleet(path).spec.pools[0].name == "a"
    path.write_text("apiVersion: dralab.dev/v1alpha1\nkind: Fleet\nspec:\n  pools:\n"
                    "  - {name: a, count: 1, gpu: {model: l4, count: 1, mig: {mode: on}}}\n")
    with pytest.raises(FleetSpecError) as info:
        load_fleet(path)
    # YAML 1.1 reads `on` as a boolean; the message still names the field.
    assert str(info.value).startswith(f"{path}: spec.pools[0].gpu.mig.mode: Expected")
    path.write_text("a: 1\n---\nb: 2\n")
    with pytest.raises(LoadError, match="expected one Fleet document, found 2"):
        load_fleet(path)


def test_default_fleet() -> None:
    fleet = default_fleet()
    assert [p.name for p in fleet.spec.pools] == ["h100", "a100-mig", "l4"]
    assert fleet.spec.pools[1].gpu.mig.mode == "dynamic"
