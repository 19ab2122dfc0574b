"""Kueue's ``topologyAssignment`` documents read into ``TopologyAssignment``.

Kueue v1beta1 lists ``domains`` (``values`` per level, ``count``); v1beta2 compresses
them into ``slices`` (``domainCount`` domains; per level one ``universal`` value or
``individual`` prefix + roots + suffix; ``podCounts`` universal or individual), as
``apis/kueue/v1beta2/workload_types.go`` at ff69552e defines. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dralab.api.limits import MAX_CREATED_PODS

from .model import TopologyAssignment

__all__ = ["parse_topology_assignment"]


def parse_topology_assignment(doc: Mapping[str, Any]) -> TopologyAssignment | None:
    """A ``topologyAssignment`` as Kueue writes it: v1beta1 ``domains`` (values, count)
    or v1beta2 ``slices`` (``domainCount``, ``valuesPerLevel`` universal or
    prefix+roots+suffix, ``podCounts`` universal or individual). None when malformed."""
    levels = doc.get("levels")
    if not isinstance(levels, list) or not all(isinstance(x, str) for x in levels):
        return None
    domains: list[tuple[tuple[str, ...], int]] = []
    if isinstance(doc.get("domains"), list):
        for domain in doc["domains"]:
            values = domain.get("values") if isinstance(domain, Mapping) else None
            count = domain.get("count") if isinstance(domain, Mapping) else None
            if not isinstance(values, list) or not isinstance(count, int):
                return None
            domains.append((tuple(str(v) for v in values), count))
    elif isinstance(doc.get("slices"), list):
        for piece in doc["slices"]:
            decoded = _slice(piece, len(levels)) if isinstance(piece, Mapping) else None
            if decoded is None or len(domains) + len(decoded) > MAX_CREATED_PODS:
                return None
            domains.extend(decoded)
    else:
        return None
    return TopologyAssignment(tuple(levels), tuple(domains))


def _slice(piece: Mapping[str, Any], depth: int) -> list[tuple[tuple[str, ...], int]] | None:
    count = piece.get("domainCount")
    per_level = piece.get("valuesPerLevel")
    pods = piece.get("podCounts")
    # domainCount has no maximum in the CRD; a universal value would repeat it that many
    # times: more domains than pods dralab may build is no assignment it can hold.
    if not isinstance(count, int) or not 1 <= count <= MAX_CREATED_PODS \
            or not isinstance(per_level, list) or len(per_level) != depth \
            or not isinstance(pods, Mapping):
        return None
    columns: list[list[str]] = []
    for level in per_level:
        if not isinstance(level, Mapping):
            return None
        if isinstance(level.get("universal"), str):
            columns.append([level["universal"]] * count)
            continue
        individual = level.get("individual")
        roots = individual.get("roots") if isinstance(individual, Mapping) else None
        if not isinstance(roots, list) or len(roots) != count:
            return None
        assert isinstance(individual, Mapping)
        prefix, suffix = individual.get("prefix") or "", individual.get("suffix") or ""
        columns.append([f"{prefix}{root}{suffix}" for root in roots])
    if isinstance(pods.get("universal"), int):
        counts = [pods["universal"]] * count
    elif isinstance(pods.get("individual"), list) and len(pods["individual"]) == count:
        counts = list(pods["individual"])
    else:
        return None
    if not all(isinstance(c, int) and c >= 0 for c in counts):
        return None
    return [(tuple(column[i] for column in columns), counts[i]) for i in range(count)]
