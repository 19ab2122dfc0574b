"""KAI's admission of a pod's GPU-sharing request, case by case.

Ported from NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
pkg/binder/plugins/gpusharing/gpu-request/gpu_request_validator_test.go,
TestValidateGpuRequests (one test per case, id = the case name; the table's two cases
named "forbid GPU fraction count without fractions or memory" get #1 and #2). The pods
are the table's, as kai-scheduler pods (the webhook validates those only), with GPU
sharing enabled (the plugin refuses any fraction otherwise: the last tests).
"""

from __future__ import annotations

from typing import Any

import pytest

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.queueing.kai.validate import gpu_request_problems

GPU = "nvidia.com/gpu"


def _pod(annotations: dict[str, str], *limits: dict[str, str]) -> Pod:
    containers = [{"name": f"c{i}", "resources": {"limits": lim} if lim else {}}
                  for i, lim in enumerate(limits or ({},))]
    obj = decode({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "p", "namespace": "ns", "annotations": annotations},
                  "spec": {"schedulerName": "kai-scheduler", "containers": containers}})
    assert isinstance(obj, Pod)
    return obj


MPS_ONLY = "MPS is only supported with GPU fraction request"
BOTH_FRACTION = "cannot have both GPU fraction request and whole GPU resource request/limit"
BOTH_MEMORY = "cannot request both GPU and GPU memory"
FRACTION_RANGE = "gpu-fraction annotation value must be a positive number smaller than 1.0"
MEMORY_RANGE = "gpu-memory annotation value must be a positive integer greater than 0"
COUNT_ALONE = ("cannot request multiple fractional devices without specifying fraction "
               "portion or gpu-memory")
COUNT_RANGE = "fraction count annotation value must be a positive integer greater than 0"

CASES: list[Any] = [
    pytest.param({"mps": "true", "gpu-fraction": "0.5"}, [{}], None,
                 id="allow MPS and fractional GPU limits"),
    pytest.param({"mps": "true"}, [{GPU: "1"}], MPS_ONLY,
                 id="Don't allow MPS and whole gpu limit"),
    pytest.param({"mps": "true", "gpu-fraction": "0.5"}, [{}], None,
                 id="allow MPS and fractional GPU annotation request"),
    pytest.param({"mps": "true"}, [{}], MPS_ONLY, id="block MPS without GPU request"),
    pytest.param({"gpu-fraction": "0.5"}, [{GPU: "2m"}], BOTH_FRACTION,
                 id="forbid GPU annotation and GPU request mismatch (fractional)"),
    pytest.param({"gpu-fraction": "1.5"}, [{}], FRACTION_RANGE,
                 id="forbid fraction limit (1500 milli)"),
    pytest.param({}, [{GPU: "2"}], None, id="Allow whole GPU resource limit of 2"),
    pytest.param({}, [{GPU: "2000m"}], None,
                 id="Allow whole gpu request of 2, represented as millis"),
    pytest.param({"gpu-fraction": "0.5", "gpu-memory": "1"}, [{}], BOTH_MEMORY,
                 id="forbid GPU fraction with GPU Memory fraction annotation"),
    pytest.param({}, [{GPU: "1"}, {GPU: "2"}], None,
                 id="Allow multiple containers with whole GPU resource request"),
    pytest.param({"gpu-memory": "1"}, [{GPU: "1m"}], BOTH_MEMORY,
                 id="forbid GPU resource limit with GPU Memory fraction annotation"),
    pytest.param({"gpu-memory": "1"}, [{}, {GPU: "1m"}], BOTH_MEMORY,
                 id="forbid GPU resource limit in sidecar container with GPU Memory "
                    "fraction annotation"),
    pytest.param({"gpu-memory": "-1"}, [{}], MEMORY_RANGE,
                 id="forbid negative GPU memory annotation"),
    pytest.param({"gpu-fraction": "-1"}, [{}], FRACTION_RANGE,
                 id="forbid negative GPU fraction annotation"),
    pytest.param({"gpu-fraction": "1.2"}, [{}], FRACTION_RANGE,
                 id="forbid GPU fraction which is greater than 1.0"),
    pytest.param({"gpu-fraction-num-devices": "1"}, [{}], COUNT_ALONE,
                 id="forbid GPU fraction count without fractions or memory#1"),
    pytest.param({"gpu-fraction-num-devices": "1.2", "gpu-fraction": "0.2"}, [{}], COUNT_RANGE,
                 id="forbid GPU fraction count without fractions or memory#2"),
    pytest.param({"gpu-fraction-num-devices": "2", "gpu-memory": "1000"}, [{}], None,
                 id="allow GPU fraction count with memory"),
    pytest.param({"gpu-fraction-num-devices": "2", "gpu-fraction": "0.3"}, [{}], None,
                 id="allow GPU fraction count with fractions"),
]


@pytest.mark.parametrize(("annotations", "limits", "error"), CASES)
def test_validate_gpu_requests(annotations: dict[str, str], limits: list[dict[str, str]],
                               error: str | None) -> None:
    problems = gpu_request_problems(_pod(annotations, *limits), gpu_sharing=True)
    assert [m for _, m in problems] == ([error] if error else [])


def test_sharing_disabled_refuses_any_fraction() -> None:
    # gpu_sharing.go Validate: the operator's default is admission.gpuSharing false
    (problem,) = gpu_request_problems(_pod({"gpu-fraction": "0.5"}), gpu_sharing=False)
    assert problem[0] == "metadata.annotations.gpu-fraction"
    assert problem[1].startswith("attempting to create a pod ns/p with gpu sharing request, "
                                 "while GPU sharing is disabled")
    assert gpu_request_problems(_pod({}, {GPU: "1"}), gpu_sharing=False) == []


def test_other_schedulers_pods_are_not_validated() -> None:
    pod = _pod({"gpu-fraction": "7"})
    other = decode({**{"apiVersion": "v1", "kind": "Pod"},
                    "metadata": {"name": "p", "annotations": {"gpu-fraction": "7"}},
                    "spec": {"containers": [{"name": "c"}]}})
    assert isinstance(other, Pod)
    assert gpu_request_problems(pod, gpu_sharing=True) != []
    assert gpu_request_problems(other, gpu_sharing=True) == []
