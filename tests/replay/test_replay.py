"""Short replays against stored numbers, run invariants, and one full run as a spot check.

The stored numbers (expected_short_replay.json) change only on purpose: rerun with
DRALAB_REGEN_EXPECTED=1 to rewrite them, and review the diff.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dralab.policies import POLICIES, make_policy
from dralab.replay.run import ReplayRun, ReplayScenario, paper_seeds, replay, run, summarize
from dralab.replay.trace import load_nodes, load_pods

EXPECTED = Path(__file__).with_name("expected_short_replay.json")
REGEN = os.environ.get("DRALAB_REGEN_EXPECTED") == "1"
SEEDS = (42, 43)


@cache
def small() -> ReplayScenario:
    """The first 120 GPU nodes and the first 400 default pods: a few hundred arrivals."""
    return ReplayScenario.build("default[:400]", load_nodes(limit=120), load_pods(limit=400))


def digest(r: ReplayRun) -> dict[str, Any]:
    return {
        "events": r.events,
        "failed": r.failed,
        "used_milli": int(r.used_milli[-1]),
        "frag_milli": round(float(r.frag_milli[-1]), 3),
        "unalloc_pct": {str(x): round(r.at(x), 4) for x in (90, 100, 110, 130)},
        "first_nodes": r.node[:5].tolist(),
    }


@cache
def runs() -> dict[str, dict[str, Any]]:
    sc = small()
    return {f"{name}/{seed}": digest(run(sc, make_policy(name, sc.context), seed))
            for name in POLICIES for seed in SEEDS}


def test_short_replays_match_stored_numbers() -> None:
    got = runs()
    if REGEN:
        EXPECTED.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        pytest.skip("expected numbers regenerated")
    assert got == json.loads(EXPECTED.read_text())


@pytest.mark.parametrize("name", list(POLICIES))
def test_run_invariants(name: str) -> None:
    sc = small()
    r = run(sc, make_policy(name, sc.context), 42)
    demand = np.asarray([sc.demands[int(p)].gpu_total for p in r.pod])
    assert np.array_equal(r.arrived_milli, np.cumsum(demand))
    assert np.array_equal(r.used_milli, np.cumsum(np.where(r.node >= 0, demand, 0)))
    assert (r.used_milli <= sc.capacity_milli).all()
    # Fragmentation never exceeds the idle share.
    assert (r.frag_milli <= sc.capacity_milli - r.used_milli + 1e-6).all()
    again = run(sc, make_policy(name, sc.context), 42)
    assert np.array_equal(r.node, again.node)
    assert r.arrived_pct()[-1] == pytest.approx(130, abs=1.0)


def test_placements_respect_capacity() -> None:
    sc = small()
    r = run(sc, make_policy("FGD", sc.context), 43)
    cpu = np.zeros(len(sc.nodes), dtype=np.int64)
    gpu = np.zeros(len(sc.nodes), dtype=np.int64)
    for p, n in zip(r.pod, r.node, strict=True):
        if n >= 0:
            cpu[n] += sc.pods[int(p)].cpu_milli
            gpu[n] += sc.pods[int(p)].gpu_request
    assert (cpu <= [x.cpu_milli for x in sc.nodes]).all()
    assert (gpu <= [1000 * x.gpus for x in sc.nodes]).all()


def test_summary_rows() -> None:
    sc = small()
    rows = summarize([run(sc, make_policy("BestFit", sc.context), s) for s in SEEDS])
    assert [(r.policy, r.arrived_pct, r.seeds) for r in rows] == [
        ("BestFit", x, 2) for x in (90, 95, 100, 110, 130)]
    assert paper_seeds(3) == (42, 43, 44)


def test_one_full_run_lands_near_the_paper() -> None:
    """BestFit, seed 42, default trace: the paper's mean is 7.14 +- 0.14 at 100 %."""
    r = replay("default", "BestFit", 42)
    assert r.trace_pods == 8152 and 10_000 < r.events < 11_500
    assert 6.5 < r.at(100) < 7.8
    assert r.at(50) == pytest.approx(50.0, abs=0.1)   # everything fits at half load
