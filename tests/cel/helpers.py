"""Shared devices and shortcuts for the CEL tests."""

from __future__ import annotations

from dralab.api.quantity import parse_quantity
from dralab.api.semver import parse_semver
from dralab.cel import DeviceInput, Features, compile_selector, device_input

DRIVER = "gpu.example.com"
TOPOLOGY = "topology.example.com"

ALL_FEATURES = Features(consumable_capacity=True, list_type_attributes=True)


def gpu() -> DeviceInput:
    """A GPU of DRIVER with unqualified, self-qualified and foreign-domain attributes."""
    return device_input(
        DRIVER,
        {
            "model": "a100",
            "cores": 64,
            "mig": True,
            "driverVersion": parse_semver("535.104.5"),
            f"{DRIVER}/family": "ampere",
            f"{TOPOLOGY}/numa": 1,
            "ints": [3, 1, 2],
            "names": ["x", "y"],
            "versions": [parse_semver("1.0.0"), parse_semver("2.0.0")],
        },
        {"memory": parse_quantity("40Gi"), f"{TOPOLOGY}/lanes": parse_quantity("16")},
        allow_multiple_allocations=True,
    )


def empty_device() -> DeviceInput:
    return device_input("empty.example.com", {}, {})


def run(expression: str, device: DeviceInput | None = None,
        features: Features = ALL_FEATURES) -> bool:
    """Compile and evaluate; the device defaults to one without attributes."""
    return compile_selector(expression, features).evaluate(
        device if device is not None else empty_device())
