"""Trace records as real API objects: Nodes, ResourceSlices, Pods and ResourceClaims.

The mapping (why this one):

* **CPU and memory stay ordinary node resources.** The trace checks them with
  plain Kubernetes resource fit, so Nodes carry them as ``allocatable`` and pods
  as container requests; DRA is only for the GPUs.
* **One pool and one ResourceSlice per node, one device per GPU** (``gpu-0`` ...),
  with attributes ``model`` (the trace's model code) and ``index``. All GPUs of a
  node share one model, so a device-level model selector equals the trace's
  node-level model filter.
* **GPU sharing is consumable capacity** (KEP-5075, DRAConsumableCapacity). Every
  device is ``allowMultipleAllocations`` with a capacity ``gpuMilli`` of 1000.
  Each trace pod is an independent tenant owning its own fraction, so it gets its
  own claim (a shared claim would give several pods *the same* allocation). The
  allocator then needs free ``gpuMilli`` >= the request on one device, which is
  the trace's rule for sharing pods, and records the share in ``consumedCapacity``.
  The request policy (default 1000, any amount 1..1000) makes a request without
  an amount take the whole GPU and rejects amounts the trace cannot express.
* **k whole GPUs is ExactCount k, each asking for the full 1000.** Only completely
  free GPUs qualify, as in the trace. The same device can never fill two slots
  of the request (two times 1000 exceeds its capacity), so no ``distinctAttribute``
  constraint is needed.
* **gpu_spec is a CEL selector on ``model``** (``... .model in ["A", "B"]``); an
  empty spec has no selector. CPU-only pods get no claim at all.

Everything here is pure: records in, frozen objects out.
"""

from __future__ import annotations

from dralab.api.base import ObjectMeta
from dralab.api.celtext import cel_string
from dralab.api.core import (
    Container,
    ContainerResourceClaim,
    Node,
    NodeStatus,
    Pod,
    PodResourceClaim,
    PodSpec,
    ResourceRequirements,
)
from dralab.api.quantity import Quantity
from dralab.api.resource import (
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CapacityRequirements,
    CELDeviceSelector,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceClassSpec,
    DeviceRequest,
    DeviceSelector,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)

from .alibaba import TraceNode, TracePod

__all__ = [
    "CAPACITY",
    "DEVICE_CLASS",
    "DRIVER",
    "IMAGE",
    "MODEL_LABEL",
    "NAMESPACE",
    "POD_SLOTS",
    "device_class",
    "model_selector",
    "node_object",
    "pod_objects",
    "resource_slice",
]

DRIVER = "gpu.alibaba.example"
DEVICE_CLASS = "gpu.alibaba.example"
# Capacity names must be C identifiers, so the trace's "gpu_milli" is spelled gpuMilli.
CAPACITY = "gpuMilli"
MODEL_LABEL = "gpu.alibaba.example/model"
NAMESPACE = "openb"
# The trace has no per-node pod limit. The smallest pod asks for one core and the
# largest node has 128, so 256 pod slots never bind, unlike Kubernetes' usual 110.
POD_SLOTS = 256
# The trace names no images; the API server requires one.
IMAGE = "registry.example/openb/task:latest"
GPU_MILLI = 1000

_GPU_POLICY = CapacityRequestPolicy(
    default=Quantity.from_int(GPU_MILLI),
    valid_range=CapacityRequestPolicyRange(min=Quantity.from_int(1),
                                           max=Quantity.from_int(GPU_MILLI)),
)


def device_class() -> DeviceClass:
    """The one DeviceClass every trace claim uses: all devices of the trace driver."""
    return DeviceClass(
        api_version=DeviceClass.API_VERSION, kind=DeviceClass.KIND,
        metadata=ObjectMeta(name=DEVICE_CLASS),
        spec=DeviceClassSpec(selectors=[DeviceSelector(cel=CELDeviceSelector(
            expression=f"device.driver == {cel_string(DRIVER)}"))]),
    )


