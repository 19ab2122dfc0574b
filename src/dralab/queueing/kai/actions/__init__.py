"""KAI's session actions by name (the SchedulingShard's ``actions`` list)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dralab.queueing.kai.actions.allocate import allocate
from dralab.queueing.kai.actions.consolidation import consolidation
from dralab.queueing.kai.actions.preempt import preempt
from dralab.queueing.kai.actions.reclaim import reclaim
from dralab.queueing.kai.actions.stalegangeviction import stalegangeviction
from dralab.queueing.kai.framework import Session

__all__ = ["ACTIONS"]

ACTIONS: Mapping[str, Callable[[Session], None]] = {
    "allocate": allocate,
    "consolidation": consolidation,
    "reclaim": reclaim,
    "preempt": preempt,
    "stalegangeviction": stalegangeviction,
}
