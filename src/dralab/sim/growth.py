"""Nodes that scenario events add from a Fleet pool, built when the scenario loads.

``{at: 2h, action: add, pool: h100}`` brings one more node of pool ``h100``:
exactly what ``dralab fleet`` publishes for the last node of that pool when the
pool is one node larger (with n such events, n nodes larger): the next name by
the pool's naming (``namePrefix`` and a number), the pool's labels and taints,
and the node's ResourceSlices (none in device-plugin mode, where the node's
GPUs are extended resources). Each mode gets its own form of the node; both are
built here, once, so a run only looks them up.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from dralab.api.core import Node
from dralab.api.resource import ResourceSlice
from dralab.fleet import Fleet, FleetSpecError, parse_fleet

from .fleets import fleet_document, grown
from .modes import MODES
from .spec import ScenarioError

if TYPE_CHECKING:
    from .parsedscenario import ParsedScenario

__all__ = ["PoolNodes", "grow_pools"]

# Per mode name: new node name -> (the node, its slices).
PoolNodes = dict[str, dict[str, tuple[Node, tuple[ResourceSlice, ...]]]]


def grow_pools(scenario: ParsedScenario, fleet: Fleet) -> tuple[PoolNodes, dict[int, str]]:
    """The nodes the scenario's pool ``add`` events bring, per mode, and the name of each
    such event's node by event index. ScenarioError naming the event's ``pool`` field for
    an unknown pool or one that lists its ``nodeNames``."""
    pools = {p.name: p for p in fleet.spec.pools}
    growth: Counter[str] = Counter()
    names: dict[int, str] = {}
    first: dict[str, int] = {}
    for i, event in enumerate(scenario.events):
        if event.pool is None:
            continue
        path = f"spec.events[{i}].pool"
        pool = pools.get(event.pool)
        if pool is None:
            known = ", ".join(sorted(pools)) or "none"
            raise ScenarioError(scenario.source, path,
                                f"unknown pool {event.pool!r} (the fleet's pools: {known})")
        if pool.names:
            raise ScenarioError(scenario.source, path, (
                f"pool {event.pool} lists its nodeNames: it has no next node name to grow "
                "by (use count and namePrefix)"))
        first.setdefault(event.pool, i)
        growth[event.pool] += 1
        names[i] = str(growth[event.pool])  # the n-th new node of the pool, named below
    if not growth:
        return {}, {}
    doc = grown(fleet_document(scenario), growth)
    source = scenario.source + " (fleet)"
    try:
        larger = {p.name: p for p in parse_fleet(doc, source).spec.pools}
    except FleetSpecError as exc:
        i = min(first.values())
        raise ScenarioError(scenario.source, f"spec.events[{i}].pool",
                            f"the grown pool is not a valid fleet: {exc}") from None
    # The pool's naming, one node larger per event: the last names are the new nodes'.
    new_names = {pool: larger[pool].node_names()[-count:] for pool, count in growth.items()}
    wanted = {n for names_ in new_names.values() for n in names_}
    out: PoolNodes = {}
    for mode in MODES.values():
        generated = mode.fleet(doc, scenario.seed, source)
        slices: dict[str, list[ResourceSlice]] = {n: [] for n in wanted}
        for s in generated.slices:
            if s.spec.node_name in slices:
                slices[s.spec.node_name].append(s)
        out[mode.name] = {n.name: (n, tuple(slices[n.name]))
                          for n in generated.nodes if n.name in wanted}
    for i, event in enumerate(scenario.events):
        if event.pool is not None:
            names[i] = new_names[event.pool][int(names[i]) - 1]
    return out, names
