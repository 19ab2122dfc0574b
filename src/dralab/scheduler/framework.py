"""The scheduling framework: statuses, cycle state and one Protocol per extension point.

Modelled on kube-scheduler's framework. A plugin implements only the points it
needs; the framework module imports no plugin. Every method documents which
codes it may return and what follows:

* ``Success``: go on.
* ``Unschedulable``: the pod does not fit *now*; preemption (PostFilter) may help.
* ``UnschedulableAndUnresolvable``: it will not fit on that node whatever is evicted.
* ``Error``: a bug or bad input; the pod's scheduling attempt is aborted and retried
  with back-off. Never used for "does not fit".
* ``Skip``: from PreFilter/PreScore, the plugin has nothing to do for this pod; its
  Filter/Score are not called.
* ``Wait``: from Permit, the pod waits on its node (``timeout`` seconds at most)
  until allowed or rejected (``dralab.scheduler.waiting``).

Nothing here raises for "does not fit"; exceptions are bugs.

Also here: what a plugin factory receives (``Handle``) and may raise
(``PluginArgsError``), the ``Registry`` type, and the optional fast paths a plugin
may offer besides its extension points (``FilterRelevance`` ... ``SortKey``): the
framework uses one when a plugin has it and the plain extension point otherwise.
The in-tree plugins and their registry live in ``dralab.scheduler.plugins``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from dralab.api.errors import InputError

if TYPE_CHECKING:
    from dralab.api.features import FeatureGates
    from dralab.cluster import ClusterState, NodeInfo, PodInfo

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "BatchFilter",
    "BatchScore",
    "BindPlugin",
    "Code",
    "CycleState",
    "DryRunInputs",
    "DryRunKey",
    "FilterMask",
    "FilterPlugin",
    "FilterRejections",
    "FilterRelevance",
    "FilterVisits",
    "FilterVouched",
    "Handle",
    "Mask",
    "MissingStateError",
    "NodeScore",
    "PermitPlugin",
    "Plugin",
    "PluginArgsError",
    "PluginFactory",
    "PluginsRunner",
    "PositionScore",
    "Positions",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "Registry",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "SortKey",
    "StateData",
    "Status",
    "WaitingPodHandle",
]

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0

# Node positions (``ClusterState.node_infos()`` order) and a bool per position: what
# the fast paths below trade in.
Positions: TypeAlias = npt.NDArray[np.int64]
Mask: TypeAlias = npt.NDArray[np.bool_]


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5

    @property
    def label(self) -> str:
        return {0: "Success", 1: "Error", 2: "Unschedulable",
                3: "UnschedulableAndUnresolvable", 4: "Wait", 5: "Skip"}[self.value]


@dataclass(frozen=True, slots=True)
class Status:
    """The result of one plugin call: a code, human-readable reasons and the plugin's name.

    ``reasons`` are the short phrases kube-scheduler aggregates into
    "0/3 nodes are available: 1 Insufficient cpu, 2 ...". ``details`` may carry
    longer explanations (e.g. the allocator's per-request lines) for ``explain``.
    """

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    details: tuple[str, ...] = ()
    timeout: float = 0.0  # Wait only: seconds until the wait is rejected

    @staticmethod
    def success() -> Status:
        return _SUCCESS

    @staticmethod
    def unschedulable(plugin: str, *reasons: str, details: Sequence[str] = ()) -> Status:
        return Status(Code.UNSCHEDULABLE, reasons, plugin, tuple(details))

    @staticmethod
    def unresolvable(plugin: str, *reasons: str, details: Sequence[str] = ()) -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin, tuple(details))

    @staticmethod
    def error(plugin: str, message: str) -> Status:
        return Status(Code.ERROR, (message,), plugin)

    @staticmethod
    def wait(plugin: str, timeout: float) -> Status:
        return Status(Code.WAIT, (), plugin, (), timeout)

    @staticmethod
    def skip(plugin: str = "") -> Status:
        return Status(Code.SKIP, (), plugin)

    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    def is_rejected(self) -> bool:
        """Unschedulable or UnschedulableAndUnresolvable: the pod does not fit."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def is_error(self) -> bool:
        return self.code is Code.ERROR

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return self if self.plugin else Status(self.code, self.reasons, plugin, self.details,
                                               self.timeout)


_SUCCESS = Status()


class StateData(Protocol):
    """What a plugin stores in CycleState. ``clone`` must return an independent copy
    (preemption mutates clones while simulating victim removal)."""

    def clone(self) -> StateData: ...


class MissingStateError(KeyError):
    """A plugin read state that its PreFilter did not write (or did not run: an earlier
    PreFilter rejected the pod) -> Error status with the message upstream's CycleState
    gives (``not found``, fwk.ErrNotFound), unquoted as a Go error prints."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "not found"


S = TypeVar("S")


class CycleState:
    """Per-pod scratch space for one scheduling cycle, keyed by plugin name.

    Only the framework and the plugins of the running cycle touch it. ``clone``
    copies every entry through ``StateData.clone``.
    """

    __slots__ = ("_data", "skip_filter", "skip_score")

    def __init__(self) -> None:
        self._data: dict[str, StateData] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()

    def write(self, key: str, value: StateData) -> None:
        self._data[key] = value

    def read(self, key: str, kind: type[S]) -> S:
        """The entry under ``key``, checked to be a ``kind``; MissingStateError otherwise."""
        value = self._data.get(key)
        if value is None:
            raise MissingStateError("not found")
        if not isinstance(value, kind):
            raise MissingStateError(f"unable to convert state into {kind.__name__}")
        return value

    def get(self, key: str) -> StateData | None:
        return self._data.get(key)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        copy = CycleState()
        copy._data = {k: v.clone() for k, v in self._data.items()}
        copy.skip_filter = set(self.skip_filter)
        copy.skip_score = set(self.skip_score)
        return copy


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Restricts the nodes Filter is run on; ``None`` node_names means all nodes."""

    node_names: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """The node nominated by preemption (the pod is retried there later)."""

    nominated_node_name: str | None = None
    victims: tuple[str, ...] = ()  # pod keys (namespace/name) to evict


@dataclass(frozen=True, slots=True)
class NodeScore:
    name: str
    score: int


@runtime_checkable
class Plugin(Protocol):
    """Every plugin has a unique name (the key in profiles and cycle state)."""

    @property
    def name(self) -> str: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: PodInfo) -> Status:
        """Success lets the pod into the active queue; Unschedulable (or
        UnschedulableAndUnresolvable) keeps it waiting (scheduling gates, missing claims)."""
        ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: PodInfo, b: PodInfo) -> bool:
        """True if ``a`` should be scheduled before ``b``. Exactly one per profile."""
        ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Incremental updates of PreFilter state while preemption simulates evictions.
    Both return Success or Error."""

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo,
                node: NodeInfo) -> Status: ...

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo,
                   node: NodeInfo) -> Status: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: PodInfo,
                   cluster: ClusterState) -> tuple[PreFilterResult | None, Status]:
        """Once per cycle. Success, Skip (Filter not called), Unschedulable /
        UnschedulableAndUnresolvable (pod rejected on every node), or Error."""
        ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """The incremental hooks for preemption, or None when the state needs none."""
        ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Per node: Success, Unschedulable (preemption may help),
        UnschedulableAndUnresolvable (it will not), or Error."""
        ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState,
                    statuses: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status]:
        """After no node passed Filter (``statuses``: node -> rejection). Success with a
        nominated node, Unschedulable when nothing helps, or Error."""
        ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        """Success, Skip (Score not called) or Error."""
        ...


