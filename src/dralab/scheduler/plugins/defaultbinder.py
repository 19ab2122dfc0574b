"""DefaultBinder (Bind): writes spec.nodeName through ``ClusterState.bind_pod``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dralab.cluster import PodInfo

from ..framework import CycleState, Handle, Status

NAME = "DefaultBinder"


class DefaultBinder:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> DefaultBinder:
        return cls(handle)

    @property
    def name(self) -> str:
        return NAME

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        cluster = self._handle.cluster
        if node_name not in cluster.nodes:
            return Status.error(NAME, f"node {node_name!r} not found")
        cluster.bind_pod(pod, node_name)
        return Status.success()
