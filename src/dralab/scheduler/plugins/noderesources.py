"""NodeResourcesFit (PreFilter, Filter, PreScore, Score) and
NodeResourcesBalancedAllocation (PreScore, Score).

Fit compares the pod's requests with each node's allocatable minus what its
pods request: cpu, memory, ephemeral-storage, the pod count and every extended
resource (``nvidia.com/gpu``, ``nvidia.com/mig-1g.5gb``...). Reasons are
kube-scheduler's (``Insufficient cpu``, ``Too many pods``); a request larger
than the whole node is UnschedulableAndUnresolvable (no eviction helps).

Scoring strategies (``scoringStrategy`` args) follow upstream's integer formulas
per resource, then a weighted mean over the resources the node has:
LeastAllocated ``(alloc - req) * 100 / alloc``, MostAllocated ``req * 100 / alloc``,
RequestedToCapacityRatio a broken-linear ``shape`` of ``req * 100 / alloc``. cpu and
memory use "non-zero" requests (see ``cluster.pod_non_zero_requests``).

BalancedAllocation scores the *change* in balance that placing the pod makes
(kubernetes#135573, in v1.36.2 and 1.37): ``50 + (50 + after - before) / 2`` where
``after``/``before`` are ``(1 - std of the requested fractions) * 100`` with and
without the pod. An empty node scores about 75 for a small pod; a node the pod
balances better scores towards 100, one it unbalances towards 50.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dralab.api.errors import ErrorType, FieldError
from dralab.api.features import Gate
from dralab.cluster import CPU, MEMORY, ClusterState, NodeInfo, PodInfo

from ..framework import (
    MAX_NODE_SCORE,
    CycleState,
    Handle,
    MissingStateError,
    PluginArgsError,
    PreFilterResult,
    Status,
)
from ..hints import EventHint
from .eventhints import FIT_HINTS

FIT = "NodeResourcesFit"
BALANCED_ALLOCATION = "NodeResourcesBalancedAllocation"
EPHEMERAL_STORAGE = "ephemeral-storage"
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100
HALF_SCORE = MAX_NODE_SCORE // 2
IMPLICIT_EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"

_FIT_KEY = "PreFilter" + FIT
_FIT_SCORE_KEY = "PreScore" + FIT
_BALANCED_KEY = "PreScore" + BALANCED_ALLOCATION
_SUCCESS = Status.success()
_DEFAULT_RESOURCES = ((CPU, 1), (MEMORY, 1))
# Pod amounts below this, added to node amounts below it (``NodeTable.exact``), stay
# below 2**53: float64 holds them exactly, so array and Python arithmetic agree.
_EXACT = 1 << 52

Mask = npt.NDArray[np.bool_]
I64 = npt.NDArray[np.int64]
Positions = npt.NDArray[np.int64]


def is_extended_resource(name: str) -> bool:
    """Not native (native: no "/" or a kubernetes.io/ name) and not a quota name."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def is_scalar_resource(name: str) -> bool:
    """Resources kube-scheduler tracks besides cpu/memory/ephemeral-storage/pods."""
    return (is_extended_resource(name) or name.startswith("hugepages-")
            or name.startswith("attachable-volumes-"))


# --- args ---------------------------------------------------------------------------

def _invalid(path: str, value: Any, detail: str) -> PluginArgsError:
    err = FieldError(path=path, type=ErrorType.INVALID, value=value, detail=detail)
    return PluginArgsError(path, err.body())


def _int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PluginArgsError(path, FieldError(path=path, type=ErrorType.TYPE_INVALID,
                                               value=value, detail="must be an integer").body())
    return value


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise PluginArgsError(path, FieldError(path=path, type=ErrorType.TYPE_INVALID,
                                               value=value, detail="must be a list").body())
    return value


