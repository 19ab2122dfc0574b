"""One KAI scheduling session (pkg/scheduler/framework, actions).

Public API:

* :func:`run_session` ``(state, actions=None) -> SessionResult``: open a session on a
  copy of ``state``, run the actions (None: ``state.config.actions``) in order and
  return what it decided; ``state`` is not changed. An action name KAI does not have
  raises :class:`UnknownAction`.
* :class:`SessionResult` (in ``framework``): each task's outcome (status, node, GPU
  groups), the events in commit order (bind / pipeline / evict, with the action, the
  reason and the job a victim was evicted for), the queues' shares as the session ends,
  and for each job left with pending tasks KAI's unschedulable message.
"""

from __future__ import annotations

from dataclasses import replace

from dralab.queueing.kai import dra
from dralab.queueing.kai.actions import ACTIONS
from dralab.queueing.kai.framework import (
    KaiNodeOutcome,
    Session,
    SessionEvent,
    SessionResult,
    TaskOutcome,
    UnknownAction,
)
from dralab.queueing.kai.model import KaiState

__all__ = [
    "KaiNodeOutcome",
    "SessionEvent",
    "SessionResult",
    "TaskOutcome",
    "UnknownAction",
    "run_session",
]


def run_session(state: KaiState, actions: tuple[str, ...] | None = None) -> SessionResult:
    """Open a session on a copy of ``state``, run ``actions`` in order (None: the
    configured ones) and return what it decided."""
    names = state.config.actions if actions is None else actions
    unknown = [a for a in names if a not in ACTIONS]
    if unknown:
        raise UnknownAction(f"unknown KAI action {unknown[0]!r} "
                            f"(known: {', '.join(sorted(ACTIONS))})")
    # DRA GPUs count as whole GPUs from here on (KAI adds them to nodes and pods)
    session = Session(dra.with_dra_gpus(replace(
        state, nodes=dict(state.nodes), queues=dict(state.queues), jobs=dict(state.jobs))))
    for name in names:
        ACTIONS[name](session)
    return session.result()
