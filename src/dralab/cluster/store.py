"""The cluster store: the one mutable object of a run, behind methods and listers.

``ClusterState`` holds nodes (``NodeInfo``: a node with the pods placed on it),
pods (``PodInfo``), ResourceClaims with the devices they hold
(``AllocatedState``), claim templates, device classes, ResourceSlices, device
taint rules and priority classes, and the label selectors of Services and
ReplicaSets/StatefulSets/ReplicationControllers (PodTopologySpread's default
constraints read them). It plays the parts of kube-scheduler's cache
and shared listers and of the DRA manager that Cluster Autoscaler reuses:

* **Private state, one method per mutation.** Every method bumps the versions
  its readers key caches on and appends a typed event (``dralab.cluster.events``)
  to ``events``. API objects stay immutable: an update replaces the object.
* **Read-only listers.** ``nodes``, ``pods``, ``claims``, ``classes``,
  ``templates`` and ``priority_classes`` are read-only mappings (in arrival
  order), ``slices`` and ``taint_rules`` tuples; ``node_infos`` is kube-scheduler's
  snapshot order. Plugins read these and change the store only through its
  methods (Reserve, PreBind, Bind, PostFilter).
* **Slices are owned** by their node (``spec.nodeName``) or, when not pinned to
  one node (node selector, ``allNodes``, per-device selection), by their pool
  ``(driver, pool)``; ``remove_node`` takes the node's slices with it, as the
  garbage collector deletes a Node's slices. ``SlicesChanged`` names the owner,
  so the allocator's index and the DRA plugin's cache redo just that node.
* **Forks** (Cluster Autoscaler's ``ClusterSnapshot``): ``fork()`` opens a
  what-if, ``revert()`` undoes everything since, ``commit()`` keeps it; forks
  nest. Nothing is copied up front: a change records how to undo it (a node or
  pod records its previous state the first time it changes in a fork, copy on
  write), so a what-if costs what it changes, not the size of the fleet.
  ``revert`` restores the same objects in the same order and emits the events
  of the restoration; versions only ever grow, so caches keyed on them stay
  sound across forks.

Pod lifecycle::

    add_pod ──> (pending) ──assume_pod──> (on a NodeInfo, assumed) ──bind_pod──> (bound)
                    ^            │                                              │
                    └─forget_pod─┘                                         remove_pod

Releasing a removed pod's claims is the claim controller's business
(``dralab.controllers.resourceclaims.release_pod_claims``), not the store's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dralab.allocator.changelog import ChangeFeed, ChangeLog
from dralab.allocator.state import AllocatedState
from dralab.api.core import Namespace, Node, Pod, PodCondition, PriorityClass
from dralab.api.features import FeatureGates
from dralab.api.keys import object_key
from dralab.api.resource import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from dralab.api.scheduling import PodGroup
from dralab.api.storage import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

from .apitime import RunClock
from .events import (
    ClaimChanged,
    ClassChanged,
    ClusterEvent,
    NodeAdded,
    NodeRemoved,
    NodeUpdated,
    PodAdded,
    PodAssumed,
    PodBound,
    PodForgotten,
    PodRemoved,
    PodUpdated,
    PriorityClassChanged,
    SliceOwner,
    SlicesChanged,
    TaintRulesChanged,
    TemplateChanged,
)
from .nodetable import NodeTable
from .podstatus import update_condition
from .records import (
    FINISHED_PHASES,
    PREEMPT_LOWER_PRIORITY,
    NodeInfo,
    PodInfo,
    pod_non_zero_requests,
    pod_requests,
    raw_spec_field,
)
from .table import Table

__all__ = ["ClusterState", "VolumeObject", "slice_owner"]

VolumeObject = (PersistentVolumeClaim | PersistentVolume | StorageClass | CSINode
                | VolumeAttachment | CSIDriver)

_ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
_REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")

# An undo step: a store method and its arguments.
_Undo = tuple[Callable[..., None], tuple[Any, ...]]


def slice_owner(s: ResourceSlice) -> SliceOwner:
    """Who owns a slice in the store: its node, else its (driver, pool)."""
    return s.spec.node_name or (s.spec.driver, s.spec.pool.name)


def _pool_of(s: ResourceSlice) -> tuple[str, str]:
    return (s.spec.driver, s.spec.pool.name)


def _zone_key(node: Node) -> str:
    labels = node.metadata.labels
    region = next((labels[k] for k in _REGION_LABELS if k in labels), "")
    zone = next((labels[k] for k in _ZONE_LABELS if k in labels), "")
    return f"{region}:\x00:{zone}" if region or zone else ""


@dataclass(slots=True)
class _Fork:
    """One open fork: where its undo steps start, and what already has a copy."""

    start: int
    sequence: int
    nodes: set[NodeInfo] = field(default_factory=set)
    pods: set[PodInfo] = field(default_factory=set)


class ClusterState:
    """Everything a scheduling run reads and writes. See the module docstring."""

    __slots__ = (
        "_allocated",
        "_claims",
        "_class_version",
        "_classes",
        "_clock",
        "_controller_selectors",
        "_events",
        "_features",
        "_forks",
        "_namespace_labels",
        "_node_index",
        "_node_list",
        "_node_log",
        "_node_names",
        "_node_table",
        "_node_version",
        "_nodes",
        "_owned",
        "_owned_slices",
        "_pod_groups",
        "_pods",
        "_priority_classes",
        "_replaying",
        "_rules",
        "_sequence",
        "_service_selectors",
        "_slice_list",
        "_slice_version",
        "_slices",
        "_templates",
        "_undo",
        "_version",
        "_volume_objects",
    )

    def __init__(self, features: FeatureGates | None = None, moment: float = 0.0) -> None:
        self._features = features if features is not None else FeatureGates()
        # The time objects are stamped with (see ``clock``); not part of what-ifs.
        self._clock = RunClock(moment)
        self._nodes: Table[str, NodeInfo] = Table()
        self._pods: Table[str, PodInfo] = Table()
        self._claims: Table[str, ResourceClaim] = Table()
        self._templates: Table[str, ResourceClaimTemplate] = Table()
        self._pod_groups: Table[str, PodGroup] = Table()
        # Namespace name -> its labels (InterPodAffinity's namespaceSelector reads them).
        self._namespace_labels: dict[str, dict[str, str]] = {}
        # What PodTopologySpread's default selector reads (upstream's Service, ReplicaSet,
        # StatefulSet and ReplicationController listers): namespace -> Service name -> its
        # spec.selector, and (kind, namespace, name) -> a controller's spec.selector.
        self._service_selectors: dict[str, dict[str, dict[str, str]]] = {}
        self._controller_selectors: dict[tuple[str, str, str], Any] = {}
        # The volume plugins' listers: (kind, namespace, name) -> a PersistentVolumeClaim,
        # PersistentVolume, StorageClass, CSINode, VolumeAttachment or CSIDriver (namespace ""
        # for the cluster-scoped).
        self._volume_objects: dict[tuple[str, str, str], VolumeObject] = {}
        self._classes: Table[str, DeviceClass] = Table()
        self._priority_classes: Table[str, PriorityClass] = Table()
        self._slices: Table[str, ResourceSlice] = Table()
        self._owned: dict[SliceOwner, set[str]] = {}
        # slices_of's answers, per owner, until that owner's slices change.
        self._owned_slices: dict[SliceOwner, tuple[ResourceSlice, ...]] = {}
        self._rules: tuple[DeviceTaintRule, ...] = ()
        self._allocated = AllocatedState()
        self._events: ChangeLog[ClusterEvent] = ChangeLog()
        # Names of nodes whose pods changed, in order (see NodeInfo._log).
        self._node_log: ChangeLog[str] = ChangeLog()
        self._sequence = 0
        self._version = 0
        self._node_version = 0
        self._slice_version = 0
        self._class_version = 0
        self._node_list: list[NodeInfo] | None = None
        self._node_names: list[str] | None = None
        self._node_index: dict[str, int] | None = None
        self._node_table: NodeTable | None = None
        self._slice_list: tuple[ResourceSlice, ...] | None = None
        self._undo: list[_Undo] = []
        self._forks: list[_Fork] = []
        self._replaying = False

    # --- listers ------------------------------------------------------------------
    @property
    def features(self) -> FeatureGates:
        return self._features

    @property
    def clock(self) -> RunClock:
        """The API time of the run: the snapshot's ``moment`` plus the seconds the
        run's clock says have passed (a Scheduler sets ``clock.elapsed`` to its own
        clock). What the store and plugins write is stamped with ``clock.now()``."""
        return self._clock

    @property
    def nodes(self) -> Mapping[str, NodeInfo]:
        """Node name -> NodeInfo, read-only, in arrival order."""
        return self._nodes.view()

    @property
    def pods(self) -> Mapping[str, PodInfo]:
        """``namespace/name`` -> PodInfo, read-only, in arrival order."""
        return self._pods.view()

    @property
    def claims(self) -> Mapping[str, ResourceClaim]:
        """``namespace/name`` -> ResourceClaim, read-only, in creation order."""
        return self._claims.view()

    @property
    def templates(self) -> Mapping[str, ResourceClaimTemplate]:
        return self._templates.view()

    @property
    def classes(self) -> Mapping[str, DeviceClass]:
        return self._classes.view()

    @property
    def priority_classes(self) -> Mapping[str, PriorityClass]:
        return self._priority_classes.view()

    @property
    def slices(self) -> tuple[ResourceSlice, ...]:
        """Every ResourceSlice, in arrival order (a replaced slice keeps its place)."""
        found = self._slice_list
        if found is None:
            found = self._slice_list = tuple(self._slices.view().values())
        return found

    def slices_of(self, owner: SliceOwner) -> tuple[ResourceSlice, ...]:
        """The slices ``owner`` (a node name or a (driver, pool)) owns, in arrival order."""
        known = self._owned_slices.get(owner)
        if known is not None:
            return known
        names = self._owned.get(owner)
        if not names:
            return ()
        table = self._slices
        found = [table.get(n) for n in sorted(names, key=table.position)]
        known = self._owned_slices[owner] = tuple(s for s in found if s is not None)
        return known

    def slice_position(self, name: str) -> int:
        """Where the slice ``name`` sits in ``slices``, as a sort key (positions only
        grow; a restored slice gets its old one back). KeyError if there is none."""
        return self._slices.position(name)

    @property
    def taint_rules(self) -> tuple[DeviceTaintRule, ...]:
        return self._rules

    @property
    def allocated(self) -> AllocatedState:
        """Devices held by allocated claims; kept in step by ``add_claim``/``remove_claim``.
        Read it (or ``copy()`` it for a what-if); never change it."""
        return self._allocated

    @property
    def events(self) -> ChangeFeed[ClusterEvent]:
        """Every change, oldest first; keep a cursor (``end``) and read ``since`` it."""
        return self._events

    @property
    def version(self) -> int:
        """Bumped by every change of nodes, claims or pod placements."""
        return self._version

    @property
    def node_version(self) -> int:
        """Bumped whenever the set of nodes or a Node object changes."""
        return self._node_version

    @property
    def slice_version(self) -> int:
        """Bumped whenever a ResourceSlice is added, replaced or deleted."""
        return self._slice_version

    @property
    def class_version(self) -> int:
        """Bumped whenever a DeviceClass is added, replaced or deleted."""
        return self._class_version

    @property
    def revision(self) -> int:
        """The number of changes ever made (every event counts one)."""
        return self._events.end

    def node_infos(self) -> list[NodeInfo]:
        """Nodes in kube-scheduler's snapshot order: zones taken round-robin (each in
        arrival order), so a rotating search visits zones evenly. Cached; do not mutate."""
        if self._node_list is None:
            zones: dict[str, list[NodeInfo]] = {}
            for info in self._nodes.view().values():
                zone = info._zone
                if zone is None:
                    zone = info._zone = _zone_key(info.node)
                zones.setdefault(zone, []).append(info)
            order: list[NodeInfo] = []
            columns = list(zones.values())
            depth = max((len(c) for c in columns), default=0)
            for i in range(depth):
                order.extend(c[i] for c in columns if i < len(c))
            self._node_list = order
        return self._node_list

    def node_names(self) -> list[str]:
        """Names in ``node_infos`` order. Cached; do not mutate."""
        if self._node_names is None:
            self._node_names = [n.name for n in self.node_infos()]
        return self._node_names

    def node_index(self) -> dict[str, int]:
        """Name -> position in ``node_infos``. Cached; do not mutate."""
        if self._node_index is None:
            self._node_index = {n: i for i, n in enumerate(self.node_names())}
        return self._node_index

    def node_log(self) -> ChangeFeed[str]:
        """Names of nodes whose pods changed, oldest first (for incremental caches)."""
        return self._node_log

    def node_table(self) -> NodeTable | None:
        """Per-node resource numbers as arrays in ``node_infos`` order, brought up to
        date; None when some amount is too large for exact array arithmetic."""
        table = self._node_table
        if table is None:
            table = self._node_table = NodeTable(self)
        return table if table.sync() else None

    def pending_pods(self) -> Iterator[PodInfo]:
        return (p for p in self._pods.view().values() if not p.pod.spec.node_name)

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self._claims.get(object_key(namespace, name))

    def template(self, namespace: str, name: str) -> ResourceClaimTemplate | None:
        return self._templates.get(object_key(namespace, name))

    @property
    def pod_groups(self) -> Mapping[str, PodGroup]:
        """PodGroups (scheduling.k8s.io) by ``namespace/name``."""
        return self._pod_groups.view()

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return self._pod_groups.get(object_key(namespace, name))

    def objects(self) -> Iterable[object]:
        yield from (n.node for n in self._nodes.view().values())
        yield from (p.pod for p in self._pods.view().values())
        yield from self._claims.view().values()

    def resolve_priority(self, pod: Pod) -> int:
        """spec.priority, else the PriorityClass's value, else the global default, else 0."""
        if pod.spec.priority is not None:
            return pod.spec.priority
        if pod.spec.priority_class_name:
            pc = self._priority_classes.get(pod.spec.priority_class_name)
            if pc is not None:
                return pc.value
        for pc in self._priority_classes.view().values():
            if pc.global_default:
                return pc.value
        return 0

    def resolve_preemption_policy(self, pod: Pod) -> str:
        """spec.preemptionPolicy, else the PriorityClass's (as admission copies it)."""
        value = raw_spec_field(pod, "preemptionPolicy")
        if isinstance(value, str) and value:
            return value
        name = pod.spec.priority_class_name
        pc = self._priority_classes.get(name) if name else None
        if pc is None:
            pc = next((p for p in self._priority_classes.view().values() if p.global_default),
                      None)
        if pc is not None and pc.preemption_policy:
            return pc.preemption_policy
        return PREEMPT_LOWER_PRIORITY

    # --- forks --------------------------------------------------------------------
    @property
    def forks(self) -> int:
        """How many forks are open (0: changes are final)."""
        return len(self._forks)

    def fork(self) -> None:
        """Open a what-if: later changes can be undone with ``revert`` or kept with
        ``commit``. Forks nest. O(1)."""
        self._forks.append(_Fork(len(self._undo), self._sequence))

    def revert(self) -> None:
        """Undo every change since the matching ``fork``: the same objects come back
        in the same order. Emits the events of the restoration; versions move on.
        O(changes). RuntimeError without an open fork."""
        if not self._forks:
            raise RuntimeError("revert() without fork()")
        fork = self._forks.pop()
        undo = self._undo
        self._replaying = True
        try:
            for i in range(len(undo) - 1, fork.start - 1, -1):
                step, args = undo[i]
                step(*args)
        finally:
            self._replaying = False
            del undo[fork.start:]
        self._sequence = fork.sequence

    def commit(self) -> None:
        """Keep every change since the matching ``fork`` (they join the enclosing fork,
        if any, so its ``revert`` still undoes them). RuntimeError without a fork."""
        if not self._forks:
            raise RuntimeError("commit() without fork()")
        fork = self._forks.pop()
        if self._forks:
            outer = self._forks[-1]
            outer.nodes |= fork.nodes
            outer.pods |= fork.pods
        else:
            self._undo.clear()

    @contextmanager
    def what_if(self) -> Iterator[ClusterState]:
        """``with cluster.what_if(): ...``: fork, and revert on the way out."""
        self.fork()
        try:
            yield self
        finally:
            self.revert()

    def _record(self, step: Callable[..., None], *args: Any) -> None:
        if self._forks and not self._replaying:
            self._undo.append((step, args))

    def _touch_node(self, info: NodeInfo) -> None:
        """Copy on write: remember the node's pods the first time a fork changes them."""
        if self._forks and not self._replaying:
            fork = self._forks[-1]
            if info not in fork.nodes:
                fork.nodes.add(info)
                self._undo.append((self._restore_node_pods, (
                    info, list(info.pods), dict(info.requested), info.non_zero_cpu,
                    info.non_zero_memory)))

    def _restore_node_pods(self, info: NodeInfo, pods: list[PodInfo],
                           requested: dict[str, int], non_zero_cpu: int,
                           non_zero_memory: int) -> None:
        info.pods = pods
        info.requested = requested
        info.non_zero_cpu = non_zero_cpu
        info.non_zero_memory = non_zero_memory
        info.generation += 1
        if info._log is not None:
            info._log.append(info.name)
        self._version += 1

    def _touch_pod(self, info: PodInfo) -> None:
        if self._forks and not self._replaying:
            fork = self._forks[-1]
            if info not in fork.pods:
                fork.pods.add(info)
                self._undo.append((self._restore_pod, (info, info.pod, info.assumed_node)))

    def _restore_pod(self, info: PodInfo, pod: Pod, assumed: str | None) -> None:
        key = info.key
        current = info.assumed_node
        if current != assumed:
            if current is not None:
                self._events.append(PodForgotten(key, current))
            if assumed is not None:
                self._events.append(PodAssumed(key, assumed))
            self._version += 1
        if info.pod is not pod:
            info.pod = pod
            self._events.append(PodUpdated(key))
        info.assumed_node = assumed

    # --- nodes and slices -----------------------------------------------------------
    def add_node(self, node: Node, slices: Iterable[ResourceSlice] | None = None) -> NodeInfo:
        """Add ``node``, or replace the Node object of that name (its pods stay on it).
        With ``slices``, they become the node's slices (``set_slices``)."""
        info = NodeInfo.of(node)
        info._log = self._node_log
        old = self._nodes.get(info.name)
        if old is not None:
            for pod in old.pods:
                info.add_pod(pod)
        self._put_node(info.name, info)
        if slices is not None:
            self.set_slices(info.name, slices)
        return info

    def remove_node(self, name: str) -> NodeInfo | None:
        """Take a node out, with the slices it owns; remove its pods first (they are
        not touched). None if there is no such node."""
        if name not in self._nodes:
            return None
        info = self._nodes.get(name)
        self._delete_node(name)
        if name in self._owned:
            self.set_slices(name, ())
        return info

    def _nodes_changed(self) -> None:
        self._node_list = self._node_names = self._node_index = None
        self._node_version += 1
        self._version += 1

    def _put_node(self, name: str, info: NodeInfo) -> None:
        prior = self._nodes.put(name, info)
        if prior is None:
            self._record(self._delete_node, name)
        else:
            self._record(self._put_node, name, prior[0])
        self._nodes_changed()
        self._events.append(NodeAdded(name) if prior is None else NodeUpdated(name))

    def _delete_node(self, name: str) -> None:
        prior = self._nodes.delete(name)
        if prior is None:
            return
        self._record(self._restore_node, name, *prior)
        self._nodes_changed()
        self._events.append(NodeRemoved(name))

    def _restore_node(self, name: str, info: NodeInfo, position: int) -> None:
        self._nodes.restore(name, info, position)
        self._nodes_changed()
        self._events.append(NodeAdded(name))

    def set_slices(self, owner: SliceOwner, slices: Iterable[ResourceSlice]) -> None:
        """Make ``slices`` exactly the slices of ``owner`` (a node name, or the
        (driver, pool) of slices not pinned to a node): others of that owner are
        deleted, new ones added at the end, the rest replaced in place. ValueError
        if a slice belongs to another owner or two share a name."""
        wanted = list(slices)
        names = set()
        for s in wanted:
            if slice_owner(s) != owner:
                raise ValueError(f"ResourceSlice {s.name!r} belongs to {slice_owner(s)!r}, "
                                 f"not {owner!r}")
            if s.name in names:
                raise ValueError(f"two ResourceSlices named {s.name!r}")
            names.add(s.name)
        current = self._owned.get(owner, set())
        table = self._slices
        for name in sorted(current - names, key=table.position):
            self._delete_slice(name)
        for s in wanted:
            if table.get(s.name) is not s:
                self._put_slice(s)

    def put_slice(self, s: ResourceSlice) -> None:
        """Add a slice, or replace the slice of that name (its owner may change)."""
        if self._slices.get(s.name) is not s:
            self._put_slice(s)

    def remove_slice(self, name: str) -> ResourceSlice | None:
        found = self._slices.get(name)
        if found is not None:
            self._delete_slice(name)
        return found

    def _slices_changed(self, owner: SliceOwner, pools: frozenset[tuple[str, str]]) -> None:
        self._slice_list = None
        self._owned_slices.pop(owner, None)
        self._slice_version += 1
        self._events.append(SlicesChanged(owner, pools))

    def _own(self, s: ResourceSlice) -> SliceOwner:
        owner = slice_owner(s)
        self._owned.setdefault(owner, set()).add(s.name)
        return owner

    def _disown(self, s: ResourceSlice) -> SliceOwner:
        owner = slice_owner(s)
        names = self._owned.get(owner)
        if names is not None:
            names.discard(s.name)
            if not names:
                del self._owned[owner]
        return owner

    def _put_slice(self, s: ResourceSlice) -> None:
        prior = self._slices.put(s.name, s)
        pools = {_pool_of(s)}
        if prior is None:
            self._record(self._delete_slice, s.name)
        else:
            old = prior[0]
            self._record(self._put_slice, old)
            old_owner = self._disown(old)
            if old_owner == slice_owner(s):
                pools.add(_pool_of(old))
            else:
                self._slices_changed(old_owner, frozenset({_pool_of(old)}))
        self._slices_changed(self._own(s), frozenset(pools))

    def _delete_slice(self, name: str) -> None:
        prior = self._slices.delete(name)
        if prior is None:
            return
        s = prior[0]
        self._record(self._restore_slice, *prior)
        self._slices_changed(self._disown(s), frozenset({_pool_of(s)}))

    def _restore_slice(self, s: ResourceSlice, position: int) -> None:
        self._slices.restore(s.name, s, position)
        self._slices_changed(self._own(s), frozenset({_pool_of(s)}))

    def set_taint_rules(self, rules: Iterable[DeviceTaintRule]) -> None:
        """Replace the DeviceTaintRules."""
        new = tuple(rules)
        self._record(self._set_rules, self._rules)
        self._set_rules(new)

    def add_taint_rule(self, rule: DeviceTaintRule) -> None:
        self.set_taint_rules((*self._rules, rule))

    def _set_rules(self, rules: tuple[DeviceTaintRule, ...]) -> None:
        self._rules = rules
        self._events.append(TaintRulesChanged())

    # --- classes, templates, priority classes -------------------------------------------
    def add_class(self, cls: DeviceClass) -> None:
        """Add a DeviceClass, or replace the class of that name."""
        self._put_class(cls.name, cls)

    def remove_class(self, name: str) -> DeviceClass | None:
        found = self._classes.get(name)
        self._delete_class(name)
        return found

    def _put_class(self, name: str, cls: DeviceClass) -> None:
        prior = self._classes.put(name, cls)
        self._record(*((self._delete_class, name) if prior is None
                       else (self._put_class, name, prior[0])))
        self._class_version += 1
        self._events.append(ClassChanged(name))

    def _delete_class(self, name: str) -> None:
        prior = self._classes.delete(name)
        if prior is None:
            return
        self._record(self._restore_class, name, *prior)
        self._class_version += 1
        self._events.append(ClassChanged(name, deleted=True))

    def _restore_class(self, name: str, cls: DeviceClass, position: int) -> None:
        self._classes.restore(name, cls, position)
        self._class_version += 1
        self._events.append(ClassChanged(name))

    def add_template(self, template: ResourceClaimTemplate) -> None:
        """Add a ResourceClaimTemplate (namespace "default" when it has none), or replace it."""
        self._put_template(object_key(template.metadata.namespace, template.name), template)

    def remove_template(self, key: str) -> ResourceClaimTemplate | None:
        found = self._templates.get(key)
        self._delete_template(key)
        return found

    def _put_template(self, key: str, template: ResourceClaimTemplate) -> None:
        prior = self._templates.put(key, template)
        self._record(*((self._delete_template, key) if prior is None
                       else (self._put_template, key, prior[0])))
        self._events.append(TemplateChanged(key))

    def _delete_template(self, key: str) -> None:
        prior = self._templates.delete(key)
        if prior is None:
            return
        self._record(self._restore_template, key, *prior)
        self._events.append(TemplateChanged(key, deleted=True))

    def _restore_template(self, key: str, template: ResourceClaimTemplate,
                          position: int) -> None:
        self._templates.restore(key, template, position)
        self._events.append(TemplateChanged(key))

    def add_pod_group(self, group: PodGroup) -> None:
        """Add a PodGroup (namespace "default" when it has none), or replace it.
        No event: the scheduler reads groups when it looks at their pods."""
        self._put_pod_group(object_key(group.metadata.namespace, group.name), group)

    def _put_pod_group(self, key: str, group: PodGroup) -> None:
        prior = self._pod_groups.put(key, group)
        self._record(*((self._delete_pod_group, key) if prior is None
                       else (self._put_pod_group, key, prior[0])))

    def _delete_pod_group(self, key: str) -> None:
        prior = self._pod_groups.delete(key)
        if prior is not None:
            self._record(self._restore_pod_group, key, *prior)

    def _restore_pod_group(self, key: str, group: PodGroup, position: int) -> None:
        self._pod_groups.restore(key, group, position)

    @property
    def namespace_labels(self) -> Mapping[str, Mapping[str, str]]:
        """The labels of the Namespaces the store was given, by name."""
        return self._namespace_labels

    def add_namespace(self, namespace: Namespace) -> None:
        """Keep a Namespace's labels, replacing those of the same name. No event."""
        name = namespace.metadata.name or ""
        self._set_namespace_labels(name, dict(namespace.metadata.labels))

    def _set_namespace_labels(self, name: str, labels: dict[str, str] | None) -> None:
        prior = self._namespace_labels.get(name)
        if labels is None:
            self._namespace_labels.pop(name, None)
        else:
            self._namespace_labels[name] = labels
        self._record(self._set_namespace_labels, name, prior)

    @property
    def has_volume_objects(self) -> bool:
        return bool(self._volume_objects)

    def volume_object(self, kind: str, name: str, namespace: str = "") -> VolumeObject | None:
        """The PersistentVolumeClaim (with its namespace), PersistentVolume, StorageClass or
        CSINode of that name the store was given, or None."""
        return self._volume_objects.get((kind, namespace, name))

    def volume_keys(self) -> list[tuple[str, str, str]]:
        """(kind, namespace, name) of every volume object the store was given."""
        return list(self._volume_objects)

    def put_volume_object(self, obj: VolumeObject, present: bool = True) -> None:
        """Keep (``present=False``: forget) a volume object, replacing the one of that
        kind and name. No event: the volume plugins read these when they look at a pod
        that uses volumes."""
        key = (obj.KIND, obj.metadata.namespace or "default" if obj.NAMESPACED else "",
               obj.name)
        self._set_volume_object(key, obj if present else None)

    def _set_volume_object(self, key: tuple[str, str, str], obj: VolumeObject | None) -> None:
        prior = self._volume_objects.get(key)
        if obj is None:
            self._volume_objects.pop(key, None)
        else:
            self._volume_objects[key] = obj
        self._record(self._set_volume_object, key, prior)

    @property
    def service_selectors(self) -> Mapping[str, Mapping[str, Mapping[str, str]]]:
        """``spec.selector`` of the Services the store was given, by namespace, then name.
        A Service without a selector selects no pod and is not kept."""
        return self._service_selectors

    def set_service_selector(self, namespace: str, name: str,
                             selector: Mapping[str, str] | None) -> None:
        """Keep (or, with None, forget) Service ``namespace/name``'s selector. No event:
        the plugin that reads selectors reads them when it looks at a pod."""
        kept = dict(selector) if selector else None
        in_namespace = self._service_selectors.get(namespace, {})
        prior = in_namespace.get(name)
        if kept == prior:
            return
        if kept is not None:
            self._service_selectors.setdefault(namespace, {})[name] = kept
        else:
            del in_namespace[name]
            if not in_namespace:
                del self._service_selectors[namespace]
        self._record(self.set_service_selector, namespace, name, prior)

    @property
    def controller_selectors(self) -> Mapping[tuple[str, str, str], Any]:
        """``spec.selector`` of the ReplicaSets, StatefulSets (a LabelSelector document, None
        when unset) and ReplicationControllers (a label map) the store was given, created
        ones included, by (kind, namespace, name)."""
        return self._controller_selectors

    def set_controller_selector(self, kind: str, namespace: str, name: str,
                                selector: Any, present: bool = True) -> None:
        """Keep controller ``kind`` ``namespace/name``'s selector (``present=False``: forget
        the controller). No event, as ``set_service_selector``."""
        key = (kind, namespace, name)
        had = key in self._controller_selectors
        prior = self._controller_selectors.get(key)
        if present:
            self._controller_selectors[key] = selector
        else:
            self._controller_selectors.pop(key, None)
        self._record(self.set_controller_selector, kind, namespace, name, prior, had)

    def add_priority_class(self, pc: PriorityClass) -> None:
        """Add a PriorityClass, or replace the class of that name. Pods already in
        the store keep the priority they were given."""
        self._put_priority_class(pc.name, pc)

    def remove_priority_class(self, name: str) -> PriorityClass | None:
        found = self._priority_classes.get(name)
        self._delete_priority_class(name)
        return found

    def _put_priority_class(self, name: str, pc: PriorityClass) -> None:
        prior = self._priority_classes.put(name, pc)
        self._record(*((self._delete_priority_class, name) if prior is None
                       else (self._put_priority_class, name, prior[0])))
        self._events.append(PriorityClassChanged(name))

    def _delete_priority_class(self, name: str) -> None:
        prior = self._priority_classes.delete(name)
        if prior is None:
            return
        self._record(self._restore_priority_class, name, *prior)
        self._events.append(PriorityClassChanged(name, deleted=True))

    def _restore_priority_class(self, name: str, pc: PriorityClass, position: int) -> None:
        self._priority_classes.restore(name, pc, position)
        self._events.append(PriorityClassChanged(name))

    # --- claims -----------------------------------------------------------------------
    def add_claim(self, claim: ResourceClaim) -> None:
        """Add a ResourceClaim, or replace the claim of that ``namespace/name``; the
        devices of its allocation count as in use from now on."""
        self._put_claim(object_key(claim.metadata.namespace, claim.metadata.name), claim)

    def remove_claim(self, key: str) -> ResourceClaim | None:
        """Delete the claim ``namespace/name`` (its devices are free again)."""
        claim = self._claims.get(key)
        if claim is not None:
            self._delete_claim(key)
        else:
            # Counted even when there was nothing to delete, as it always was.
            self._version += 1
        return claim

    def _put_claim(self, key: str, claim: ResourceClaim) -> None:
        prior = self._claims.put(key, claim)
        if prior is None:
            self._record(self._delete_claim, key)
        else:
            old = prior[0]
            self._record(self._put_claim, key, old)
            if old.status.allocation is not None:
                self._allocated.remove_claim(old)
        if claim.status.allocation is not None:
            self._allocated.add_claim(claim)
        self._version += 1
        self._events.append(ClaimChanged(key))

    def _delete_claim(self, key: str) -> None:
        prior = self._claims.delete(key)
        if prior is None:
            return
        claim = prior[0]
        self._record(self._restore_claim, key, *prior)
        if claim.status.allocation is not None:
            self._allocated.remove_claim(claim)
        self._version += 1
        self._events.append(ClaimChanged(key, deleted=True))

    def _restore_claim(self, key: str, claim: ResourceClaim, position: int) -> None:
        self._claims.restore(key, claim, position)
        if claim.status.allocation is not None:
            self._allocated.add_claim(claim)
        self._version += 1
        self._events.append(ClaimChanged(key))

    # --- pods -------------------------------------------------------------------------
    def add_pod(self, pod: Pod) -> PodInfo:
        """Register a pod; a pod that already has spec.nodeName is placed on its node,
        unless it has finished (phase Succeeded or Failed): a finished pod holds
        nothing, and kube-scheduler does not even watch it."""
        self._sequence += 1
        info = PodInfo(pod=pod, priority=self.resolve_priority(pod),
                       requests=pod_requests(pod), sequence=self._sequence,
                       non_zero=pod_non_zero_requests(pod),
                       preemption_policy=self.resolve_preemption_policy(pod))
        key = info.key
        self._put_pod(key, info)
        name = pod.spec.node_name
        node = self._nodes.get(name) if name else None
        if node is not None and pod.status.phase not in FINISHED_PHASES:
            self._touch_node(node)
            node.add_pod(info)
            info.assumed_node = node.name
        self._events.append(PodAdded(key, info.assumed_node))
        return info

    def update_pod(self, info: PodInfo, pod: Pod) -> None:
        """Replace the API object of a known pod (status writes, claim statuses)."""
        self._update_pod(info, pod)
        self._events.append(PodUpdated(info.key))

    def _update_pod(self, info: PodInfo, pod: Pod) -> None:
        self._touch_pod(info)
        info.pod = pod
        key = info.key
        if self._pods.get(key) is not info:
            self._put_pod(key, info)

    def _put_pod(self, key: str, info: PodInfo) -> None:
        prior = self._pods.put(key, info)
        if prior is None:
            self._record(self._delete_pod, key)
        else:
            self._record(self._put_pod, key, prior[0])

    def _delete_pod(self, key: str) -> None:
        prior = self._pods.delete(key)
        if prior is None:
            return
        self._record(self._restore_pod_entry, key, *prior)
        self._events.append(PodRemoved(key, prior[0].assumed_node))

    def _restore_pod_entry(self, key: str, info: PodInfo, position: int) -> None:
        self._pods.restore(key, info, position)
        self._events.append(PodAdded(key, info.assumed_node))

    def assume_pod(self, info: PodInfo, node_name: str) -> None:
        """Count ``info`` on ``node_name`` before binding (kube-scheduler's assume), so
        later cycles see its resources in use. KeyError if the node does not exist."""
        if info.assumed_node is not None:
            raise ValueError(f"pod {info.key} is already on node {info.assumed_node}")
        node = self._nodes.get(node_name)
        if node is None:
            raise KeyError(node_name)
        self._touch_node(node)
        self._touch_pod(info)
        node.add_pod(info)
        info.assumed_node = node_name
        self._version += 1
        self._events.append(PodAssumed(info.key, node_name))

    def forget_pod(self, info: PodInfo) -> None:
        """Undo ``assume_pod`` (a later phase failed). Idempotent."""
        name = info.assumed_node
        if name is None:
            return
        self._touch_pod(info)
        node = self._nodes.get(name)
        if node is not None:
            self._touch_node(node)
            node.remove_pod(info.key)
        info.assumed_node = None
        self._version += 1
        self._events.append(PodForgotten(info.key, name))

    def bind_pod(self, info: PodInfo, node_name: str) -> Pod:
        """Write the binding: a new Pod with spec.nodeName, condition PodScheduled=True
        (stamped with the clock; no reason, message or observedGeneration) and no
        nominatedNodeName, as the API server's pods/binding does (v1.36.2
        BindingREST.setPodNodeAndMetadata; ClearingNominatedNodeNameAfterBinding is
        on by default since 1.35). The pod must be assumed on ``node_name`` already
        (it is assumed here otherwise)."""
        if info.assumed_node != node_name:
            self.forget_pod(info)
            self.assume_pod(info, node_name)
        pod = update_condition(info.pod, PodCondition(type="PodScheduled", status="True"),
                               self._clock.now())
        status = msgspec.structs.replace(pod.status, nominated_node_name=None)
        bound = msgspec.structs.replace(
            pod, spec=msgspec.structs.replace(pod.spec, node_name=node_name), status=status)
        self._update_pod(info, bound)
        self._events.append(PodBound(info.key, node_name))
        return bound

    def remove_pod(self, key: str) -> PodInfo | None:
        """Delete a pod: off its node and out of the store. Its claims are left as
        they are (releasing them is the claim controller's job)."""
        info = self._pods.get(key)
        if info is None:
            return None
        self._version += 1
        # The removed PodInfo may still be changed by its owner (the claim controller
        # drops its claim statuses); a revert must give back the pod as it was here.
        self._touch_pod(info)
        name = info.assumed_node
        if name is not None:
            node = self._nodes.get(name)
            if node is not None:
                self._touch_node(node)
                node.remove_pod(key)
        self._delete_pod(key)
        return info
