"""A parsed, checked scenario as the simulation's modules read it.

``scenario.Scenario`` (the public type, what ``load_scenario``/``parse_scenario``
return) adds what depends on the modes (``Scenario.modes``, ``with_compare``). The
modules ``scenario`` calls while it loads (fleets, growth, jobs, kinds, modes,
queueing) take this base type, so that none of them imports ``scenario`` back.
"""

from __future__ import annotations

from typing import Any, Self

import msgspec

from dralab.api.base import KubeObject
from dralab.api.core import Node
from dralab.api.features import FeatureGates
from dralab.api.resource import ResourceClaimTemplate, ResourceSlice

from .autoscaling import AutoscalingSettings
from .devplugin import DevicePluginPlan
from .model import Kind, NodeChange
from .spec import FleetRef, JobKind, NodeEvent
from .templates import KindTemplate

__all__ = ["ParsedScenario"]


class ParsedScenario(msgspec.Struct, frozen=True, kw_only=True):
    """A parsed, checked scenario. Times are seconds; rates are jobs per second.

    ``templates`` holds, per job kind with a manifest ``template``, that manifest as
    read when the scenario loaded; ``device_plugin`` the translation of its claims
    for device-plugin mode (see ``dralab.sim.devplugin``).
    """

    name: str
    seed: int
    duration: float
    sample_interval: float
    compare: tuple[str, ...]
    fleet: FleetRef
    scheduler: dict[str, Any] | None
    workload: tuple[JobKind, ...]
    events: tuple[NodeEvent, ...] = ()
    base_dir: str = "."   # where relative file references resolve
    source: str = "<scenario>"
    templates: dict[str, KindTemplate] = {}
    device_plugin: dict[str, DevicePluginPlan] = {}
    # Typed, built once when the scenario loads (``model``):
    kinds: tuple[Kind, ...] = ()              # the workload's job kinds
    timeline: tuple[NodeChange, ...] = ()     # the events, in file order
    fleet_data: dict[str, Any] | None = None  # the Fleet document (a fleet file, read once)
    claim_templates: tuple[ResourceClaimTemplate, ...] = ()  # generated from ``devices``
    # Per mode name, the nodes pool ``add`` events bring: name -> (Node, its slices).
    pool_nodes: dict[str, dict[str, tuple[Node, tuple[ResourceSlice, ...]]]] = {}
    # ``spec.queueing``: the Kueue objects (queues, flavors, Configuration), read once.
    kueue_objects: tuple[KubeObject, ...] | None = None
    kueue_file: str = ""  # where they came from (spec.queueing.kueue, as written)
    # ``spec.queueing.kai``: KAI Scheduler's objects (Queues, shard, Config), read once.
    kai_objects: tuple[KubeObject, ...] | None = None
    # The fleet has autoscaled pools: ``spec.autoscaling`` with its defaults (``autoscaling``).
    autoscaling: AutoscalingSettings | None = None
    # ``spec.featureGates``: the gates every mode's cluster runs with (default: 1.37's).
    features: FeatureGates = FeatureGates()

    def with_seed(self, seed: int) -> Self:
        return msgspec.structs.replace(self, seed=seed)
