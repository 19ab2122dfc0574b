"""Input limits: how much work one manifest may cause before dralab refuses it.

A platform tool reads whatever lies in a repository or a dump, so every input
is bounded before it is built or computed. Each limit is named in the error a
refused input gets. Where Kubernetes has a limit we keep its rule; where ours
is lower, the reason is given here.

=========================  ===========================  =====================================
limit                      dralab                       upstream
=========================  ===========================  =====================================
nesting depth (YAML/JSON)  100 levels                   10,000 (encoding/json, go-yaml); ours
                                                        is lower because dralab's reader and
                                                        writer are recursive Python (about 3
                                                        frames a level, 1,000 in all);
                                                        real manifests stay below 30
YAML alias expansion       go-yaml v3's ratio rule:     the same rule (go-yaml, used by
                           past 1,000 nodes and 100     sigs.k8s.io/yaml)
                           aliased ones, at most 99 %
                           of the nodes may come from
                           aliases, falling to 10 %
                           from 400,000 to 4,000,000
                           nodes
aliased text               alias expansion may repeat   none (go-yaml counts nodes only)
                           at most max(1 MiB, the
                           document's size) characters
integer digits             4,300                        Python's int-str conversion limit;
                                                        Kubernetes' decoders stop at 64 bits
pods from workloads        100,000 pods built from the  none: controllers create pods in
                           counts of one run's          batches over time, and a Workload's
                           workloads (Job parallelism,  podSets[].count may be any int32;
                           replicas, a Workload's       each pod built is scheduled (about a
                           podSets[].count, pods a      millisecond) and kept in memory, so
                           scale-up must place)         the bound keeps a run within minutes
=========================  ===========================  =====================================

A count past ``MAX_CREATED_PODS`` is refused where it would be expanded, before
any pod is built, with ``too_many_pods_message`` (the count, the total it brings
the run to when that is larger, and the limit).

Quantity bounds live with quantities (``quantity.py``), error-line bounds with
errors (``errors.py``).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ALIAS_MIN_ALIASED",
    "ALIAS_MIN_NODES",
    "ALIAS_RATIO_HIGH_NODES",
    "ALIAS_RATIO_LOW_NODES",
    "MAX_ALIASED_CHARS_FLOOR",
    "MAX_CREATED_PODS",
    "MAX_INTEGER_DIGITS",
    "MAX_NESTING_DEPTH",
    "allowed_alias_ratio",
    "too_deep_message",
    "too_many_pods_message",
]

MAX_NESTING_DEPTH: Final = 100
MAX_INTEGER_DIGITS: Final = 4300
# Pods one run builds from workload counts (see the table above).
MAX_CREATED_PODS: Final = 100_000

# go-yaml v3 (decode.go) refuses a document once more than 100 of its nodes came
# from aliases, it has more than 1,000 nodes, and the aliased share exceeds a
# ratio that falls from 99 % to 10 % as the document grows.
ALIAS_MIN_ALIASED: Final = 100
ALIAS_MIN_NODES: Final = 1000
ALIAS_RATIO_LOW_NODES: Final = 400_000
ALIAS_RATIO_HIGH_NODES: Final = 4_000_000
# Nodes are not all the same size: one long string repeated by a thousand
# aliases is a small node count but a large output, so text is budgeted too.
MAX_ALIASED_CHARS_FLOOR: Final = 1 << 20


def allowed_alias_ratio(nodes: int) -> float:
    """The share of ``nodes`` that may come from alias expansion (go-yaml's curve)."""
    if nodes <= ALIAS_RATIO_LOW_NODES:
        return 0.99
    if nodes >= ALIAS_RATIO_HIGH_NODES:
        return 0.10
    span = ALIAS_RATIO_HIGH_NODES - ALIAS_RATIO_LOW_NODES
    return 0.99 - 0.89 * (nodes - ALIAS_RATIO_LOW_NODES) / span


def too_deep_message() -> str:
    return f"nested more than {MAX_NESTING_DEPTH} levels deep (dralab's limit)"


def too_many_pods_message(count: int, total: int | None = None) -> str:
    """``N pods[ (T with the workloads before it)], more than 100,000 (...)``: the tail
    of the error for a count past ``MAX_CREATED_PODS``; the caller puts the object and
    the field path in front. ``total`` is what the run comes to with this count."""
    others = f" ({total:,} with the workloads before it)" \
        if total is not None and total > count else ""
    return (f"{count:,} pods to create{others}, more than {MAX_CREATED_PODS:,} "
            "(dralab's limit on pods created from workloads in one run)")
