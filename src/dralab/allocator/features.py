"""The allocator's view of the feature gates.

Upstream derives a small set of booleans from the feature gates before it
builds an allocator; the search only ever consults those. We do the same, so
that the search never parses gate names and tests can switch off features
whose gates are locked on in 1.37 (prioritized lists, admin access), which
``FeatureGates`` rightly refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from dralab.api.features import FeatureGates

__all__ = ["AllocatorFeatures"]


@dataclass(frozen=True, slots=True)
class AllocatorFeatures:
    """Which optional allocator behaviours are on. Immutable and hashable.

    ``AllocatorFeatures()`` equals the Kubernetes 1.37 defaults; use
    ``from_gates`` to derive the set from explicit feature gates.
    """

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_taint_rules: bool = True
    # Upstream gates binding conditions on two gates at once.
    device_binding_and_status: bool = True
    consumable_capacity: bool = True
    fractional_capacity_range: bool = True
    list_type_attributes: bool = False
    compatibility_groups: bool = False

    @classmethod
    def from_gates(cls, gates: FeatureGates | None) -> AllocatorFeatures:
        """The features implied by ``gates`` (``None`` = 1.37 defaults)."""
        # (memoised: every new allocator asks, and the gates are immutable and hashable)
        return _from_gates(gates if gates is not None else FeatureGates())


@lru_cache(maxsize=64)
def _from_gates(g: FeatureGates) -> AllocatorFeatures:
    on = g.is_enabled
    return AllocatorFeatures(
        admin_access=on("DRAAdminAccess"),
        prioritized_list=on("DRAPrioritizedList"),
        partitionable_devices=on("DRAPartitionableDevices"),
        device_taints=on("DRADeviceTaints"),
        device_taint_rules=on("DRADeviceTaintRules") and on("DRADeviceTaints"),
        device_binding_and_status=(
            on("DRADeviceBindingConditions") and on("DRAResourceClaimDeviceStatus")
        ),
        consumable_capacity=on("DRAConsumableCapacity"),
        fractional_capacity_range=on("DRAFractionalCapacityRange"),
        list_type_attributes=on("DRAListTypeAttributes"),
        compatibility_groups=on("DRADeviceCompatibilityGroups"),
    )
