"""The read side of the cluster store, as Protocols.

Our version of kube-scheduler's ``SharedLister`` (node infos in snapshot order)
and of the ``SharedDRAManager`` Cluster Autoscaler reuses (claims, slices,
classes, the devices in use). ``ClusterState`` implements all of them; code that
only reads (scoring helpers, metrics, what-if planners) should ask for one of
these, so it cannot change the store by accident. Mappings and tuples handed
out are read-only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

from dralab.allocator.changelog import ChangeFeed
from dralab.allocator.state import AllocatedState
from dralab.api.features import FeatureGates
from dralab.api.resource import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)

from .events import ClusterEvent, SliceOwner
from .nodetable import NodeTable
from .records import NodeInfo, PodInfo

__all__ = ["DRALister", "NodeLister", "PodLister", "SharedLister"]


class NodeLister(Protocol):
    """Nodes as the scheduler sees them (kube-scheduler's NodeInfoLister)."""

    @property
    def nodes(self) -> Mapping[str, NodeInfo]: ...

    @property
    def node_version(self) -> int: ...

    def node_infos(self) -> list[NodeInfo]: ...

    def node_names(self) -> list[str]: ...

    def node_index(self) -> dict[str, int]: ...

    def node_log(self) -> ChangeFeed[str]: ...

    def node_table(self) -> NodeTable | None: ...


class PodLister(Protocol):
    @property
    def pods(self) -> Mapping[str, PodInfo]: ...

    def pending_pods(self) -> Iterator[PodInfo]: ...


class DRALister(Protocol):
    """What DRA reads: claims (and the devices they hold), slices, classes, rules."""

    @property
    def features(self) -> FeatureGates: ...

    @property
    def claims(self) -> Mapping[str, ResourceClaim]: ...

    @property
    def templates(self) -> Mapping[str, ResourceClaimTemplate]: ...

    @property
    def classes(self) -> Mapping[str, DeviceClass]: ...

    @property
    def slices(self) -> tuple[ResourceSlice, ...]: ...

    @property
    def taint_rules(self) -> tuple[DeviceTaintRule, ...]: ...

    @property
    def allocated(self) -> AllocatedState: ...

    def slices_of(self, owner: SliceOwner) -> tuple[ResourceSlice, ...]: ...

    def claim(self, namespace: str, name: str) -> ResourceClaim | None: ...

    def template(self, namespace: str, name: str) -> ResourceClaimTemplate | None: ...


class SharedLister(NodeLister, PodLister, DRALister, Protocol):
    """Everything a plugin may read, plus the change feed and versions."""

    @property
    def events(self) -> ChangeFeed[ClusterEvent]: ...

    @property
    def version(self) -> int: ...

    @property
    def revision(self) -> int: ...
