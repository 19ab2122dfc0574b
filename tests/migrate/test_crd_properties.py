"""Properties of the custom-resource readers: counts as the controllers make pods, and a
conversion that keeps every pod set and count while removing every device-plugin GPU."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dralab.migrate.crdsets import KSERVE_CONTAINER_KEYS
from dralab.migrate.demand import pod_demand
from dralab.migrate.podsets import workload_of
from dralab.migrate.rewrite import apply_edits, plan_document
from dralab.migrate.shapes import TemplateNames

_COUNT = st.one_of(st.none(), st.integers(0, 6))


def _container(gpus: int) -> dict[str, Any]:
    limits = {"cpu": "1", **({"nvidia.com/gpu": gpus} if gpus else {})}
    return {"name": "c", "image": "x", "resources": {"limits": limits}}


def _group(replicas: int | None, low: int | None, high: int | None, hosts: int | None,
           suspend: bool, gpus: int) -> dict[str, Any]:
    group: dict[str, Any] = {"groupName": "g", "template": {"spec": {
        "containers": [_container(gpus)]}}}
    for key, value in (("replicas", replicas), ("minReplicas", low), ("maxReplicas", high),
                       ("numOfHosts", hosts)):
        if value is not None:
            group[key] = value
    if suspend:
        group["suspend"] = True
    return group


def _converted(doc: dict[str, Any]) -> dict[str, Any]:
    plan = plan_document(doc, TemplateNames())
    assert not plan.problems, plan.problems
    apply_edits(doc, plan)
    return doc


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(["RayCluster", "RayJob", "RayService"]),
       groups=st.lists(st.tuples(_COUNT, _COUNT, _COUNT, _COUNT, st.booleans(),
                                 st.integers(0, 4)), max_size=3),
       head_gpus=st.integers(0, 2))
def test_ray_pods_and_conversion(kind: str, groups: list[Any], head_gpus: int) -> None:
    cluster = {"headGroupSpec": {"template": {"spec": {"containers": [_container(head_gpus)]}}},
               "workerGroupSpecs": [_group(*g) for g in groups]}
    spec = {"RayCluster": cluster, "RayJob": {"rayClusterSpec": cluster},
            "RayService": {"rayClusterConfig": cluster}}[kind]
    doc = {"apiVersion": "ray.io/v1", "kind": kind, "metadata": {"name": "r"}, "spec": spec}
    workload = workload_of(doc)
    assert workload is not None
    counts = [p.pods for p in workload.pod_sets]
    expected = [1]
    for replicas, low, high, hosts, suspend, _ in groups:
        # KubeRay: replicas held in [minReplicas, maxReplicas], times numOfHosts
        wanted = min(max(replicas or 0, low or 0), 2**31 - 1 if high is None else high)
        expected.append(0 if suspend else wanted * max(1, hosts or 1))
    assert counts == expected
    after = workload_of(_converted(doc))
    assert after is not None and [p.pods for p in after.pod_sets] == counts
    for pod_set in after.pod_sets:
        assert pod_demand(doc, pod_set).per_pod("gpus") == 0
    wanted_gpus = [head_gpus] + [g[5] for g in groups]
    for gpus, group in zip(wanted_gpus, [cluster["headGroupSpec"],
                                         *cluster["workerGroupSpecs"]], strict=True):
        # the GPU count Ray took from the limit is written where KubeRay reads it
        assert group.get("rayStartParams", {}).get("num-gpus") == (str(gpus) if gpus else None)


@settings(max_examples=100, deadline=None)
@given(component=st.sampled_from(sorted(KSERVE_CONTAINER_KEYS)), data=st.data(),
       replicas=_COUNT, gpus=st.integers(1, 4))
def test_kserve_every_container_key_counted_and_converted(component: str, data: Any,
                                                          replicas: int | None,
                                                          gpus: int) -> None:
    keys = KSERVE_CONTAINER_KEYS[component]
    spec: dict[str, Any] = {}
    if keys and data.draw(st.booleans()):
        spec[data.draw(st.sampled_from(keys))] = {"storageUri": "s3://m",
                                                  **_container(gpus)}
    else:
        spec["containers"] = [_container(gpus)]
    if replicas is not None:
        spec["minReplicas"] = replicas
    doc = {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
           "metadata": {"name": "i"}, "spec": {component: spec}}
    workload = workload_of(doc)
    assert workload is not None
    [pod_set] = workload.pod_sets
    assert pod_set.pods == (1 if replicas is None else replicas)
    assert pod_demand(doc, pod_set).per_pod("gpus") == gpus
    converted = _converted(doc)
    assert pod_demand(converted, pod_set).per_pod("gpus") == 0
    assert converted["spec"][component]["resourceClaims"][0]["name"] == "gpu"


@settings(max_examples=30, deadline=None)
@given(replicas=_COUNT, pipeline=st.one_of(st.none(), st.integers(1, 4)))
def test_kserve_multinode_counted_not_converted(replicas: int | None,
                                                pipeline: int | None) -> None:
    worker: dict[str, Any] = {"containers": [_container(2)]}
    if pipeline is not None:
        worker["pipelineParallelSize"] = pipeline
    predictor: dict[str, Any] = {"model": _container(2), "workerSpec": worker}
    if replicas is not None:
        predictor["minReplicas"] = replicas
    doc = {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
           "metadata": {"name": "i"}, "spec": {"predictor": predictor}}
    workload = workload_of(doc)
    assert workload is not None and workload.not_convertible
    heads = 1 if replicas is None else replicas
    assert [p.pods for p in workload.pod_sets] == [heads, heads * ((pipeline or 1) - 1)]
    assert plan_document(doc, TemplateNames()).problems == [workload.not_convertible]
