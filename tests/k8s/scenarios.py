"""DRA scheduling scenarios for the conformance tier: clusters without score ties.

Each builder takes a prefix (the test's namespace) and returns the objects a user would apply:
cluster-scoped names (nodes, classes, slices, drivers) start with the prefix, so that scenarios
of one session never share devices. Where a scenario has several nodes they differ in
allocatable CPU and memory, so NodeResourcesFit's and BalancedAllocation's scores differ and
the real scheduler's pick is not a coin toss (dralab's seeded tie-break could not match it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .scenario import RUNNING

__all__ = ["SCENARIOS", "Obj", "claim", "class_", "node", "pod", "slice_", "template"]

Obj = dict[str, Any]
RESOURCE = "resource.k8s.io/v1"


def node(name: str, cpu: str = "8", memory: str = "32Gi",
         labels: Mapping[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name,
                         "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}


def class_(name: str, driver: str, cel: str | None = None, **spec: Any) -> Obj:
    expression = f"device.driver == '{driver}'" + (f" && {cel}" if cel else "")
    return {"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}], **spec}}


def slice_(name: str, driver: str, node_name: str | None, devices: Sequence[Obj],
           pool: str | None = None, count: int = 1, **spec: Any) -> Obj:
    where: dict[str, Any] = {"nodeName": node_name} if node_name else {"allNodes": True}
    body: Obj = {"driver": driver, **where,
                 "pool": {"name": pool or name, "generation": 1, "resourceSliceCount": count}}
    if devices:
        body["devices"] = list(devices)
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {**body, **spec}}


def gpu(name: str, **attributes: Any) -> Obj:
    """A device with typed attributes (str, int, bool) and no capacity."""
    attrs: dict[str, Any] = {}
    for key, value in attributes.items():
        kind = "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "string"
        attrs[key] = {kind: value}
    out: Obj = {"name": name}
    if attrs:
        out["attributes"] = attrs
    return out


def exactly(class_name: str, **more: Any) -> Obj:
    return {"deviceClassName": class_name, **more}


def claim_spec(*requests: Obj, constraints: Sequence[Obj] = ()) -> Obj:
    devices: Obj = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = list(constraints)
    return {"devices": devices}


def claim(name: str, spec: Obj) -> Obj:
    return {"apiVersion": RESOURCE, "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": spec}


def template(name: str, spec: Obj) -> Obj:
    return {"apiVersion": RESOURCE, "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": spec}}


def pod(name: str, templates: Mapping[str, str] | None = None,
        claims: Mapping[str, str] | None = None, cpu: str | None = None,
        extended: Mapping[str, str] | None = None) -> Obj:
    """A pause pod; ``templates``/``claims`` map the pod's claim entry names to template or
    claim names; each entry is used by the one container."""
    entries = [{"name": k, "resourceClaimTemplateName": v} for k, v in (templates or {}).items()]
    entries += [{"name": k, "resourceClaimName": v} for k, v in (claims or {}).items()]
    resources: Obj = {}
    if entries:
        resources["claims"] = [{"name": e["name"]} for e in entries]
    if cpu:
        resources["requests"] = {"cpu": cpu}
    if extended:
        resources["limits"] = dict(extended)
    container: Obj = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
    if resources:
        container["resources"] = resources
    spec: Obj = {"containers": [container]}
    if entries:
        spec["resourceClaims"] = entries
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def one_req(class_name: str, name: str = "gpu", **more: Any) -> Obj:
    return {"name": name, "exactly": exactly(class_name, **more)}


# -- scenarios ---------------------------------------------------------------------------------


def more_pods_than_devices(p: str) -> list[Obj]:
    """One node with two GPUs, three pods with a one-GPU template claim: the third waits."""
    drv = f"{p}.example.com"
    return [node(f"{p}-n1"), class_(f"{p}-gpu", drv),
            slice_(f"{p}-n1", drv, f"{p}-n1", [gpu("gpu-0"), gpu("gpu-1")]),
            template("one-gpu", claim_spec(one_req(f"{p}-gpu"))),
            *(pod(f"p{i}", templates={"gpu": "one-gpu"}) for i in range(3))]


def selector_picks_node(p: str) -> list[Obj]:
    """Two nodes of different sizes; only the smaller one has the model the claim selects, so
    scoring (which prefers the larger) must give way to the DRA filter."""
    drv = f"{p}.example.com"
    return [node(f"{p}-a", cpu="8", memory="32Gi"), node(f"{p}-b", cpu="32", memory="128Gi"),
            class_(f"{p}-gpu", drv),
            slice_(f"{p}-a", drv, f"{p}-a", [gpu("gpu-0", model="H100", memory=80),
                                            gpu("gpu-1", model="A100", memory=40)]),
            slice_(f"{p}-b", drv, f"{p}-b", [gpu("gpu-0", model="A100", memory=40),
                                            gpu("gpu-1", model="A100", memory=80)]),
            template("h100", claim_spec(one_req(f"{p}-gpu", selectors=[{"cel": {
                "expression": f"device.attributes['{drv}'].model == 'H100'"}}]))),
            template("big", claim_spec(one_req(f"{p}-gpu", selectors=[{"cel": {
                "expression": f"device.attributes['{drv}'].memory >= 80"}}]))),
            pod("wants-h100", templates={"gpu": "h100"}),
            pod("wants-big", templates={"gpu": "big"}),
            pod("wants-big-2", templates={"gpu": "big"}),
            pod("no-claim", cpu="1")]


def match_attribute(p: str) -> list[Obj]:
    """Two GPUs on the same PCIe root: a matchAttribute constraint across two requests."""
    drv = f"{p}.example.com"
    root = f"{drv}/pcieRoot"
    return [node(f"{p}-n1"), class_(f"{p}-gpu", drv),
            slice_(f"{p}-n1", drv, f"{p}-n1", [
                gpu("gpu-0", pcieRoot="r0"), gpu("gpu-1", pcieRoot="r1"),
                gpu("gpu-2", pcieRoot="r1"), gpu("gpu-3", pcieRoot="r2")]),
            template("pair", claim_spec(one_req(f"{p}-gpu", "a"), one_req(f"{p}-gpu", "b"),
                                        constraints=[{"matchAttribute": root}])),
            pod("pair-1", templates={"gpus": "pair"}),
            pod("pair-2", templates={"gpus": "pair"})]


def first_available(p: str) -> list[Obj]:
    """firstAvailable: two GPUs if there are, else one; the second pod gets the fallback, the
    third nothing."""
    drv = f"{p}.example.com"
    req = {"name": "gpu", "firstAvailable": [
        {"name": "two", "deviceClassName": f"{p}-gpu", "count": 2},
        {"name": "one", "deviceClassName": f"{p}-gpu"}]}
    return [node(f"{p}-n1"), class_(f"{p}-gpu", drv),
            slice_(f"{p}-n1", drv, f"{p}-n1", [gpu(f"gpu-{i}") for i in range(3)]),
            template("flex", claim_spec(req)),
            *(pod(f"flex-{i}", templates={"gpu": "flex"}) for i in range(3))]


def shared_claim(p: str) -> list[Obj]:
    """One claim (allocationMode All) shared by two pods: reservedFor names both."""
    drv = f"{p}.example.com"
    return [node(f"{p}-n1", cpu="4"), node(f"{p}-n2", cpu="16"), class_(f"{p}-nic", drv),
            slice_(f"{p}-n1", drv, f"{p}-n1", [gpu("nic-0"), gpu("nic-1")]),
            claim("all-nics", claim_spec(one_req(f"{p}-nic", "nics", allocationMode="All"))),
            pod("user-1", claims={"nics": "all-nics"}),
            pod("user-2", claims={"nics": "all-nics"}),
            pod("free", cpu="500m")]


def counters(p: str) -> list[Obj]:
    """Partitionable devices: a whole GPU and two halves drawing on one memory counter set."""
    drv = f"{p}.example.com"
    mem = {"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}
    whole = {"counterSet": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}
    devices = [{"name": "whole", "attributes": {"size": {"string": "whole"}},
                "consumesCounters": [whole]},
               {"name": "half-0", "attributes": {"size": {"string": "half"}},
                "consumesCounters": [mem]},
               {"name": "half-1", "attributes": {"size": {"string": "half"}},
                "consumesCounters": [mem]}]
    size = f"device.attributes['{drv}'].size"
    return [node(f"{p}-n1"), class_(f"{p}-gpu", drv),
            # v1 keeps counter sets and devices in separate slices of one pool.
            slice_(f"{p}-n1-counters", drv, f"{p}-n1", [], pool=f"{p}-n1", count=2,
                   sharedCounters=[{"name": "gpu-0",
                                    "counters": {"memory": {"value": "80Gi"}}}]),
            slice_(f"{p}-n1", drv, f"{p}-n1", devices, count=2),
            template("half", claim_spec(one_req(f"{p}-gpu", selectors=[{"cel": {
                "expression": f"{size} == 'half'"}}]))),
            template("whole", claim_spec(one_req(f"{p}-gpu", selectors=[{"cel": {
                "expression": f"{size} == 'whole'"}}]))),
            pod("half-a", templates={"gpu": "half"}),
            pod("whole", templates={"gpu": "whole"}),
            pod("half-b", templates={"gpu": "half"})]


def device_taints(p: str) -> list[Obj]:
    """A tainted device is skipped unless the request tolerates its taint."""
    drv = f"{p}.example.com"
    tainted = {"name": "gpu-0", "taints": [{"key": "example.com/degraded", "value": "ecc",
                                            "effect": "NoSchedule"}]}
    tolerate = {"key": "example.com/degraded", "operator": "Exists", "effect": "NoSchedule"}
    return [node(f"{p}-n1"), class_(f"{p}-gpu", drv),
            slice_(f"{p}-n1", drv, f"{p}-n1", [tainted, gpu("gpu-1")]),
            template("plain", claim_spec(one_req(f"{p}-gpu"))),
            template("tolerant", claim_spec(one_req(f"{p}-gpu", tolerations=[tolerate]))),
            pod("plain-1", templates={"gpu": "plain"}),
            pod("plain-2", templates={"gpu": "plain"}),
            pod("tolerant", templates={"gpu": "tolerant"})]


def consumable_capacity(p: str) -> list[Obj]:
    """A device shared by several claims (allowMultipleAllocations), each taking memory."""
    drv = f"{p}.example.com"
    shared = {"name": "gpu-0", "allowMultipleAllocations": True,
              "capacity": {"memory": {"value": "40Gi"}}}
    req = one_req(f"{p}-gpu", capacity={"requests": {"memory": "16Gi"}})
    return [node(f"{p}-n1"), class_(f"{p}-gpu", drv),
            slice_(f"{p}-n1", drv, f"{p}-n1", [shared]),
            template("slice16", claim_spec(req)),
            *(pod(f"share-{i}", templates={"gpu": "slice16"}) for i in range(3))]


def mixed_reasons(p: str) -> list[Obj]:
    """Two nodes: one without devices, one without room for the CPU request. The pending pod's
    message counts both reasons."""
    drv = f"{p}.example.com"
    return [node(f"{p}-small", cpu="2"), node(f"{p}-big", cpu="16"), class_(f"{p}-gpu", drv),
            slice_(f"{p}-small", drv, f"{p}-small", [gpu("gpu-0")]),
            template("one-gpu", claim_spec(one_req(f"{p}-gpu"))),
            pod("heavy", templates={"gpu": "one-gpu"}, cpu="4"),
            pod("light", templates={"gpu": "one-gpu"}, cpu="1"),
            pod("late", templates={"gpu": "one-gpu"}, cpu="1")]


def missing_class(p: str) -> list[Obj]:
    """A claim naming a DeviceClass that does not exist."""
    drv = f"{p}.example.com"
    return [node(f"{p}-n1"), class_(f"{p}-gpu", drv),
            slice_(f"{p}-n1", drv, f"{p}-n1", [gpu("gpu-0")]),
            template("ghost", claim_spec(one_req(f"{p}-nowhere"))),
            pod("ghost", templates={"gpu": "ghost"})]


def network_attached(p: str) -> list[Obj]:
    """Devices in an allNodes pool: the claim's node selector is empty and the pod goes to the
    node the scores prefer."""
    drv = f"{p}.example.com"
    return [node(f"{p}-a", cpu="8"), node(f"{p}-b", cpu="24", memory="96Gi"),
            class_(f"{p}-fabric", drv),
            slice_(f"{p}-fabric", drv, None, [gpu("link-0"), gpu("link-1")]),
            template("link", claim_spec(one_req(f"{p}-fabric", "link"))),
            pod("l1", templates={"link": "link"}), pod("l2", templates={"link": "link"}),
            pod("l3", templates={"link": "link"})]


def extended_resource(p: str) -> list[Obj]:
    """A DeviceClass that stands for an extended resource: a pod asking for
    ``<prefix>.example.com/gpu: 1`` gets a special claim from the scheduler."""
    drv = f"{p}.example.com"
    return [node(f"{p}-n1"), class_(f"{p}-gpu", drv, extendedResourceName=f"{drv}/gpu"),
            slice_(f"{p}-n1", drv, f"{p}-n1", [gpu("gpu-0"), gpu("gpu-1")]),
            pod("ext-1", extended={f"{drv}/gpu": "1"}),
            pod("ext-2", extended={f"{drv}/gpu": "2"})]


def taint_rule(p: str) -> list[Obj]:
    """A DeviceTaintRule (resource.k8s.io/v1beta2) taints one device NoSchedule: with
    DRADeviceTaintRules on the second pod waits, with it off both run."""
    drv = f"{p}.example.com"
    rule = {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule",
            "metadata": {"name": f"{p}-degraded"},
            "spec": {"deviceSelector": {"driver": drv, "pool": f"{p}-n1", "device": "gpu-0"},
                     "taint": {"key": "example.com/degraded", "value": "ecc",
                               "effect": "NoSchedule"}}}
    return [node(f"{p}-n1"), class_(f"{p}-gpu", drv),
            slice_(f"{p}-n1", drv, f"{p}-n1", [gpu("gpu-0"), gpu("gpu-1")]), rule,
            template("one-gpu", claim_spec(one_req(f"{p}-gpu"))),
            pod("r1", templates={"gpu": "one-gpu"}), pod("r2", templates={"gpu": "one-gpu"})]


def priority_class(name: str, value: int) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value}


def running(obj: Obj) -> Obj:
    """A pod already running when the scenario's other pods arrive (``scenario.RUNNING``)."""
    obj[RUNNING] = True
    return obj


