"""The cohort tree's shape: parent walks, cycles, one place for all of them.

Kueue lets ``Cohort.spec.parentName`` form a cycle (its webhook does not refuse
one, a self-parent included) and treats it as a configuration error at run time
(``pkg/cache/hierarchy/cycle.go`` ``HasCycle``; ``pkg/cache/scheduler/snapshot.go``
skips every ClusterQueue whose cohort ``HasCycle`` with reason ``HasCycle``, and
the scheduler writes ``ClusterQueue NAME is inactive`` on its pending workloads).
A cohort "has a cycle" when walking up its parents never reaches a root: the
cohorts on a cycle and every cohort below one.

Every walk here is a loop bounded by the number of cohorts, never recursion, so a
chain thousands deep costs time linear in its depth and no stack. Pure functions
of the cohort specs; nothing is mutated.
"""

from __future__ import annotations

from collections.abc import Mapping

from .model import CohortSpec

__all__ = ["HAS_CYCLE", "ancestors", "cohort_cycle", "cycle_cohorts", "cycle_reason"]

# Kueue's inactiveCQReason for a ClusterQueue whose cohort has a cycle.
HAS_CYCLE = "HasCycle"

# How many cohorts of a cycle a message names before it says how many more.
_NAMED = 4


def _parent(cohorts: Mapping[str, CohortSpec], name: str) -> str | None:
    spec = cohorts.get(name)
    return spec.parent if spec is not None and spec.parent else None


def cycle_cohorts(cohorts: Mapping[str, CohortSpec]) -> frozenset[str]:
    """Every cohort whose parent walk never ends (on a cycle or below one).

    Each cohort is visited once: a walk stops at the first cohort whose answer is
    already known, so the whole forest costs O(number of cohorts)."""
    known: dict[str, bool] = {}
    for start in sorted(cohorts):
        if start in known:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        name: str | None = start
        verdict = False
        while name is not None:
            if name in known:
                verdict = known[name]
                break
            if name in on_path:
                verdict = True
                break
            path.append(name)
            on_path.add(name)
            name = _parent(cohorts, name)
        for visited in path:
            known[visited] = verdict
    return frozenset(name for name, cyclic in known.items() if cyclic)


def cohort_cycle(cohorts: Mapping[str, CohortSpec], name: str) -> tuple[str, ...]:
    """The cycle that walking up from ``name`` runs into, in parent order starting at
    the first of its cohorts the walk meets; empty when the walk reaches a root."""
    order: dict[str, int] = {}
    path: list[str] = []
    current: str | None = name
    while current is not None and current not in order:
        order[current] = len(path)
        path.append(current)
        current = _parent(cohorts, current)
    if current is None:
        return ()
    return tuple(path[order[current]:])


def ancestors(cohorts: Mapping[str, CohortSpec], name: str | None) -> list[str]:
    """``name`` and its parents up to the root, nearest first (Kueue's
    ``PathSelfToRoot``); on a cycle the walk stops before a cohort repeats."""
    out: list[str] = []
    seen: set[str] = set()
    current = name or None
    while current is not None and current not in seen:
        seen.add(current)
        out.append(current)
        current = _parent(cohorts, current)
    return out


def cycle_reason(cohorts: Mapping[str, CohortSpec], cluster_queue: str,
                 cohort: str) -> str:
    """Why ``cluster_queue`` (of ``cohort``, which has a cycle) admits nothing: the
    cycle named, long ones shortened with a count."""
    cycle = cohort_cycle(cohorts, cohort)
    shown = list(cycle[:_NAMED])
    if len(cycle) > _NAMED:
        shown.append(f"... ({len(cycle) - _NAMED} more)")
    ring = " -> ".join([*shown, cycle[0]]) if cycle else cohort
    where = "is in" if cohort in cycle else "is under"
    return (f"ClusterQueue {cluster_queue} is inactive ({HAS_CYCLE}): its cohort {cohort} "
            f"{where} a cycle of {len(cycle)} cohort(s) through spec.parentName ({ring}); "
            f"Kueue admits nothing under the cycle until it is removed")
