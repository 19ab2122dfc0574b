"""The Fleet spec: a small YAML kind of our own describing node pools.

Example (every field; defaults in comments)::

    apiVersion: dralab.dev/v1alpha1
    kind: Fleet
    metadata: {name: demo}
    spec:
      seed: 0                           # default seed; `dralab fleet --seed` overrides
      kubernetesVersion: "1.36"         # >= 1.35: split DynamicMIG slices; 1.34: combined
      nvidia:
        driverVersion: 580.105.08       # host driver; published semver-normalised
        cudaDriverVersion: "13.0"
        numaNodeAttribute: false        # also publish resource.kubernetes.io/numaNode on
                                        # GPU/MIG devices of NUMA hosts (the driver's main
                                        # branch does; releases up to v0.4.1 do not)
      example:
        extendedResourceName: null      # chart deviceClass.extendedResourceName
      topologyLabels:                   # label keys used for topology levels
        zone: topology.kubernetes.io/zone
        block: dralab.dev/topology-block
        rack: dralab.dev/topology-rack
      deviceClasses:                    # platform classes, beside the drivers' own
      - name: training-h100
        models: [h100-80gb-sxm]         # productName (NVIDIA) / model (example driver)
        type: gpu                       # gpu | mig (NVIDIA only)
        profiles: []                    # MIG profiles (type mig)
        cel: ""                         # extra CEL, ANDed
        driver: nvidia                  # nvidia | example
        extendedResourceName: null
        sharing: null                   # {strategy: TimeSlicing, interval: Long}
                                        # | {strategy: MPS, activeThreadPercentage: 50,
                                        #    pinnedMemoryLimit: 10Gi}
      pools:
      - name: h100
        count: 4                        # may be omitted when nodeNames is given
        namePrefix: h100-node-          # default "<name>-"; nodes <prefix>01, 02, ...
        nodeNames: []                   # exact node names instead (count = their number)
        driver: nvidia                  # nvidia | example
        platform: null                  # x86 | pcie | vm | grace (default: the model's)
        cpu: "192"
        memory: 2Ti
        pods: 110
        ephemeralStorage: null          # the node's ephemeral-storage, e.g. 2Ti (default
                                        # none: a pod asking any does not fit)
        reserved: {cpu: "2", memory: 48Gi}   # capacity - allocatable (default none);
                                        # also ephemeral-storage: 100Gi
        gpu:
          model: h100-80gb-sxm          # catalog key or alias (example driver: optional)
          count: 8                      # default 0; example driver: kubeletPlugin.numDevices,
                                        # default 8 as in its chart
          mig:
            mode: "off"                 # off | static | dynamic
            profiles: []                # static: partitions of every GPU ("3g.40gb@4" pins)
            perGpu: []                  # static: one list per GPU, overrides `profiles`
          sharing:
            consumableShares: null      # unlimited | memory | <N>  (ConsumableShares)
            timeSlicing: false          # TimeSlicingSettings gate on
            mps: false                  # MPSSupport gate on
          extendedResources: false      # also advertise nvidia.com/gpu (+ mig-<profile>)
          partitions: 0                 # example driver: kubeletPlugin.gpuPartitions
          multipleAllocations: false    # example driver: gpuAllowMultipleAllocations
          bindingConditions: false      # example driver: kubeletPlugin.bindingConditions
        computeDomains: false           # publish compute-domain.nvidia.com channel/daemon
        nvlink:                         # multi-node NVLink domains (default none)
          nodesPerDomain: 18            # nodes per domain, in node order (NVL72: 18)
          cliqueId: 0                   # label nvidia.com/gpu.clique=<clusterUUID>.<id>
        nics:
          count: 8
          driver: sriov                 # sriov | dranet
          model: ConnectX-7
          vfs: 1                        # VFs per NIC (sriov)
          linkType: infiniband          # infiniband | ethernet
          alignment: pcie               # pcie (share GPU's root) | numa | none
        topology:
          zone: zone-a                  # or zones: [zone-a, zone-b] (contiguous split)
          nodesPerRack: 4               # 0: no rack label
          racksPerBlock: 8              # 0: no block label
        labels: {}
        taints: []                      # [{key, value, effect}]
        extendedResources: {}           # device-plugin resources every node advertises,
                                        # e.g. {example.com/fpga: 2} (capacity and
                                        # allocatable; beside gpu.extendedResources')
        autoscaling:                    # a node group (default: none, the pool is fixed)
          min: 0                        # never scaled below (count may be 0: from zero)
          max: 8                        # never scaled above (required)
          pricePerHour: 0.0             # cost of one node for an hour
          provisioningDelay: 0s         # from the scale-up to the node being Ready
          priority: 0                   # the priority expander prefers higher
          zeroOrMaxNodeScaling: false   # Cluster Autoscaler's ZeroOrMaxNodeScaling: the
                                        # group grows from 0 to max at once and goes
                                        # only whole

Parsing is strict: unknown fields, wrong types and inconsistent settings are
``FleetSpecError`` with one line naming the file and field path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from dralab.api.errors import InputError
from dralab.api.quantity import Quantity, QuantityError, parse_quantity

from .catalog import GpuModel, get_model
from .mig import assign_placements

__all__ = [
    "API_VERSION",
    "KIND",
    "MAX_FLEET_NODES",
    "RESERVED_CLASS_NAMES",
    "AutoscalingSpec",
    "ClassSharing",
    "ExampleSpec",
    "Fleet",
    "FleetSpec",
    "FleetSpecError",
    "GpuSpec",
    "MigSpec",
    "NicSpec",
    "NodePool",
    "PlatformClass",
    "SharingSpec",
    "TopologySpec",
    "parse_fleet",
    "parse_fleet_duration",
]

API_VERSION = "dralab.dev/v1alpha1"
KIND = "Fleet"

# The most nodes a Fleet may describe (all pools together): Kubernetes' own limit for
# the largest cluster it supports ("Considerations for large clusters": no more than
# 5,000 nodes). Checked before any node name is generated, so a count of a million
# is one line of error, not a million objects.
MAX_FLEET_NODES = 5_000

# Classes the drivers install; a platform class must not take these names.
RESERVED_CLASS_NAMES = frozenset({
    "gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com",
    "compute-domain-default-channel.nvidia.com", "compute-domain-daemon.nvidia.com",
    "gpu.example.com", "sriovnetwork.k8snetworkplumbingwg.io", "dra.net",
})

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_EXTENDED_RESOURCE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
                                r"/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


class FleetSpecError(InputError):
    """A Fleet spec that cannot be used: ``FILE: field.path: what is wrong``."""

    def __init__(self, source: str, path: str, message: str) -> None:
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{path}: {message}" if path else f"{where}{message}")
        self.source = source
        self.path = path
        self.detail = message


class _Strict(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True,
              rename="camel"):
    """Base: immutable, camelCase field names, unknown fields rejected."""


class SharingSpec(_Strict, frozen=True):
    consumable_shares: str | int | None = None
    time_slicing: bool = False
    mps: bool = False


class MigSpec(_Strict, frozen=True):
    mode: Literal["off", "static", "dynamic"] = "off"
    profiles: list[str] = []
    per_gpu: list[list[str]] = []


class GpuSpec(_Strict, frozen=True):
    model: str | None = None
    count: int = 0
    mig: MigSpec = MigSpec()
    sharing: SharingSpec = SharingSpec()
    extended_resources: bool = False
    partitions: int = 0
    multiple_allocations: bool = False
    binding_conditions: bool = False


class NicSpec(_Strict, frozen=True):
    count: int = 0
    driver: Literal["sriov", "dranet"] = "sriov"
    model: Literal["ConnectX-6", "ConnectX-7"] = "ConnectX-7"
    vfs: int = 1
    link_type: Literal["infiniband", "ethernet"] = "infiniband"
    alignment: Literal["pcie", "numa", "none"] = "pcie"


class TopologySpec(_Strict, frozen=True):
    zone: str | None = None
    zones: list[str] = []
    nodes_per_rack: int = 0
    racks_per_block: int = 0


class NvlinkSpec(_Strict, frozen=True):
    """Multi-node NVLink domains of a pool (issue 36): runs of ``nodesPerDomain`` nodes,
    in node order, share one NVLink fabric (an NVL72 rack: 18 trays). Each domain gets
    its own cluster UUID (stable for the seed) and ``cliqueId``; GPU Feature Discovery
    writes them as the ``nvidia.com/gpu.clique`` node label."""

    nodes_per_domain: int = 18  # the driver's defaultMaxNodesPerIMEXDomain
    clique_id: int = 0


class TaintSpec(_Strict, frozen=True):
    key: str
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"


class ReservedSpec(_Strict, frozen=True):
    cpu: str | int | None = None
    memory: str | int | None = None
    # Keyed by the resource name, as the kubelet's kubeReserved/systemReserved are.
    ephemeral_storage: str | int | None = msgspec.field(default=None, name="ephemeral-storage")


class AutoscalingSpec(_Strict, frozen=True):
    """The pool as an autoscaled node group (Cluster Autoscaler / Karpenter models)."""

    max: int
    min: int = 0
    price_per_hour: float = 0.0
    provisioning_delay: str | int | float = 0
    priority: int = 0
    # CA's NodeGroupAutoscalingOptions.ZeroOrMaxNodeScaling (an "atomic" group): scale-up
    # to the max size at once, scale-down only of the whole group.
    zero_or_max_node_scaling: bool = False

    @property
    def provisioning_delay_seconds(self) -> float:
        """``provisioningDelay`` in seconds (``parse_fleet`` has checked it)."""
        return parse_fleet_duration(self.provisioning_delay)


class NodePool(_Strict, frozen=True):
    name: str
    # Required unless ``nodeNames`` is given; ``parse_fleet`` fills it in then.
    count: int | msgspec.UnsetType = msgspec.UNSET
    name_prefix: str | None = None
    names: list[str] = msgspec.field(default_factory=list, name="nodeNames")
    driver: Literal["nvidia", "example"] = "nvidia"
    platform: Literal["x86", "pcie", "vm", "grace"] | None = None
    cpu: str | int = "64"
    memory: str | int = "512Gi"
    pods: int = 110
    # The node's ephemeral-storage (capacity and allocatable). None: the Node reports none,
    # so NodeResourcesFit turns away any pod that asks for some (kube-scheduler's rule for
    # a resource the node lacks). Real kubelets always report it; None keeps older fleets'
    # output unchanged.
    ephemeral_storage: str | int | None = None
    reserved: ReservedSpec = ReservedSpec()
    gpu: GpuSpec = GpuSpec()
    compute_domains: bool = False
    nvlink: NvlinkSpec | None = None
    nics: NicSpec = NicSpec()
    topology: TopologySpec = TopologySpec()
    labels: dict[str, str] = {}
    taints: list[TaintSpec] = []
    # Extended resources a device plugin advertises on every node (a count each).
    extended_resources: dict[str, int] = {}
    autoscaling: AutoscalingSpec | None = None

    @property
    def prefix(self) -> str:
        return self.name_prefix if self.name_prefix is not None else f"{self.name}-"

    @property
    def size(self) -> int:
        """Number of nodes: ``len(nodeNames)`` if given, else ``count``."""
        if self.names:
            return len(self.names)
        return self.count if isinstance(self.count, int) else 0

    def node_names(self) -> list[str]:
        """``nodeNames`` if given, else ``<prefix>01``, ``<prefix>02``, ... (at least two
        digits)."""
        if self.names:
            return list(self.names)
        width = max(2, len(str(self.size)))
        return [f"{self.prefix}{i:0{width}d}" for i in range(1, self.size + 1)]


class ClassSharing(_Strict, frozen=True):
    strategy: Literal["TimeSlicing", "MPS"]
    interval: Literal["Default", "Short", "Medium", "Long"] | None = None
    active_thread_percentage: int | None = None
    pinned_memory_limit: str | None = None


class PlatformClass(_Strict, frozen=True):
    name: str
    driver: Literal["nvidia", "example"] = "nvidia"
    type: Literal["gpu", "mig"] = "gpu"
    models: list[str] = []
    profiles: list[str] = []
    cel: str = ""
    extended_resource_name: str | None = None
    sharing: ClassSharing | None = None


class NvidiaSpec(_Strict, frozen=True):
    driver_version: str = "580.105.08"
    cuda_driver_version: str = "13.0"
    numa_node_attribute: bool = False


class ExampleSpec(_Strict, frozen=True):
    extended_resource_name: str | None = None


class TopologyLabels(_Strict, frozen=True):
    zone: str = "topology.kubernetes.io/zone"
    block: str = "dralab.dev/topology-block"
    rack: str = "dralab.dev/topology-rack"


class FleetSpec(_Strict, frozen=True):
    pools: list[NodePool] = []
    seed: int = 0
    kubernetes_version: str = "1.36"
    nvidia: NvidiaSpec = NvidiaSpec()
    example: ExampleSpec = ExampleSpec()
    topology_labels: TopologyLabels = TopologyLabels()
    device_classes: list[PlatformClass] = []


class FleetMeta(_Strict, frozen=True):
    name: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}


class Fleet(_Strict, frozen=True):
    """A parsed, checked Fleet. Build it with ``parse_fleet``; never mutate it."""

    api_version: str
    kind: str
    spec: FleetSpec
    metadata: FleetMeta = FleetMeta()

    @property
    def name(self) -> str:
        return self.metadata.name


# --- strict decoding ------------------------------------------------------------

def _literal_values(path: str) -> list[str]:
    """The allowed values of the Literal-typed field at ``path`` ([] if not found)."""
    from msgspec import inspect as mi

    node: mi.Type = mi.type_info(Fleet)
    for token in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if isinstance(node, mi.UnionType):
            node = next((t for t in node.types if not isinstance(t, mi.NoneType)), node)
        if token.startswith("["):
            if not isinstance(node, mi.ListType):
                return []
            node = node.item_type
        elif isinstance(node, mi.StructType):
            field = next((f for f in node.fields if f.encode_name == token), None)
            if field is None:
                return []
            node = field.type
        else:
            return []
    if isinstance(node, mi.UnionType):
        node = next((t for t in node.types if not isinstance(t, mi.NoneType)), node)
    return [str(v) for v in node.values] if isinstance(node, mi.LiteralType) else []


# ASCII digits only: \d and float() also take other scripts' digits ('٣', '３').
_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_fleet_duration(value: str | int | float) -> float:
    """Seconds from ``90``, ``"90s"``, ``"5m"``, ``"2h"``, ``"1d"``, ``"250ms"``;
    ValueError for anything else (negative numbers included)."""
    if isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    if isinstance(value, int | float):
        if not 0 <= value < float("inf"):
            raise ValueError(f"not a duration: {value!r}")
        return float(value)
    match = _DURATION.match(value.strip()) if len(value) <= 32 else None
    if match is None:
        raise ValueError(f"not a duration (use e.g. 90s, 5m, 1h): {value[:32]!r}")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


_MSGSPEC_PATH = re.compile(r" - at `\$(.*)`$")


def _decode(data: Mapping[str, Any], source: str) -> Fleet:
    try:
        return msgspec.convert(data, Fleet)
    except msgspec.ValidationError as err:
        text = str(err)
        match = _MSGSPEC_PATH.search(text)
        path = match.group(1).lstrip(".") if match else ""
        message = text[: match.start()] if match else text
        unknown = re.match(r"Object contains unknown field `(.+)`", message)
        if unknown:
            path = f"{path}.{unknown.group(1)}" if path else unknown.group(1)
            message = "unknown field"
        if message.startswith("Invalid enum value"):
            allowed = _literal_values(path)
            if allowed:
                message = f"{message}; must be one of {', '.join(allowed)}"
        missing = re.match(r"Object missing required field `(.+)`", message)
        if missing:
            path = f"{path}.{missing.group(1)}" if path else missing.group(1)
            message = "required field missing"
        raise FleetSpecError(source, path, message.replace("`", "")) from None


# --- semantic checks ------------------------------------------------------------

def _quantity(source: str, path: str, value: str | int) -> Quantity:
    try:
        q = parse_quantity(str(value))
    except QuantityError as exc:
        raise FleetSpecError(source, path, f"not a quantity: {value!r} ({exc})") from None
    if q.sign() < 0:
        raise FleetSpecError(source, path, f"must not be negative: {value!r}")
    return q


def _version(source: str, path: str, text: str, parts: int) -> None:
    if not re.fullmatch(rf"[0-9]+(\.[0-9]+){{{parts - 1},2}}", text):
        raise FleetSpecError(source, path, f"not a version like {'1.2.3'[:2 * parts - 1]}: "
                                           f"{text!r}")


def _model(source: str, path: str, name: str) -> GpuModel:
    try:
        return get_model(name)
    except KeyError:
        from .catalog import model_keys
        raise FleetSpecError(source, path, f"unknown GPU model {name!r} "
                                           f"(known: {', '.join(model_keys())})") from None


def _check_mig(source: str, path: str, pool: NodePool, model: GpuModel) -> None:
    mig = pool.gpu.mig
    if mig.mode == "off":
        if mig.profiles or mig.per_gpu:
            raise FleetSpecError(source, f"{path}.profiles",
                                 "MIG profiles given but mig.mode is off")
        return
    if pool.driver != "nvidia":
        raise FleetSpecError(source, f"{path}.mode", "MIG needs the nvidia driver")
    geometry = model.mig
    if geometry is None:
        raise FleetSpecError(source, f"{path}.mode",
                             f"{model.key} has no modelled MIG geometry")
    if mig.mode == "dynamic":
        if mig.profiles or mig.per_gpu:
            raise FleetSpecError(source, f"{path}.profiles", "dynamic MIG advertises every "
                                 "placement; profiles are only for mode static")
        return
    if mig.per_gpu and len(mig.per_gpu) != pool.gpu.count:
        raise FleetSpecError(source, f"{path}.perGpu",
                             f"has {len(mig.per_gpu)} lists for {pool.gpu.count} GPUs")
    lists = mig.per_gpu or [mig.profiles] * pool.gpu.count
    for g, items in enumerate(lists):
        where = f"{path}.perGpu[{g}]" if mig.per_gpu else f"{path}.profiles"
        for k, item in enumerate(items):
            name = item.partition("@")[0].strip()
            if name not in geometry.names:
                raise FleetSpecError(source, f"{where}[{k}]",
                                     f"unknown MIG profile {name!r} for {model.key} "
                                     f"(known: {', '.join(geometry.names)})")
        try:
            assign_placements(geometry, items)
        except ValueError as exc:
            raise FleetSpecError(source, where, str(exc)) from None


def _check_sharing(source: str, path: str, pool: NodePool) -> None:
    sharing = pool.gpu.sharing
    shares = sharing.consumable_shares
    if shares is not None:
        ok = shares in ("unlimited", "memory") or (
            isinstance(shares, int) and shares > 0) or (
            isinstance(shares, str) and shares.isascii() and shares.isdigit() and int(shares) > 0)
        if not ok:
            raise FleetSpecError(source, f"{path}.consumableShares",
                                 f"must be unlimited, memory or a positive integer: {shares!r}")
    if pool.driver == "example" and (shares is not None or sharing.mps or sharing.time_slicing):
        raise FleetSpecError(source, path, "sharing settings are NVIDIA driver flags; use "
                                           "gpu.multipleAllocations with the example driver")
    if sharing.mps and pool.gpu.mig.mode == "dynamic":
        raise FleetSpecError(source, f"{path}.mps",
                             "the driver's MPSSupport gate excludes DynamicMIG")


def _check_node_names(source: str, path: str, pool: NodePool) -> None:
    if not pool.names:
        if not isinstance(pool.count, int):
            raise FleetSpecError(source, f"{path}.count",
                                 "required field missing (or give nodeNames)")
        # An autoscaled pool may start empty: its node group scales from zero.
        least = 0 if pool.autoscaling is not None else 1
        if pool.count < least:
            raise FleetSpecError(source, f"{path}.count",
                                 f"must be at least {least}: {pool.count}")
        if pool.count > MAX_FLEET_NODES:
            raise FleetSpecError(source, f"{path}.count", f"{pool.count:,} nodes, more than "
                                 f"{MAX_FLEET_NODES:,} (MAX_FLEET_NODES)")
        width = max(2, len(str(pool.count)))
        last = f"{pool.prefix}{pool.count:0{width}d}"
        if len(last) > 63 or not _DNS_LABEL.match(last):
            raise FleetSpecError(source, f"{path}.namePrefix",
                                 f"node names like {last!r} are not DNS labels (<= 63 chars)")
        return
    if len(pool.names) > MAX_FLEET_NODES:
        raise FleetSpecError(source, f"{path}.nodeNames", f"{len(pool.names):,} nodes, more "
                             f"than {MAX_FLEET_NODES:,} (MAX_FLEET_NODES)")
    if isinstance(pool.count, int) and pool.count != len(pool.names):
        raise FleetSpecError(source, f"{path}.count", f"is {pool.count} but nodeNames has "
                                                      f"{len(pool.names)} names")
    if pool.name_prefix is not None:
        raise FleetSpecError(source, f"{path}.namePrefix",
                             "only for generated names; not with nodeNames")
    seen: dict[str, int] = {}
    for i, name in enumerate(pool.names):
        # A Node name is a DNS subdomain; at most 63 characters because the
        # kubelet copies it into the kubernetes.io/hostname label value.
        if len(name) > 63 or not _DNS_SUBDOMAIN.match(name):
            raise FleetSpecError(source, f"{path}.nodeNames[{i}]",
                                 f"not a node name (a DNS subdomain of at most 63 characters): "
                                 f"{name!r}")
        if name in seen:
            raise FleetSpecError(source, f"{path}.nodeNames[{i}]",
                                 f"duplicate node name (also nodeNames[{seen[name]}])")
        seen[name] = i


def _check_extended_name(source: str, path: str, name: str | None) -> None:
    if name is not None and (not _EXTENDED_RESOURCE.match(name)
                             or name.split("/")[0].endswith("kubernetes.io")):
        raise FleetSpecError(source, path, f"not an extended resource name like "
                                           f"example.com/gpu: {name!r}")


# What ``reserved`` may hold: (attribute, the pool's field, the resource name).
_RESERVABLE = (("cpu", "cpu", "cpu"), ("memory", "memory", "memory"),
               ("ephemeral_storage", "ephemeralStorage", "ephemeral-storage"))


def _check_nvlink(source: str, path: str, pool: NodePool, nvl: NvlinkSpec) -> None:
    if pool.driver != "nvidia" or not pool.gpu.count:
        raise FleetSpecError(source, path, "needs GPUs of the nvidia driver")
    if not 1 <= nvl.nodes_per_domain <= 1024:
        raise FleetSpecError(source, f"{path}.nodesPerDomain",
                             f"must be 1..1024: {nvl.nodes_per_domain}")
    # NVML's clique ID is an unsigned 32-bit number.
    if not 0 <= nvl.clique_id <= 0xFFFFFFFF:
        raise FleetSpecError(source, f"{path}.cliqueId", f"must be 0..4294967295: {nvl.clique_id}")


def _check_pool(source: str, path: str, pool: NodePool) -> None:
    if not _DNS_LABEL.match(pool.name):
        raise FleetSpecError(source, f"{path}.name", f"not a DNS label: {pool.name!r}")
    _check_node_names(source, path, pool)
    _quantity(source, f"{path}.cpu", pool.cpu)
    _quantity(source, f"{path}.memory", pool.memory)
    if pool.pods < 1:
        raise FleetSpecError(source, f"{path}.pods", f"must be at least 1: {pool.pods}")
    if pool.ephemeral_storage is not None:
        _quantity(source, f"{path}.ephemeralStorage", pool.ephemeral_storage)
    for field, key, name in _RESERVABLE:
        value = getattr(pool.reserved, field)
        if value is None:
            continue
        reserved = _quantity(source, f"{path}.reserved.{name}", value)
        total = getattr(pool, field)
        if total is None:
            raise FleetSpecError(source, f"{path}.reserved.{name}",
                                 f"the node has no {name}: set {key} too")
        if reserved > _quantity(source, f"{path}.{key}", total):
            raise FleetSpecError(source, f"{path}.reserved.{name}",
                                 f"exceeds the node's {name}")
    gpu = pool.gpu
    gpath = f"{path}.gpu"
    if gpu.count < 0 or gpu.count > 64:
        raise FleetSpecError(source, f"{gpath}.count", f"must be 0..64: {gpu.count}")
    model: GpuModel | None = None
    if gpu.model is not None:
        model = _model(source, f"{gpath}.model", gpu.model)
    elif pool.driver == "nvidia" and gpu.count:
        raise FleetSpecError(source, f"{gpath}.model", "required with the nvidia driver")
    if pool.driver == "nvidia":
        if gpu.partitions or gpu.multiple_allocations or gpu.binding_conditions:
            raise FleetSpecError(source, gpath, "partitions/multipleAllocations/"
                                                "bindingConditions are example-driver settings")
    elif gpu.partitions < 0 or gpu.partitions > 63:
        # A GPU's partitions and its full device must fit one 64-device slice.
        raise FleetSpecError(source, f"{gpath}.partitions", f"must be 0..63: {gpu.partitions}")
    if gpu.extended_resources and pool.driver != "nvidia":
        raise FleetSpecError(source, f"{gpath}.extendedResources",
                             "only the NVIDIA device plugin advertises extended resources")
    if model is not None:
        _check_mig(source, f"{gpath}.mig", pool, model)
    _check_sharing(source, f"{gpath}.sharing", pool)
    if pool.compute_domains and pool.driver != "nvidia":
        raise FleetSpecError(source, f"{path}.computeDomains", "needs the nvidia driver")
    if pool.nvlink is not None:
        _check_nvlink(source, f"{path}.nvlink", pool, pool.nvlink)
    nics = pool.nics
    if nics.count < 0 or nics.count > 32:
        raise FleetSpecError(source, f"{path}.nics.count", f"must be 0..32: {nics.count}")
    if nics.vfs < 1 or nics.vfs > 64:
        raise FleetSpecError(source, f"{path}.nics.vfs", f"must be 1..64: {nics.vfs}")
    if nics.count and nics.alignment != "none" and not gpu.count:
        raise FleetSpecError(source, f"{path}.nics.alignment",
                             "aligning NICs needs GPUs; use alignment: none")
    topo = pool.topology
    if topo.zone is not None and topo.zones:
        raise FleetSpecError(source, f"{path}.topology", "give zone or zones, not both")
    if topo.nodes_per_rack < 0 or topo.racks_per_block < 0:
        raise FleetSpecError(source, f"{path}.topology", "sizes must not be negative")
    if topo.racks_per_block and not topo.nodes_per_rack:
        raise FleetSpecError(source, f"{path}.topology.racksPerBlock",
                             "blocks are made of racks: set nodesPerRack too")
    for i, taint in enumerate(pool.taints):
        if not taint.key:
            raise FleetSpecError(source, f"{path}.taints[{i}].key", "must not be empty")
    for name, count in pool.extended_resources.items():
        _check_extended_name(source, f"{path}.extendedResources", name)
        if count < 0:
            raise FleetSpecError(source, f"{path}.extendedResources.{name}",
                                 f"must not be negative: {count}")
    if pool.autoscaling is not None:
        _check_autoscaling(source, f"{path}.autoscaling", pool, pool.autoscaling)


def _check_autoscaling(source: str, path: str, pool: NodePool, spec: AutoscalingSpec) -> None:
    if pool.names:
        raise FleetSpecError(source, path, "an autoscaled pool needs generated node names "
                                           "(count and namePrefix, not nodeNames)")
    if spec.min < 0:
        raise FleetSpecError(source, f"{path}.min", f"must not be negative: {spec.min}")
    if spec.max < spec.min:
        raise FleetSpecError(source, f"{path}.max", f"is {spec.max}, below min {spec.min}")
    if spec.max > MAX_FLEET_NODES:
        raise FleetSpecError(source, f"{path}.max", f"{spec.max:,} nodes, more than "
                             f"{MAX_FLEET_NODES:,} (MAX_FLEET_NODES)")
    if spec.max < 1:
        raise FleetSpecError(source, f"{path}.max", "must be at least 1")
    if pool.size > spec.max:
        raise FleetSpecError(source, f"{path.rsplit('.', 1)[0]}.count",
                             f"is {pool.size}, above autoscaling.max {spec.max}")
    width = max(2, len(str(spec.max)))
    last = f"{pool.prefix}{spec.max:0{width}d}"
    if len(last) > 63 or not _DNS_LABEL.match(last):
        raise FleetSpecError(source, f"{path}.max",
                             f"node names like {last!r} are not DNS labels (<= 63 chars)")
    if not 0 <= spec.price_per_hour < float("inf"):
        raise FleetSpecError(source, f"{path}.pricePerHour",
                             f"must be a non-negative number: {spec.price_per_hour!r}")
    try:
        parse_fleet_duration(spec.provisioning_delay)
    except ValueError as exc:
        raise FleetSpecError(source, f"{path}.provisioningDelay", str(exc)) from None


def _check_class(source: str, path: str, cls: PlatformClass, nvidia_used: bool) -> None:
    if not _DNS_SUBDOMAIN.match(cls.name) or len(cls.name) > 253:
        raise FleetSpecError(source, f"{path}.name", f"not a DNS subdomain: {cls.name!r}")
    if cls.name in RESERVED_CLASS_NAMES:
        raise FleetSpecError(source, f"{path}.name", f"{cls.name!r} is installed by a driver")
    models = [_model(source, f"{path}.models[{i}]", m) for i, m in enumerate(cls.models)]
    if cls.type == "mig" and cls.driver != "nvidia":
        raise FleetSpecError(source, f"{path}.type", "MIG classes need the nvidia driver")
    if cls.profiles and cls.type != "mig":
        raise FleetSpecError(source, f"{path}.profiles", "profiles need type: mig")
    for i, prof in enumerate(cls.profiles):
        known = {p for m in models for p in (m.mig.names if m.mig else ())} if models else None
        if known is not None and prof not in known:
            raise FleetSpecError(source, f"{path}.profiles[{i}]",
                                 f"no selected model has MIG profile {prof!r}")
    _check_extended_name(source, f"{path}.extendedResourceName", cls.extended_resource_name)
    if cls.sharing is not None:
        if cls.driver != "nvidia":
            raise FleetSpecError(source, f"{path}.sharing", "sharing config is NVIDIA's")
        s = cls.sharing
        if s.strategy == "TimeSlicing" and (s.active_thread_percentage is not None
                                            or s.pinned_memory_limit is not None):
            raise FleetSpecError(source, f"{path}.sharing", "MPS settings with TimeSlicing")
        if s.strategy == "MPS" and s.interval is not None:
            raise FleetSpecError(source, f"{path}.sharing.interval", "interval is TimeSlicing's")
        if s.active_thread_percentage is not None and not 0 <= s.active_thread_percentage <= 100:
            raise FleetSpecError(source, f"{path}.sharing.activeThreadPercentage",
                                 "must be 0..100")
        if s.pinned_memory_limit is not None:
            _quantity(source, f"{path}.sharing.pinnedMemoryLimit", s.pinned_memory_limit)
    if cls.driver == "nvidia" and not nvidia_used:
        raise FleetSpecError(source, f"{path}.driver", "no pool uses the nvidia driver")


# The example driver's chart advertises kubeletPlugin.numDevices = 8 devices per node.
EXAMPLE_NUM_DEVICES = 8


def _with_example_defaults(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """``data`` with ``gpu.count`` set to the chart default on example-driver pools that
    give none (a copy; the input is never changed)."""
    spec = data.get("spec")
    pools = spec.get("pools") if isinstance(spec, Mapping) else None
    if not isinstance(spec, Mapping) or not isinstance(pools, list):
        return data
    out: list[Any] = []
    for pool in pools:
        if isinstance(pool, Mapping) and pool.get("driver") == "example":
            gpu = pool.get("gpu", {})
            if isinstance(gpu, Mapping) and "count" not in gpu:
                pool = {**pool, "gpu": {**gpu, "count": EXAMPLE_NUM_DEVICES}}
        out.append(pool)
    return {**data, "spec": {**spec, "pools": out}}


def parse_fleet(data: Any, source: str = "") -> Fleet:
    """Decode and check one Fleet document (plain data as YAML gives it).

    Pure. Raises FleetSpecError naming ``source`` and the field path of the
    first problem; returns a Fleet every generator accepts.
    """
    if not isinstance(data, Mapping):
        raise FleetSpecError(source, "", f"a Fleet must be a mapping, not {type(data).__name__}")
    if data.get("apiVersion") != API_VERSION:
        raise FleetSpecError(source, "apiVersion",
                             f"must be {API_VERSION}, not {data.get('apiVersion')!r}")
    if data.get("kind") != KIND:
        raise FleetSpecError(source, "kind", f"must be {KIND}, not {data.get('kind')!r}")
    fleet = _decode(_with_example_defaults(data), source)
    spec = fleet.spec
    if not spec.pools:
        raise FleetSpecError(source, "spec.pools", "at least one pool is required")
    _version(source, "spec.kubernetesVersion", spec.kubernetes_version, 2)
    minor = int(spec.kubernetes_version.split(".")[1])
    if spec.kubernetes_version.split(".")[0] != "1" or minor < 34:
        raise FleetSpecError(source, "spec.kubernetesVersion",
                             "resource.k8s.io/v1 needs Kubernetes 1.34 or newer")
    _version(source, "spec.nvidia.driverVersion", spec.nvidia.driver_version, 2)
    _version(source, "spec.nvidia.cudaDriverVersion", spec.nvidia.cuda_driver_version, 2)
    _check_extended_name(source, "spec.example.extendedResourceName",
                         spec.example.extended_resource_name)
    seen: dict[str, int] = {}
    prefixes: dict[str, int] = {}
    owners: dict[str, int] = {}
    total = 0
    # What the pools may grow to: an autoscaler adds nodes up to each pool's
    # autoscaling.max, so the Fleet's largest cluster is the sum of those (and of the
    # other pools' sizes). Cluster Autoscaler's --max-nodes-total bounds it only when
    # set (its default, 0, is no bound); here MAX_FLEET_NODES bounds it, so that no
    # scale-up can build a cluster past the limit the Fleet's own nodes respect.
    largest = 0
    for i, pool in enumerate(spec.pools):
        path = f"spec.pools[{i}]"
        if pool.name in seen:
            raise FleetSpecError(source, f"{path}.name",
                                 f"duplicate pool name (also spec.pools[{seen[pool.name]}])")
        seen[pool.name] = i
        if not pool.names:
            if pool.prefix in prefixes:
                raise FleetSpecError(source, f"{path}.namePrefix", "node name prefix already "
                                     f"used by spec.pools[{prefixes[pool.prefix]}]")
            prefixes[pool.prefix] = i
        _check_pool(source, path, pool)
        total += pool.size
        if total > MAX_FLEET_NODES:
            raise FleetSpecError(source, "spec.pools", f"{total:,} nodes in the first {i + 1} "
                                 f"pools, more than {MAX_FLEET_NODES:,} (MAX_FLEET_NODES)")
        largest += max(pool.size, pool.autoscaling.max if pool.autoscaling else 0)
        if largest > MAX_FLEET_NODES:
            raise FleetSpecError(source, f"{path}.autoscaling.max",
                                 f"the first {i + 1} pools may grow to {largest:,} nodes, "
                                 f"more than {MAX_FLEET_NODES:,} (MAX_FLEET_NODES)")
        for name in pool.node_names():
            if name in owners:
                raise FleetSpecError(source, f"{path}", f"node name {name!r} is also a node of "
                                                        f"spec.pools[{owners[name]}]")
            owners[name] = i
    nvidia_used = any(p.driver == "nvidia" for p in spec.pools)
    class_names: set[str] = set()
    for i, cls in enumerate(spec.device_classes):
        path = f"spec.deviceClasses[{i}]"
        if cls.name in class_names:
            raise FleetSpecError(source, f"{path}.name", f"duplicate class {cls.name!r}")
        class_names.add(cls.name)
        _check_class(source, path, cls, nvidia_used)
    # Pools that only name their nodes get their count, so every later reader
    # can rely on ``count`` being the number of nodes.
    pools = [p if isinstance(p.count, int) else msgspec.structs.replace(p, count=p.size)
             for p in spec.pools]
    if pools != spec.pools:
        fleet = msgspec.structs.replace(fleet, spec=msgspec.structs.replace(spec, pools=pools))
    return fleet
