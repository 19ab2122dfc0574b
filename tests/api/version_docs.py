"""Hypothesis strategies for the same resource.k8s.io object in v1, v1beta2 and v1beta1.

Each strategy draws the *content* of an object once and lays it out twice,
independently of dralab's converter: in the v1 layout (``exactly``, flat
devices) and in the v1beta1 layout (flat requests, ``basic`` devices). v1beta2
is the v1 layout under another apiVersion. Every field of the four kinds'
specs (and of claim status) can appear, plus fields dralab does not know, at
the places where the two layouts agree on where they live.

The drawn objects are realistic and valid (names, quantities, CEL, gates as
the validators expect, with the alpha gates of ``ALL_GATES`` on), so the same
strategies serve the validation tests.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from dralab.api.features import FeatureGates, Gate

V1 = "resource.k8s.io/v1"
V1BETA2 = "resource.k8s.io/v1beta2"
V1BETA1 = "resource.k8s.io/v1beta1"
DRIVER = "gpu.example.com"

ALL_GATES = FeatureGates.parse(",".join(f"{g.value}=true" for g in (
    Gate.DRA_LIST_TYPE_ATTRIBUTES, Gate.DRA_NODE_ALLOCATABLE_RESOURCES,
    Gate.DRA_DERIVED_ATTRIBUTES, Gate.DRA_DEVICE_COMPATIBILITY_GROUPS,
    Gate.DRA_OPTIONAL_NODE_OPERATIONS, Gate.DRA_PARTITIONABLE_DEVICES_TYPE)))

Doc = dict[str, Any]

label = st.from_regex(r"\A[a-z]([a-z0-9-]{0,8}[a-z0-9])?\Z")
ident = st.from_regex(r"\A[a-z][a-zA-Z0-9]{0,10}\Z")
quantity = st.builds(lambda n, s: f"{n}{s}", st.integers(1, 4096),
                     st.sampled_from(["", "Ki", "Mi", "Gi", "k", "M", "G"]))
# A field no dralab model declares: must travel unchanged with its neighbours.
unknown = st.dictionaries(st.just("x-dralab-test"), st.text(max_size=5), max_size=1)

selectors = st.lists(st.builds(lambda n: {"cel": {"expression": f"device.attributes['{DRIVER}']"
                                                                f".index >= {n}"}},
                               st.integers(0, 7)), min_size=1, max_size=2)
tolerations = st.lists(st.one_of(
    st.builds(lambda k, v: {"key": f"{DRIVER}/{k}", "operator": "Equal", "value": v,
                            "effect": "NoSchedule"}, ident, label),
    st.builds(lambda k, s: {"key": f"{DRIVER}/{k}", "operator": "Exists",
                            "effect": "NoExecute", "tolerationSeconds": s},
              ident, st.integers(0, 600))), min_size=1, max_size=2)


def _exact_fields(subrequest: bool) -> st.SearchStrategy[Doc]:
    """The ExactDeviceRequest fields (v1 `exactly`, flat on a v1beta1 request)."""
    optional: dict[str, st.SearchStrategy[Any]] = {
        "selectors": selectors,
        "tolerations": tolerations,
        "capacity": st.builds(lambda q: {"requests": {"memory": q}}, quantity),
    }
    counted = st.one_of(
        st.fixed_dictionaries({"allocationMode": st.just("ExactCount"),
                               "count": st.integers(1, 4)}),
        st.fixed_dictionaries({"allocationMode": st.just("All")}),
        st.fixed_dictionaries({}, optional={"count": st.integers(1, 4)}))
    if not subrequest:
        optional["adminAccess"] = st.booleans()
    return st.builds(lambda base, mode, extra: {**base, **mode, **extra},
                     st.fixed_dictionaries({"deviceClassName": st.just("gpu.example.com")},
                                           optional=optional),
                     counted, unknown)


@st.composite
def request_pair(draw: st.DrawFn, name: str) -> tuple[Doc, Doc]:
    """One DeviceRequest as (v1, v1beta1)."""
    own: Doc = {"name": name}
    if draw(st.booleans()):
        subs = draw(st.lists(_exact_fields(subrequest=True), min_size=1, max_size=3))
        first = [{"name": f"s{i}", **sub} for i, sub in enumerate(subs)]
        return {**own, "firstAvailable": first}, {**own, "firstAvailable": first}
    exact = draw(_exact_fields(subrequest=False))
    return {**own, "exactly": exact}, {**own, **exact}


@st.composite
def claim_spec_pair(draw: st.DrawFn) -> tuple[Doc, Doc]:
    pairs = [draw(request_pair(f"r{i}")) for i in range(draw(st.integers(1, 3)))]
    names = [p[0]["name"] for p in pairs]
    devices: Doc = {}
    if draw(st.booleans()):
        devices["constraints"] = [{"requests": names, "matchAttribute":
                                   "resource.kubernetes.io/pcieRoot"}]
    if draw(st.booleans()):
        devices["config"] = [{"requests": names[:1], "opaque": {"driver": DRIVER, "parameters": {
            "apiVersion": "gpu.resource.example.com/v1alpha1", "kind": "GpuConfig"}}}]
    return ({"devices": {"requests": [p[0] for p in pairs], **devices}},
            {"devices": {"requests": [p[1] for p in pairs], **devices}})


@st.composite
def claim_status(draw: st.DrawFn, requests: list[Doc]) -> Doc:
    """An allocation of the claim's first request: the same in every version."""
    result: Doc = {"request": requests[0]["name"], "driver": DRIVER, "pool": "node-1",
                   "device": f"gpu-{draw(st.integers(0, 7))}"}
    if draw(st.booleans()):
        result["consumedCapacity"] = {"memory": draw(quantity)}
    if draw(st.booleans()):
        result["shareID"] = "7b7c2a0e-1e4b-4d6b-9e0d-3f8c5b1a2d4e"
    return {
        "allocation": {
            "devices": {"results": [result]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
        },
        "reservedFor": [{"resource": "pods", "name": "pod-0",
                         "uid": "5c6f0e1a-0b1b-4a4e-9d5e-1a2b3c4d5e6f"}],
    }


@st.composite
def claim_pair(draw: st.DrawFn) -> tuple[Doc, Doc]:
    v1_spec, beta_spec = draw(claim_spec_pair())
    base: Doc = {"kind": "ResourceClaim",
                 "metadata": {"name": draw(label), "namespace": draw(label)}}
    extra = draw(unknown)
    status = draw(st.one_of(st.none(), claim_status(v1_spec["devices"]["requests"])))
    tail = {"status": status} if status is not None else {}
    return ({"apiVersion": V1, **base, "spec": v1_spec, **tail, **extra},
            {"apiVersion": V1BETA1, **base, "spec": beta_spec, **tail, **extra})


@st.composite
def template_pair(draw: st.DrawFn) -> tuple[Doc, Doc]:
    v1_spec, beta_spec = draw(claim_spec_pair())
    meta = {"labels": {"app": draw(label)}} if draw(st.booleans()) else {}
    base: Doc = {"kind": "ResourceClaimTemplate",
                 "metadata": {"name": draw(label), "namespace": draw(label)}}
    return ({"apiVersion": V1, **base, "spec": {"metadata": meta, "spec": v1_spec}},
            {"apiVersion": V1BETA1, **base, "spec": {"metadata": meta, "spec": beta_spec}})


attribute = st.one_of(
    st.builds(lambda v: {"int": v}, st.integers(0, 64)),
    st.builds(lambda v: {"bool": v}, st.booleans()),
    st.builds(lambda v: {"string": v}, label),
    st.builds(lambda a, b: {"version": f"{a}.{b}.0"}, st.integers(0, 20), st.integers(0, 20)),
    st.builds(lambda v: {"strings": v}, st.lists(label, min_size=1, max_size=3)),
)
request_policy = st.one_of(
    st.builds(lambda d: {"default": d, "validValues": [d]}, st.sampled_from(["1Gi", "2Gi"])),
    st.just({"default": "1Gi", "validRange": {"min": "1Gi", "max": "8Gi", "step": "1Gi"}}),
)
node_selector = st.builds(lambda n: {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "kubernetes.io/hostname", "operator": "In", "values": [n]}]}]}, label)
taint = st.builds(lambda k, e: {"key": f"{DRIVER}/{k}", "value": "broken", "effect": e,
                                "timeAdded": "2025-07-29T05:11:52Z"},
                  ident, st.sampled_from(["NoSchedule", "NoExecute"]))


