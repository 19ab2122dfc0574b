"""Catalog facts (notes §3, §5) and consistency with the composed examples in examples/fleet."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dralab.api.io import load
from dralab.api.resource import DeviceClass, ResourceSlice
from dralab.fleet import CATALOG, by_product_name, by_trace_name, generate, get_model, parse_fleet

EXAMPLES = Path(__file__).parent.parent.parent / "examples" / "fleet"
MIG_MODELS = [k for k, m in CATALOG.items() if m.mig is not None]


def test_notes_table_values() -> None:
    h100 = get_model("h100")
    assert (h100.product_name, h100.architecture, h100.cuda_compute_capability,
            h100.memory_mib, h100.addressing_mode) == (
        "NVIDIA H100 80GB HBM3", "Hopper", "9.0", 81559, "HMM")
    assert get_model("gb200").addressing_mode == "ATS"
    assert get_model("l4").memory_mib == 23034 and get_model("l4").mig is None
    assert get_model("h200").memory_mib == 143771
    a100 = CATALOG["a100-40gb"].mig
    assert a100 is not None
    assert [(p.name, p.gi_id, p.multiprocessors, p.memory_mib) for p in a100.profiles] == [
        ("1g.5gb", 19, 14, 4864), ("1g.5gb+me", 20, 14, 4864), ("1g.10gb", 15, 14, 9856),
        ("2g.10gb", 14, 28, 9856), ("3g.20gb", 9, 42, 19968), ("4g.20gb", 5, 56, 19968),
        ("7g.40gb", 0, 98, 40192)]
    h = CATALOG["h100-80gb-sxm"].mig
    assert h is not None and h.max_capacity() == {
        "copyEngines": 8, "decoders": 7, "encoders": 0, "jpegEngines": 7, "memory": 81152,
        "multiprocessors": 132, "ofaEngines": 1}


def test_trace_models() -> None:
    names = {m.trace_name for m in CATALOG.values() if m.trace_name}
    assert names == {"T4", "P100", "V100M16", "V100M32", "A10", "G2", "G3"}
    assert by_trace_name("V100M32").product_name == "Tesla V100-SXM2-32GB"
    assert by_product_name("Tesla T4") is get_model("t4")
    with pytest.raises(KeyError):
        by_trace_name("G1")


@pytest.mark.parametrize("model", MIG_MODELS)
def test_profile_names_follow_the_gb_rule(model: str) -> None:
    """go-nvlib: round(ceil(profile MiB / total MiB * 8) / 8 * ceil(total GiB))."""
    m = CATALOG[model]
    assert m.mig is not None
    for p in m.mig.profiles:
        eighths = math.ceil(p.memory_mib / m.memory_mib * 8)
        gb = math.floor(eighths / 8 * m.memory_gib + 0.5)
        assert p.name.split("+")[0] == f"{p.compute_slices}g.{gb}gb", p.name


def example_slices(name: str) -> list[ResourceSlice]:
    return [o for o in load(str(EXAMPLES / name)) if isinstance(o, ResourceSlice)]


def generated(model: str, gpus: int, mig: str, prefix: str) -> list[ResourceSlice]:
    # The composed examples follow the driver's main branch on a bare-metal host,
    # which publishes resource.kubernetes.io/numaNode (spec.nvidia.numaNodeAttribute).
    fleet = parse_fleet({"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "spec": {
        "nvidia": {"numaNodeAttribute": True},
        "pools": [{"name": "x", "count": 1, "namePrefix": prefix,
                   "gpu": {"model": model, "count": gpus, "mig": {"mode": mig}}}]}})
    return list(generate(fleet).slices)


def test_h100_node_matches_the_example() -> None:
    (want,) = example_slices("h100-8gpu-node.resourceslice.yaml")
    (got,) = generated("h100", 8, "off", "h100-node-")
    assert got.spec.pool == want.spec.pool and got.spec.node_name == want.spec.node_name
    assert got.metadata.generate_name == want.metadata.generate_name
    for g, w in zip(got.spec.devices, want.spec.devices, strict=True):
        assert g.name == w.name
        assert g.capacity == w.capacity
        # Same attributes and values (PCI layout included) except the synthetic UUIDs.
        assert {k: v for k, v in g.attributes.items() if k != "uuid"} == \
            {k: v for k, v in w.attributes.items() if k != "uuid"}


def test_a100_dynamic_mig_node_matches_the_example() -> None:
    want = example_slices("a100-dynamic-mig-node.resourceslices.yaml")
    got = generated("a100-40gb-pcie", 2, "dynamic", "a100-mig-node-")
    assert len(got) == len(want) == 3
    assert got[0].spec.shared_counters == want[0].spec.shared_counters
    synthetic = {"parentUUID", "resource.kubernetes.io/pciBusID",
                 "resource.kubernetes.io/pcieRoot"}
    for g_slice, w_slice in zip(got[1:], want[1:], strict=True):
        assert g_slice.spec.pool == w_slice.spec.pool
        for g, w in zip(g_slice.spec.devices, w_slice.spec.devices, strict=True):
            assert (g.name, g.capacity, g.consumes_counters) == \
                (w.name, w.capacity, w.consumes_counters)
            assert {k: v for k, v in g.attributes.items() if k not in synthetic} == \
                {k: v for k, v in w.attributes.items() if k not in synthetic}


def test_l4_vm_node_matches_the_example() -> None:
    (want,) = example_slices("l4-4gpu-node.resourceslice.yaml")
    (got,) = generated("l4", 4, "off", "l4-node-")
    for g, w in zip(got.spec.devices, want.spec.devices, strict=True):
        assert g.name == w.name and g.capacity == w.capacity
        # Same keys (no numaNode in a VM), same PCI layout; the example's driver is R580.95.
        assert set(g.attributes) == set(w.attributes)
        for key in ("resource.kubernetes.io/pciBusID", "resource.kubernetes.io/pcieRoot",
                    "productName", "architecture", "cudaComputeCapability", "addressingMode"):
            assert g.attributes[key] == w.attributes[key]


def test_driver_classes_match_the_example() -> None:
    want = {c.name: c.spec for c in load(str(EXAMPLES / "deviceclasses.yaml"))
            if isinstance(c, DeviceClass)}
    got = {c.name: c.spec for c in generate(parse_fleet({
        "apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
        "spec": {"pools": [{"name": "x", "count": 1, "gpu": {"model": "l4", "count": 1}}]}}
    )).classes}
    assert {k: got[k] for k in want} == want
