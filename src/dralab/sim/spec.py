"""The wire format of a Scenario document (``dralab.dev/v1alpha1 Scenario``).

Strict msgspec Structs (unknown fields are errors) plus the parsers of durations
and rates. ``dralab.sim.scenario`` checks a decoded document and builds the
``Scenario`` value; the field reference is in its module docstring.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

import msgspec

from dralab.api.errors import InputError

__all__ = [
    "API_VERSION",
    "AUTOSCALING_MODELS",
    "DEFAULT_COMPARE",
    "MODES",
    "AutoscalingRef",
    "DeviceShape",
    "DurationSpec",
    "FleetRef",
    "JobKind",
    "NodeEvent",
    "QueueingRef",
    "ScenarioDocument",
    "ScenarioError",
    "ScenarioSpec",
    "parse_duration",
    "parse_rate",
    "short_repr",
]

API_VERSION = "dralab.dev/v1alpha1"
MODES = ("device-plugin", "dra", "kai")
DEFAULT_COMPARE = ("device-plugin", "dra")
AUTOSCALING_MODELS = ("cluster-autoscaler", "karpenter")

_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ms|s|m|h|d)?\s*$", re.ASCII)
# A plain decimal count, optionally with an exponent ("0.5", "1e3"): no inf, nan, signs
# or underscores, which float() would all accept.
_RATE_NUMBER = re.compile(r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]{1,3})?")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


class ScenarioError(InputError):
    """A scenario file that cannot be used; one line naming file and field."""

    def __init__(self, source: str, path: str, message: str) -> None:
        super().__init__(f"{source}: {path}: {message}" if path else f"{source}: {message}")


def _finite(number: Any, value: Any, what: str) -> float:
    """``number`` as a finite, non-negative float; ValueError quoting ``value`` otherwise."""
    try:
        out = float(number)
    except OverflowError:  # an int too large for a float
        out = math.inf
    if math.isnan(out):
        raise ValueError(f"not a {what}: {short_repr(value)}")
    if math.isinf(out):
        raise ValueError(f"{what}s must be finite: {short_repr(value)}")
    if out < 0:
        raise ValueError(f"{what}s cannot be negative: {short_repr(value)}")
    return out


def short_repr(value: Any) -> str:
    """``repr(value)``, cut to 40 characters: error lines quote values, never whole files."""
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def parse_duration(value: Any) -> float:
    """Seconds from ``90``, ``"90s"``, ``"15m"``, ``"2h"``, ``"1d"``, ``"250ms"``.

    ValueError for anything else, and for negative, infinite or NaN values.
    """
    if isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    if isinstance(value, int | float):
        return _finite(value, value, "duration")
    match = _DURATION.match(str(value)) if isinstance(value, str) and len(value) <= 64 else None
    if match is None:
        raise ValueError(f"not a duration (use e.g. 90s, 15m, 2h): {short_repr(value)}")
    return _finite(float(match.group(1)) * _UNIT_SECONDS[match.group(2)], value, "duration")


def parse_rate(value: Any) -> float:
    """Events per second from ``"2/h"``, ``"0.5/m"``, ``"3/s"``, ``"10/d"``.

    A bare number is per hour. ValueError for anything else, and for negative,
    infinite or NaN rates.
    """
    if isinstance(value, bool):
        raise ValueError(f"not a rate: {value!r}")
    if isinstance(value, int | float):
        return _finite(value, value, "rate") / 3600.0
    if not isinstance(value, str) or len(value) > 64:
        raise ValueError(f"not a rate (use e.g. 2/h): {short_repr(value)}")
    number, _, unit = value.strip().partition("/")
    per = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "": 3600.0}.get(unit.strip())
    if per is None or not _RATE_NUMBER.fullmatch(number.strip()):
        raise ValueError(f"not a rate (use e.g. 2/h): {short_repr(value)}")
    return _finite(float(number), value, "rate") / per


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
    queue: str | None = None   # LocalQueue "namespace/name" (needs spec.queueing)
    kai_queue: str | None = None   # KAI leaf Queue (needs spec.queueing.kai)
    min_member: int | None = None  # KAI: the PodGroup's gang (default podsPerJob)
    compute_domain: bool = False   # each job its own ComputeDomain (computedomains)


class NodeEvent(_Spec, frozen=True):
    at: Any
    action: Literal["add", "remove", "taint", "untaint"]
    node: str | None = None    # every action; or, for add, ``pool``
    pool: str | None = None    # add: one more node of this Fleet pool
    taint: dict[str, Any] | None = None


class FleetRef(_Spec, frozen=True):
    default: bool = False
    file: str | None = None
    spec: dict[str, Any] | None = None


class QueueingRef(_Spec, frozen=True):
    kueue: str = ""             # Kueue objects: a file or directory, relative to the scenario
    kai: str = ""               # KAI Scheduler objects (Queues, SchedulingShard, Config)


class AutoscalingRef(_Spec, frozen=True):
    """``spec.autoscaling``: how the fleet's autoscaled pools scale (defaults as Cluster
    Autoscaler's flags)."""

    model: str = "cluster-autoscaler"      # cluster-autoscaler | karpenter
    expander: str = "least-waste"          # cluster-autoscaler: its --expander
    scan_interval: Any = "10s"             # --scan-interval
    scale_down_unneeded_time: Any = "10m"  # --scale-down-unneeded-time
    scale_down_delay_after_add: Any = "10m"  # --scale-down-delay-after-add
    scale_down_utilization_threshold: float = 0.5
    # cluster-autoscaler: the rest of its flags, by their names in camelCase, with CA's
    # defaults (sim/autoscaling.py checks them).
    scale_down_gpu_utilization_threshold: float = 0.5
    scale_down_unready_time: Any = "20m"
    scale_down_unready_enabled: bool = True
    ignore_daemonsets_utilization: bool = False
    ignore_mirror_pods_utilization: bool = False
    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    skip_nodes_with_custom_controller_pods: bool = True
    blocking_system_pod_distruption_timeout: Any = "1h"  # CA's spelling
    max_scale_down_parallelism: int = 10
    max_drain_parallelism: int = 1
    max_nodes_per_scaleup: int = 1000
    max_nodes_total: int = 0
    cores_total: str = "0:320000"
    memory_total: str = "0:6400000"        # GiB, as the flag
    enforce_node_group_min_size: bool = False
    balance_similar_node_groups: bool = False
    balancing_ignore_label: list[str] = []
    expendable_pods_priority_cutoff: int = -10
    fastpath_binpacking_enabled: bool = False
    # karpenter: its --ignore-dra-requests (default true) and its NodePools (a
    # karpenter.sh/v1 NodePool document, a list of them, or a path to a file of them
    # relative to the scenario).
    ignore_dra_requests: bool = msgspec.field(default=True, name="ignoreDRARequests")
    preference_policy: str = "Respect"    # karpenter: its --preference-policy
    node_pool: dict[str, Any] | list[Any] | str | None = None
    # dralab's own: the unit of the fleet's pricePerHour (e.g. USD), shown with every cost
    # in the report; empty: costs say "pricePerHour units".
    currency: str = ""


class ScenarioSpec(_Spec, frozen=True):
    seed: int = 0
    duration: Any = "8h"
    sample_interval: Any = None
    # The default compares the device-plugin model with DRA; kai is asked for by name.
    compare: list[str] = msgspec.field(default_factory=lambda: list(DEFAULT_COMPARE))
    fleet: FleetRef = FleetRef(default=True)
    scheduler: dict[str, Any] | None = None
    feature_gates: str = ""  # kube-scheduler's --feature-gates syntax, e.g. DRAPreemption=true
    events: list[NodeEvent] = []
    queueing: QueueingRef | None = None
    autoscaling: AutoscalingRef | None = None
    workload: list[JobKind] = []


class ScenarioDocument(_Spec, frozen=True):
    api_version: str
    kind: str
    metadata: dict[str, Any] = {}
    spec: ScenarioSpec = ScenarioSpec()
