"""One line per TAS pod set for ``dralab explain workload``: where Kueue's
``topologyAssignment`` put the pods, counted per domain of the Topology's levels.

Kueue's v1beta1 assignment names only the hostname when that is the Topology's lowest
level, so the broader levels (an NVLink clique, a rack, a zone) are read back from the
assigned nodes' labels. A pod set whose pods land in more than one domain of a level is
said to span them: with a ``preferred`` request Kueue spreads a pod set over several
domains when none holds it, and nothing else keeps it together. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from dralab.api.core import Pod

from .feasibility import HOSTNAME_LABEL
from .model import NodeTopology, TopologyAssignment

__all__ = ["assignment_line", "pinned_pods"]


def assignment_line(pod_set: str, assignment: TopologyAssignment,
                    topology: NodeTopology | None,
                    node_labels: Mapping[str, Mapping[str, str]]) -> str:
    """``pod set P (Kueue's topologyAssignment): N pods on M nodes in K <level> domain(s)
    (value: pods, ...)``, one clause per level broader than the node."""
    pods = sum(count for _, count in assignment.domains)
    levels = topology.levels if topology is not None else assignment.levels
    per_level = _per_level(assignment, levels, node_labels)
    lowest = assignment.levels[-1] if assignment.levels else "?"
    many = len(assignment.domains) != 1
    noun = ("nodes" if many else "node") if lowest == HOSTNAME_LABEL \
        else f"{lowest} domain{'s' if many else ''}"
    clauses = [f"{pods} pod{'s' if pods != 1 else ''} on {len(assignment.domains)} {noun}"]
    for level, counts in per_level:
        shown = ", ".join(f"{value}: {count}" for value, count in sorted(counts.items()))
        word = "domain" if len(counts) == 1 else "domains"
        clauses.append(f"in {len(counts)} {level} {word} ({shown})")
    return f"  pod set {pod_set} (Kueue's topologyAssignment): {' '.join(clauses)}"


def _per_level(assignment: TopologyAssignment, levels: Sequence[str],
               node_labels: Mapping[str, Mapping[str, str]]
               ) -> list[tuple[str, dict[str, int]]]:
    """Pods per domain of each level broader than the assignment's lowest one."""
    broader = [level for level in levels if level not in assignment.levels[-1:]]
    out: list[tuple[str, dict[str, int]]] = []
    for level in broader:
        counts: dict[str, int] = {}
        for values, count in assignment.domains:
            value = _value(level, values, assignment.levels, node_labels)
            if value is None:
                break  # a node the snapshot does not have: say nothing for this level
            counts[value] = counts.get(value, 0) + count
        else:
            out.append((level, counts))
    return out


def _value(level: str, values: Sequence[str], levels: Sequence[str],
           node_labels: Mapping[str, Mapping[str, str]]) -> str | None:
    if level in levels:
        return values[list(levels).index(level)]
    if levels and levels[-1] == HOSTNAME_LABEL and values:
        return node_labels.get(values[-1], {}).get(level)
    return None


def pinned_pods(pods: Sequence[Pod], assignment: TopologyAssignment) -> list[Pod] | None:
    """``pods`` with a hostname node selector each, filling the assignment's nodes in
    its order (as Kueue's TAS ungater does); None when the assignment's lowest level is
    not the hostname or its counts do not add up to the pods."""
    if not assignment.levels or assignment.levels[-1] != HOSTNAME_LABEL \
            or sum(count for _, count in assignment.domains) != len(pods):
        return None
    nodes = [values[-1] for values, count in assignment.domains for _ in range(count)]
    out = []
    for pod, node in zip(pods, nodes, strict=True):
        selector = {**(pod.spec.node_selector or {}), HOSTNAME_LABEL: node}
        out.append(msgspec.structs.replace(pod, spec=msgspec.structs.replace(
            pod.spec, node_selector=selector)))
    return out