@st.composite
def device_fields(draw: st.DrawFn, per_device: bool, counter_set: str | None,
                  partition_type: str | None) -> Doc:
    """Every field of a v1 Device but its name (v1beta1's `basic`)."""
    fields: Doc = draw(st.fixed_dictionaries({}, optional={
        "attributes": st.dictionaries(ident, attribute, min_size=1, max_size=3),
        "capacity": st.dictionaries(st.sampled_from(["memory", "cores"]),
                                    st.builds(lambda q: {"value": q}, quantity), min_size=1),
        "taints": st.lists(taint, min_size=1, max_size=2),
    }))
    if partition_type is not None:
        fields["attributes"] = {**fields.get("attributes", {}), partition_type: {"string": "1g"}}
    if counter_set is not None:
        fields["consumesCounters"] = [{"counterSet": counter_set,
                                       "counters": {"memory": {"value": draw(quantity)}}}]
    if per_device:
        fields.update(draw(st.one_of(
            st.builds(lambda n: {"nodeName": n}, label),
            st.builds(lambda s: {"nodeSelector": s}, node_selector),
            st.just({"allNodes": True}))))
    if draw(st.booleans()):
        fields["bindsToNode"] = True
        fields["bindingConditions"] = ["dra.example.com/is-prepared"]
        fields["bindingFailureConditions"] = ["dra.example.com/preparing-failed"]
    if draw(st.booleans()):
        fields["allowMultipleAllocations"] = True
        if draw(st.booleans()):
            fields["capacity"] = {**fields.get("capacity", {}), "bandwidth": {
                "value": "16Gi", "requestPolicy": draw(request_policy)}}
    if draw(st.booleans()):
        fields["capacity"] = {**fields.get("capacity", {}), "memory": {"value": "8Gi"}}
        fields["nodeAllocatableResources"] = {"memory": {"mapping": {
            "capacityKey": "memory", "capacityMultiplier": "1"}}}
    return {**fields, **draw(unknown)}


