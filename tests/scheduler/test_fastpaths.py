"""The runtime's fast paths (filter_relevant, filter_nodes, score_nodes, chunked Filter)
must give exactly what the per-node Protocol methods give."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dralab.cluster import NodeInfo, PodInfo
from dralab.scheduler import Scheduler, build_cluster, schedule
from dralab.scheduler.framework import CycleState, NodeScore
from dralab.scheduler.runtime import Framework

from .builders import config, fit_args, match, node, placements, pod, toleration


def random_cluster(rng: random.Random, count: int) -> list[Any]:
    out: list[Any] = []
    for i in range(count):
        taints = [rng.choice(["a=1:PreferNoSchedule", "b:PreferNoSchedule", "c=2:NoSchedule"])
                  for _ in range(rng.randrange(3))]
        out.append(node(f"n{i}", str(rng.choice([1, 2, 4, 8])),
                        rng.choice(["2Gi", "8Gi", "16Gi"]), gpus=rng.choice([0, 0, 2, 8]),
                        labels={"zone": rng.choice("xyz")}, taints=taints,
                        pods=rng.choice([2, 110])))
    return out


def random_pod(rng: random.Random, name: str) -> Any:
    return pod(name, rng.choice([None, "100m", "1", "3"]), rng.choice([None, "1Gi", "6Gi"]),
               gpus=rng.choice([0, 0, 1, 4]),
               tolerations=[toleration("a", "PreferNoSchedule", "1")] if rng.random() < .5
               else [],
               preferred=[(rng.randrange(1, 100), match("zone", "In", rng.choice("xyz")))]
               if rng.random() < .5 else [])


def framework(objects: list[Any], doc: dict[str, Any] | None = None
              ) -> tuple[Framework, list[NodeInfo], list[PodInfo]]:
    cluster, pending = build_cluster(objects)
    scheduler = Scheduler.build(cluster, doc)
    return scheduler.frameworks["default-scheduler"], cluster.node_infos(), pending


STRATEGIES = [None, config({"schedulerName": "default-scheduler",
                            "pluginConfig": [fit_args("MostAllocated", [("cpu", 3),
                                                                         ("memory", 1)])]})]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("doc", STRATEGIES, ids=["least", "most"])
def test_batch_score_and_filter_equal_per_node(seed: int, doc: dict[str, Any] | None) -> None:
    rng = random.Random(seed)
    nodes_ = random_cluster(rng, 12)
    pods_ = [random_pod(rng, f"p{i}") for i in range(6)]
    # Some pods already running, so requested amounts differ per node.
    running = [pod(f"r{i}", "500m", "1Gi", node_name=f"n{rng.randrange(12)}") for i in range(8)]
    fw, nodes, pending = framework([*nodes_, *running, *pods_], doc)
    for info in pending:
        state = CycleState()
        fw.run_pre_filter(state, info, fw.cluster)  # type: ignore[arg-type]
        for name, plugin in fw.filter:
            batch = getattr(plugin, "filter_nodes", None)
            single = [plugin.filter(state, info, n) for n in nodes]
            if batch is not None:
                assert batch(state, info, nodes) == single, name
            relevant = getattr(plugin, "filter_relevant", None)
            if relevant is not None and not relevant(info):
                assert all(s.is_success() for s in single), name
        fw.run_pre_score(state, info, nodes)
        for name, plugin in fw.score:
            if name in state.skip_score or not hasattr(plugin, "score_nodes"):
                continue
            raw = [NodeScore(n.name, plugin.score(state, info, n)[0]) for n in nodes]
            ext = plugin.score_extensions()
            if ext is not None:
                ext.normalize_score(state, info, raw)
            batch_scores, status = plugin.score_nodes(state, info, nodes)  # type: ignore[attr-defined]
            assert status.is_success()
            assert batch_scores == [s.score for s in raw], name


@pytest.mark.parametrize("seed", range(4))
def test_chunked_search_matches_sequential(seed: int) -> None:
    """With more than a chunk of nodes and many rejections, placements and messages
    equal those of a run where every chunk holds one node."""
    import dralab.scheduler.cycle as cycle

    rng = random.Random(seed)
    objects = [*random_cluster(rng, 150), *(random_pod(rng, f"p{i}") for i in range(40))]
    chunked = schedule(objects, seed=seed)
    saved = cycle.FILTER_CHUNK
    cycle.FILTER_CHUNK = 1
    try:
        sequential = schedule(objects, seed=seed)
    finally:
        cycle.FILTER_CHUNK = saved
    assert placements(chunked) == placements(sequential)
    assert [u.message for u in chunked.unplaced] == [u.message for u in sequential.unplaced]
