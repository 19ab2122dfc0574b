"""Duplicate mapping keys: where they are, in the API server's field-path form.

YAML and JSON readers keep the last of duplicate keys, as Kubernetes' lenient
decoders do; the API server's strict field validation names each duplicate as
``duplicate field "spec.x"``. The readers record which built mappings had
duplicates; this module turns those records into field paths, once per
document and only when there was a duplicate, so the common case costs nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["PathPart", "field_path", "paths_of_duplicates"]

PathPart = str | int


def field_path(parts: Sequence[PathPart]) -> str:
    """``("spec", "containers", 0, "name")`` -> ``spec.containers[0].name``."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        else:
            out.append(f".{part}" if out else part)
    return "".join(out) or "<document>"


def paths_of_duplicates(root: Any, duplicated: Mapping[int, tuple[Any, Sequence[str]]]
                        ) -> list[tuple[PathPart, ...]]:
    """Field paths (as parts) of the duplicated keys, in document order.

    ``duplicated`` maps ``id(mapping)`` to ``(mapping, duplicated keys)``; the
    mapping is held so that its id stays valid. Nesting is bounded by the
    readers' depth limit, so the walk is too.
    """
    found: list[tuple[PathPart, ...]] = []
    remaining = len(duplicated)
    stack: list[tuple[Any, tuple[PathPart, ...]]] = [(root, ())]
    while stack and remaining:
        node, path = stack.pop()
        if isinstance(node, dict):
            hit = duplicated.get(id(node))
            if hit is not None and hit[0] is node:
                found.extend((*path, key) for key in hit[1])
                remaining -= 1
            children: list[tuple[Any, tuple[PathPart, ...]]] = [
                (value, (*path, str(key))) for key, value in node.items()
                if isinstance(value, dict | list)]
        elif isinstance(node, list):
            children = [(value, (*path, i)) for i, value in enumerate(node)
                        if isinstance(value, dict | list)]
        else:
            continue
        stack.extend(reversed(children))
    return found