def with_priority(obj: Obj, class_name: str) -> Obj:
    obj["spec"]["priorityClassName"] = class_name
    return obj


def device_held_by_lower_priority(p: str) -> list[Obj]:
    """A high-priority pod wants the GPU a low-priority pod holds: with DRAPreemption off (1.36
    and 1.37 defaults) DynamicResources' rejection is UnschedulableAndUnresolvable and no
    preemption is tried."""
    drv = f"{p}.example.com"
    return [node(f"{p}-n1"), class_(f"{p}-gpu", drv), priority_class(f"{p}-high", 1000),
            slice_(f"{p}-n1", drv, f"{p}-n1", [gpu("gpu-0")]),
            template("one-gpu", claim_spec(one_req(f"{p}-gpu"))),
            running(pod("low", templates={"gpu": "one-gpu"})),
            with_priority(pod("high", templates={"gpu": "one-gpu"}), f"{p}-high")]


def cpu_preemption(p: str) -> list[Obj]:
    """A high-priority pod preempts a low-priority one for CPU: the victim is deleted
    gracefully (no kubelet here finishes it, so it stays terminating with its GPU) and the
    preemptor is nominated to the node and waits."""
    drv = f"{p}.example.com"
    return [node(f"{p}-n1", cpu="2"), class_(f"{p}-gpu", drv),
            priority_class(f"{p}-high", 1000),
            slice_(f"{p}-n1", drv, f"{p}-n1", [gpu("gpu-0"), gpu("gpu-1")]),
            template("one-gpu", claim_spec(one_req(f"{p}-gpu"))),
            running(pod("low", templates={"gpu": "one-gpu"}, cpu="2")),
            with_priority(pod("high", templates={"gpu": "one-gpu"}, cpu="2"), f"{p}-high")]


SCENARIOS: dict[str, Callable[[str], list[Obj]]] = {
    f.__name__: f for f in (
        more_pods_than_devices, selector_picks_node, match_attribute, first_available,
        shared_claim, counters, device_taints, consumable_capacity, mixed_reasons,
        missing_class, network_attached, extended_resource, device_held_by_lower_priority,
        cpu_preemption, taint_rule)
}
