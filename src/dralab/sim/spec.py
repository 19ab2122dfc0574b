"""The wire format of a Scenario document (``dralab.dev/v1alpha1 Scenario``).

Strict msgspec Structs (unknown fields are errors) plus the parsers of durations
and rates. ``dralab.sim.scenario`` checks a decoded document and builds the
``Scenario`` value; the field reference is in its module docstring.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import msgspec

from dralab.api.errors import InputError

__all__ = [
    "API_VERSION",
    "MODES",
    "DeviceShape",
    "DurationSpec",
    "FleetRef",
    "JobKind",
    "NodeEvent",
    "ScenarioDocument",
    "ScenarioError",
    "ScenarioSpec",
    "parse_duration",
    "parse_rate",
]

API_VERSION = "dralab.dev/v1alpha1"
MODES = ("device-plugin", "dra")

_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


class ScenarioError(InputError):
    """A scenario file that cannot be used; one line naming file and field."""

    def __init__(self, source: str, path: str, message: str) -> None:
        super().__init__(f"{source}: {path}: {message}" if path else f"{source}: {message}")


def parse_duration(value: Any) -> float:
    """Seconds from ``90``, ``"90s"``, ``"15m"``, ``"2h"``, ``"1d"``, ``"250ms"``."""
    if isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"durations cannot be negative: {value!r}")
        return float(value)
    match = _DURATION.match(str(value))
    if match is None:
        raise ValueError(f"not a duration (use e.g. 90s, 15m, 2h): {value!r}")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def parse_rate(value: Any) -> float:
    """Events per second from ``"2/h"``, ``"0.5/m"``, ``"3/s"``, ``"10/d"``.

    A bare number is per hour."""
    if isinstance(value, bool):
        raise ValueError(f"not a rate: {value!r}")
    if isinstance(value, int | float):
        return float(value) / 3600.0
    text = str(value).strip()
    number, _, unit = text.partition("/")
    try:
        count = float(number)
    except ValueError:
        raise ValueError(f"not a rate (use e.g. 2/h): {value!r}") from None
    per = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "": 3600.0}.get(unit.strip())
    if per is None or count < 0:
        raise ValueError(f"not a rate (use e.g. 2/h): {value!r}")
    return count / per


class _Spec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True,
            rename="camel"):
    pass


class DurationSpec(_Spec, frozen=True):
    distribution: Literal["fixed", "exponential", "lognormal", "uniform"] = "fixed"
    mean: Any = None
    sigma: float = 0.5
    min: Any = None
    max: Any = None


class DeviceShape(_Spec, frozen=True):
    type: Literal["gpu", "mig", "share"] = "gpu"
    count: int = 1
    class_: str | None = msgspec.field(default=None, name="class")
    product_name: str = ""
    match_attribute: str = ""
    profile: str = ""
    memory: str = ""
    first_available: list[DeviceShape] = []


class JobKind(_Spec, frozen=True):
    name: str
    arrival_rate: Any = None
    arrivals: list[Any] = []
    duration: DurationSpec = DurationSpec(mean="1h")
    pods_per_job: int = 1
    priority: int = 0
    cpu: Any = "1"
    memory: Any = "1Gi"
    tolerations: list[dict[str, Any]] = []
    devices: DeviceShape | None = None
    template: str | None = None


class NodeEvent(_Spec, frozen=True):
    at: Any
    node: str
    action: Literal["add", "remove", "taint", "untaint"]
    taint: dict[str, Any] | None = None


class FleetRef(_Spec, frozen=True):
    default: bool = False
    file: str | None = None
    spec: dict[str, Any] | None = None


class ScenarioSpec(_Spec, frozen=True):
    seed: int = 0
    duration: Any = "8h"
    sample_interval: Any = None
    compare: list[str] = msgspec.field(default_factory=lambda: list(MODES))
    fleet: FleetRef = FleetRef(default=True)
    scheduler: dict[str, Any] | None = None
    events: list[NodeEvent] = []
    workload: list[JobKind] = []


class ScenarioDocument(_Spec, frozen=True):
    api_version: str
    kind: str
    metadata: dict[str, Any] = {}
    spec: ScenarioSpec = ScenarioSpec()
