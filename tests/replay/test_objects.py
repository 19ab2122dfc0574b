"""Trace records as API objects: they validate, and the allocator reads them as the trace does."""

from __future__ import annotations

import dralab
from dralab.api.base import KubeObject
from dralab.replay.trace import (
    CAPACITY,
    MODEL_LABEL,
    device_class,
    load_nodes,
    load_pods,
    model_selector,
    node_object,
    pod_objects,
    resource_slice,
)
from dralab.validation.check import validate_objects

from .builders import node_record, pod_record


def sample() -> list[KubeObject]:
    objects: list[KubeObject] = [device_class()]
    for node in load_nodes(limit=4):
        objects.append(node_object(node))
        s = resource_slice(node)
        assert s is not None
        objects.append(s)
    pods = load_pods("gpuspec33")
    chosen = ([p for p in pods if p.gpu_spec][:3] + [p for p in pods if p.num_gpu == 8][:1]
              + [p for p in pods if p.num_gpu == 0][:2] + [p for p in pods if p.gpu_milli < 1000
                                                          and p.num_gpu][:2])
    for rec in chosen:
        pod, claim = pod_objects(rec)
        objects.append(pod)
        if claim is not None:
            objects.append(claim)
    return objects


def test_sample_validates() -> None:
    assert validate_objects(sample()) == []


def test_node_and_slice_shape() -> None:
    rec = node_record("n", cpu=64000, gpus=2, model="P100", memory=262144)
    node = node_object(rec)
    assert node.metadata.labels[MODEL_LABEL] == "P100"
    assert str(node.status.allocatable["cpu"]) == "64"
    assert str(node.status.allocatable["memory"]) == "256Gi"
    s = resource_slice(rec)
    assert s is not None and s.spec.node_name == "n" and s.spec.pool.name == "n"
    assert [d.name for d in s.spec.devices] == ["gpu-0", "gpu-1"]
    dev = s.spec.devices[0]
    assert dev.allow_multiple_allocations and dev.attributes["model"].string == "P100"
    assert dev.capacity[CAPACITY].value.milli_value() == 1000 * 1000
    assert resource_slice(node_record("cpu-only", gpus=0, model="")) is None


def test_claims() -> None:
    _, claim = pod_objects(pod_record("s", gpu_milli=460, spec="T4|A10"))
    assert claim is not None
    req = claim.spec.devices.requests[0].exactly
    assert req is not None and req.count == 1
    assert req.capacity is not None and str(req.capacity.requests[CAPACITY]) == "460"
    assert req.selectors[0].cel is not None
    assert req.selectors[0].cel.expression == model_selector(frozenset({"T4", "A10"}))
    assert 'model in ["A10", "T4"]' in req.selectors[0].cel.expression
    _, whole = pod_objects(pod_record("w", num_gpu=4))
    assert whole is not None and whole.spec.devices.requests[0].exactly is not None
    assert whole.spec.devices.requests[0].exactly.count == 4
    assert not whole.spec.devices.requests[0].exactly.selectors
    assert pod_objects(pod_record("c", num_gpu=0)) == (pod_objects(pod_record("c", num_gpu=0))[0],
                                                       None)


def test_allocator_shares_one_gpu_and_respects_the_model() -> None:
    node = node_record("n", cpu=16000, gpus=2, model="P100")
    s = resource_slice(node)
    assert s is not None
    base: list[KubeObject] = [device_class(), node_object(node), s]
    _, share = pod_objects(pod_record("a", gpu_milli=600))
    assert share is not None
    done = dralab.allocate([share], "n", base)
    assert isinstance(done, dralab.Allocated)
    result = done.claims[0].status.allocation
    assert result is not None
    assert str(result.devices.results[0].consumed_capacity[CAPACITY]) == "600"
    _, wrong_model = pod_objects(pod_record("b", gpu_milli=300, spec="T4"))
    assert wrong_model is not None
    assert isinstance(dralab.allocate([wrong_model], "n", base), dralab.Unschedulable)
    _, three = pod_objects(pod_record("c", num_gpu=3))
    assert three is not None
    assert isinstance(dralab.allocate([three], "n", base), dralab.Unschedulable)
