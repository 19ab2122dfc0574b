"""The FGD paper's placement policies as Score plugins: Random, DotProd, GpuClustering,
GpuPacking, BestFit, FGD, and ours, FGD-FS.

Each is registered under the policy's name and disabled by default; enable one
from a KubeSchedulerConfiguration profile, usually with the default scorers off
so the policy alone decides, as in the paper::

    profiles:
    - schedulerName: default-scheduler
      plugins:
        score:
          disabled: [{name: "*"}]
          enabled: [{name: FGD, weight: 1}]
      pluginConfig:
      - name: FGD
        args:
          shapes:                       # the target workload M (optional)
          - {cpu: "4", gpus: 1, share: 500, weight: 5}
          - {cpu: "8", gpus: 1, share: 1000, weight: 3}
          - {cpu: "2", gpus: 0, weight: 2}
          gpuResource: nvidia.com/gpu   # device-plugin nodes (default)
          drivers: [gpu.example.com]    # which slices' devices are GPUs (default: all)

``shapes[].cpu`` is a quantity (cores), ``gpus`` a count, ``share`` the per-GPU
share in milli-GPU (default 1000), ``weight`` a relative frequency (default 1).
Without ``shapes``, M is the distribution of the pods this plugin has scored so
far (every pod of the run, once), which converges to the workload's own mix.

Node choice only. The per-node view (free CPU; free share of each GPU from the
claims' allocations or the device-plugin counts) is described in ``gpuview``;
scores are the kernels' integers 0..100, not normalised further (BestFit's
min-max rescaling in the paper's artifact never changes the winner). Random
scores each node uniformly in 0..100 (the framework breaks ties), which picks a
uniform node among the feasible ones like the paper's "one node gets the top
score". The plugins are meant to run alone; mixed with other scorers their
weights apply as usual. Device
choice inside the node is still DynamicResources' ``devicePolicy`` (first-fit,
or ``pack``, which is the paper's best-fit rule for shares); FGD's own
per-GPU choice is not passed to the allocator yet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dralab.api.quantity import Quantity
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.policies import (
    GPU_MILLI,
    POLICIES,
    NodeArrays,
    PodDemand,
    Policy,
    PolicyContext,
    Shape,
    TargetWorkload,
    gpu_class,
)

from ..framework import CycleState, Handle, PluginArgsError, ScoreExtensions, Status
from .gpuview import DEFAULT_GPU_RESOURCE, GpuIndex, pod_demand

__all__ = ["NAMES", "PolicyScore"]

NAMES: tuple[str, ...] = tuple(POLICIES)
_STATE = "PreScorePolicy/"


def _parse_shapes(raw: Any) -> list[tuple[Shape, float]]:
    if not isinstance(raw, list) or not raw:
        raise PluginArgsError("shapes", "must be a non-empty list")
    out: list[tuple[Shape, float]] = []
    for i, item in enumerate(raw):
        path = f"shapes[{i}]"
        if not isinstance(item, Mapping):
            raise PluginArgsError(path, "must be a mapping with cpu, gpus, share, weight")
        try:
            cpu = Quantity.parse(str(item.get("cpu", "0"))).milli_value()
        except ValueError as exc:
            raise PluginArgsError(f"{path}.cpu", str(exc)) from None
        gpus, share, weight = item.get("gpus", 0), item.get("share", GPU_MILLI), \
            item.get("weight", 1)
        if not isinstance(gpus, int) or isinstance(gpus, bool) or not 0 <= gpus <= 8:
            raise PluginArgsError(f"{path}.gpus", "must be an integer 0..8")
        if not isinstance(share, int) or not 0 < share <= GPU_MILLI or (
                gpus > 1 and share != GPU_MILLI):
            raise PluginArgsError(f"{path}.share",
                                  "must be 1..1000 milli-GPU (1000 with several GPUs)")
        if not isinstance(weight, int | float) or weight < 0:
            raise PluginArgsError(f"{path}.weight", "must be a non-negative number")
        out.append((Shape(cpu, gpus, share if gpus else 0), float(weight)))
    if sum(w for _, w in out) <= 0:
        raise PluginArgsError("shapes", "weights must have a positive sum")
    return out


class _Prepared:
    """The pod's demand and the policy to score it with, for one scheduling cycle."""

    __slots__ = ("demand", "policy")

    def __init__(self, demand: PodDemand, policy: Policy) -> None:
        self.demand = demand
        self.policy = policy

    def clone(self) -> _Prepared:
        return self  # immutable for the cycle


