"""KAI's taskorder plugin test, ported.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/taskorder/task_order_test.go`` TestTaskOrder: one test of six
TaskOrderFn comparisons on the pods' kai.scheduler/task-priority labels (None here: no
label), against ``plugins.order.task_order`` -- what the session's task order
(``actions.common.task_cmp``) asks before its own fallback.
"""

from __future__ import annotations

from tests.peers.kai.plugin_helpers import Cite

from dralab.queueing.kai.plugins.order import task_order

# (left label, right label, expected), in the test's order (lines 32-51)
ASSERTIONS: list[tuple[int | None, int | None, int]] = [
    (1, 2, 1),
    (2, 2, 0),
    (2, 1, -1),
    (None, 1, 1),
    (1, None, -1),
    (None, None, 0),
]


def test_task_order() -> None:
    cite = Cite("taskorder/task_order_test.go", "TestTaskOrder", "TestTaskOrder", 17)
    for index, (left, right, expected) in enumerate(ASSERTIONS):
        assert task_order(left, right) == expected, f"{cite}: assertion {index + 1}"
