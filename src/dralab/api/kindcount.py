"""The kinds a reader leaves out of its input, said once per kind.

Every verb (``cli.kinds``) and every file a scenario names (``sim``) that reads
manifests and does not use some of their kinds says so in the same words:
``dralab schedule does not use ConfigMap (v1): 2 objects ignored (the first at
FILE:DOC)``. Here, in the lowest layer, so that each reader can use it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .errors import DralabWarning, one_line
from .io import Document

__all__ = ["KindKey", "UnusedKind", "UnusedKindWarning", "api_group", "kind_key",
           "unused_kind_line", "unused_kinds", "warn_unused_kinds"]

# A kind as a reader tells it apart: (API group, kind). "Workload" is both
# scheduling.k8s.io's and Kueue's; the group keeps them apart.
KindKey = tuple[str, str]


class UnusedKindWarning(DralabWarning):
    """Objects of a kind the reader does not use: they change nothing."""


@dataclass(frozen=True, slots=True)
class UnusedKind:
    shown: str   # ``Kind (apiVersion)`` of the first such object
    count: int
    first: str   # ``FILE[:DOC]`` of the first


def api_group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def kind_key(data: Any) -> KindKey | None:
    """(group, kind) of a document; None when it has no string apiVersion and kind
    (decoding or validation names what is missing)."""
    if not isinstance(data, dict):
        return None
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    return api_group(api_version), kind


def unused_kinds(docs: Iterable[Document], used: Callable[[KindKey], bool]) -> list[UnusedKind]:
    """Per kind ``used`` says no to, in order of first appearance: how it reads, how many
    documents have it, and where the first is."""
    found: dict[KindKey, UnusedKind] = {}
    for doc in docs:
        key = kind_key(doc.data)
        if key is None or used(key):
            continue
        seen = found.get(key)
        found[key] = UnusedKind(f"{doc.data.get('kind')} ({doc.data.get('apiVersion')})",
                                1, doc.where) if seen is None else \
            UnusedKind(seen.shown, seen.count + 1, seen.first)
    return list(found.values())


def unused_kind_line(reader: str, unused: UnusedKind) -> str:
    """``READER does not use KIND (VERSION): N object(s) ignored (the first at FILE:DOC)``,
    cut and escaped to one line."""
    objects = "1 object" if unused.count == 1 else f"{unused.count} objects"
    return one_line(f"{reader} does not use {unused.shown}: {objects} ignored "
                    f"(the first at {unused.first})")


def warn_unused_kinds(docs: Iterable[Document], reader: str,
                      used: Callable[[KindKey], bool]) -> None:
    """One UnusedKindWarning per kind of ``docs`` that ``reader`` does not use (the CLI
    prints each as a ``warning:`` line)."""
    for unused in unused_kinds(docs, used):
        warnings.warn(UnusedKindWarning(unused_kind_line(reader, unused)), stacklevel=2)
