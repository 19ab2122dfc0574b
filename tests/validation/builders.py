"""Builders of small, valid documents (plain dicts, as loaded from YAML) and path edits.

Every builder returns a fresh object, so a test may change it freely. Shapes
follow the composed NVIDIA examples in tests/data/examples and the DRA API
notes; names are short so that expected paths stay readable.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

DRIVER = "gpu.nvidia.com"
UID = "5c6f0e1a-0b1b-4a4e-9d5e-1a2b3c4d5e6f"
UID2 = "6d7a1f2b-1c2c-4b5f-8e6f-2b3c4d5e6f70"

Doc = dict[str, Any]


def gpu(name: str, minor: int = 0) -> Doc:
    return {
        "name": name,
        "attributes": {
            "productName": {"string": "NVIDIA H100 80GB HBM3"},
            "driverVersion": {"version": "580.105.8"},
            "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{minor:02x}"},
            "index": {"int": minor},
            "type": {"string": "gpu"},
        },
        "capacity": {"memory": {"value": "81559Mi"}},
    }


def resource_slice(devices: int = 2) -> Doc:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-1-gpu.nvidia.com-x7k2p"},
        "spec": {
            "driver": DRIVER,
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "devices": [gpu(f"gpu-{i}", i) for i in range(devices)],
        },
    }


def counters_slice() -> Doc:
    """The counters-only slice of the dynamic-MIG layout."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-1-gpu.nvidia.com-c0unt"},
        "spec": {
            "driver": DRIVER,
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 2},
            "sharedCounters": [{
                "name": "gpu-0-counter-set",
                "counters": {"memory": {"value": "40192Mi"},
                             "multiprocessors": {"value": "98"}},
            }],
        },
    }


def mig(name: str, counter_set: str = "gpu-0-counter-set") -> Doc:
    return {
        "name": name,
        "attributes": {"profile": {"string": "1g.10gb"}, "type": {"string": "mig"}},
        "capacity": {"memory": {"value": "9856Mi"}},
        "consumesCounters": [{
            "counterSet": counter_set,
            "counters": {"memory": {"value": "9856Mi"}, "multiprocessors": {"value": "14"}},
        }],
    }


def shared_gpu() -> Doc:
    """A device that can be shared, with a consumable memory capacity."""
    device = gpu("gpu-0")
    device["allowMultipleAllocations"] = True
    device["capacity"] = {"memory": {"value": "100Gi", "requestPolicy": {
        "default": "10Gi",
        "validRange": {"min": "10Gi", "step": "10Gi"},
    }}}
    return device


def claim() -> Doc:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "training", "namespace": "team-a"},
        "spec": {"devices": {
            "requests": [
                {"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.nvidia.com",
                    "selectors": [{"cel": {"expression":
                                           'device.attributes["gpu.nvidia.com"].type == "gpu"'}}],
                    "count": 2,
                }},
                {"name": "mig", "firstAvailable": [
                    {"name": "big", "deviceClassName": "mig.nvidia.com"},
                    {"name": "small", "deviceClassName": "mig.nvidia.com", "count": 2},
                ]},
            ],
            "constraints": [{"requests": ["gpu"],
                             "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
            "config": [{"requests": ["gpu"], "opaque": {
                "driver": DRIVER,
                "parameters": {"apiVersion": "resource.nvidia.com/v1beta1",
                               "kind": "GpuConfig"},
            }}],
        }},
    }


def allocated_claim() -> Doc:
    doc = claim()
    doc["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": "gpu-0"},
                    {"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": "gpu-1"},
                    {"request": "mig/big", "driver": DRIVER, "pool": "node-1",
                     "device": "gpu-2-mig-1g10gb-15-0"},
                ],
                "config": [{"source": "FromClaim", "requests": ["gpu"],
                            "opaque": {"driver": DRIVER, "parameters": {"a": 1}}}],
            },
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
        },
        "reservedFor": [{"resource": "pods", "name": "trainer", "uid": UID}],
        "devices": [{
            "driver": DRIVER, "pool": "node-1", "device": "gpu-0",
            "conditions": [{"type": "Ready", "status": "True", "reason": "Prepared",
                            "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            "networkData": {"interfaceName": "eth1", "ips": ["10.1.0.5/24"]},
        }],
    }
    return doc


def claim_template() -> Doc:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "team-a"},
        "spec": {
            "metadata": {"labels": {"app": "trainer"}},
            "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
        },
    }