@runtime_checkable
class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: PodInfo,
                        scores: list[NodeScore]) -> Status:
        """Rewrite ``scores`` in place into [MIN_NODE_SCORE, MAX_NODE_SCORE]. Success or Error."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        """Per feasible node: a score (0-100 after normalisation) and Success or Error."""
        ...

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Claim resources on the chosen node in the cluster state. Success or Error
        (then every Reserve plugin's Unreserve runs)."""
        ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Undo Reserve. Idempotent; must not fail; called even if Reserve never ran."""
        ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Success (allow), Wait, or a rejection (the pod is unreserved)."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Write what binding needs (e.g. claim allocations). Success or Error."""
        ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Set the pod's node. Success, Skip (let the next Bind plugin do it) or Error."""
        ...


# --- plugin factories -----------------------------------------------------------------


class PluginArgsError(InputError):
    """A plugin's args are invalid; ``field`` is the path below ``args``."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.detail = message


class WaitingPodHandle(Protocol):
    """A pod waiting at Permit, as a plugin sees it (kube-scheduler's
    ``framework.WaitingPod``; ``dralab.scheduler.waiting.WaitingPod`` is the record)."""

    @property
    def key(self) -> str: ...
    @property
    def pod(self) -> PodInfo: ...
    @property
    def rejected(self) -> Status | None: ...
    def allow(self, plugin: str) -> None: ...
    def reject(self, plugin: str, message: str) -> None: ...


class PluginsRunner(Protocol):
    """What a plugin may run of its own profile at scheduling time (kube-scheduler's
    ``framework.PluginsRunner``), implemented by ``dralab.scheduler.runtime.Framework``:
    preemption's dry runs run the profile's Filter and PreFilter extensions, see the
    pods nominated to each node and remember runs by the Filter plugins' keys.
    Named here, so that this module does not import the runtime that imports it."""

    @property
    def nominated(self) -> Mapping[str, Sequence[PodInfo]]: ...
    @property
    def waiting_pods(self) -> Iterable[WaitingPodHandle] | None: ...
    def run_filter_with_nominated(self, state: CycleState, pod: PodInfo,
                                  node: NodeInfo) -> Status: ...
    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: PodInfo,
                                         to_add: PodInfo, node: NodeInfo) -> Status: ...
    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: PodInfo,
                                            to_remove: PodInfo, node: NodeInfo) -> Status: ...
    def dry_run_key(self, state: CycleState, pod: PodInfo) -> tuple[Hashable, ...] | None: ...
    def dry_run_cursors(self) -> tuple[object, ...]: ...
    def dry_run_changed(self, cursors: tuple[object, ...]) -> set[str] | None: ...
    def dry_run_local(self, state: CycleState) -> bool: ...


class Handle:
    """What a plugin factory gets, ``factory(args, handle) -> plugin``.

    ``args`` is the plugin's ``pluginConfig[].args`` as a plain mapping (camelCase keys
    as written; ``{}`` when absent); the factory applies its defaults and validates,
    raising ``PluginArgsError(field, message)`` with ``field`` relative to ``args``
    (e.g. ``scoringStrategy.type``); the profile loader prefixes the path. The handle:

    ``cluster``       the run's ``ClusterState`` (read it; mutate it only through its
                      methods and only from Reserve/Unreserve, PreBind, Bind, PostFilter);
    ``features``      the run's ``FeatureGates`` (resolved once, never re-read);
    ``rng``           the run's seeded ``random.Random``, the only randomness allowed;
    ``profile_name``  the profile's schedulerName;
    ``framework``     the profile's ``Framework`` (``dralab.scheduler.runtime``, seen as a
                      ``PluginsRunner``), bound
                      after every plugin is built: use it at run time, not in the factory.
                      It runs other plugins, e.g. ``run_filter`` and
                      ``run_pre_filter_extension_remove_pod`` during preemption;
    ``waiting_pods``  the Scheduler's pods waiting at Permit (kube-scheduler's
                      ``Handle.IterateOverWaitingPods`` / ``GetWaitingPod``): a gang
                      plugin allows or rejects them. Bound when a Scheduler is built
                      on the profile; use it at scheduling time.
    """

    __slots__ = ("_framework", "cluster", "features", "profile_name", "rng")

    def __init__(self, cluster: ClusterState, features: FeatureGates, rng: random.Random,
                 profile_name: str) -> None:
        self.cluster = cluster
        self.features = features
        self.rng = rng
        self.profile_name = profile_name
        self._framework: PluginsRunner | None = None

    @property
    def framework(self) -> PluginsRunner:
        if self._framework is None:
            raise RuntimeError("the framework is not built yet: use handle.framework at "
                               "scheduling time, not in the plugin factory")
        return self._framework

    def bind(self, framework: PluginsRunner) -> None:
        self._framework = framework

    @property
    def waiting_pods(self) -> Iterable[WaitingPodHandle]:
        waiting = self.framework.waiting_pods
        if waiting is None:
            raise RuntimeError("no Scheduler runs this profile: waiting pods exist only "
                               "in a Scheduler's loop")
        return waiting


PluginFactory: TypeAlias = Callable[[Mapping[str, Any], Handle], Plugin]


class Registry(Mapping[str, PluginFactory]):
    """Plugin name -> factory. A value, not a module global: immutable once built;
    ``with_plugin`` returns an extended copy. ``dralab.scheduler.plugins.registry``
    builds the in-tree one."""

    def __init__(self, factories: Mapping[str, PluginFactory] | None = None) -> None:
        self._factories: dict[str, PluginFactory] = dict(factories or {})

    def __getitem__(self, name: str) -> PluginFactory:
        return self._factories[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)

    def with_plugin(self, name: str, factory: PluginFactory) -> Registry:
        """A copy with ``name`` added; ValueError if the name is taken."""
        if name in self._factories:
            raise ValueError(f"a plugin named {name!r} already exists")
        return Registry({**self._factories, name: factory})


# --- optional fast paths ----------------------------------------------------------------
# A plugin may offer any of these besides its extension points. Each must answer
# exactly what the plain extension point would; the framework (runtime.py, queue.py)
# looks them up once per profile and falls back to the plain calls without them.
# (Queueing hints, ``EnqueueExtensions.events_to_register``, are declared with the
# hint types in ``hints.py``: they are about the queue, not about a cycle.)


@runtime_checkable
class FilterRelevance(Protocol):
    """A Filter plugin that knows it would accept every node for this pod (left out)."""

    def filter_relevant(self, pod: PodInfo) -> bool: ...


@runtime_checkable
class BatchFilter(Protocol):
    """Filter for many nodes at once, one status per node in order."""

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
                     ) -> list[Status]: ...


@runtime_checkable
class FilterMask(Protocol):
    """The nodes (by position) on which Filter would answer Success, or None if unknown."""

    def filter_mask(self, state: CycleState, pod: PodInfo) -> Mask | None: ...


@runtime_checkable
class FilterRejections(Protocol):
    """The nodes Filter would certainly reject (a mask), and a function giving the
    statuses Filter would answer for some of them (by position)."""

    def filter_rejections(self, state: CycleState, pod: PodInfo
                          ) -> tuple[Mask, Callable[[list[int]], list[Status]]] | None: ...


@runtime_checkable
class FilterVouched(Protocol):
    """Told which nodes a mask let through without calling Filter (to record state)."""

    def filter_vouched(self, state: CycleState, pod: PodInfo, positions: Positions
                       ) -> None: ...


@runtime_checkable
class FilterVisits(Protocol):
    """Nodes on which Filter would answer Success but has a side effect that must
    happen in the order the search visits nodes (a mask), and a function doing
    those side effects for some of them (positions in visiting order)."""

    def filter_visits(self, state: CycleState, pod: PodInfo
                      ) -> tuple[Mask, Callable[[Positions], None]] | None: ...


@runtime_checkable
class DryRunKey(Protocol):
    """For preemption's dry runs (``plugins/dryruns.py``): a value that, with the node's
    ``NodeInfo`` (its Node object and pods) and the pods nominated there, decides what
    Filter answers for this pod on any node in this cycle, as long as nothing the
    plugin reports through ``DryRunInputs`` changed. None: no such promise this cycle
    (the dry runs are then not remembered). Compared with ``==``."""

    def dry_run_key(self, state: CycleState, pod: PodInfo) -> Hashable | None: ...


@runtime_checkable
class DryRunInputs(Protocol):
    """A Filter plugin whose answers also depend on state outside the node's pods
    (DynamicResources: the devices allocated in the pools a node sees).
    ``dry_run_cursor()`` marks now; ``dry_run_changed(cursor)`` names the nodes whose
    answers may have changed since (None: any node); ``dry_run_local(state)``, after a
    dry run on one node with ``state``, says whether its answer depended only on that
    node (False: it is not remembered)."""

    def dry_run_cursor(self) -> object: ...

    def dry_run_changed(self, cursor: object) -> set[str] | None: ...

    def dry_run_local(self, state: CycleState) -> bool: ...


@runtime_checkable
class BatchScore(Protocol):
    """Score and NormalizeScore for all nodes at once."""

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
                    ) -> tuple[list[int], Status]: ...


@runtime_checkable
class PositionScore(Protocol):
    """``score_nodes`` on node positions as an array, or None to fall back."""

    def score_positions(self, state: CycleState, pod: PodInfo, positions: Positions
                        ) -> tuple[Any, Status] | None: ...


@runtime_checkable
class SortKey(Protocol):
    """A QueueSort plugin's order as a key (``less(a, b)`` iff ``key(a) < key(b)``)."""

    def sort_key(self, pod: PodInfo) -> Any: ...
