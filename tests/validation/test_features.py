"""FeatureGates: 1.37 defaults, --feature-gates parsing, locked gates, immutability."""

from __future__ import annotations

import dataclasses

import pytest

from dralab.api.features import KNOWN_GATES, FeatureGates, Gate


def test_defaults_follow_the_137_table() -> None:
    gates = FeatureGates()
    on = {"DynamicResourceAllocation", "DRAAdminAccess", "DRAPrioritizedList",
          "DRAResourceClaimDeviceStatus", "DRAPartitionableDevices", "DRADeviceTaints",
          "DRADeviceTaintRules", "DRAConsumableCapacity", "DRADeviceBindingConditions",
          "DRAExtendedResource", "DRASchedulerFilterTimeout", "DRAFractionalCapacityRange",
          "MatchLabelKeysInPodTopologySpread"}
    off = {"DRAListTypeAttributes", "DRANodeAllocatableResources", "DRAWorkloadResourceClaims",
           "DRADerivedAttributes", "DRADeviceCompatibilityGroups", "DRAOptionalNodeOperations",
           "DRAPartitionableDevicesType", "GenericWorkload", "DRAPreemption",
           "SchedulerPreEnqueuePodStatus", "VolumeLimitScaling"}
    assert set(KNOWN_GATES) == on | off
    assert {name for name, value in gates.as_dict().items() if value} == on


def test_all_enabled_turns_every_gate_on() -> None:
    everything = FeatureGates.all_enabled()
    assert all(everything.as_dict().values())
    # Locked gates are already on, so they are not overrides.
    assert dict(everything.overrides) == {
        name: True for name, info in KNOWN_GATES.items() if not info.default}


def test_parse_sets_values_and_tolerates_spaces() -> None:
    gates = FeatureGates.parse(" DRAListTypeAttributes=true, DRAConsumableCapacity=false ,")
    assert gates.is_enabled(Gate.DRA_LIST_TYPE_ATTRIBUTES)
    assert not gates.is_enabled("DRAConsumableCapacity")
    assert str(gates) == "DRAConsumableCapacity=false,DRAListTypeAttributes=true"


def test_parse_empty_is_defaults_and_equal_sets_compare_equal() -> None:
    assert FeatureGates.parse("") == FeatureGates()
    assert FeatureGates.parse("DRADeviceTaints=true") == FeatureGates()  # default value
    a = FeatureGates.parse("DRADerivedAttributes=true")
    b = FeatureGates().with_overrides({"DRADerivedAttributes": True})
    assert a == b and hash(a) == hash(b)


def test_unknown_gate_is_named() -> None:
    with pytest.raises(ValueError, match="unrecognized feature gate: DRANoSuchThing"):
        FeatureGates.parse("DRANoSuchThing=true")
    with pytest.raises(ValueError, match="DRATypo"):
        FeatureGates().is_enabled("DRATypo")


def test_locked_gate_cannot_be_disabled() -> None:
    with pytest.raises(ValueError) as info:
        FeatureGates.parse("DRAAdminAccess=false")
    assert str(info.value) == ("cannot set feature gate DRAAdminAccess to false, feature is "
                               "locked to true")
    with pytest.raises(ValueError, match="locked"):
        FeatureGates().with_overrides({"DRAExtendedResource": False})
    assert FeatureGates.parse("DRAAdminAccess=true").is_enabled("DRAAdminAccess")


@pytest.mark.parametrize("text", ["DRAListTypeAttributes", "DRAListTypeAttributes=yes"])
def test_bad_syntax(text: str) -> None:
    with pytest.raises(ValueError):
        FeatureGates.parse(text)


def test_with_overrides_returns_a_new_immutable_set() -> None:
    base = FeatureGates()
    changed = base.with_overrides({"DRAConsumableCapacity": False})
    assert base.is_enabled("DRAConsumableCapacity")
    assert not changed.is_enabled("DRAConsumableCapacity")
    with pytest.raises(dataclasses.FrozenInstanceError):
        changed.overrides = ()  # type: ignore[misc]
