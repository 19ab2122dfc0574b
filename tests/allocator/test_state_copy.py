"""``AllocatedState.copy`` is layered over the original (cheap for preemption's many
what-if states) yet behaves as a full copy: random changes to copies, copies of
copies and the original give, everywhere, exactly what independent deep copies
changed the same way hold (content, iteration order, pool versions)."""

from __future__ import annotations

import copy
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dralab.allocator import AllocatedState
from dralab.api.resource import ResourceClaim

from .builders import DRIVER_A, in_use

DEVICES = [(DRIVER_A, pool, f"d{i}") for pool in ("p", "q") for i in range(4)]


def random_claim(rng: random.Random, name: str) -> ResourceClaim:
    devs = rng.sample(DEVICES, rng.randint(1, 3))
    if rng.random() < .4:
        return in_use(name, *devs, share=f"s-{name}", consumed={"memory": rng.choice(["1Gi",
                                                                                  "2Gi"])})
    return in_use(name, *devs, admin=rng.random() < .1)


def snapshot(state: AllocatedState) -> Any:
    return (list(state.exclusive.items()), list(state.shares.items()),
            [(k, list(v.items())) for k, v in state.capacity.items()],
            [(p, list(state.allocated_in_pool(p).items())) for p in (
                (DRIVER_A, "p"), (DRIVER_A, "q"))],
            [state.pool_version(p) for p in ((DRIVER_A, "p"), (DRIVER_A, "q"))],
            state.claims(), state.version)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_layered_copies_behave_as_deep_copies(seed: int) -> None:
    rng = random.Random(seed)
    states = [AllocatedState()]
    mirrors = [AllocatedState()]  # changed the same way; copies are deep copies
    names = [f"c{i}" for i in range(8)]
    for _ in range(60):
        i = rng.randrange(len(states))
        action = rng.random()
        if action < .15 and len(states) < 6:
            states.append(states[i].copy())
            mirrors.append(copy.deepcopy(mirrors[i]))
            continue
        if action < .6:
            made = random_claim(rng, rng.choice(names))
            states[i].add_claim(made)
            mirrors[i].add_claim(made)
        else:
            key = f"uid-{rng.choice(names)}"
            states[i].remove(key)
            mirrors[i].remove(key)
        for state, mirror in zip(states, mirrors, strict=True):
            assert snapshot(state) == snapshot(mirror)
    for state, mirror in zip(states, mirrors, strict=True):
        assert snapshot(state.copy()) == snapshot(mirror)