def device_class() -> Doc:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.nvidia.com"},
        "spec": {
            "selectors": [{"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}],
            "config": [{"opaque": {"driver": DRIVER, "parameters": {"sharing": "none"}}}],
            "extendedResourceName": "nvidia.com/gpu",
        },
    }


def taint_rule(api_version: str = "resource.k8s.io/v1") -> Doc:
    return {
        "apiVersion": api_version,
        "kind": "DeviceTaintRule",
        "metadata": {"name": "gpu-0-broken"},
        "spec": {
            "deviceSelector": {"driver": DRIVER, "pool": "node-1", "device": "gpu-0"},
            "taint": {"key": "example.com/xid-79", "value": "fallen-off-bus",
                      "effect": "NoExecute"},
        },
    }


def pod_spec() -> Doc:
    return {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        "containers": [{
            "name": "trainer",
            "image": "nvcr.io/nvidia/pytorch:25.01-py3",
            "resources": {
                "requests": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": 1},
                "limits": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 1},
                "claims": [{"name": "gpu"}],
            },
        }],
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "nvidia.com/gpu.count", "operator": "Gt",
                                       "values": ["3"]}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "preference": {"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In",
                     "values": ["zone-a"]}]}}],
        }},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                         "effect": "NoSchedule"}],
        "schedulingGates": [{"name": "example.com/quota"}],
        "priorityClassName": "training-high",
    }


def pod() -> Doc:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer", "namespace": "team-a", "labels": {"app": "trainer"}},
        "spec": pod_spec(),
        "status": {"resourceClaimStatuses": [{"name": "gpu",
                                              "resourceClaimName": "trainer-gpu-7xk2p"}]},
    }


def node() -> Doc:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-1", "labels": {"nvidia.com/gpu.present": "true"}},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present",
                             "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"},
            "allocatable": {"cpu": "63500m", "memory": "500Gi", "pods": 110,
                            "nvidia.com/gpu": 8},
        },
    }


def namespace() -> Doc:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team-a",
                     "labels": {"resource.kubernetes.io/admin-access": "true"}},
        "spec": {"finalizers": ["kubernetes"]},
    }


def priority_class() -> Doc:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "training-high"}, "value": 100000,
            "preemptionPolicy": "PreemptLowerPriority", "description": "training jobs"}


def _template(restart_policy: str | None = None) -> Doc:
    spec = pod_spec()
    del spec["resourceClaims"]
    spec["containers"][0]["resources"]["claims"] = []
    if restart_policy is not None:
        spec["restartPolicy"] = restart_policy
    return {"metadata": {"labels": {"app": "trainer"}}, "spec": spec}


def _apps(kind: str) -> Doc:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": "trainer", "namespace": "team-a"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "trainer"}},
                 "template": _template()},
    }


def deployment() -> Doc:
    return _apps("Deployment")


def stateful_set() -> Doc:
    doc = _apps("StatefulSet")
    doc["spec"]["serviceName"] = "trainer"
    return doc


def replica_set() -> Doc:
    return _apps("ReplicaSet")


def daemon_set() -> Doc:
    doc = _apps("DaemonSet")
    del doc["spec"]["replicas"]
    return doc


def job() -> Doc:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train-once", "namespace": "team-a"},
        "spec": {"parallelism": 2, "completions": 4, "backoffLimit": 3,
                 "template": _template("Never")},
    }


def cron_job() -> Doc:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly-train", "namespace": "team-a"},
        "spec": {"schedule": "30 2 * * mon-fri", "concurrencyPolicy": "Forbid",
                 "jobTemplate": {"spec": {"template": _template("OnFailure")}}},
    }


BUILDERS: dict[str, Callable[[], Doc]] = {
    "slice": resource_slice,
    "counters": counters_slice,
    "claim": claim,
    "allocated": allocated_claim,
    "template": claim_template,
    "class": device_class,
    "rule": taint_rule,
    "pod": pod,
    "node": node,
    "namespace": namespace,
    "priority": priority_class,
    "deployment": deployment,
    "statefulset": stateful_set,
    "replicaset": replica_set,
    "daemonset": daemon_set,
    "job": job,
    "cronjob": cron_job,
}


# path edits -------------------------------------------------------------------------------
class _Delete:
    def __repr__(self) -> str:
        return "DELETE"


DELETE: Any = _Delete()
_TOKEN = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


def _tokens(path: str) -> list[str | int]:
    out: list[str | int] = []
    for name, bracket in _TOKEN.findall(path):
        if name:
            out.append(name)
        else:
            out.append(int(bracket) if bracket.isdigit() else bracket)
    return out


def edit(doc: Doc, path: str, value: Any) -> Doc:
    """Set (or with DELETE remove) the field at an API-server style path, creating maps."""
    tokens = _tokens(path)
    node: Any = doc
    for token in tokens[:-1]:
        node = node[token] if isinstance(token, int) else node.setdefault(token, {})
    last = tokens[-1]
    if value is DELETE:
        del node[last]
    elif isinstance(node, list) and last == len(node):
        node.append(copy.deepcopy(value))  # one past the end appends
    else:
        node[last] = copy.deepcopy(value)
    return doc


def get(doc: Doc, path: str) -> Any:
    node: Any = doc
    for token in _tokens(path):
        node = node[token]
    return node
