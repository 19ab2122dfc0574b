"""Strict semantic versions (semver 2.0.0), as DRA ``version`` attributes use them.

Parsing is strict like blang/semver's ``Parse``: no leading ``v``, no leading
zeros in numeric parts, pre-release and build metadata allowed. Ordering follows
semver precedence (build metadata ignored).
"""

from __future__ import annotations

import re
from functools import lru_cache, total_ordering
from typing import Final

__all__ = ["Semver", "SemverError", "parse_semver"]

_SEMVER_RE: Final = re.compile(
    r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(?:-((?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
    r"(?:\.(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


class SemverError(ValueError):
    """A string that is not a strict semantic version."""


@total_ordering
class Semver:
    """An immutable semantic version; ``str()`` gives back the text it was parsed from."""

    __slots__ = ("build", "major", "minor", "patch", "pre", "text")

    def __init__(self, text: str, major: int, minor: int, patch: int,
                 pre: tuple[int | str, ...], build: str) -> None:
        self.text = text
        self.major = major
        self.minor = minor
        self.patch = patch
        self.pre = pre
        self.build = build

    def _key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def compare(self, other: Semver) -> int:
        """-1, 0 or 1 by semver precedence."""
        if self._key() != other._key():
            return -1 if self._key() < other._key() else 1
        if self.pre == other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for a, b in zip(self.pre, other.pre, strict=False):
            if a == b:
                continue
            if isinstance(a, int) and isinstance(b, int):
                return -1 if a < b else 1
            if isinstance(a, int):
                return -1
            if isinstance(b, int):
                return 1
            return -1 if str(a) < str(b) else 1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare(other) == 0

    def __lt__(self, other: Semver) -> bool:
        return self.compare(other) < 0

    def __hash__(self) -> int:
        return hash((self._key(), self.pre))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Semver({self.text!r})"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (parse_semver, (self.text,))


@lru_cache(maxsize=16384)
def parse_semver(text: str) -> Semver:
    """Parse ``text`` strictly; raise SemverError otherwise."""
    match = _SEMVER_RE.match(text) if isinstance(text, str) else None
    if match is None:
        raise SemverError(f"not a valid semantic version: {text!r}")
    major, minor, patch, pre, build = match.groups()
    pre_parts: tuple[int | str, ...] = ()
    if pre:
        pre_parts = tuple(int(p) if p.isdigit() else p for p in pre.split("."))
    return Semver(text, int(major), int(minor), int(patch), pre_parts, build or "")
