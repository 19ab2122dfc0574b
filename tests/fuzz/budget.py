"""How many cases each fuzz family gets, and the hypothesis settings that make them
reproducible: derandomized (the same cases on every ``make test``) unless ``FUZZ_SEED`` asks
for others, no example database, no shrinking unless ``FUZZ_SHRINK=1`` (a shrink of a case
that times out would rerun it many times)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, seed, settings

DEFAULT_EXAMPLES = 120
# Each family's share of FUZZ_EXAMPLES: the cheap manifest verbs (admit and explain
# workload among them) get the most; scenario and trace cases that stay valid run a
# simulation or a replay (about a second each), as does a valid migrate plan. The shares
# add up to 1, so `make test` (120 examples) takes about as long as before autoscale and
# migrate had families of their own.
SHARES = {"manifests": 0.30, "migrate": 0.10, "autoscale": 0.08, "argv": 0.12, "fleet": 0.06,
          "config": 0.06, "scenario": 0.12, "trace": 0.10, "hostile": 0.06}

F = TypeVar("F", bound=Callable[..., Any])


def total_examples() -> int:
    return int(os.environ.get("FUZZ_EXAMPLES", DEFAULT_EXAMPLES))


def examples(family: str) -> int:
    return max(1, round(total_examples() * SHARES[family]))


def fuzz(family: str) -> Callable[[F], F]:
    """Hypothesis settings (and seed) for a family's property test."""
    phases = [Phase.explicit, Phase.reuse, Phase.generate]
    if os.environ.get("FUZZ_SHRINK"):
        phases.append(Phase.shrink)
    fixed = os.environ.get("FUZZ_SEED")

    def decorate(test: F) -> F:
        test = settings(max_examples=examples(family), deadline=None, database=None,
                        derandomize=fixed is None, phases=phases, print_blob=False,
                        suppress_health_check=list(HealthCheck))(test)
        if fixed is not None:
            test = seed(int(fixed))(test)
        return test

    return decorate
