"""What an allocation attempt returns: exactly one of three outcomes.

* ``Allocated`` — every claim got devices; the new claims carry
  ``status.allocation``.
* ``Unschedulable`` — the claims do not fit on this node (the scheduler's
  *Unschedulable*; another node or a later time may work).
* ``AllocationError`` — the input is unusable (broken CEL, missing class,
  feature used while its gate is off, ...): the scheduler's *Error*.

"Does not fit" is never an exception. Every outcome carries ``steps``, the
number of search steps spent (same unit as upstream's allocateOne count).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

from dralab.api.resource import AllocationResult, ResourceClaim

__all__ = ["Allocated", "AllocationError", "AllocationOutcome", "Unschedulable"]


@dataclass(frozen=True, slots=True)
class Allocated:
    """All claims allocated; ``claims`` are new objects, in input order."""

    claims: tuple[ResourceClaim, ...]
    steps: int = 0
    # Per claim: request name -> index of the chosen firstAvailable subrequest.
    subrequests: tuple[Mapping[str, int], ...] = ()

    kind = "allocated"

    @property
    def allocations(self) -> tuple[AllocationResult, ...]:
        return tuple(c.status.allocation for c in self.claims
                     if c.status.allocation is not None)

    def __bool__(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class Unschedulable:
    """The claims do not fit on the node.

    ``reason`` is the scheduler's message ("cannot allocate all claims", or
    "invalid resource pools were encountered" when an invalid pool may be to
    blame); ``explanations`` has one line per request when requested.
    """

    reason: str
    explanations: tuple[str, ...] = ()
    steps: int = 0

    kind = "unschedulable"

    def __bool__(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class AllocationError:
    """The allocation cannot even be attempted or had to be aborted."""

    message: str
    steps: int = 0

    kind = "error"

    def __bool__(self) -> bool:
        return False


AllocationOutcome: TypeAlias = Allocated | Unschedulable | AllocationError