def _mapping(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise PluginArgsError(path, FieldError(path=path, type=ErrorType.TYPE_INVALID,
                                               value=value, detail="must be an object").body())
    return value


def parse_resources(raw: Any, path: str, check_weight: Callable[[str, int, str], None]
                    ) -> tuple[tuple[str, int], ...]:
    """``resources: [{name, weight}]``; weight 0/absent becomes 1; names unique."""
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    for i, item in enumerate(_list(raw, path)):
        item_path = f"{path}[{i}]"
        entry = _mapping(item, item_path)
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise PluginArgsError(f"{item_path}.name", "Required value")
        if name in seen:
            raise PluginArgsError(f"{item_path}.name", FieldError(
                path=f"{item_path}.name", type=ErrorType.DUPLICATE, value=name).body())
        seen.add(name)
        weight = _int(entry.get("weight", 0), f"{item_path}.weight") or 1
        check_weight(name, weight, f"{item_path}.weight")
        out.append((name, weight))
    return tuple(out) or _DEFAULT_RESOURCES


def _fit_weight(name: str, weight: int, path: str) -> None:
    if weight <= 0 or weight > 100:
        raise _invalid(path, weight, f"resource weight of {name} not in valid range (0, 100]")


def _balanced_weight(name: str, weight: int, path: str) -> None:
    if weight != 1:
        raise _invalid(path, weight, "must be 1")


def parse_shape(raw: Any, path: str) -> tuple[tuple[int, int], ...]:
    """``shape: [{utilization, score}]``: 0 <= utilization <= 100 strictly increasing,
    0 <= score <= 10; returned with scores scaled to 0..100."""
    points = _list(raw, path)
    if not points:
        raise PluginArgsError(path, "Required value: at least one point must be specified")
    out: list[tuple[int, int]] = []
    for i, item in enumerate(points):
        entry = _mapping(item, f"{path}[{i}]")
        utilization = _int(entry.get("utilization", 0), f"{path}[{i}].utilization")
        score = _int(entry.get("score", 0), f"{path}[{i}].score")
        if not 0 <= utilization <= MAX_UTILIZATION:
            raise _invalid(f"{path}[{i}].utilization", utilization, "not in valid range [0, 100]")
        if not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise _invalid(f"{path}[{i}].score", score, "not in valid range [0, 10]")
        if out and utilization <= out[-1][0]:
            raise _invalid(f"{path}[{i}].utilization", utilization,
                           "utilization values must be sorted in increasing order")
        out.append((utilization, score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)))
    return tuple(out)


# --- scorers ----------------------------------------------------------------------

Scorer = Callable[[Sequence[int], Sequence[int]], int]


def _least(weights: Sequence[int]) -> Scorer:
    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            value = 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc
            total += value * weight
            weight_sum += weight
        return total // weight_sum if weight_sum else 0
    return score


def _most(weights: Sequence[int]) -> Scorer:
    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            value = min(req, alloc) * MAX_NODE_SCORE // alloc
            total += value * weight
            weight_sum += weight
        return total // weight_sum if weight_sum else 0
    return score


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """Piecewise-linear through ``shape`` points, flat outside them (integer maths)."""
    def f(p: int) -> int:
        for i, (utilization, score) in enumerate(shape):
            if p <= utilization:
                if i == 0:
                    return score
                u0, s0 = shape[i - 1]
                # Go's integer division truncates toward zero.
                return s0 + int((score - s0) * (p - u0) / (utilization - u0))
        return shape[-1][1]
    return f


