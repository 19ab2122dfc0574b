"""Expanders: which group's option a scale-up takes (Cluster Autoscaler's
``--expander``), plus ours, ``fragmentation``.

* ``random``: any option (seeded);
* ``most-pods``: the one that helps most pods;
* ``least-waste``: the least unused CPU + memory (+ GPU) fraction on the new nodes;
* ``price``: the lowest cost per helped pod (new nodes x price per hour / pods);
* ``priority``: the group with the highest ``priority``;
* ``fragmentation``: the least stranded GPU capacity on the new nodes (FGD's
  measure towards the helped pods' shapes).

Ties go to the option that helps more pods, then fewer nodes, then the group
name, so that every expander is deterministic (CA falls back to random).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from .estimator import Estimate

__all__ = ["EXPANDERS", "READS", "choose"]


def _tie(option: Estimate) -> tuple[int, int, str]:
    return (-option.pod_count, len(option.nodes), option.group.name)


def _price(option: Estimate) -> float:
    return len(option.nodes) * option.group.price_per_hour / max(1, option.pod_count)


_KEYS: dict[str, Callable[[Estimate], tuple[object, ...]]] = {
    "most-pods": lambda o: (-o.pod_count, *_tie(o)),
    "least-waste": lambda o: (round(o.waste, 9), *_tie(o)),
    "price": lambda o: (round(_price(o), 9), *_tie(o)),
    "priority": lambda o: (-o.group.priority, *_tie(o)),
    "fragmentation": lambda o: (round(o.fragmentation, 6), *_tie(o)),
}

EXPANDERS: tuple[str, ...] = ("random", *_KEYS)
# The estimate measures (``estimate(measures=...)``) each expander reads.
READS: dict[str, frozenset[str]] = {"least-waste": frozenset({"waste"}),
                                    "fragmentation": frozenset({"fragmentation"})}


def choose(name: str, options: Sequence[Estimate], rng: random.Random) -> Estimate:
    """The option ``name`` picks among ``options`` (not empty)."""
    if name == "random":
        return rng.choice(sorted(options, key=lambda o: o.group.name))
    return min(options, key=_KEYS[name])
