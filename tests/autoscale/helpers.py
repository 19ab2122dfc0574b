"""Builders for autoscaler scenarios: a Fleet of autoscaled pools (NVIDIA H100 HGX,
A100 with DynamicMIG, L4 PCIe servers; example-driver GPUs), claim templates and
pods, as plain documents."""

from __future__ import annotations

import copy
from typing import Any

from dralab.api.features import FeatureGates
from dralab.api.io import Document
from dralab.autoscale import AutoscaleInput, LoopDecisions, read_input, run_once

Doc = dict[str, Any]

POOLS: dict[str, Doc] = {
    "cpu": {"name": "cpu", "count": 2, "cpu": "32", "memory": "128Gi"},
    "h100": {"name": "h100", "count": 0, "cpu": "192", "memory": "2Ti",
             "gpu": {"model": "h100-80gb-sxm", "count": 8},
             "autoscaling": {"min": 0, "max": 3, "pricePerHour": 32.0,
                             "provisioningDelay": "5m", "priority": 10}},
    "h100s": {"name": "h100s", "count": 0, "cpu": "128", "memory": "1Ti",
              "gpu": {"model": "h100-80gb-sxm", "count": 8},
              "autoscaling": {"min": 0, "max": 2, "pricePerHour": 24.0,
                              "provisioningDelay": "5m", "priority": 5}},
    "ex": {"name": "ex", "count": 0, "driver": "example", "cpu": "16", "memory": "64Gi",
           "gpu": {"count": 4},
           "autoscaling": {"min": 0, "max": 4, "pricePerHour": 1.0,
                           "provisioningDelay": "1m", "priority": 0}},
    "a100": {"name": "a100", "count": 0, "cpu": "128", "memory": "1Ti",
             "gpu": {"model": "a100-80gb", "count": 8, "mig": {"mode": "dynamic"}},
             "autoscaling": {"min": 0, "max": 2, "pricePerHour": 20.0,
                             "provisioningDelay": "5m", "priority": 5}},
    "l4": {"name": "l4", "count": 0, "platform": "pcie", "cpu": "48", "memory": "192Gi",
           "gpu": {"model": "l4", "count": 8},
           "autoscaling": {"min": 0, "max": 4, "pricePerHour": 4.0,
                           "provisioningDelay": "3m", "priority": 1}},
}

PRODUCT = "device.attributes['gpu.nvidia.com'].productName"


def fleet(*names: str, **changes: Doc) -> Doc:
    """A Fleet of the named pools (default: cpu, h100, a100, l4); ``changes[pool]``
    merged into a pool (its ``autoscaling`` merged too)."""
    pools = []
    for name in names or ("cpu", "h100", "a100", "l4"):
        pool = copy.deepcopy(POOLS[name])
        change = copy.deepcopy(changes.get(name, {}))
        if "autoscaling" in change and "autoscaling" in pool:
            pool["autoscaling"].update(change.pop("autoscaling"))
        pool.update(change)
        pools.append(pool)
    return {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
            "metadata": {"name": "test"}, "spec": {"pools": pools}}


def template(name: str, device_class: str = "gpu.nvidia.com", count: int = 1,
             cel: str | None = None, match: str | None = None) -> Doc:
    exactly: Doc = {"deviceClassName": device_class, "count": count}
    if cel:
        exactly["selectors"] = [{"cel": {"expression": cel}}]
    devices: Doc = {"requests": [{"name": "gpu", "exactly": exactly}]}
    if match:
        devices["constraints"] = [{"matchAttribute": match}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": devices}}}


def pod(name: str, claim_template: str | None = None, cpu: str = "1", memory: str = "4Gi",
        node: str | None = None, owned: bool = True, labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None) -> Doc:
    container: Doc = {"name": "main", "image": "busybox",
                      "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    spec: Doc = {"containers": [container]}
    if claim_template is not None:
        container["resources"]["claims"] = [{"name": "gpu"}]
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": claim_template}]
    if node is not None:
        spec["nodeName"] = node
    meta: Doc = {"name": name, "namespace": "default"}
    if owned:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                    "name": f"{name}-rs", "uid": f"uid-{name}-rs",
                                    "controller": True}]
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def documents(*docs: Doc) -> list[Document]:
    return [Document("test.yaml", i + 1, d) for i, d in enumerate(docs)]


def load(*docs: Doc) -> AutoscaleInput:
    return read_input(documents(*docs), FeatureGates())


def run(*docs: Doc, model: str = "cluster-autoscaler", expander: str = "least-waste",
        ignore_dra_requests: bool = True) -> LoopDecisions:
    """``ignore_dra_requests``: Karpenter's flag (its default true)."""
    return run_once(load(*docs), model, expander, ignore_dra_requests=ignore_dra_requests)


def summary(decisions: LoopDecisions) -> dict[str, Any]:
    return decisions.to_dict()