class PolicyScore:
    """One paper policy as a PreScore + Score plugin (see the module docstring)."""

    def __init__(self, policy_name: str, args: Mapping[str, Any], handle: Handle) -> None:
        unknown = set(args) - {"shapes", "gpuResource", "drivers"}
        if unknown:
            raise PluginArgsError(sorted(unknown)[0], "unknown field")
        self._name = policy_name
        self._cluster = handle.cluster
        drivers = args.get("drivers", [])
        if not isinstance(drivers, list) or not all(isinstance(d, str) for d in drivers):
            raise PluginArgsError("drivers", "must be a list of driver names")
        gpu_resource = args.get("gpuResource", DEFAULT_GPU_RESOURCE)
        if not isinstance(gpu_resource, str) or not gpu_resource:
            raise PluginArgsError("gpuResource", "must be a resource name")
        self._index = GpuIndex(frozenset(drivers), gpu_resource)
        self._fixed = _parse_shapes(args["shapes"]) if "shapes" in args else None
        self._seen: dict[tuple[int, int, int], int] = {}  # observed shapes -> pod count
        self._seen_pods: set[str] = set()
        self._classes: dict[str, int] = {}  # pod key -> GpuClustering class
        # The run's only randomness is handle.rng; one draw seeds the kernels' generator.
        self._rng = np.random.default_rng(handle.rng.getrandbits(64))
        self._policy: Policy | None = None
        self._policy_key: object = None

    @property
    def name(self) -> str:
        return self._name

    def _target(self) -> TargetWorkload:
        if self._fixed is not None:
            return TargetWorkload.of([s for s, _ in self._fixed], [w for _, w in self._fixed])
        shapes = [Shape(cpu, k, share) for cpu, k, share in self._seen]
        return TargetWorkload.of(shapes, list(self._seen.values()))

    def _build_policy(self, cluster: ClusterState) -> Policy:
        # A fixed M builds the policy once; an observed M whenever a new pod was seen.
        key = None if self._fixed is not None else len(self._seen_pods)
        if self._policy is None or key != self._policy_key:
            target = self._target()
            nodes = cluster.node_infos()
            empty = NodeArrays.build([n.alloc_cpu for n in nodes], [1 << 62] * len(nodes),
                                     [len(self._index.free_shares(n)) for n in nodes],
                                     [""] * len(nodes))
            self._policy = POLICIES[self._name](PolicyContext(target, target, empty))
            self._policy_key = key
        return self._policy

    def _node_classes(self, node: NodeInfo) -> int:
        bits = 0
        for p in node.pods:
            klass = self._classes.get(p.key)
            if klass is None:
                d = pod_demand(self._index, self._cluster, p)
                klass = self._classes[p.key] = gpu_class(d.num_gpu, d.gpu_milli)
            if klass:
                bits |= 1 << klass
        return bits

    def _prepare(self, state: CycleState, pod: PodInfo) -> _Prepared:
        cluster = self._cluster
        self._index.refresh(cluster)
        demand = pod_demand(self._index, cluster, pod)
        if pod.key not in self._seen_pods:
            self._seen_pods.add(pod.key)
            shape = (demand.cpu, demand.num_gpu, demand.gpu_milli)
            self._seen[shape] = self._seen.get(shape, 0) + 1
        prepared = _Prepared(demand, self._build_policy(cluster))
        state.write(_STATE + self._name, prepared)
        return prepared

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        self._prepare(state, pod)
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        # A profile that enables the plugin under `score` only never runs its PreScore
        # (as upstream): prepare on the first node instead.
        prepared = state.get(_STATE + self._name)
        if not isinstance(prepared, _Prepared):
            prepared = self._prepare(state, pod)
        if self._name == "Random":
            # Per-node scalar Random: a uniform score per node; the framework's
            # tie-break keeps the pick uniform among the top.
            return int(self._rng.integers(0, 101)), Status.success()
        classes = self._node_classes(node) if self._name == "GpuClustering" else 0
        view = self._index.view(node, classes)
        return int(prepared.policy.place(view, prepared.demand, self._rng).score), \
            Status.success()

    def score_extensions(self) -> ScoreExtensions | None:
        return None

