"""Workload names as Kueue's job framework gives them (``GetWorkloadNameForOwnerWithGVK``).

``<kind>-<owner name>-<hash>``: the owner's kind in lower case, its name, and the
first five hex digits of a SHA-1 over the owner's kind, API group, name and UID
(one per line), so that two owners of different kinds with the same name get
different Workloads. The prefix is cut so the whole name stays within 253
characters (63 with Kueue's ``ShortWorkloadNames`` gate). An owner without a UID in
the snapshot hashes an empty UID: the name is deterministic, though not the one
the live cluster (which knows the UID) would show.
"""

from __future__ import annotations

import hashlib

__all__ = ["workload_name"]

HASH_LENGTH = 5
MAX_NAME_LENGTH = 253
SHORT_MAX_NAME_LENGTH = 63


def workload_name(kind: str, group: str, name: str, uid: str = "", *,
                  short: bool = False) -> str:
    limit = (SHORT_MAX_NAME_LENGTH if short else MAX_NAME_LENGTH) - 1 - HASH_LENGTH
    prefix = f"{kind.lower()}-{name}"[:limit]
    digest = hashlib.sha1("\n".join((kind, group, name, uid)).encode(), usedforsecurity=False)
    return f"{prefix}-{digest.hexdigest()[:HASH_LENGTH]}"
