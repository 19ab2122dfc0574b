"""Shared by the ported scenario tests (test_base_scenario.py, test_by_node_scenario.py):
a victim scenario built as KAI's NewBaseScenario builds one."""

from __future__ import annotations

from collections.abc import Sequence

from dralab.queueing.kai.actions.solver import VictimScenario
from dralab.queueing.kai.framework import SessionJob, SessionTask
from dralab.queueing.kai.model import KaiJob, KaiTask, PodStatus

__all__ = ["names", "pod", "scenario"]


def pod(name: str, job: str, node: str | None = None) -> SessionTask:
    """A victim pod running on ``node`` (or a pending one without a node)."""
    status: PodStatus = "Running" if node else "Pending"
    return SessionTask(job, KaiTask(name, job, status=status, node=node), status, node, (), 0)


def scenario(potential: Sequence[SessionTask], recorded: Sequence[SessionTask] = (),
              added: Sequence[SessionTask] = ()) -> VictimScenario:
    """NewBaseScenario(potential, recorded jobs), then AddPotentialVictimsTasks(added)."""
    built = VictimScenario(SessionJob(KaiJob("123", "q"), []), [], recorded=list(recorded))
    for task in potential:
        built.add_potential([task])
    built.add_potential(list(added))
    return built


def names(tasks: Sequence[SessionTask]) -> list[str]:
    return [t.name for t in tasks]
