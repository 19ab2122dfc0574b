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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from .cluster import ClusterState, NodeInfo, PodInfo

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "BindPlugin",
    "Code",
    "CycleState",
    "FilterPlugin",
    "MissingStateError",
    "NodeScore",
    "PermitPlugin",
    "Plugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "StateData",
    "Status",
]

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


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
    """A plugin read state that its PreFilter did not write: a framework bug -> Error status."""


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
        if value is None or not isinstance(value, kind):
            raise MissingStateError(f"no {kind.__name__} in cycle state under {key!r}")
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