def _ratio(weights: Sequence[int], shape: Sequence[tuple[int, int]]) -> Scorer:
    raw = broken_linear(shape)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            value = raw(MAX_UTILIZATION if req > alloc else req * MAX_UTILIZATION // alloc)
            if value > 0:
                total += value * weight
                weight_sum += weight
        if not weight_sum:
            return 0
        return math.floor(total / weight_sum + 0.5)  # Go's math.Round for positives
    return score


def _balance(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """``(1 - std of the requested/allocatable fractions) * 100``, truncated; resources
    with nothing allocatable are left out (upstream's balancedResourceScore)."""
    fractions = [min(req / alloc, 1.0) for req, alloc in zip(requested, allocatable, strict=True)
                 if alloc]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def _balanced(requested: Sequence[int], allocated: Sequence[int],
              allocatable: Sequence[int]) -> int:
    """The change in balance placing the pod makes, in [50, 100] (v1.36.2
    balanced_allocation.go balancedResourceScorer): both balances lie in [50, 100],
    so their difference in [-50, 50] is mapped back to [50, 100]; ~75 when the pod
    barely changes the balance. ``requested`` includes the pod, ``allocated`` not."""
    change = _balance(requested, allocatable) - _balance(allocated, allocatable)
    return HALF_SCORE + (HALF_SCORE + change) // 2


def _alloc_and_request(node: NodeInfo, resource: str, pod_request: int, non_zero: bool
                       ) -> tuple[int, int]:
    """(allocatable, requested-with-pod) for scoring; (0, 0) leaves the resource out."""
    if resource == CPU:
        used = node.non_zero_cpu if non_zero else node.requested.get(CPU, 0)
        return node.allocatable.get(CPU, 0), used + pod_request
    if resource == MEMORY:
        used = node.non_zero_memory if non_zero else node.requested.get(MEMORY, 0)
        return node.allocatable.get(MEMORY, 0), used + pod_request
    if resource == EPHEMERAL_STORAGE:
        return node.allocatable.get(resource, 0), node.requested.get(resource, 0) + pod_request
    if not is_scalar_resource(resource) or pod_request == 0:
        return 0, 0
    alloc = node.allocatable.get(resource)
    if alloc is None:
        return 0, 0
    return alloc, node.requested.get(resource, 0) + pod_request


def _pod_request_list(pod: PodInfo, resources: Sequence[tuple[str, int]], non_zero: bool
                      ) -> tuple[int, ...]:
    out: list[int] = []
    for name, _ in resources:
        if non_zero and name == CPU:
            out.append(pod.non_zero[0])
        elif non_zero and name == MEMORY:
            out.append(pod.non_zero[1])
        else:
            out.append(pod.requests.get(name, 0))
    return tuple(out)


# --- state ------------------------------------------------------------------------

@functools.lru_cache(maxsize=256)
def _rejection(reasons: tuple[str, ...], unresolvable: bool) -> Status:
    """One shared Status per set of reasons (they are compared and counted per node)."""
    if unresolvable:
        return Status.unresolvable(FIT, *reasons)
    return Status.unschedulable(FIT, *reasons)


@dataclass(frozen=True, slots=True)
class _Check:
    resource: str
    amount: int
    reason: str
    dra_backed: bool  # DRA may serve it when the node does not advertise it


class _FitState:
    __slots__ = ("checks", "mask")

    def __init__(self, checks: tuple[_Check, ...]) -> None:
        self.checks = checks
        # filter_mask's answer with the cluster state it was computed for
        # ((node_version, node log position), mask), asked for twice per cycle.
        self.mask: tuple[tuple[int, int], Mask] | None = None

    def clone(self) -> _FitState:
        return self  # read-only after PreFilter (``mask`` says when it is valid)


class _Requests:
    __slots__ = ("values",)

    def __init__(self, values: tuple[int, ...]) -> None:
        self.values = values

    def clone(self) -> _Requests:
        return self


def _reason(resource: str) -> str:
    return f"Insufficient {resource}"


def dra_extended_resources(cluster: ClusterState) -> frozenset[str]:
    """Extended resource names a DeviceClass serves (explicitly or implicitly)."""
    names: set[str] = set()
    for name, cls in cluster.classes.items():
        names.add(IMPLICIT_EXTENDED_PREFIX + name)
        if cls.spec.extended_resource_name:
            names.add(cls.spec.extended_resource_name)
    return frozenset(names)


# --- plugins ----------------------------------------------------------------------

class Fit:
    """NodeResourcesFit. ``explain_filter`` adds the shortfall per resource to details."""

    def __init__(self, handle: Handle, ignored: frozenset[str], ignored_groups: frozenset[str],
                 strategy: str, resources: tuple[tuple[str, int], ...],
                 shape: tuple[tuple[int, int], ...]) -> None:
        self._handle = handle
        self._ignored = ignored
        self._ignored_groups = ignored_groups
        self.strategy = strategy
        self.resources = resources
        weights = [w for _, w in resources]
        self._scorer: Scorer = (_least(weights) if strategy == LEAST_ALLOCATED else
                                _most(weights) if strategy == MOST_ALLOCATED else
                                _ratio(weights, shape))
        self._dra_extended = handle.features.is_enabled(Gate.DRA_EXTENDED_RESOURCE)
        self._dra_names: tuple[int, frozenset[str]] = (-1, frozenset())

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> Fit:
        ignored = frozenset(_list(args.get("ignoredResources"), "ignoredResources"))
        groups = frozenset(_list(args.get("ignoredResourceGroups"), "ignoredResourceGroups"))
        for i, group in enumerate(sorted(groups)):
            if not isinstance(group, str) or "/" in group:
                raise _invalid(f"ignoredResourceGroups[{i}]", group,
                               "resource group name can't contain '/'")
        strategy_raw = args.get("scoringStrategy")
        strategy = _mapping(strategy_raw, "scoringStrategy")
        kind = strategy.get("type", LEAST_ALLOCATED) if strategy_raw is not None \
            else LEAST_ALLOCATED
        if kind not in STRATEGIES:
            err = FieldError(path="scoringStrategy.type", type=ErrorType.NOT_SUPPORTED,
                             value=kind, detail="supported values: " + ", ".join(
                                 f'"{s}"' for s in STRATEGIES))
            raise PluginArgsError("scoringStrategy.type", err.body())
        resources = parse_resources(strategy.get("resources"), "scoringStrategy.resources",
                                    _fit_weight)
        shape: tuple[tuple[int, int], ...] = ()
        if kind == REQUESTED_TO_CAPACITY_RATIO:
            ratio = _mapping(strategy.get("requestedToCapacityRatio"),
                             "scoringStrategy.requestedToCapacityRatio")
            shape = parse_shape(ratio.get("shape"),
                                "scoringStrategy.requestedToCapacityRatio.shape")
        return cls(handle, ignored, groups, kind, resources, shape)

    @property
    def name(self) -> str:
        return FIT

    def events_to_register(self) -> Sequence[EventHint]:
        return FIT_HINTS

    def _is_ignored(self, resource: str) -> bool:
        if not is_extended_resource(resource):
            return False
        return (resource in self._ignored
                or (bool(self._ignored_groups)
                    and resource.split("/", 1)[0] in self._ignored_groups))

    def _dra_backed(self, cluster: ClusterState) -> frozenset[str]:
        if not self._dra_extended:
            return frozenset()
        # DeviceClasses rarely change during a run; recompute when the store says so.
        version, names = self._dra_names
        if version != cluster.class_version:
            names = dra_extended_resources(cluster)
            self._dra_names = (cluster.class_version, names)
        return names

    def pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                   ) -> tuple[PreFilterResult | None, Status]:
        requests = pod.requests
        checks: list[_Check] = []
        for resource in (CPU, MEMORY, EPHEMERAL_STORAGE):
            amount = requests.get(resource, 0)
            if amount > 0:
                checks.append(_Check(resource, amount, _reason(resource), False))
        dra = self._dra_backed(cluster)
        for resource in sorted(requests):
            amount = requests[resource]
            if amount <= 0 or not is_scalar_resource(resource) or self._is_ignored(resource):
                continue
            checks.append(_Check(resource, amount, _reason(resource), resource in dra))
        state.write(_FIT_KEY, _FitState(tuple(checks)))
        return None, _SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def _state(self, state: CycleState, pod: PodInfo) -> _FitState:
        data = state.get(_FIT_KEY)
        if isinstance(data, _FitState):
            return data
        raise MissingStateError("not found")

    def dry_run_key(self, state: CycleState, pod: PodInfo) -> Hashable | None:
        """Filter reads PreFilter's checks (the pod's requests) and the node's
        allocatable and pods only."""
        data = state.get(_FIT_KEY)
        return data.checks if isinstance(data, _FitState) else None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        data = state.get(_FIT_KEY)
        if not isinstance(data, _FitState):
            return Status.error(FIT, "not found")
        checks = data.checks
        allocatable = node.allocatable
        requested = node.requested
        reasons: list[str] | None = None
        unresolvable = False
        if len(node.pods) + 1 > allocatable.get("pods", 0) // 1000:
            reasons = ["Too many pods"]
        for check in checks:
            resource = check.resource
            have = allocatable.get(resource)
            if have is None:
                if check.dra_backed:
                    continue  # left to DynamicResources (DRA extended resources)
                have = 0
            if check.amount > have - requested.get(resource, 0):
                if reasons is None:
                    reasons = []
                reasons.append(check.reason)
                unresolvable = unresolvable or check.amount > have
        if reasons is None:
            return _SUCCESS
        return _rejection(tuple(reasons), unresolvable)

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
                     ) -> list[Status]:
        """Filter for many nodes: passing nodes take the fast path, the rest ``filter``."""
        data = state.get(_FIT_KEY)
        if not isinstance(data, _FitState):
            return [self.filter(state, pod, n) for n in nodes]
        simple = tuple((c.resource, c.amount) for c in data.checks if not c.dra_backed)
        if len(simple) != len(data.checks):
            return [self.filter(state, pod, n) for n in nodes]
        out: list[Status] = []
        for node in nodes:
            allocatable, requested = node.allocatable, node.requested
            fits = len(node.pods) < allocatable.get("pods", 0) // 1000
            if fits:
                for resource, amount in simple:
                    if amount > allocatable.get(resource, 0) - requested.get(resource, 0):
                        fits = False
                        break
            out.append(_SUCCESS if fits else self.filter(state, pod, node))
        return out

    def filter_mask(self, state: CycleState, pod: PodInfo) -> Mask | None:
        """Nodes with room for the pod, from the cluster's node table: the pod count
        and every checked resource compared at once. None when a check is
        DRA-backed (the node's listing decides) or the table is unusable."""
        data = state.get(_FIT_KEY)
        if not isinstance(data, _FitState) or any(c.dra_backed for c in data.checks):
            return None
        cluster = self._handle.cluster
        key = (cluster.node_version, cluster.node_log().end)
        if data.mask is not None and data.mask[0] == key:
            return data.mask[1]
        table = cluster.node_table()
        if table is None:
            return None
        mask: Mask = table.pods_room >= 1
        for check in data.checks:
            free = table.free(check.resource)
            if free is None:
                return None
            mask &= free >= check.amount
        data.mask = (key, mask)
        return mask

    def filter_rejections(self, state: CycleState, pod: PodInfo
                          ) -> tuple[Mask, Callable[[list[int]], list[Status]]] | None:
        """The mask is exact: every other node is rejected, with the reasons
        ``filter`` gives (computed only for the nodes the search reaches)."""
        mask = self.filter_mask(state, pod)
        if mask is None:
            return None
        nodes = self._handle.cluster.node_infos()

        def statuses(positions: list[int]) -> list[Status]:
            return [self.filter(state, pod, nodes[p]) for p in positions]

        return ~mask, statuses

    def explain_filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Filter plus details: requested, free and allocatable per short resource."""
        status = self.filter(state, pod, node)
        if not status.is_rejected():
            return status
        details: list[str] = []
        if len(node.pods) + 1 > node.allocatable.get("pods", 0) // 1000:
            details.append(f"pods: {len(node.pods)} of "
                           f"{node.allocatable.get('pods', 0) // 1000} in use")
        for check in self._state(state, pod).checks:
            free = node.free(check.resource)
            if check.amount > free and not (check.dra_backed
                                             and check.resource not in node.allocatable):
                details.append(
                    f"{check.resource}: requested {format_amount(check.resource, check.amount)}"
                    f", free {format_amount(check.resource, free)} of "
                    f"{format_amount(check.resource, node.allocatable.get(check.resource, 0))}"
                    f" allocatable")
        return Status(status.code, status.reasons, status.plugin, tuple(details))

    def shortfall(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> float:
        """How far the node is from fitting: the sum of missing / allocatable over the
        short resources; a resource the node does not have at all counts as 1000."""
        total = 0.0
        for check in self._state(state, pod).checks:
            alloc = node.allocatable.get(check.resource, 0)
            missing = check.amount - node.free(check.resource)
            if missing > 0:
                total += missing / alloc if alloc else 1000.0
        return total

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        state.write(_FIT_SCORE_KEY, _Requests(_pod_request_list(pod, self.resources, True)))
        return _SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        data = state.get(_FIT_SCORE_KEY)
        pod_requests = data.values if isinstance(data, _Requests) else \
            _pod_request_list(pod, self.resources, True)
        allocatable: list[int] = []
        requested: list[int] = []
        for (resource, _), pod_request in zip(self.resources, pod_requests, strict=True):
            alloc, req = _alloc_and_request(node, resource, pod_request, True)
            allocatable.append(alloc)
            requested.append(req)
        return self._scorer(requested, allocatable), _SUCCESS

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
                    ) -> tuple[list[int], Status]:
        """Score for all nodes at once; the default cpu+memory strategies inline the
        formulas (identical results), anything else goes through ``score``."""
        weights = self._cpu_memory_weights
        if weights is None or self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            return [self.score(state, pod, n)[0] for n in nodes], _SUCCESS
        (w_cpu, w_mem), (p_cpu, p_mem) = weights, pod.non_zero
        least = self.strategy == LEAST_ALLOCATED
        both = w_cpu + w_mem
        out: list[int] = []
        append = out.append
        for node in nodes:
            a_cpu, a_mem = node.alloc_cpu, node.alloc_memory
            if not (a_cpu and a_mem):
                append(self.score(state, pod, node)[0])
                continue
            r_cpu = node.non_zero_cpu + p_cpu
            r_mem = node.non_zero_memory + p_mem
            if least:
                v_cpu = (a_cpu - r_cpu) * MAX_NODE_SCORE // a_cpu if r_cpu <= a_cpu else 0
                v_mem = (a_mem - r_mem) * MAX_NODE_SCORE // a_mem if r_mem <= a_mem else 0
            else:
                v_cpu = (r_cpu if r_cpu < a_cpu else a_cpu) * MAX_NODE_SCORE // a_cpu
                v_mem = (r_mem if r_mem < a_mem else a_mem) * MAX_NODE_SCORE // a_mem
            append((v_cpu * w_cpu + v_mem * w_mem) // both)
        return out, _SUCCESS

    def score_positions(self, state: CycleState, pod: PodInfo, positions: Positions
                        ) -> tuple[I64, Status] | None:
        """``score_nodes`` from the node table for the cpu+memory Least/MostAllocated
        strategies (same integer formulas); None otherwise, or when a node lacks
        cpu or memory, or amounts are too large to be exact."""
        weights = self._cpu_memory_weights
        if weights is None or self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            return None
        table = self._handle.cluster.node_table()
        if table is None or not table.exact:
            return None
        a_cpu = table.alloc_cpu[positions]
        a_mem = table.alloc_memory[positions]
        if len(positions) and (int(a_cpu.min()) <= 0 or int(a_mem.min()) <= 0):
            return None
        (w_cpu, w_mem), (p_cpu, p_mem) = weights, pod.non_zero
        if abs(p_cpu) >= _EXACT or abs(p_mem) >= _EXACT:
            return None
        r_cpu = table.non_zero_cpu[positions] + p_cpu
        r_mem = table.non_zero_memory[positions] + p_mem
        if self.strategy == LEAST_ALLOCATED:
            v_cpu = np.where(r_cpu <= a_cpu, (a_cpu - r_cpu) * MAX_NODE_SCORE // a_cpu, 0)
            v_mem = np.where(r_mem <= a_mem, (a_mem - r_mem) * MAX_NODE_SCORE // a_mem, 0)
        else:
            v_cpu = np.minimum(r_cpu, a_cpu) * MAX_NODE_SCORE // a_cpu
            v_mem = np.minimum(r_mem, a_mem) * MAX_NODE_SCORE // a_mem
        return (v_cpu * w_cpu + v_mem * w_mem) // (w_cpu + w_mem), _SUCCESS

    @property
    def _cpu_memory_weights(self) -> tuple[int, int] | None:
        names = dict(self.resources)
        if set(names) != {CPU, MEMORY}:
            return None
        return names[CPU], names[MEMORY]

    def score_extensions(self) -> None:
        return None


class BalancedAllocation:
    """Prefers nodes the pod leaves better balanced (cpu, memory... fractions closer)."""

    def __init__(self, resources: tuple[tuple[str, int], ...],
                 handle: Handle | None = None) -> None:
        self.resources = resources
        self._handle = handle  # for the node table; without it scoring goes node by node

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> BalancedAllocation:
        return cls(parse_resources(args.get("resources"), "resources", _balanced_weight),
                   handle)

    @property
    def name(self) -> str:
        return BALANCED_ALLOCATION

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        values = _pod_request_list(pod, self.resources, False)
        if not any(values):
            # Best-effort pods would all pile onto one node; upstream skips them.
            return Status.skip(BALANCED_ALLOCATION)
        state.write(_BALANCED_KEY, _Requests(values))
        return _SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        data = state.get(_BALANCED_KEY)
        if isinstance(data, _Requests):
            pod_requests = data.values
        else:  # PreScore not run (or disabled): upstream computes, and skips best effort
            pod_requests = _pod_request_list(pod, self.resources, False)
            if not any(pod_requests):
                return 0, _SUCCESS
        allocatable: list[int] = []
        requested: list[int] = []
        allocated: list[int] = []
        for (resource, _), pod_request in zip(self.resources, pod_requests, strict=True):
            alloc, req = _alloc_and_request(node, resource, pod_request, False)
            allocatable.append(alloc)
            requested.append(req)
            allocated.append(req - pod_request if alloc else 0)
        return _balanced(requested, allocated, allocatable), _SUCCESS

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
                    ) -> tuple[list[int], Status]:
        """Score for all nodes; cpu+memory (the default) inline, same arithmetic."""
        if {r for r, _ in self.resources} != {CPU, MEMORY} or len(self.resources) != 2:
            return [self.score(state, pod, n)[0] for n in nodes], _SUCCESS
        p_cpu, p_mem = pod.requests.get(CPU, 0), pod.requests.get(MEMORY, 0)
        out: list[int] = []
        append = out.append
        for node in nodes:
            a_cpu, a_mem = node.alloc_cpu, node.alloc_memory
            if a_cpu and a_mem:
                requested = node.requested
                u_cpu = requested.get(CPU, 0)
                u_mem = requested.get(MEMORY, 0)
                append(_two_balanced(u_cpu / a_cpu, u_mem / a_mem,
                                     (u_cpu + p_cpu) / a_cpu, (u_mem + p_mem) / a_mem))
            else:
                # One fraction or none: deviation 0 before and after, no change.
                append(_NO_CHANGE)
        return out, _SUCCESS

    def score_positions(self, state: CycleState, pod: PodInfo, positions: Positions
                        ) -> tuple[I64, Status] | None:
        """``score_nodes`` from the node table for cpu+memory: the same float64
        operations in the same order, so the same integers. None otherwise."""
        if {r for r, _ in self.resources} != {CPU, MEMORY} or len(self.resources) != 2 \
                or self._handle is None:
            return None
        table = self._handle.cluster.node_table()
        if table is None or not table.exact:
            return None
        p_cpu, p_mem = pod.requests.get(CPU, 0), pod.requests.get(MEMORY, 0)
        if abs(p_cpu) >= _EXACT or abs(p_mem) >= _EXACT:
            return None
        a_cpu = table.alloc_cpu[positions]
        a_mem = table.alloc_memory[positions]
        both = (a_cpu != 0) & (a_mem != 0)
        # Nodes without both amounts score 75 and are divided by 1 only to stay quiet.
        d_cpu = np.where(both, a_cpu, 1)
        d_mem = np.where(both, a_mem, 1)
        u_cpu = table.req_cpu[positions]
        u_mem = table.req_memory[positions]
        after = _two_balance_array((u_cpu + p_cpu) / d_cpu, (u_mem + p_mem) / d_mem)
        before = _two_balance_array(u_cpu / d_cpu, u_mem / d_mem)
        scores = HALF_SCORE + (HALF_SCORE + after - before) // 2
        return np.where(both, scores, _NO_CHANGE), _SUCCESS

    def score_extensions(self) -> None:
        return None


_NO_CHANGE = HALF_SCORE + HALF_SCORE // 2  # 75: the balance is the same with the pod


def _two_balance(f_cpu: float, f_mem: float) -> int:
    """``_balance`` for two fractions (the default cpu+memory), same float operations."""
    if f_cpu > 1.0:
        f_cpu = 1.0
    if f_mem > 1.0:
        f_mem = 1.0
    return int((1 - abs((f_cpu - f_mem) / 2)) * MAX_NODE_SCORE)


def _two_balanced(before_cpu: float, before_mem: float, after_cpu: float,
                  after_mem: float) -> int:
    change = _two_balance(after_cpu, after_mem) - _two_balance(before_cpu, before_mem)
    return HALF_SCORE + (HALF_SCORE + change) // 2


def _two_balance_array(f_cpu: npt.NDArray[np.float64], f_mem: npt.NDArray[np.float64]) -> I64:
    f_cpu = np.minimum(f_cpu, 1.0)
    f_mem = np.minimum(f_mem, 1.0)
    return ((1 - np.abs((f_cpu - f_mem) / 2)) * MAX_NODE_SCORE).astype(np.int64)


def format_amount(resource: str, milli: int) -> str:
    """A milli-unit amount as a Kubernetes quantity string (cpu in cores or m,
    byte-like resources in binary units when exact, others as plain numbers)."""
    if resource == CPU:
        return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"
    if milli % 1000:
        return f"{milli}m"
    value = milli // 1000
    if resource in (MEMORY, EPHEMERAL_STORAGE) or resource.startswith("hugepages-"):
        for suffix, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if value and value % size == 0:
                return f"{value // size}{suffix}"
    return str(value)
