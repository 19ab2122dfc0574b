"""KAI's kubeflow and ray plugin tables, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/kubeflow/kubeflow_test.go`` and
``pkg/scheduler/plugins/ray/ray_test.go``: TestTaskOrderFn compares two pods by their
labels (kubeflow: a training.kubeflow.org/job-role master or launcher first; ray: the
ray.io/node-type head first), here ``plugins.order.kubeflow_order`` / ``ray_order``,
which the session's task order (``actions.common.task_cmp``) asks first.
Test_kubeflowPlugin_OnSessionOpen / Test_rayPlugin_OnSessionOpen open the plugin on an
empty session and check nothing after: "not a decision".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest
from tests.peers.kai.plugin_helpers import Cite

from dralab.queueing.kai.plugins.order import kubeflow_order, ray_order


def _kf(role: str) -> dict[str, str]:
    return {"training.kubeflow.org/job-name": "A", "training.kubeflow.org/job-role": role}


def _ray(role: str) -> dict[str, str]:
    return {"ray.io/cluster": "A", "ray.io/node-type": role}


# (file, name, line, left labels, right labels, want)
CASES: list[tuple[str, str, int, dict[str, str], dict[str, str], int]] = [
    ("kubeflow", "non kubeflow pods", 28, {}, {}, 0),
    ("kubeflow", "one kubeflow pod, one non-kubeflow", 48, _kf("worker"), {}, 0),
    ("kubeflow", "same kubeflow job, one launcher one worker", 71, _kf("launcher"),
     _kf("worker"), -1),
    ("kubeflow", "same kubeflow job, one master one worker", 97, _kf("worker"), _kf("master"),
     1),
    ("kubeflow", "same kubeflow job, two workers", 123, _kf("worker"), _kf("worker"), 0),
    ("ray", "non ray pods", 28, {}, {}, 0),
    ("ray", "one ray pod, one non-ray", 48, _ray("worker"), {}, 0),
    ("ray", "same ray job, one head one worker", 71, _ray("worker"), _ray("head"), 1),
    ("ray", "same ray job, two workers", 97, _ray("worker"), _ray("worker"), 0),
]
ORDER: dict[str, Callable[[Mapping[str, str], Mapping[str, str]], int]] = {
    "kubeflow": kubeflow_order, "ray": ray_order}


@pytest.mark.parametrize(("plugin", "name", "line", "left", "right", "want"), CASES,
                         ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_task_order(plugin: str, name: str, line: int, left: dict[str, str],
                    right: dict[str, str], want: int) -> None:
    cite = Cite(f"{plugin}/{plugin}_test.go", "TestTaskOrderFn", name, line)
    assert ORDER[plugin](left, right) == want, str(cite)


@pytest.mark.parametrize(("plugin", "name", "line"), [
    ("kubeflow", "Sets the kubeflow pod order func", 172),
    ("ray", "Sets the ray pod order func", 146)], ids=["kubeflow", "ray"])
def test_on_session_open(plugin: str, name: str, line: int) -> None:
    pytest.skip(f"not a decision: Test_{plugin}Plugin_OnSessionOpen {name!r} (line {line}) "
                "opens the plugin and checks nothing after")
