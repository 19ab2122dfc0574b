"""Feature gates of Dynamic Resource Allocation, with Kubernetes 1.37 defaults.

Only the gates that change what the API server accepts or what the scheduler
does with DRA objects are modelled. Defaults follow the 1.37 column of the
feature table in the DRA API notes; 1.37 was still in development when they
were written, so treat the defaults as "planned 1.37".

A gate that reached GA and is *locked* cannot be switched off, exactly like
``--feature-gates`` refuses it in kube-apiserver; that keeps simulations from
describing clusters that cannot exist.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Final

__all__ = ["KNOWN_GATES", "FeatureGates", "Gate", "GateInfo"]


class Gate(StrEnum):
    """Names of the modelled gates; members are plain strings, so either form works."""

    DYNAMIC_RESOURCE_ALLOCATION = "DynamicResourceAllocation"
    DRA_ADMIN_ACCESS = "DRAAdminAccess"
    DRA_PRIORITIZED_LIST = "DRAPrioritizedList"
    DRA_RESOURCE_CLAIM_DEVICE_STATUS = "DRAResourceClaimDeviceStatus"
    DRA_PARTITIONABLE_DEVICES = "DRAPartitionableDevices"
    DRA_DEVICE_TAINTS = "DRADeviceTaints"
    DRA_DEVICE_TAINT_RULES = "DRADeviceTaintRules"
    DRA_CONSUMABLE_CAPACITY = "DRAConsumableCapacity"
    DRA_DEVICE_BINDING_CONDITIONS = "DRADeviceBindingConditions"
    DRA_EXTENDED_RESOURCE = "DRAExtendedResource"
    DRA_SCHEDULER_FILTER_TIMEOUT = "DRASchedulerFilterTimeout"
    DRA_LIST_TYPE_ATTRIBUTES = "DRAListTypeAttributes"
    DRA_NODE_ALLOCATABLE_RESOURCES = "DRANodeAllocatableResources"
    DRA_WORKLOAD_RESOURCE_CLAIMS = "DRAWorkloadResourceClaims"
    DRA_FRACTIONAL_CAPACITY_RANGE = "DRAFractionalCapacityRange"
    DRA_DERIVED_ATTRIBUTES = "DRADerivedAttributes"
    DRA_DEVICE_COMPATIBILITY_GROUPS = "DRADeviceCompatibilityGroups"
    DRA_OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"
    DRA_PARTITIONABLE_DEVICES_TYPE = "DRAPartitionableDevicesType"
    GENERIC_WORKLOAD = "GenericWorkload"
    DRA_PREEMPTION = "DRAPreemption"
    SCHEDULER_PRE_ENQUEUE_POD_STATUS = "SchedulerPreEnqueuePodStatus"
    MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD = "MatchLabelKeysInPodTopologySpread"
    VOLUME_LIMIT_SCALING = "VolumeLimitScaling"


@dataclass(frozen=True, slots=True)
class GateInfo:
    """Default and maturity of one gate in Kubernetes 1.37."""

    name: Gate
    default: bool
    stage: str  # "ALPHA", "BETA" or "GA"
    locked: bool = False


def _info(name: Gate, default: bool, stage: str, locked: bool = False) -> GateInfo:
    return GateInfo(name=name, default=default, stage=stage, locked=locked)


KNOWN_GATES: Final[Mapping[str, GateInfo]] = MappingProxyType({
    info.name.value: info
    for info in (
        _info(Gate.DYNAMIC_RESOURCE_ALLOCATION, True, "GA", locked=True),
        _info(Gate.DRA_ADMIN_ACCESS, True, "GA", locked=True),
        _info(Gate.DRA_PRIORITIZED_LIST, True, "GA", locked=True),
        _info(Gate.DRA_RESOURCE_CLAIM_DEVICE_STATUS, True, "GA", locked=True),
        _info(Gate.DRA_PARTITIONABLE_DEVICES, True, "BETA"),
        # GA in 1.37 but, unlike the others, not yet locked.
        _info(Gate.DRA_DEVICE_TAINTS, True, "GA"),
        _info(Gate.DRA_DEVICE_TAINT_RULES, True, "GA"),
        _info(Gate.DRA_CONSUMABLE_CAPACITY, True, "BETA"),
        _info(Gate.DRA_DEVICE_BINDING_CONDITIONS, True, "BETA"),
        _info(Gate.DRA_EXTENDED_RESOURCE, True, "GA", locked=True),
        _info(Gate.DRA_SCHEDULER_FILTER_TIMEOUT, True, "BETA"),
        _info(Gate.DRA_LIST_TYPE_ATTRIBUTES, False, "ALPHA"),
        _info(Gate.DRA_NODE_ALLOCATABLE_RESOURCES, False, "ALPHA"),
        # Beta but off by default: it changes who owns generated claims.
        _info(Gate.DRA_WORKLOAD_RESOURCE_CLAIMS, False, "BETA"),
        _info(Gate.DRA_FRACTIONAL_CAPACITY_RANGE, True, "BETA"),
        _info(Gate.DRA_DERIVED_ATTRIBUTES, False, "ALPHA"),
        _info(Gate.DRA_DEVICE_COMPATIBILITY_GROUPS, False, "ALPHA"),
        _info(Gate.DRA_OPTIONAL_NODE_OPERATIONS, False, "ALPHA"),
        _info(Gate.DRA_PARTITIONABLE_DEVICES_TYPE, False, "ALPHA"),
        # The Workload and PodGroup APIs and gang scheduling (GangScheduling was
        # merged into it in 1.37); a beta API, so off by default.
        _info(Gate.GENERIC_WORKLOAD, False, "BETA"),
        # KEP-5690, kube-scheduler only: DynamicResources' PreFilterExtensions free
        # the devices of preemption victims, and its Filter's allocation failures are
        # Unschedulable (preemption may help) instead of UnschedulableAndUnresolvable.
        _info(Gate.DRA_PREEMPTION, False, "ALPHA"),
        # KEP-5501, kube-scheduler only: a pod a PreEnqueue plugin other than
        # SchedulingGates holds back gets PodScheduled=False, reason
        # NotReadyForScheduling. Not in kube-scheduler 1.36.2 nor in 1.37's gate
        # list as far as it is known: off, and opt-in.
        _info(Gate.SCHEDULER_PRE_ENQUEUE_POD_STATUS, False, "ALPHA"),
        # kube-scheduler's PodTopologySpread adds the values of the pod's labels named in
        # a constraint's matchLabelKeys to its selector (beta since 1.27, on).
        _info(Gate.MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD, True, "BETA"),
        # kube-scheduler's NodeVolumeLimits refuses a node whose CSINode lacks a driver
        # whose CSIDriver sets preventPodSchedulingIfMissing (alpha since 1.35, off).
        _info(Gate.VOLUME_LIMIT_SCALING, False, "ALPHA"),
    )
})

# strconv.ParseBool's spellings, which --feature-gates accepts.
_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def _check(name: str, value: bool) -> GateInfo:
    info = KNOWN_GATES.get(name)
    if info is None:
        raise ValueError(f"unrecognized feature gate: {name}")
    if info.locked and value != info.default:
        raise ValueError(
            f"cannot set feature gate {name} to {str(value).lower()}, "
            f"feature is locked to {str(info.default).lower()}"
        )
    return info


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """An immutable set of gate values: the 1.37 defaults plus explicit overrides.

    Hashable, so it can key caches. Build it with ``FeatureGates()`` (defaults),
    ``FeatureGates.parse("A=true,B=false")`` or ``with_overrides``; every path
    rejects unknown gates and attempts to switch off a locked gate with
    ValueError.
    """

    overrides: tuple[tuple[str, bool], ...] = ()

    def __post_init__(self) -> None:
        for name, value in self.overrides:
            _check(name, value)

    @classmethod
    def parse(cls, text: str) -> FeatureGates:
        """Parse the ``--feature-gates`` syntax: ``Name=bool`` pairs separated by commas."""
        values: dict[str, bool] = {}
        for item in text.split(","):
            item = item.strip()
            if not item:
                continue
            name, sep, raw = item.partition("=")
            name, raw = name.strip(), raw.strip()
            if not sep:
                raise ValueError(f"missing bool value for {name}")
            if raw in _TRUE:
                value = True
            elif raw in _FALSE:
                value = False
            else:
                raise ValueError(f"invalid value of {name}={raw}, err: not a boolean")
            _check(name, value)
            values[name] = value
        return cls()._merged(values.items())

    @classmethod
    def all_enabled(cls) -> FeatureGates:
        """Every gate on: the widest set of fields an API server could have stored.

        A field written while its gate was on stays in storage after the gate is
        turned off (the API server only drops it from new objects), so objects
        read as a cluster's stored state are checked against this set; what a
        disabled gate's field then means is up to the scheduler and allocator.
        """
        return cls()._merged((name, True) for name in KNOWN_GATES)

    def with_overrides(self, overrides: Mapping[str, bool]) -> FeatureGates:
        """A copy with ``overrides`` applied on top of this set's values."""
        for name, value in overrides.items():
            if not isinstance(value, bool):
                raise ValueError(f"invalid value of {name}={value!r}, err: not a boolean")
            _check(name, value)
        return self._merged(overrides.items())

    def _merged(self, extra: Iterable[tuple[str, bool]]) -> FeatureGates:
        merged = dict(self.overrides)
        for name, value in extra:
            if value == KNOWN_GATES[name].default:
                merged.pop(name, None)  # keeps equal gate sets equal (and hash alike)
            else:
                merged[name] = value
        return FeatureGates(overrides=tuple(sorted(merged.items())))

    def is_enabled(self, name: str) -> bool:
        """Whether the gate is on; unknown names raise ValueError (a typo must not read as off)."""
        info = KNOWN_GATES.get(name)
        if info is None:
            raise ValueError(f"unrecognized feature gate: {name}")
        for gate, value in self.overrides:
            if gate == name:
                return value
        return info.default

    def as_dict(self) -> dict[str, bool]:
        """Every known gate with its effective value, in table order."""
        return {name: self.is_enabled(name) for name in KNOWN_GATES}

    def __str__(self) -> str:
        return ",".join(f"{name}={str(value).lower()}" for name, value in self.overrides)
