"""ImageLocality (Score), as kube-scheduler v1.36.2 scores it
(pkg/scheduler/framework/plugins/imagelocality).

A node scores the images of the pod's init containers, containers and image volumes that
it already holds (``node.status.images[].names``; a name without a tag is ``:latest``), each
worth its size scaled by the share of nodes holding it; the sum is clamped between 23 MiB
and 1000 MiB per container and mapped linearly onto 0..100. A snapshot whose nodes list
no images scores every node 0 (PreScore then skips the plugin, which changes nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dralab.cluster import ClusterState, NodeInfo, PodInfo

from ..framework import MAX_NODE_SCORE, CycleState, Handle, Status

__all__ = ["NAME", "ImageLocality", "calculate_priority", "normalized_image_name"]

NAME = "ImageLocality"
_MB = 1024 * 1024
MIN_THRESHOLD = 23 * _MB
MAX_CONTAINER_THRESHOLD = 1000 * _MB
_PRE_SCORE_KEY = "PreScore" + NAME
_SUCCESS = Status.success()


def normalized_image_name(name: str) -> str:
    """An image name without a tag gets ``:latest`` (the last ':' before the last '/')."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def calculate_priority(total: int, containers: int) -> int:
    high = MAX_CONTAINER_THRESHOLD * containers
    total = min(max(total, MIN_THRESHOLD), high)
    # Go's int64 division (the operands are non-negative here).
    return MAX_NODE_SCORE * (total - MIN_THRESHOLD) // (high - MIN_THRESHOLD)


def _node_images(node: NodeInfo) -> list[tuple[str, int]]:
    """(name, sizeBytes) of every name of every image in the node's status, as written."""
    raw = node.node.raw
    status = raw.get("status") if isinstance(raw, dict) else None
    images = status.get("images") if isinstance(status, dict) else None
    out: list[tuple[str, int]] = []
    for image in images if isinstance(images, list) else []:
        if not isinstance(image, Mapping):
            continue
        size = image.get("sizeBytes")
        size = size if isinstance(size, int) and not isinstance(size, bool) else 0
        names = image.get("names")
        for name in names if isinstance(names, list) else []:
            if isinstance(name, str):
                out.append((name, size))
    return out


def pod_images(pod: PodInfo) -> tuple[list[str], int]:
    """The normalised image names the pod's init containers, containers and image
    volumes use (one entry each, in that order), and the number of containers."""
    raw = pod.pod.raw
    spec = raw.get("spec") if isinstance(raw, dict) else None
    if not isinstance(spec, dict):
        return [], 0
    names: list[str] = []
    containers = 0
    for key in ("initContainers", "containers"):
        listed = spec.get(key)
        for container in listed if isinstance(listed, list) else []:
            containers += 1
            if isinstance(container, Mapping):
                names.append(normalized_image_name(str(container.get("image") or "")))
    volumes = spec.get("volumes")
    for volume in volumes if isinstance(volumes, list) else []:
        image = volume.get("image") if isinstance(volume, Mapping) else None
        if isinstance(image, Mapping):
            names.append(normalized_image_name(str(image.get("reference") or "")))
    return names, containers


class _ImageTable:
    """The cache's image states: per image name, its size (as the first node listing it
    gave it) and per node the names it holds, rebuilt when any node changes."""

    __slots__ = ("nodes", "per_node", "sizes", "version")

    def __init__(self, cluster: ClusterState) -> None:
        self.version = cluster.node_version
        self.sizes: dict[str, int] = {}
        holders: dict[str, int] = {}
        self.per_node: dict[str, frozenset[str]] = {}
        for node in cluster.node_infos():
            names = set()
            for name, size in _node_images(node):
                self.sizes.setdefault(name, size)
                if name not in names:
                    names.add(name)
                    holders[name] = holders.get(name, 0) + 1
            if names:
                self.per_node[node.name] = frozenset(names)
        self.nodes = holders


class _Scores:
    __slots__ = ("containers", "names", "total")

    def __init__(self, names: list[str], containers: int, total: int) -> None:
        self.names = names
        self.containers = containers
        self.total = total

    def clone(self) -> _Scores:
        return self


class ImageLocality:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._table: _ImageTable | None = None

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> ImageLocality:
        return cls(handle)

    @property
    def name(self) -> str:
        return NAME

    def _images(self) -> _ImageTable:
        cluster = self._handle.cluster
        table = self._table
        if table is None or table.version != cluster.node_version:
            table = self._table = _ImageTable(cluster)
        return table

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        """Not upstream's (it has no PreScore): skips when no node holds any of the pod's
        images, where every node would score 0."""
        table = self._images()
        if not table.nodes:
            return Status.skip(NAME)  # no node lists an image: every node scores 0
        names, containers = pod_images(pod)
        if not any(name in table.nodes for name in names):
            return Status.skip(NAME)
        state.write(_PRE_SCORE_KEY, _Scores(names, containers,
                                            len(self._handle.cluster.node_infos())))
        return _SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        data = state.get(_PRE_SCORE_KEY)
        table = self._images()
        if isinstance(data, _Scores):
            names, containers, total = data.names, data.containers, data.total
        else:
            names, containers = pod_images(pod)
            total = len(self._handle.cluster.node_infos())
        held = table.per_node.get(node.name, frozenset())
        summed = 0
        for name in names:
            if name in held:
                # int64(float64(size) * float64(numNodes) / float64(totalNumNodes))
                summed += int(table.sizes[name] * (table.nodes[name] / total))
        return calculate_priority(summed, containers), _SUCCESS

    def score_extensions(self) -> None:
        return None
