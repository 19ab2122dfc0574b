"""Expanders: which group's option a scale-up takes (Cluster Autoscaler's
``--expander``), plus two of ours, named as such.

As in CA (expander/*, expander/factory/chain.go), each expander is a filter that
keeps the best options; ``--expander=a,b`` chains them (each filter sees what the
previous kept, and the chain stops as soon as one option is left):

* ``random``: any option (seeded);
* ``most-pods``: the options that help most pods;
* ``least-nodes``: the options that add fewest nodes (options adding none are
  dropped);
* ``least-waste``: the least unused CPU fraction plus unused memory fraction:
  the helped pods' requests against the template node's capacity times the
  node count (expander/waste/waste.go; nothing else counts, DRA devices not);
* ``price``: CA's price expander (``price.py``): node price against pod price,
  weighed by how far the group's node is from the preferred node size, with
  dralab's pricing model (the pool's ``pricePerHour``; pods at GCE's base prices);
* ``priority``: the options whose group matches the highest priority of
  ``priorities`` (CA's cluster-autoscaler-priority-expander ConfigMap: priority
  -> regular expressions searched in the group name); a group no expression
  matches is not used, and when none matches, nothing is filtered. Without
  ``priorities``, the pools' ``autoscaling.priority`` stand in for it;
* ``least-waste-dra`` (ours): least-waste plus the unused fraction of the DRA
  devices of the new nodes (1 - their mean DRA utilisation);
* ``fragmentation`` (ours): the least stranded GPU capacity on the new nodes
  (FGD's measure towards the helped pods' shapes);
* ``cost-per-pod`` (ours; dralab's ``price`` before it followed CA's): the lowest
  cost per helped pod (new nodes x the pool's price per hour / pods).

Where CA falls back to a random choice among the options left, ties go to the
option that helps more pods, then fewer nodes, then the group name, so that
every chain is deterministic (``random`` alone draws from the seeded RNG).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence

from .estimator import Estimate
from .price import (
    STABILIZATION_POD,
    PriceOption,
    best_price_options,
    pod_price,
    preferred_node_cpu_m,
)

__all__ = ["EXPANDERS", "READS", "best_options", "choose", "expander_error", "measures_for",
           "run_chain"]

Priorities = Mapping[int, Sequence[str]]


def _tie(option: Estimate) -> tuple[int, int, str]:
    return (-option.pod_count, len(option.nodes), option.group.name)


def _price(option: Estimate) -> float:
    return len(option.nodes) * option.group.price_per_hour / max(1, option.pod_count)


def _ca_price(options: Sequence[Estimate]) -> list[Estimate]:
    if not options:
        return []
    priced = [PriceOption(o.group.name, o.node_count, o.group.price_per_hour, [o.pods_price],
                          o.template_cpu_m, o.template_gpu) for o in options]
    kept = best_price_options(priced, preferred_node_cpu_m(options[0].cluster_nodes),
                              pod_price(STABILIZATION_POD))
    return [options[i] for i in kept]


def _keep_least(options: Sequence[Estimate], score: Callable[[Estimate], float]
                ) -> list[Estimate]:
    if not options:
        return []
    scores = [score(o) for o in options]
    low = min(scores)
    return [o for o, s in zip(options, scores, strict=True) if s == low]


def _least_nodes(options: Sequence[Estimate]) -> list[Estimate]:
    return _keep_least([o for o in options if o.node_count > 0], lambda o: o.node_count)


def _priority(options: Sequence[Estimate], priorities: Priorities | None) -> list[Estimate]:
    if not options:
        return []
    if priorities is None:
        return _keep_least(options, lambda o: -o.group.priority)
    compiled = [(p, [re.compile(x) for x in exprs]) for p, exprs in priorities.items()]
    ranked: list[tuple[int, Estimate]] = []
    for option in options:
        matched = [p for p, exprs in compiled if any(e.search(option.group.name) for e in exprs)]
        if matched:
            ranked.append((max(matched), option))
    if not ranked:
        return list(options)
    top = max(p for p, _ in ranked)
    return [o for p, o in ranked if p == top]


_FILTERS: dict[str, Callable[[Sequence[Estimate], Priorities | None], list[Estimate]]] = {
    "most-pods": lambda os, _: _keep_least(os, lambda o: -o.pod_count),
    "least-nodes": lambda os, _: _least_nodes(os),
    "least-waste": lambda os, _: _keep_least(os, lambda o: round(o.waste, 12)),
    "price": lambda os, _: _ca_price(os),
    "cost-per-pod": lambda os, _: _keep_least(os, lambda o: round(_price(o), 9)),
    "priority": _priority,
    "least-waste-dra": lambda os, _: _keep_least(os, lambda o: round(o.waste + o.dra_waste, 12)),
    "fragmentation": lambda os, _: _keep_least(os, lambda o: round(o.fragmentation, 6)),
}

EXPANDERS: tuple[str, ...] = ("random", "most-pods", "least-waste", "price", "priority",
                              "least-nodes", "least-waste-dra", "fragmentation",
                              "cost-per-pod")
# The estimate measures (``estimate(measures=...)``) each expander reads.
READS: dict[str, frozenset[str]] = {"least-waste": frozenset({"waste"}),
                                    "price": frozenset({"price"}),
                                    "least-waste-dra": frozenset({"waste", "dra_waste"}),
                                    "fragmentation": frozenset({"fragmentation"})}


def _chain(name: str) -> list[str]:
    return [part.strip() for part in name.split(",")]


def expander_error(name: str) -> str | None:
    """Why ``name`` (one expander or a comma-separated chain) is not valid; None if it is."""
    for part in _chain(name):
        if part not in EXPANDERS:
            return f"unknown expander {part!r} (known: {', '.join(EXPANDERS)})"
    return None


def measures_for(name: str) -> frozenset[str]:
    """What the estimates must measure for the expander (or chain) ``name``."""
    out: frozenset[str] = frozenset()
    for part in _chain(name):
        out |= READS.get(part, frozenset())
    return out


def best_options(name: str, options: Sequence[Estimate], priorities: Priorities | None = None
                 ) -> list[Estimate]:
    """The options the filter ``name`` keeps (CA's ``BestOptions``); ``random`` keeps all."""
    if name == "random":
        return list(options)
    return _FILTERS[name](options, priorities)


Filter = Callable[[Sequence[Estimate]], list[Estimate]]
Strategy = Callable[[Sequence[Estimate]], Estimate | None]


def run_chain(filters: Sequence[Filter], fallback: Strategy, options: Sequence[Estimate]
              ) -> Estimate | None:
    """CA's chain strategy (expander/factory/chain.go): each filter narrows the options,
    stopping as soon as one is left; the fallback picks among what remains (None: no
    option)."""
    kept = list(options)
    for narrow in filters:
        kept = narrow(kept)
        if len(kept) == 1:
            return kept[0]
    return fallback(kept)


def choose(name: str, options: Sequence[Estimate], rng: random.Random,
           priorities: Priorities | None = None) -> Estimate:
    """The option the expander (or chain) ``name`` picks among ``options`` (not empty)."""
    parts = _chain(name)
    if parts == ["random"]:
        return rng.choice(sorted(options, key=lambda o: o.group.name))
    filters: list[Filter] = [
        (lambda os, part=part: best_options(part, os, priorities))  # type: ignore[misc]
        for part in parts if part != "random"]
    picked = run_chain(filters, lambda os: min(os, key=_tie) if os else None, options)
    # A chain whose filters leave nothing (CA would scale nothing up) cannot happen with
    # options that help pods; should it, the tie rule decides among them all.
    return picked if picked is not None else min(options, key=_tie)
