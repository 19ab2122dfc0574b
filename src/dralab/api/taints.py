"""Taint and toleration matching, shared by node taints and DRA device taints.

Both follow the same rule (core/v1 semantics): an empty effect or key in the
toleration matches any; operator ``Exists`` matches any value, ``Equal`` (the
default) needs equal values; any other operator matches nothing.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["tolerates"]


class _Toleration(Protocol):
    @property
    def key(self) -> str | None: ...
    @property
    def operator(self) -> str | None: ...
    @property
    def value(self) -> str | None: ...
    @property
    def effect(self) -> str | None: ...


class _Taint(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def value(self) -> str | None: ...
    @property
    def effect(self) -> str: ...


def tolerates(toleration: _Toleration, taint: _Taint) -> bool:
    """Whether ``toleration`` tolerates ``taint`` (a node Taint or a DeviceTaint)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.value or "") == (taint.value or "")
    return False