@st.composite
def slice_pair(draw: st.DrawFn) -> tuple[Doc, Doc]:
    node = draw(label)
    scope = draw(st.sampled_from(["nodeName", "nodeSelector", "allNodes",
                                  "perDeviceNodeSelection"]))
    spec: Doc = {"driver": DRIVER, "pool": {"name": node, "generation": draw(st.integers(0, 3)),
                                            "resourceSliceCount": 1}}
    spec.update({"nodeName": {"nodeName": node}, "allNodes": {"allNodes": True},
                 "nodeSelector": {"nodeSelector": draw(node_selector)},
                 "perDeviceNodeSelection": {"perDeviceNodeSelection": True}}[scope])
    counter_set = draw(st.one_of(st.none(), st.just("gpu-0-counters")))
    partition_type = f"{DRIVER}/partition" if counter_set and draw(st.booleans()) else None
    if partition_type is not None:
        spec["partitionTypeAttribute"] = partition_type
    names = draw(st.lists(label, min_size=1, max_size=3, unique=True))
    fields = [draw(device_fields(scope == "perDeviceNodeSelection", counter_set, partition_type))
              for _ in names]
    if draw(st.booleans()):
        spec["skipNodeOperations"] = ["NodePrepareResources", "NodeUnprepareResources"]
    meta = {"name": f"{node}-{DRIVER}-x7k2p"}
    v1_devices = [{"name": n, **f} for n, f in zip(names, fields, strict=True)]
    beta_devices = [{"name": n, **({"basic": f} if f else {})}
                    for n, f in zip(names, fields, strict=True)]
    return ({"apiVersion": V1, "kind": "ResourceSlice", "metadata": meta,
             "spec": {**spec, "devices": v1_devices}},
            {"apiVersion": V1BETA1, "kind": "ResourceSlice", "metadata": meta,
             "spec": {**spec, "devices": beta_devices}})


@st.composite
def counters_slice_pair(draw: st.DrawFn) -> tuple[Doc, Doc]:
    """A slice that only shares counters: the same in every version."""
    spec = {"driver": DRIVER, "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 2},
            "sharedCounters": [{"name": "gpu-0-counters",
                                "counters": {"memory": {"value": draw(quantity)}}}]}
    meta = {"name": "node-1-counters"}
    return ({"apiVersion": V1, "kind": "ResourceSlice", "metadata": meta, "spec": spec},
            {"apiVersion": V1BETA1, "kind": "ResourceSlice", "metadata": meta, "spec": spec})


@st.composite
def class_pair(draw: st.DrawFn) -> tuple[Doc, Doc]:
    spec = draw(st.fixed_dictionaries({}, optional={
        "selectors": selectors,
        "config": st.just([{"opaque": {"driver": DRIVER, "parameters": {"a": 1}}}]),
        "extendedResourceName": st.just("example.com/gpu"),
    }))
    doc = {"kind": "DeviceClass", "metadata": {"name": "gpu.example.com"}, "spec": spec}
    return {"apiVersion": V1, **doc}, {"apiVersion": V1BETA1, **doc}


def any_pair() -> st.SearchStrategy[tuple[Doc, Doc]]:
    """(v1, v1beta1) layouts of one object of any of the four kinds."""
    return st.one_of(claim_pair(), template_pair(), slice_pair(), counters_slice_pair(),
                     class_pair())
