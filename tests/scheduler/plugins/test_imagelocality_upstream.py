"""ImageLocality, ported from upstream's tables: one test per upstream case.

kubernetes v1.36.2, pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go:
TestImageLocalityPriority and TestNormalizedImageName, every case under its upstream name;
Score per node on a cluster of the case's nodes, as upstream scores on its snapshot.

Not ported: TestImageSignature (3 cases): pod signatures (SignPlugin, for the batching of
identical pods) are not modelled by dralab.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import Any

import pytest

from dralab.api.features import FeatureGates
from dralab.cluster import ClusterState, PodInfo
from dralab.scheduler.framework import Code, CycleState, Handle
from dralab.scheduler.plugins.imagelocality import ImageLocality, normalized_image_name

from .kubepods import P, node

MB = 1024 * 1024
Images = Sequence[tuple[Sequence[str], int]]

NODE_40_300_2000: Images = [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
                            (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
                            (["gcr.io/2000:latest"], 2000 * MB)]
NODE_250_10: Images = [(["gcr.io/250:latest"], 250 * MB),
                       (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)]
NODE_600_40_900: Images = [(["gcr.io/600:latest"], 600 * MB), (["gcr.io/40:latest"], 40 * MB),
                           (["gcr.io/900:latest"], 900 * MB)]
NODE_300_600_900: Images = [(["gcr.io/300:latest"], 300 * MB),
                            (["gcr.io/600:latest"], 600 * MB),
                            (["gcr.io/900:latest"], 900 * MB)]
NODE_4000_30: Images = [(["gcr.io/4000:latest"], 4000 * MB), (["gcr.io/30:latest"], 30 * MB)]
NODE_20_30_40: Images = [(["gcr.io/20:latest"], 20 * MB), (["gcr.io/30:latest"], 30 * MB),
                         (["gcr.io/40:latest"], 40 * MB)]
NO_IMAGES: Images = []


def spec(*images: str, init: Sequence[str] = (), volumes: Sequence[str] = ()) -> Any:
    pod = P()
    for image in images:
        pod.container(image)
    for image in init:
        pod.init_container(image)
    for reference in volumes:
        pod.image_volume(reference)
    return pod.obj()


CASES: list[dict[str, Any]] = [
    {"name": "two images spread on two nodes, prefer the larger image one",
     "pod": spec("gcr.io/40", "gcr.io/250"),
     "nodes": [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], "want": [0, 5]},
    {"name": "two images on one node, prefer this node", "pod": spec("gcr.io/40", "gcr.io/300"),
     "nodes": [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], "want": [7, 0]},
    {"name": "if exceed limit, use limit", "pod": spec("gcr.io/10", "gcr.io/4000"),
     "nodes": [("node1", NODE_4000_30), ("node2", NODE_250_10)], "want": [100, 0]},
    {"name": "if exceed limit, use limit (with node which has no images present)",
     "pod": spec("gcr.io/10", "gcr.io/4000"),
     "nodes": [("node1", NODE_4000_30), ("node2", NODE_250_10), ("node3", NO_IMAGES)],
     "want": [66, 0, 0]},
    {"name": "pod with multiple large images, node2 is preferred",
     "pod": spec("gcr.io/300", "gcr.io/600", "gcr.io/900"),
     "nodes": [("node1", NODE_600_40_900), ("node2", NODE_300_600_900), ("node3", NO_IMAGES)],
     "want": [32, 36, 0]},
    {"name": "pod with multiple small images", "pod": spec("gcr.io/30", "gcr.io/40"),
     "nodes": [("node1", NODE_20_30_40), ("node2", NODE_4000_30)], "want": [1, 0]},
    {"name": "pod with ImageVolume", "pod": spec("gcr.io/30", volumes=["gcr.io/300"]),
     "nodes": [("node1", NODE_300_600_900), ("node2", NODE_4000_30)], "want": [12, 0]},
    {"name": "include InitContainers: two images spread on two nodes, prefer the larger image one",
     "pod": spec("gcr.io/30", init=["gcr.io/300"]),
     "nodes": [("node1", NODE_40_300_2000), ("node2", NODE_20_30_40)], "want": [6, 0]},
]


@pytest.mark.parametrize("row", [pytest.param(r, id=r["name"]) for r in CASES])
def test_image_locality_priority(row: dict[str, Any]) -> None:
    cluster = ClusterState()
    for name, images in row["nodes"]:
        cluster.add_node(node(name, images=images))
    plugin = ImageLocality(Handle(cluster, FeatureGates(), random.Random(0), "default-scheduler"))
    pod = PodInfo(row["pod"])
    # Upstream calls Score alone; so does the first pass. dralab's PreScore (it only skips
    # a pod none of whose images any node holds) must not change the scores.
    alone = CycleState()
    assert [plugin.score(alone, pod, n)[0] for n in cluster.node_infos()] == row["want"]
    state = CycleState()
    assert plugin.pre_score(state, pod, cluster.node_infos()).code == Code.SUCCESS
    assert [plugin.score(state, pod, n)[0] for n in cluster.node_infos()] == row["want"]


def _digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(("given", "expected"), [
    pytest.param("root", "root:latest", id="add :latest postfix 1"),
    pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
    pytest.param("root:tag", "root:tag", id="keep it as is 1"),
    pytest.param("root@" + _digest("root"), "root@" + _digest("root"), id="keep it as is 2"),
])
def test_normalized_image_name(given: str, expected: str) -> None:
    assert normalized_image_name(given) == expected


def test_a_snapshot_without_images_skips_and_scores_zero() -> None:
    cluster = ClusterState()
    for name in ("a", "b"):
        cluster.add_node(node(name))
    plugin = ImageLocality(Handle(cluster, FeatureGates(), random.Random(0), "default-scheduler"))
    pod = PodInfo(spec("nginx:1.27"))
    assert plugin.pre_score(CycleState(), pod, cluster.node_infos()).code == Code.SKIP
    assert [plugin.score(CycleState(), pod, n)[0] for n in cluster.node_infos()] == [0, 0]
