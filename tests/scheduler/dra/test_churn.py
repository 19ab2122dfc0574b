"""Node churn under a warm DRA cache: after nodes leave, join, change their slices or
labels, shared pools appear and go, and what-ifs are reverted, a scheduling cycle on
the long-lived scheduler (its slice index updated per node, per-node outcomes and
feasibility masks kept) answers exactly what a scheduler over a freshly built
cluster answers: same node, same feasible and rejected nodes with the same
statuses, same scores, same devices."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from dralab.api.base import ObjectMeta
from dralab.api.core import Pod
from dralab.api.resource import ResourceSlice
from dralab.cluster import ClusterState
from dralab.controllers.resourceclaims import delete_pod
from dralab.scheduler import Scheduler
from dralab.scheduler.cycle import Attempt
from dralab.scheduler.plugins.dynamicresources.plugin import DynamicResources

from .builders import gpu_class, gpus, mig_slices, node, pod, request, template

NODES = 40  # above the cycle's MASK_MIN_NODES: the masked search runs


def slices_for(name: str, kind: int) -> list[ResourceSlice]:
    if kind == 0:
        return []
    if kind == 1:
        return [gpus(name, 1)]
    if kind == 2:
        return [gpus(name, 2, model="h100")]
    return mig_slices(name, 2, 2)


def shared_pool(devices: int) -> ResourceSlice:
    base = gpus("x", devices, pool="shared", prefix="net-")
    spec = msgspec.structs.replace(base.spec, node_name=None, all_nodes=True)
    return msgspec.structs.replace(base, metadata=ObjectMeta(name="shared-pool"), spec=spec)


def labelled(name: str, zone: str) -> Any:
    return node(name, {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone})


def warm_cluster(rng: random.Random) -> tuple[ClusterState, Scheduler]:
    cluster = ClusterState()
    cluster.add_class(gpu_class())
    cluster.add_class(gpu_class("h100", selectors=[
        '"model" in device.attributes["gpu.example.com"] && '
        'device.attributes["gpu.example.com"].model == "h100"']))
    cluster.add_template(template("one", request()))
    cluster.add_template(template("two", request(count=2)))
    cluster.add_template(template("h100", request(cls="h100")))
    for i in range(NODES):
        name = f"n{i:02d}"
        cluster.add_node(labelled(name, rng.choice("ab")), slices_for(name, rng.randrange(4)))
    scheduler = Scheduler.build(cluster, None, 7)
    return cluster, scheduler


def fresh_copy(warm: ClusterState) -> ClusterState:
    """The same cluster built from scratch, objects in the same order."""
    fresh = ClusterState(features=warm.features)
    for info in warm.nodes.values():
        fresh.add_node(info.node)
    for s in warm.slices:
        fresh.put_slice(s)
    for cls in warm.classes.values():
        fresh.add_class(cls)
    for t in warm.templates.values():
        fresh.add_template(t)
    for c in warm.claims.values():
        fresh.add_claim(c)
    for p in warm.pods.values():
        fresh.add_pod(p.pod)
    return fresh


def schedule(scheduler: Scheduler, p: Pod) -> Attempt:
    framework = scheduler.frameworks["default-scheduler"]
    info = scheduler.cluster.add_pod(p)
    assert framework.run_pre_enqueue(info).is_success()
    return scheduler.cycle.schedule_one(framework, info)


def outcome(cluster: ClusterState, attempt: Attempt) -> tuple[Any, ...]:
    info = attempt.pod
    claims = [cluster.claims[f"default/{s.resource_claim_name}"]
              for s in info.pod.status.resource_claim_statuses]
    devices = [[(r.pool, r.device) for r in c.status.allocation.devices.results]
               for c in claims if c.status.allocation is not None]
    if attempt.error is not None:  # what Filter found before the error is not reported
        return (attempt.error.code, attempt.error.message)
    return (attempt.node, attempt.feasible,
            {n: (s.code, s.reasons) for n, s in attempt.rejected.items()},
            attempt.scores and (attempt.scores.names, attempt.scores.totals),
            attempt.diagnosis.message() if attempt.diagnosis else None, devices)


def probe(warm: ClusterState, scheduler: Scheduler, count: int) -> None:
    fresh = fresh_copy(warm)
    other = Scheduler.build(fresh, None, 7)
    for i, tpl in enumerate(("one", "two", "h100")):
        with warm.what_if(), fresh.what_if():
            other.cycle.rng.setstate(scheduler.cycle.rng.getstate())
            other.cycle.next_start_node_index = scheduler.cycle.next_start_node_index
            p = pod(f"probe-{count}-{i}", uid=f"probe-{count}-{i}", templates={"gpu": tpl})
            kept = schedule(scheduler, p)
            assert outcome(warm, kept) == outcome(fresh, schedule(other, p)), tpl


def churn(rng: random.Random, cluster: ClusterState, scheduler: Scheduler,
          removed: dict[str, tuple[Any, tuple[ResourceSlice, ...]]], step: int) -> None:
    names = list(cluster.nodes)
    action = rng.choice(["remove", "add", "readd", "reslice", "relabel", "shared",
                         "schedule", "what-if"])
    if action == "remove" and names:
        name = rng.choice(names)
        for p in list(cluster.nodes[name].pods):
            delete_pod(cluster, p.key)
        removed[name] = (cluster.nodes[name].node, cluster.slices_of(name))
        cluster.remove_node(name)
    elif action == "add":
        name = f"new{step}"
        cluster.add_node(labelled(name, rng.choice("ab")), slices_for(name, rng.randrange(4)))
    elif action == "readd" and removed:
        name = rng.choice(sorted(removed))
        n, slices = removed.pop(name)
        cluster.add_node(n, slices)
    elif action == "reslice" and names:
        name = rng.choice(names)
        cluster.set_slices(name, slices_for(name, rng.randrange(4)))
    elif action == "relabel" and names:
        name = rng.choice(names)
        cluster.add_node(labelled(name, rng.choice("abc")))
    elif action == "shared":
        if cluster.slices_of(("gpu.example.com", "shared")):
            cluster.set_slices(("gpu.example.com", "shared"), [])
        else:
            cluster.put_slice(shared_pool(rng.choice([1, 3])))
    elif action == "what-if":
        with cluster.what_if():
            churn(rng, cluster, scheduler, dict(removed), step)
            churn(rng, cluster, scheduler, dict(removed), step)
            schedule(scheduler, pod(f"w{step}", uid=f"w{step}",
                                    templates={"gpu": rng.choice(["one", "two"])}))
    for i in range(rng.choice([1, 2])):
        schedule(scheduler, pod(f"s{step}-{i}", uid=f"s{step}-{i}",
                                templates={"gpu": rng.choice(["one", "two", "h100"])}))


@pytest.mark.parametrize("seed", range(4))
def test_warm_cache_equals_fresh_cluster_through_node_churn(seed: int) -> None:
    rng = random.Random(seed)
    cluster, scheduler = warm_cluster(rng)
    for i in range(15):  # warm: outcomes remembered for most nodes
        schedule(scheduler, pod(f"warm{i}", uid=f"warm{i}",
                                templates={"gpu": rng.choice(["one", "two", "h100"])}))
    plugin = scheduler.frameworks["default-scheduler"].plugins["DynamicResources"]
    assert isinstance(plugin, DynamicResources)
    rebuilds = plugin.cache.rebuilds
    removed: dict[str, tuple[Any, tuple[ResourceSlice, ...]]] = {}
    for step in range(12):
        churn(rng, cluster, scheduler, removed, step)
        probe(cluster, scheduler, step)
    # Node churn never rebuilt the index from scratch: it followed the events.
    assert plugin.cache.rebuilds == rebuilds
    assert plugin.cache.total_hits > 0
