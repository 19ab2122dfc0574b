"""Kueue's PriorityBoost (alpha gate, off by default): a Workload's
``kueue.x-k8s.io/priority-boost`` annotation, a signed 32-bit integer, is added to its
priority wherever Kueue compares priorities (queue order, preemption policy, candidate
order). Kueue's ``pkg/util/priority``: with the gate off the annotation is ignored; an
annotation that is not an int32 is rejected by Kueue's webhook, and the scheduler, as
defence in depth, falls back to the base priority — so does dralab.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["PRIORITY_BOOST_ANNOTATION", "PRIORITY_BOOST_GATE", "effective_priority",
           "priority_boost", "priority_info"]

PRIORITY_BOOST_GATE = "PriorityBoost"
PRIORITY_BOOST_ANNOTATION = "kueue.x-k8s.io/priority-boost"

# Go's strconv.ParseInt(s, 10, 32): an optional sign and decimal digits, within int32.
_DECIMAL = re.compile(r"[+-]?[0-9]+")
_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def priority_boost(annotations: Mapping[str, str], enabled: bool) -> int:
    """The boost the annotation gives (0 when missing or with the gate off); ValueError
    when it is not a base-10 int32."""
    if not enabled:
        return 0
    value = annotations.get(PRIORITY_BOOST_ANNOTATION, "")
    if value == "":
        return 0
    if not _DECIMAL.fullmatch(value):
        raise ValueError(f"invalid priority boost {value!r}: not a base-10 integer")
    boost = int(value)
    if not _INT32_MIN <= boost <= _INT32_MAX:
        raise ValueError(f"invalid priority boost {value!r}: out of the int32 range")
    return boost


def effective_priority(base: int, annotations: Mapping[str, str], enabled: bool) -> int:
    """``base`` plus the boost; the base alone when the annotation is invalid. Not
    clamped to int32: Kueue computes it as an int64."""
    try:
        return base + priority_boost(annotations, enabled)
    except ValueError:
        return base


def priority_info(base: int, annotations: Mapping[str, str], enabled: bool
                  ) -> tuple[int, int, int]:
    """Kueue's priorityInfo (what its preemption events report): the effective
    priority, the base priority and the boost that was applied."""
    effective = effective_priority(base, annotations, enabled)
    return effective, base, effective - base
