"""The same object given twice: what ``kubectl apply`` of all inputs would leave.

Two objects are the same when group, kind, namespace and name agree (any API
version of the group; a namespaced object without namespace is in "default").
``kubectl apply -f`` applies the inputs in order, so the object ends up with the
content of the LAST copy; it was created by the first, so it keeps the first
copy's place in the input order (which is the pods' arrival order). Objects with
only ``generateName`` are never duplicates: each one is a new object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dralab.api.base import KubeObject

from .generatednames import api_identity

__all__ = ["Duplicate", "apply_order"]


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Object ``later`` (index into the input) repeats object ``first``; ``ref`` is
    ``Kind namespace/name`` (or ``Kind name``) for messages."""

    first: int
    later: int
    ref: str


def _ref(obj: KubeObject) -> str:
    _, kind, namespace, name = api_identity(obj)
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def apply_order(objects: Sequence[KubeObject]) -> tuple[list[KubeObject], list[Duplicate]]:
    """The objects as applied in order (each once: first place, last content) and
    every repetition found. Pure."""
    place: dict[tuple[str, str, str, str], int] = {}
    out: list[KubeObject] = []
    duplicates: list[Duplicate] = []
    origin: list[int] = []
    for index, obj in enumerate(objects):
        if not obj.metadata.name:
            out.append(obj)
            origin.append(index)
            continue
        key = api_identity(obj)
        slot = place.get(key)
        if slot is None:
            place[key] = len(out)
            out.append(obj)
            origin.append(index)
            continue
        duplicates.append(Duplicate(origin[slot], index, _ref(obj)))
        out[slot] = obj
        origin[slot] = index
    return out, duplicates
