"""DynamicMIG counters vs. MIG hardware rules, for every MIG-capable catalog model.

Two directions:
* sound -- whatever the allocator hands out together on one GPU (claims asking
  for MIG profiles with matchAttribute parentUUID) is a valid hardware layout;
* complete -- every valid layout (enumerated from the geometry) can be
  allocated, exactly as laid out, and every profile multiset that has a valid
  layout is allocatable.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralab.allocator import Allocated, allocate
from dralab.api.resource import ResourceSlice
from dralab.fleet import CATALOG, GeneratedFleet, MigGeometry, enumerate_layouts, generate
from dralab.fleet.mig import MigPlacement, layout_problem, mig_device_name, parse_mig_device_name

from .helpers import devices_of, fleet_of, mig_claim

MIG_MODELS = ["a100-40gb", "a100-80gb", "h100-80gb-sxm", "h200-141gb"]


@cache
def two_gpu_node(model: str) -> GeneratedFleet:
    return generate(fleet_of(model, gpus=2, mig="dynamic"))


@cache
def one_gpu_node(model: str) -> GeneratedFleet:
    return generate(fleet_of(model, gpus=1, mig="dynamic"))


@cache
def layouts(model: str) -> list[tuple[MigPlacement, ...]]:
    geometry = CATALOG[model].mig
    assert geometry is not None
    return enumerate_layouts(geometry)


@cache
def feasible_multisets(model: str) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(sorted(p.profile.name for p in lay)) for lay in layouts(model))


def geometry_of(model: str) -> MigGeometry:
    geometry = CATALOG[model].mig
    assert geometry is not None
    return geometry


def placement_of(geometry: MigGeometry, device: str) -> tuple[int, MigPlacement]:
    parsed = parse_mig_device_name(device)
    assert parsed is not None, device
    minor, _token, gi_id, start = parsed
    profile = next(p for p in geometry.profiles if p.gi_id == gi_id)
    assert mig_device_name(minor, profile, start) == device
    return minor, MigPlacement(start, profile)


@pytest.mark.parametrize("model", MIG_MODELS)
def test_layout_enumeration_matches_the_rules(model: str) -> None:
    geometry = geometry_of(model)
    found = layouts(model)
    assert len(found) == len(set(found))
    assert all(layout_problem(geometry, lay) is None for lay in found)
    # Known shapes from the notes: 7x1g, 2x3g, 4g+3g@4 fit; 4g+3g@0, two +me do not.
    small, me, _, _, three, four, seven = geometry.profiles
    assert tuple(MigPlacement(s, small) for s in range(7)) in found
    assert (MigPlacement(0, three), MigPlacement(4, three)) in found
    assert (MigPlacement(0, four), MigPlacement(4, three)) in found
    assert layout_problem(geometry, [MigPlacement(0, four), MigPlacement(0, three)]) is not None
    assert layout_problem(geometry, [MigPlacement(0, me), MigPlacement(1, me)]) is not None
    assert layout_problem(geometry, [MigPlacement(0, seven), MigPlacement(0, small)]) is not None


@pytest.mark.parametrize("model", MIG_MODELS)
def test_every_valid_layout_is_allocatable_exactly(model: str) -> None:
    fleet = one_gpu_node(model)
    for lay in layouts(model):
        names = {mig_device_name(0, p.profile, p.start) for p in lay}
        # Keep only the layout's devices, so the allocator has to take exactly them.
        slices: list[ResourceSlice] = [
            s if not s.spec.devices else msgspec.structs.replace(
                s, spec=msgspec.structs.replace(
                    s.spec, devices=[d for d in s.spec.devices if d.name in names]))
            for s in fleet.slices]
        outcome = allocate([mig_claim("c", [p.profile.name for p in lay])], "p-01",
                           [*fleet.classes, *slices])
        assert isinstance(outcome, Allocated), (model, lay, outcome)
        assert set(devices_of(outcome)) == names


@pytest.mark.parametrize("model", MIG_MODELS)
def test_every_feasible_profile_multiset_is_allocatable(model: str) -> None:
    fleet = two_gpu_node(model)
    for profiles in sorted(feasible_multisets(model)):
        outcome = allocate([mig_claim("c", profiles)], "p-01", fleet.objects())
        assert isinstance(outcome, Allocated), (model, profiles)


def check_claim(model: str, profiles: list[str]) -> None:
    geometry = geometry_of(model)
    outcome = allocate([mig_claim("c", profiles)], "p-01", two_gpu_node(model).objects())
    feasible = tuple(sorted(profiles)) in feasible_multisets(model)
    if not isinstance(outcome, Allocated):
        assert not feasible, f"{profiles} has a valid layout but was not allocated"
        return
    placed = [placement_of(geometry, d) for d in devices_of(outcome)]
    assert len({minor for minor, _ in placed}) == 1, "parentUUID keeps them on one GPU"
    layout = [p for _, p in placed]
    assert layout_problem(geometry, layout) is None, layout
    assert Counter(p.profile.name for p in layout) == Counter(profiles)


@pytest.mark.parametrize("model", MIG_MODELS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_allocated_mig_sets_are_valid_layouts(model: str, data: st.DataObject) -> None:
    names = list(geometry_of(model).names)
    profiles = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=8))
    check_claim(model, profiles)


@pytest.mark.parametrize("model", MIG_MODELS)
def test_allocations_fill_a_gpu_then_move_on(model: str) -> None:
    """Claims allocated one after another never overbook a GPU."""
    geometry = geometry_of(model)
    fleet = two_gpu_node(model)
    allocated = []
    smallest = geometry.profiles[0].name
    while True:
        outcome = allocate([mig_claim(f"c{len(allocated)}", [smallest])], "p-01",
                           [*fleet.objects(), *allocated])
        if not isinstance(outcome, Allocated):
            break
        allocated += outcome.claims
    per_gpu: dict[int, list[MigPlacement]] = {}
    for c in allocated:
        for r in c.status.allocation.devices.results:  # type: ignore[union-attr]
            minor, p = placement_of(geometry, r.device)
            per_gpu.setdefault(minor, []).append(p)
    assert len(allocated) == 2 * geometry.profiles[0].max_instances
    assert all(layout_problem(geometry, lay) is None for lay in per_gpu.values())