def node_object(rec: TraceNode) -> Node:
    """The Node: CPU and memory as capacity and allocatable, the GPU model as a label."""
    labels = {"kubernetes.io/hostname": rec.name}
    if rec.model:
        labels[MODEL_LABEL] = rec.model
    resources = {
        "cpu": Quantity.from_milli(rec.cpu_milli),
        "memory": Quantity.parse(f"{rec.memory_mib}Mi"),
        "pods": Quantity.from_int(POD_SLOTS),
    }
    return Node(
        api_version=Node.API_VERSION, kind=Node.KIND,
        metadata=ObjectMeta(name=rec.name, labels=labels),
        status=NodeStatus(capacity=dict(resources), allocatable=dict(resources)),
    )


def _gpu_device(index: int, model: str) -> Device:
    return Device(
        name=f"gpu-{index}",
        attributes={"model": DeviceAttribute(string=model), "index": DeviceAttribute(int_=index)},
        capacity={CAPACITY: DeviceCapacity(value=Quantity.from_int(GPU_MILLI),
                                           request_policy=_GPU_POLICY)},
        allow_multiple_allocations=True,
    )


def resource_slice(rec: TraceNode) -> ResourceSlice | None:
    """The node's one slice (pool named after the node), or None for a node without GPUs."""
    if rec.gpus == 0:
        return None
    return ResourceSlice(
        api_version=ResourceSlice.API_VERSION, kind=ResourceSlice.KIND,
        metadata=ObjectMeta(name=f"{rec.name}-gpus"),
        spec=ResourceSliceSpec(
            driver=DRIVER,
            pool=ResourcePool(name=rec.name, generation=1, resource_slice_count=1),
            node_name=rec.name,
            devices=[_gpu_device(i, rec.model) for i in range(rec.gpus)],
        ),
    )


def model_selector(models: frozenset[str]) -> str:
    """The CEL expression admitting exactly ``models`` (sorted, so equal sets give equal text)."""
    names = ", ".join(cel_string(m) for m in sorted(models))
    return f"device.attributes[{cel_string(DRIVER)}].model in [{names}]"


def _claim(rec: TracePod, name: str) -> ResourceClaim:
    selectors = ([DeviceSelector(cel=CELDeviceSelector(expression=model_selector(rec.gpu_spec)))]
                 if rec.gpu_spec else [])
    request = ExactDeviceRequest(
        device_class_name=DEVICE_CLASS,
        selectors=selectors,
        allocation_mode="ExactCount",
        count=rec.num_gpu,
        capacity=CapacityRequirements(requests={CAPACITY: Quantity.from_int(rec.gpu_milli)}),
    )
    return ResourceClaim(
        api_version=ResourceClaim.API_VERSION, kind=ResourceClaim.KIND,
        metadata=ObjectMeta(name=name, namespace=NAMESPACE),
        spec=ResourceClaimSpec(devices=DeviceClaim(
            requests=[DeviceRequest(name="gpu", exactly=request)])),
    )


def pod_objects(rec: TracePod) -> tuple[Pod, ResourceClaim | None]:
    """The pod and its own ResourceClaim (None for CPU-only pods).

    The pod names the claim directly (``resourceClaimName``) rather than through
    a template, so a replay can see and allocate the claim before binding.
    """
    claim = _claim(rec, f"{rec.name}-gpu") if rec.num_gpu else None
    requests = {"cpu": Quantity.from_milli(rec.cpu_milli),
                "memory": Quantity.parse(f"{rec.memory_mib}Mi")}
    container = Container(
        name="main",
        image=IMAGE,
        resources=ResourceRequirements(
            requests=requests,
            claims=[ContainerResourceClaim(name="gpu")] if claim else []),
    )
    spec = PodSpec(
        containers=[container],
        resource_claims=([PodResourceClaim(name="gpu", resource_claim_name=claim.name)]
                         if claim else []),
    )
    pod = Pod(api_version=Pod.API_VERSION, kind=Pod.KIND,
              metadata=ObjectMeta(name=rec.name, namespace=NAMESPACE), spec=spec)
    return pod, claim
