"""A heterogeneous GPU fleet and pod stream for the allocator benchmark (issue 34).

No two nodes alike: every node draws its device count (4/8, or 8/16 for the
dense fleet), product, memory, driver version and PCIe layout from a seeded
generator, and every device has its own ``uuid``, so no node is another's twin.
Some pools publish two slices. A share of the devices is allocated before the
first pod. Pods cycle through claim shapes that mix the common CEL selector
forms (``==``, ``in``, ``startsWith``/``endsWith``/``contains``, ``matches``,
quantity and semver comparisons, ``||``/``&&``/``!``, attribute presence),
matchAttribute, firstAvailable and a two-claim pod. Churn: before every fifth
pod, five nodes publish a new pool generation (a driver upgrade); some keep
the old generation's slices next to the new ones for a while (a rollout in
progress: the allocator must use only the newest generation).

The whole input is one JSON document (Kubernetes JSON for classes, slices and
claims), written by ``bench_allocator.py --write-hetero`` and read back by both
sides, so the Go harness (``draharness -input FILE``) runs exactly the same
objects:

    {"format": "dralab-allocator-bench-v1", "fleet": ..., "seed": ...,
     "classes": [DeviceClass], "nodes": [{"name", "labels"}],
     "slices": [ResourceSlice], "allocated": [{"driver", "pool", "device"}],
     "pods": [{"shape", "claims": [ResourceClaim],
               "removeSlices": [slice name], "addSlices": [ResourceSlice]}]}

A pod's slice changes apply before that pod is scheduled.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dralab.api.base import ObjectMeta
from dralab.api.codec import decode, encode
from dralab.api.quantity import parse_quantity
from dralab.api.resource import (
    CELDeviceSelector,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceClassSpec,
    DeviceConstraint,
    DeviceRequest,
    DeviceSelector,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)

FORMAT = "dralab-allocator-bench-v1"
DRIVER = "gpu.example.com"
GPU_CLASS = "gpu.example.com"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
SEED = 34
CHURN_EVERY = 5  # pods between two generation changes
CHURN_NODES = 5  # nodes that get a new generation each time
ALLOCATED = 0.35  # share of devices allocated before the first pod

# product -> (architecture, compute capability, memory spellings, MIG capable)
PRODUCTS: dict[str, tuple[str, str, tuple[str, ...], bool]] = {
    "NVIDIA A100-SXM4-40GB": ("Ampere", "8.0.0", ("40Gi", "40536Mi"), True),
    "NVIDIA A100-SXM4-80GB": ("Ampere", "8.0.0", ("80Gi", "81920Mi"), True),
    "NVIDIA H100 80GB HBM3": ("Hopper", "9.0.0", ("80Gi", "81559Mi"), True),
    "NVIDIA H200": ("Hopper", "9.0.0", ("141Gi", "143771Mi"), True),
    "NVIDIA L40S": ("Ada", "8.9.0", ("48Gi", "46068Mi"), False),
    "NVIDIA L4": ("Ada", "8.9.0", ("24Gi", "23034Mi"), False),
    "NVIDIA A10G": ("Ampere", "8.6.0", ("24Gi", "23028Mi"), False),
}
DRIVER_VERSIONS = ("535.161.8", "550.54.15", "550.90.7", "560.35.3", "570.86.10")
COUNTS = {"mixed": (4, 8), "dense": (8, 16)}


def _a(name: str) -> str:
    return f'device.attributes["{DRIVER}"].{name}'


_MEMORY = f'device.capacity["{DRIVER}"].memory'

# name -> selectors of its one request (the shapes with more structure are below)
SELECTOR_SHAPES: dict[str, tuple[str, ...]] = {
    "1-gpu": (),
    "1-gpu in": (f'{_a("productName")} in ["NVIDIA H100 80GB HBM3", "NVIDIA H200", '
                 f'"NVIDIA A100-SXM4-80GB"]',),
    "1-gpu strings": (f'({_a("productName")}.startsWith("NVIDIA A") && '
                      f'!{_a("productName")}.endsWith("40GB")) || '
                      f'{_a("productName")}.contains("L40")',),
    "1-gpu matches": (f'{_a("productName")}.matches("^NVIDIA (H1|A100-SXM4-80)")',),
    "1-gpu quantity semver": (
        f'{_MEMORY}.compareTo(quantity("40Gi")) >= 0 && '
        f'{_a("driverVersion")}.isGreaterThan(semver("550.0.0"))',
        f'{_a("cudaComputeCapability")} != semver("8.6.0")'),
    "1-gpu equality presence": (
        f'{_a("architecture")} == "Hopper" || '
        f'(has({_a("migCapable")}) && {_a("migCapable")} && {_a("index")} < 4)',),
}
SHAPES = (*SELECTOR_SHAPES, "4-gpu matchAttribute", "2-gpu selector matchAttribute",
          "firstAvailable", "two claims")


def _cel(expr: str) -> DeviceSelector:
    return DeviceSelector(cel=CELDeviceSelector(expression=expr))


def _request(name: str, count: int, *selectors: str) -> DeviceRequest:
    return DeviceRequest(name=name, exactly=ExactDeviceRequest(
        device_class_name=GPU_CLASS, allocation_mode="ExactCount", count=count,
        selectors=[_cel(s) for s in selectors]))


def _claim(name: str, requests: list[DeviceRequest],
           constraints: list[DeviceConstraint] | None = None) -> ResourceClaim:
    return ResourceClaim(metadata=ObjectMeta(name=name, namespace="bench", uid=name),
                         spec=ResourceClaimSpec(devices=DeviceClaim(
                             requests=requests, constraints=constraints or [])))


def pod_claims(shape: str, name: str) -> list[ResourceClaim]:
    """The claims of one pod of ``shape``."""
    if shape in SELECTOR_SHAPES:
        return [_claim(name, [_request("gpu", 1, *SELECTOR_SHAPES[shape])])]
    if shape == "4-gpu matchAttribute":
        return [_claim(name, [_request("gpus", 4)],
                       [DeviceConstraint(match_attribute=PCIE_ROOT)])]
    if shape == "2-gpu selector matchAttribute":
        return [_claim(name, [_request("gpus", 2, f'{_MEMORY}.isGreaterThan(quantity("40Gi"))')],
                       [DeviceConstraint(match_attribute=f"{DRIVER}/productName")])]
    if shape == "firstAvailable":
        return [_claim(name, [DeviceRequest(name="gpu", first_available=[
            DeviceSubRequest(name="h200x2", device_class_name=GPU_CLASS,
                             allocation_mode="ExactCount", count=2,
                             selectors=[_cel(f'{_a("productName")} == "NVIDIA H200"')]),
            DeviceSubRequest(name="big", device_class_name=GPU_CLASS,
                             allocation_mode="ExactCount", count=1,
                             selectors=[_cel(f'{_MEMORY}.isGreaterThan(quantity("64Gi"))')]),
            DeviceSubRequest(name="any", device_class_name=GPU_CLASS,
                             allocation_mode="ExactCount", count=1)])])]
    if shape == "two claims":
        return [_claim(f"{name}-a", [_request("gpu", 1, f'{_a("architecture")} in '
                                                         f'["Ampere", "Hopper"]')]),
                _claim(f"{name}-b", [_request("gpu", 1, f'{_a("driverVersion")}.major() >= 550')])]
    raise ValueError(shape)


# ---- the fleet -----------------------------------------------------------------------


@dataclass
class _Node:
    """What a node publishes: drawn once, the driver version moves on with churn."""

    name: str
    count: int
    product: str
    memory: str
    version: int  # index into DRIVER_VERSIONS
    roots: int
    uuids: list[str]
    split: bool  # two slices per pool
    generation: int = 1
    live: list[str] = field(default_factory=list)  # slice names in the cluster


def _device(node: _Node, i: int) -> Device:
    arch, compute, _, mig = PRODUCTS[node.product]
    attributes = {
        "productName": DeviceAttribute(string=node.product),
        "architecture": DeviceAttribute(string=arch),
        "cudaComputeCapability": DeviceAttribute(version=compute),
        "driverVersion": DeviceAttribute(version=DRIVER_VERSIONS[node.version]),
        "index": DeviceAttribute(int_=i),
        "uuid": DeviceAttribute(string=node.uuids[i]),
        PCIE_ROOT: DeviceAttribute(string=f"pci0000:{i * node.roots // node.count:02x}"),
    }
    if mig:
        attributes["migCapable"] = DeviceAttribute(bool_=True)
    return Device(name=f"gpu-{i}", attributes=attributes,
                  capacity={"memory": DeviceCapacity(value=parse_quantity(node.memory))})


def _slices(node: _Node) -> list[ResourceSlice]:
    devices = [_device(node, i) for i in range(node.count)]
    parts = [devices[: node.count // 2], devices[node.count // 2:]] if node.split else [devices]
    pool = ResourcePool(name=node.name, generation=node.generation,
                        resource_slice_count=len(parts))
    return [ResourceSlice(
        metadata=ObjectMeta(name=f"{node.name}-g{node.generation}-{k}"),
        spec=ResourceSliceSpec(driver=DRIVER, node_name=node.name, pool=pool, devices=part))
        for k, part in enumerate(parts)]


def _draw_node(rng: random.Random, name: str, counts: tuple[int, int]) -> _Node:
    count = rng.choice(counts)
    product = rng.choice(sorted(PRODUCTS))
    return _Node(name=name, count=count, product=product,
                 memory=rng.choice(PRODUCTS[product][2]),
                 version=rng.randrange(len(DRIVER_VERSIONS) - 1),
                 roots=rng.choice((1, 2)) * max(1, count // 8),
                 uuids=[f"GPU-{rng.getrandbits(64):016x}" for _ in range(count)],
                 split=rng.random() < 0.2)


def _json(obj: Any) -> dict[str, Any]:
    return encode(obj)


def generate(fleet: str, nodes: int, pods: int, seed: int = SEED) -> dict[str, Any]:
    """The benchmark input as one JSON-ready document (see the module docstring)."""
    rng = random.Random(f"{seed}/{fleet}/{nodes}/{pods}")
    drawn = [_draw_node(rng, f"node-{i:04d}", COUNTS[fleet]) for i in range(nodes)]
    slices: list[ResourceSlice] = []
    allocated = []
    for node in drawn:
        made = _slices(node)
        node.live = [s.name for s in made]
        slices += made
        allocated += [{"driver": DRIVER, "pool": node.name, "device": f"gpu-{i}"}
                      for i in range(node.count) if rng.random() < ALLOCATED]
    stream: list[dict[str, Any]] = []
    for i in range(pods):
        remove: list[str] = []
        add: list[ResourceSlice] = []
        if i and i % CHURN_EVERY == 0:
            for node in rng.sample(drawn, CHURN_NODES):
                keep_old = rng.random() < 0.4
                if not keep_old or len(node.live) > 2:
                    remove += node.live  # a finished rollout: the old generation goes
                    node.live = []
                node.generation += 1
                node.version = min(node.version + 1, len(DRIVER_VERSIONS) - 1)
                made = _slices(node)
                node.live += [s.name for s in made]
                add += made
        shape = SHAPES[i % len(SHAPES)]
        stream.append({"shape": shape,
                       "claims": [_json(c) for c in pod_claims(shape, f"pod-{i}")],
                       "removeSlices": remove, "addSlices": [_json(s) for s in add]})
    return {
        "format": FORMAT, "fleet": fleet, "seed": seed,
        "classes": [_json(DeviceClass(metadata=ObjectMeta(name=GPU_CLASS), spec=DeviceClassSpec(
            selectors=[_cel(f'device.driver == "{DRIVER}"')])))],
        "nodes": [{"name": n.name, "labels": {}} for n in drawn],
        "slices": [_json(s) for s in slices],
        "allocated": allocated,
        "pods": stream,
    }


# ---- reading it back -------------------------------------------------------------------


@dataclass(frozen=True)
class Pod:
    shape: str
    claims: list[ResourceClaim]
    remove: list[str]
    add: list[ResourceSlice]


@dataclass(frozen=True)
class Input:
    fleet: str
    classes: list[DeviceClass]
    nodes: list[tuple[str, dict[str, str]]]
    slices: list[ResourceSlice]
    allocated: list[tuple[str, str, str]]
    pods: list[Pod]


def _typed(kind: type, data: Any) -> Any:
    obj = decode(data)
    if not isinstance(obj, kind):
        raise ValueError(f"expected {kind.__name__}, got {type(obj).__name__}")
    return obj


def read(doc: dict[str, Any]) -> Input:
    """The document's objects (one-line ValueError on a malformed one)."""
    if doc.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} document")
    slice_of: Callable[[Any], ResourceSlice] = lambda d: _typed(ResourceSlice, d)  # noqa: E731
    return Input(
        fleet=str(doc["fleet"]),
        classes=[_typed(DeviceClass, c) for c in doc["classes"]],
        nodes=[(n["name"], dict(n.get("labels") or {})) for n in doc["nodes"]],
        slices=[slice_of(s) for s in doc["slices"]],
        allocated=[(a["driver"], a["pool"], a["device"]) for a in doc["allocated"]],
        pods=[Pod(p["shape"], [_typed(ResourceClaim, c) for c in p["claims"]],
                  list(p["removeSlices"]), [slice_of(s) for s in p["addSlices"]])
              for p in doc["pods"]])
