"""The masked search (filter_mask / filter_rejections / filter_vouched) and array scoring
(score_positions) must change nothing: on random clusters a run with them and a run
without them give the same placements, messages, per-node statuses (in the same
order), scores, evictions and final objects."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

import dralab.scheduler.cycle as cycle_module
from dralab.api.codec import encode
from dralab.api.core import Pod
from dralab.controllers.resourceclaims import delete_pod
from dralab.scheduler import Scheduler, build_cluster
from dralab.scheduler.cycle import Attempt

from .builders import config, fit_args, match, node, pod, priority_class, toleration
from .dra.builders import first_available, gpu_class, gpus, request, template

ZONES = "xyz"


def random_objects(rng: random.Random, nodes: int, pods: int) -> list[Any]:
    out: list[Any] = [priority_class("high", 1000), gpu_class(),
                      gpu_class("fast", selectors=['device.attributes["gpu.example.com"]'
                                                   '.model == "h100"']),
                      template("one", request()),
                      template("two", request(count=2)),
                      template("fast", request(cls="fast")),
                      template("either", first_available("gpu", ("fast", "fast", 1),
                                                         ("any", "gpu", 1)))]
    for i in range(nodes):
        name = f"n{i}"
        taints = [rng.choice(["a=1:PreferNoSchedule", "b:PreferNoSchedule", "c=2:NoSchedule",
                              "d:NoExecute"]) for _ in range(rng.choice([0, 0, 0, 1, 2]))]
        out.append(node(name, str(rng.choice([1, 2, 4, 8])), rng.choice(["2Gi", "8Gi", "16Gi"]),
                        gpus=rng.choice([0, 0, 2, 4]), labels={"zone": rng.choice(ZONES)},
                        taints=taints, pods=rng.choice([2, 3, 110]),
                        unschedulable=rng.random() < .05))
        if rng.random() < .7:
            out.append(gpus(name, rng.choice([1, 2, 4]), model=rng.choice(["a100", "h100"])))
    for i in range(rng.randrange(nodes // 2 + 1)):  # running pods: nodes differ in use
        out.append(pod(f"r{i}", rng.choice(["100m", "500m", "1"]), "512Mi",
                       node_name=f"n{rng.randrange(nodes)}", priority=rng.choice([0, 10])))
    # A few shared shapes, so the affinity/toleration masks are built (second sighting).
    selectors = [None, {"zone": "x"}, {"zone": "y"}]
    tolerations = [[], [toleration("c", "NoSchedule", "2")], [toleration(operator="Exists")]]
    for i in range(pods):
        claims = rng.choice([[], [], ["one"], ["one"], ["two"], ["fast"], ["either"]])
        spec: dict[str, Any] = {
            "gpus": rng.choice([0, 0, 0, 1]),
            "node_selector": rng.choice(selectors),
            "tolerations": rng.choice(tolerations),
            "priority": rng.choice([0, 0, 0, 100]),
            "claims": [{"name": f"c{j}", "resourceClaimTemplateName": t}
                       for j, t in enumerate(claims)],
        }
        if rng.random() < .2:
            spec["preferred"] = [(rng.randrange(1, 100), match("zone", "In", rng.choice(ZONES)))]
        if rng.random() < .1:
            spec["required"] = [{"matchFields": [{
                "key": "metadata.name", "operator": "In",
                "values": [f"n{rng.randrange(nodes)}" for _ in range(3)]}]}]
        out.append(pod(f"p{i}", rng.choice([None, "100m", "1", "3"]),
                       rng.choice([None, "1Gi", "6Gi"]), **spec))
    return out


def run(objects: list[Any], doc: dict[str, Any] | None, masks: bool, seed: int
        ) -> tuple[Any, list[tuple[Any, ...]]]:
    cluster, pending = build_cluster(objects, seed=seed)
    seen: list[tuple[Any, ...]] = []

    def observe(a: Attempt) -> None:
        scores = None if a.scores is None else (a.scores.names, a.scores.columns,
                                                a.scores.totals)
        seen.append((a.pod.key, a.node, a.feasible, list(a.rejected.items()), scores,
                     a.evaluated, a.via_nomination, a.nominated, a.victims,
                     a.error, a.diagnosis.message() if a.diagnosis else None))

    scheduler = Scheduler.build(cluster, doc, seed, observe=observe)
    scheduler.cycle.use_masks = masks
    return scheduler.run(pending), seen


def same_run(objects: list[Any], doc: dict[str, Any] | None, seed: int) -> int:
    """Assert equal runs; returns how many attempts there were."""
    fast, fast_seen = run(objects, doc, True, seed)
    plain, plain_seen = run(objects, doc, False, seed)
    assert fast_seen == plain_seen
    assert [(p.pod.metadata.name, p.node) for p in fast.placed] == \
        [(p.pod.metadata.name, p.node) for p in plain.placed]
    assert [(u.pod.metadata.name, u.reason, u.message, list(u.statuses.items()))
            for u in fast.unplaced] == \
        [(u.pod.metadata.name, u.reason, u.message, list(u.statuses.items()))
         for u in plain.unplaced]
    assert [(e.pod.metadata.name, e.node) for e in fast.evicted] == \
        [(e.pod.metadata.name, e.node) for e in plain.evicted]
    assert [encode(p) for p in fast.pods] == [encode(p) for p in plain.pods]
    assert [encode(c) for c in fast.cluster.claims.values()] == \
        [encode(c) for c in plain.cluster.claims.values()]
    return len(fast_seen)


NO_SCORE = config({"schedulerName": "default-scheduler",
                   "plugins": {"score": {"disabled": [{"name": "*"}]}}})
MOST = config({"schedulerName": "default-scheduler",
               "pluginConfig": [fit_args("MostAllocated", [("cpu", 3), ("memory", 1)])]})
PACK = config({"schedulerName": "default-scheduler", "pluginConfig": [
    {"name": "DynamicResources", "args": {"devicePolicy": "pack"}}]})
DOCS = [None, NO_SCORE, MOST, PACK]


@pytest.fixture(autouse=True)
def masks_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    # Small clusters normally take the plain search; here every size takes the masks.
    monkeypatch.setattr(cycle_module, "MASK_MIN_NODES", 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), nodes=st.integers(1, 24), pods=st.integers(1, 30),
       doc=st.sampled_from(range(len(DOCS))))
def test_masked_search_changes_nothing(seed: int, nodes: int, pods: int, doc: int) -> None:
    rng = random.Random(seed)
    same_run(random_objects(rng, nodes, pods), DOCS[doc], seed)


@pytest.mark.parametrize("seed", range(3))
def test_masked_search_changes_nothing_when_the_search_stops_early(seed: int) -> None:
    """Past 100 nodes kube-scheduler stops after a share of feasible nodes; with
    enough pods the devices run out and the tail of the run is mostly rejections."""
    rng = random.Random(seed)
    doc = config({"schedulerName": "default-scheduler"}, percentageOfNodesToScore=10)
    assert same_run(random_objects(rng, 130, 120), doc, seed) >= 120


def test_fill_until_full_changes_nothing() -> None:
    """One template, nodes filling up one device at a time, then no room at all."""
    objects: list[Any] = [gpu_class(), template("one", request())]
    for i in range(120):
        objects += [node(f"n{i}"), gpus(f"n{i}", 2)]
    objects += [pod(f"p{i}", "100m", claims=[{"name": "c", "resourceClaimTemplateName": "one"}])
                for i in range(250)]
    same_run(objects, None, 7)


def churn(objects: list[Any], extra: list[Any], masks: bool, seed: int) -> list[tuple[Any, ...]]:
    """The simulator's pattern: one cycle per pod, pods leaving between rounds."""
    cluster, pending = build_cluster(objects, seed=seed)
    scheduler = Scheduler.build(cluster, None, seed)
    scheduler.cycle.use_masks = masks
    framework = scheduler.frameworks["default-scheduler"]
    rng = random.Random(seed)
    seen: list[tuple[Any, ...]] = []
    waiting = list(pending)
    for round_ in range(4):
        for info in waiting:
            if not framework.run_pre_enqueue(info).is_success():
                continue
            a = scheduler.cycle.schedule_one(framework, info)
            scheduler.cycle.set_nomination(info, a.nominated)
            for key in a.victims:
                delete_pod(cluster, key)
            seen.append((info.key, a.node, a.feasible, list(a.rejected.items()),
                         a.scores and (a.scores.names, a.scores.totals),
                         a.diagnosis.message() if a.diagnosis else None))
        placed = sorted(k for k, p in cluster.pods.items() if p.assumed_node)
        for key in rng.sample(placed, len(placed) // 3):
            delete_pod(cluster, key)
        waiting = [cluster.add_pod(p) for p in extra[round_::4]]
    return seen


@pytest.mark.parametrize("seed", range(4))
def test_masked_search_follows_pods_leaving(seed: int) -> None:
    rng = random.Random(seed)
    objects = random_objects(rng, 40, 60)
    later = [p for p in random_objects(random.Random(seed + 100), 1, 80)
             if isinstance(p, Pod) and not p.spec.node_name]
    extra = [replace(p, metadata=replace(p.metadata, name=f"late-{i}"))
             for i, p in enumerate(later)]
    assert churn(objects, extra, True, seed) == churn(objects, extra, False, seed)
