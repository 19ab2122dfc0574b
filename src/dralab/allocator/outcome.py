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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeAlias

from dralab.api.resource import AllocationResult, ResourceClaim

__all__ = ["Allocated", "AllocationError", "AllocationOutcome", "Unschedulable"]


class Allocated:
    """All claims allocated; ``claims`` are new objects, in input order.

    Immutable. ``deferred`` makes one whose claims are built on first access:
    a pod's node search answers hundreds of nodes and keeps one of them."""

    __slots__ = ("_build", "_claims", "steps", "subrequests")
    __match_args__ = ("claims", "steps", "subrequests")

    kind = "allocated"
    _claims: tuple[ResourceClaim, ...] | None
    _build: Callable[[], tuple[ResourceClaim, ...]] | None
    steps: int
    # Per claim: request name -> index of the chosen firstAvailable subrequest.
    subrequests: tuple[Mapping[str, int], ...]

    def __init__(self, claims: tuple[ResourceClaim, ...], steps: int = 0,
                 subrequests: tuple[Mapping[str, int], ...] = ()) -> None:
        _set(self, "_claims", claims)
        _set(self, "_build", None)
        _set(self, "steps", steps)
        _set(self, "subrequests", subrequests)

    @classmethod
    def deferred(cls, build: Callable[[], tuple[ResourceClaim, ...]], steps: int,
                 subrequests: tuple[Mapping[str, int], ...]) -> Allocated:
        """The outcome whose ``claims`` are ``build()`` (called once, on first access;
        it must not depend on anything that may change in between)."""
        made = cls.__new__(cls)
        _set(made, "_claims", None)
        _set(made, "_build", build)
        _set(made, "steps", steps)
        _set(made, "subrequests", subrequests)
        return made

    @property
    def claims(self) -> tuple[ResourceClaim, ...]:
        found: tuple[ResourceClaim, ...] | None = self._claims
        if found is None:
            build = self._build
            assert build is not None
            found = build()
            _set(self, "_claims", found)
            _set(self, "_build", None)
        return found

    @property
    def allocations(self) -> tuple[AllocationResult, ...]:
        return tuple(c.status.allocation for c in self.claims
                     if c.status.allocation is not None)

    def __bool__(self) -> bool:
        return True

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of an immutable Allocated")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of an immutable Allocated")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Allocated)
        return (self.claims, self.steps, self.subrequests) == (
            other.claims, other.steps, other.subrequests)

    def __hash__(self) -> int:
        return hash((self.claims, self.steps, self.subrequests))

    def __repr__(self) -> str:
        return (f"Allocated(claims={self.claims!r}, steps={self.steps!r}, "
                f"subrequests={self.subrequests!r})")


_set = object.__setattr__


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
