"""Pod requests as kube-scheduler counts them (NodeResourcesFit, scoring).

Ported from kubernetes v1.36.2 staging/src/k8s.io/component-helpers/resource/
helpers_test.go: TestPodResourceRequests (cases "pod overhead included",
"restartable init container", "multiple restartable init containers", "multiple
restartable and regular init containers", "restartable-init, init and regular")
and TestPodLevelResourceRequests (the SkipPodLevelResources=false cases; the gate
PodLevelResources is on by default since 1.34). Amounts are milli-units.
"""

from __future__ import annotations

from typing import Any

import pytest

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.cluster import pod_non_zero_requests, pod_requests

Gi = 1024 ** 3 * 1000
Mi = 1024 ** 2 * 1000


def _c(name: str, cpu: str | None = None, *, sidecar: bool = False,
       **resources: str) -> dict[str, Any]:
    requests = dict(resources)
    if cpu is not None:
        requests["cpu"] = cpu
    out: dict[str, Any] = {"name": name, "resources": {"requests": requests}}
    if sidecar:
        out["restartPolicy"] = "Always"
    return out


def _pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None,
         **spec: Any) -> Pod:
    pod = decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                  "spec": {"containers": containers, "initContainers": init or [], **spec}})
    assert isinstance(pod, Pod)
    return pod


CASES = [
    ("pod overhead included", _pod(
        [_c("a", "2"), _c("b", "3")],
        [{"name": "i", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}}}],
        overhead={"cpu": "1", "memory": "1Gi"}), {"cpu": 6000, "memory": Gi}),
    ("restartable init container", _pod(
        [_c("container-1", "1")], [_c("restartable-init-1", "1", sidecar=True)]),
     {"cpu": 2000}),
    ("multiple restartable init containers", _pod(
        [_c("container-1", "1")],
        [_c("init-1", "5"), _c("restartable-init-1", "1", sidecar=True),
         _c("restartable-init-2", "2", sidecar=True),
         _c("restartable-init-3", "3", sidecar=True)]), {"cpu": 7000}),
    ("multiple restartable and regular init containers", _pod(
        [_c("container-1", "1")],
        [_c("init-1", "5"), _c("restartable-init-1", "1", sidecar=True),
         _c("restartable-init-2", "2", sidecar=True), _c("init-2", "5"),
         _c("restartable-init-3", "3", sidecar=True)]), {"cpu": 8000}),
    ("restartable-init, init and regular", _pod(
        [_c("container-1", "100")],
        [_c("restartable-init-1", "10", sidecar=True), _c("init-1", "200")]),
     {"cpu": 210000}),
    ("pod level memory resource", _pod(
        [], resources={"requests": {"memory": "2Mi"}}), {"memory": 2 * Mi}),
    ("pod level memory and container level cpu resources", _pod(
        [_c("c", "2m")], resources={"requests": {"memory": "2Mi"}}),
     {"cpu": 2, "memory": 2 * Mi}),
    ("pod level unsupported resources set at both pod-level and container-level", _pod(
        [_c("c", storage="3Mi")], resources={"requests": {"storage": "2Mi"}}),
     {"storage": 3 * Mi}),
    ("both container-level and pod-level resources", _pod(
        [_c("c", "2m", memory="3Mi")], resources={"requests": {"memory": "6Mi", "cpu": "8m"}}),
     {"cpu": 8, "memory": 6 * Mi}),
]


@pytest.mark.parametrize(("pod", "expected"), [(p, e) for _, p, e in CASES],
                         ids=[name for name, _, _ in CASES])
def test_pod_requests_as_component_helpers_count_them(pod: Pod, expected: dict[str, int]) -> None:
    assert pod_requests(pod) == expected


def test_pod_level_limits_default_the_requests() -> None:
    # pkg/apis/core/v1/defaults.go defaultPodRequests: pod-level limits without requests
    # become the requests (cpu from the containers' requests where they have some).
    pod = _pod([_c("c", "500m")], resources={"limits": {"cpu": "2", "memory": "1Gi"}})
    assert pod_requests(pod) == {"cpu": 500, "memory": Gi}


def test_non_zero_requests_count_sidecars_and_overhead() -> None:
    # resource_allocation.go calculatePodResourceRequest: NonMissingContainerRequests
    # (100m, 200Mi) for every container, summed as PodRequests sums, plus overhead.
    pod = _pod([_c("app")], [_c("sidecar", sidecar=True)], overhead={"cpu": "50m"})
    assert pod_non_zero_requests(pod) == (250, 400 * Mi)
