"""The compared modes: how one run sees the fleet, builds pods and counts GPUs.

A scenario names its modes as strings (``compare: [device-plugin, dra]``, and the
results keep those names and their labels); they are resolved once, here, to
``Mode`` objects, and nothing downstream branches on the name:

* ``DRA`` uses the fleet as specified (classes, nodes, ResourceSlices) plus the
  claim templates and DeviceClasses the job kinds bring; a pod references its
  kind's claim template (or is its manifest's pod); GPUs are counted from the
  claims' allocation results.
* ``DEVICE_PLUGIN`` sees the same hardware as the NVIDIA device plugin exposes
  it (``fleets.device_plugin_fleet``); a pod asks for whole GPUs as the
  ``nvidia.com/gpu`` extended resource (a manifest's claims translated, see
  ``devplugin``); GPUs are counted from the nodes' requested resources.
* ``KAI`` sees the device plugin's nodes too, but KAI Scheduler places the pods
  (``sim.kai``, ``stages.kai``): whole GPUs, static-MIG devices and KAI's shared GPUs
  (``gpu-memory``); its ``pod_scheduler`` tells the run to wire KAI's session in
  place of Kueue's admission and kube-scheduler.

A new mode is one more ``Mode`` subclass and an entry in ``MODES`` (and in
``spec.MODES``, the names a scenario may compare).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from dralab.api.base import KubeObject
from dralab.api.core import Node, Pod
from dralab.api.quantity import Quantity
from dralab.api.resource import ResourceSlice
from dralab.cluster import ClusterState
from dralab.fleet import Fleet, parse_fleet
from dralab.fleet.generate import GeneratedFleet
from dralab.queueing.kai.validate import KAI_SCHEDULER_NAME, gpu_request_problems

from .computedomains import job_compute_domain, with_channel_claim
from .devplugin import GPU_RESOURCE, mig_resource
from .fleets import (
    device_plugin_fleet,
    device_plugin_fleet_spec,
    device_plugin_node,
    dra_fleet,
    fleet_document,
    mig_fraction,
)
from .jobs import NAMESPACE, Arrival, make_pod
from .kai import GPU_MEMORY_ANNOTATION, KaiAccounting, kai_snapshot
from .kinds import check_translations, device_plugin_prototypes, template_objects
from .model import Kind, KindDevices
from .observe import Accounting, ClaimAccounting, ExtendedResourceAccounting

if TYPE_CHECKING:
    from .parsedscenario import ParsedScenario

__all__ = ["DEVICE_PLUGIN", "DRA", "KAI", "MODES", "DevicePluginMode", "DraMode", "KaiMode",
           "Mode", "check_modes", "mode_objects", "resolve_mode", "resolve_modes"]

_MIB = 1024 * 1024
Demand = tuple[int, float, int]  # (GPUs, per-GPU share 0..1, memory MiB for shares)


class Mode:
    """One way of running the scenario's workload on its fleet (see the module doc)."""

    name: str
    label: str
    # Who places the pods: kube-scheduler (behind Kueue with spec.queueing.kueue) or
    # KAI Scheduler's session (``stages.kai``).
    pod_scheduler: str = "kube-scheduler"

    def __repr__(self) -> str:
        return f"<Mode {self.name}>"

    def check(self, scenario: ParsedScenario) -> None:
        """ScenarioError if the scenario cannot run in this mode."""

    def fleet(self, doc: dict[str, object], seed: int, source: str) -> GeneratedFleet:
        """The fleet document as this mode sees it (the fleet transform)."""
        raise NotImplementedError

    def objects(self, scenario: ParsedScenario) -> list[KubeObject]:
        """Classes, nodes and slices of the scenario's fleet in this mode."""
        fleet = self.fleet(fleet_document(scenario), scenario.seed,
                           scenario.source + " (fleet)")
        return fleet.objects()

    def pool_fleet(self, scenario: ParsedScenario) -> Fleet:
        """The Fleet whose pools' next nodes are this mode's nodes (autoscaling)."""
        raise NotImplementedError

    def join_form(self, node: Node, slices: tuple[ResourceSlice, ...]
                  ) -> tuple[Node, tuple[ResourceSlice, ...]]:
        """A ``pool_fleet`` node as it joins a run in this mode."""
        return node, slices

    def cluster_objects(self, scenario: ParsedScenario, fleet: Sequence[KubeObject]
                        ) -> list[KubeObject]:
        """What a run's cluster starts with: the fleet and what the workload brings."""
        return list(fleet)

    def prototypes(self, scenario: ParsedScenario) -> dict[str, Pod]:
        """Per template kind, the pod every replica copies (no name yet)."""
        raise NotImplementedError

    def make_pod(self, arrival: Arrival, replica: int, attempt: int = 0,
                 prototype: Pod | None = None) -> Pod:
        """Pod ``replica`` of a job; ``prototype`` for a template kind (``prototypes``)."""
        raise NotImplementedError

    def demand(self, kind: Kind) -> Demand:
        """What a pod of ``kind`` needs, for the fragmentation measure."""
        raise NotImplementedError

    def accounting(self, cluster: ClusterState, slices: Iterable[ResourceSlice]) -> Accounting:
        """How this mode counts GPUs held and in use."""
        raise NotImplementedError


def _dra_demand(request: KindDevices | None) -> Demand:
    """A MIG device takes its profile's share of one GPU (placement rules ignored here);
    a share is measured in GPU memory; alternatives count as the last (the least)."""
    if request is None:
        return 0, 0.0, 0
    if request.alternatives:
        return _dra_demand(request.alternatives[-1])
    if request.type == "mig":
        return 1, mig_fraction(request.profile), 0
    if request.type == "share":
        return 1, 0.0, request.memory_mib
    return request.count, 1.0, 0


class DraMode(Mode):
    name = "dra"
    label = "DRA (MIG + sharing)"

    def fleet(self, doc: dict[str, object], seed: int, source: str) -> GeneratedFleet:
        return dra_fleet(dict(doc), seed, source)

    def pool_fleet(self, scenario: ParsedScenario) -> Fleet:
        return parse_fleet(fleet_document(scenario), scenario.source + " (fleet)")

    def cluster_objects(self, scenario: ParsedScenario, fleet: Sequence[KubeObject]
                        ) -> list[KubeObject]:
        # After the fleet's: a manifest's DeviceClass replaces the fleet's of that name.
        return [*fleet, *scenario.claim_templates, *template_objects(scenario)]

    def prototypes(self, scenario: ParsedScenario) -> dict[str, Pod]:
        return {name: template.pod for name, template in scenario.templates.items()}

    def make_pod(self, arrival: Arrival, replica: int, attempt: int = 0,
                 prototype: Pod | None = None) -> Pod:
        pod = make_pod(arrival, replica, attempt, prototype,
                       claim=arrival.kind.devices is not None)
        if arrival.kind.compute_domain:
            pod = with_channel_claim(pod, job_compute_domain(arrival).template_name)
        return pod

    def demand(self, kind: Kind) -> Demand:
        return _dra_demand(kind.demand)

    def accounting(self, cluster: ClusterState, slices: Iterable[ResourceSlice]) -> Accounting:
        return ClaimAccounting(cluster, slices)


class DevicePluginMode(Mode):
    name = "device-plugin"
    label = "Device plugin (whole GPUs)"

    def check(self, scenario: ParsedScenario) -> None:
        from .spec import ScenarioError

        for i, kind in enumerate(scenario.workload):
            if kind.compute_domain:
                raise ScenarioError(scenario.source, f"spec.workload[{i}].computeDomain", (
                    f"a ComputeDomain's channel is a DRA claim: compare dra only, "
                    f"not {self.name}"))
        check_translations(scenario)

    def fleet(self, doc: dict[str, object], seed: int, source: str) -> GeneratedFleet:
        return device_plugin_fleet(dict(doc), seed, source)

    def pool_fleet(self, scenario: ParsedScenario) -> Fleet:
        return device_plugin_fleet_spec(fleet_document(scenario), scenario.source + " (fleet)")

    def join_form(self, node: Node, slices: tuple[ResourceSlice, ...]
                  ) -> tuple[Node, tuple[ResourceSlice, ...]]:
        return device_plugin_node(node, slices)

    def prototypes(self, scenario: ParsedScenario) -> dict[str, Pod]:
        return device_plugin_prototypes(scenario)

    def make_pod(self, arrival: Arrival, replica: int, attempt: int = 0,
                 prototype: Pod | None = None) -> Pod:
        devices = arrival.kind.devices
        gpus = devices.whole_gpus if devices is not None else 0
        extended = {GPU_RESOURCE: Quantity.from_int(gpus)} if gpus else None
        return make_pod(arrival, replica, attempt, prototype, extended=extended)

    def demand(self, kind: Kind) -> Demand:
        request = kind.demand
        if request is not None and kind.template is not None and request.type == "mig":
            # A template's MIG request stays a MIG device with the device plugin (static MIG).
            return _dra_demand(request)
        if request is None:
            return 0, 0.0, 0
        return request.whole_gpus, 1.0, 0

    def accounting(self, cluster: ClusterState, slices: Iterable[ResourceSlice]) -> Accounting:
        return ExtendedResourceAccounting(cluster, GPU_RESOURCE)


class KaiMode(DevicePluginMode):
    """KAI Scheduler as the pod scheduler (``sim.kai``): the device plugin's nodes, and
    pods asking for whole GPUs, one static-MIG device of their profile, or GPU memory of
    a shared GPU (KAI's ``gpu-memory`` annotation). KAI's session replaces Kueue's
    admission and kube-scheduler in this mode's run."""

    name = "kai"
    label = "KAI Scheduler"
    pod_scheduler = "kai"

    def check(self, scenario: ParsedScenario) -> None:
        from .spec import ScenarioError

        super().check(scenario)
        if scenario.kai_objects is None:
            raise ScenarioError(scenario.source, "spec.queueing.kai",
                                "the kai mode needs KAI's objects (its Queues)")
        for i, kind in enumerate(scenario.workload):
            if kind.kai_queue is None:
                raise ScenarioError(scenario.source, f"spec.workload[{i}].kaiQueue", (
                    "required in the kai mode: KAI schedules a job in its queue's share"))
        if scenario.autoscaling is not None:
            raise ScenarioError(scenario.source, "spec.autoscaling",
                                "the kai mode does not model an autoscaler yet")
        # KAI's admission of a template pod's GPU-sharing annotations (gpu-fraction,
        # gpu-memory): sharing must be on in KAI's Config, values in range.
        sharing = kai_snapshot(scenario).gpu_sharing
        positions = {kind.name: i for i, kind in enumerate(scenario.workload)}
        for name, pod in sorted(self.prototypes(scenario).items()):
            # the kai mode's pods are KAI's, whatever schedulerName the manifest says
            kai_pod = msgspec.structs.replace(
                pod, metadata=msgspec.structs.replace(pod.metadata, name=name,
                                                      namespace=NAMESPACE),
                spec=msgspec.structs.replace(pod.spec, scheduler_name=KAI_SCHEDULER_NAME))
            problems = gpu_request_problems(kai_pod, sharing)
            if problems:
                path, message = problems[0]
                raise ScenarioError(scenario.source,
                                    f"spec.workload[{positions[name]}].template",
                                    f"KAI would refuse its pods: {path}: {message}")

    def make_pod(self, arrival: Arrival, replica: int, attempt: int = 0,
                 prototype: Pod | None = None) -> Pod:
        devices = arrival.kind.devices
        if prototype is not None or devices is None:
            return super().make_pod(arrival, replica, attempt, prototype)
        first = devices.alternatives[0] if devices.alternatives else devices
        if first.type == "mig":
            extended = {mig_resource(first.profile): Quantity.from_int(1)}
        elif first.type == "share" and first.memory is not None:
            pod = make_pod(arrival, replica, attempt, None)
            mib = max(1, -(-first.memory.value() // _MIB))
            annotations = {**pod.metadata.annotations, GPU_MEMORY_ANNOTATION: str(mib)}
            return msgspec.structs.replace(pod, metadata=msgspec.structs.replace(
                pod.metadata, annotations=annotations))
        else:
            extended = {GPU_RESOURCE: Quantity.from_int(first.count)}
        return make_pod(arrival, replica, attempt, None, extended=extended)

    def demand(self, kind: Kind) -> Demand:
        request = kind.demand
        if request is not None and kind.template is None:
            return _dra_demand(request.alternatives[0] if request.alternatives else request)
        return super().demand(kind)

    def accounting(self, cluster: ClusterState, slices: Iterable[ResourceSlice]) -> Accounting:
        return KaiAccounting(cluster, GPU_RESOURCE)


DRA = DraMode()
DEVICE_PLUGIN = DevicePluginMode()
KAI = KaiMode()
MODES: Mapping[str, Mode] = {m.name: m for m in (DEVICE_PLUGIN, DRA, KAI)}


def resolve_mode(mode: Mode | str) -> Mode:
    """The Mode called ``mode`` (KeyError for an unknown name); a Mode as is."""
    return mode if isinstance(mode, Mode) else MODES[mode]


def resolve_modes(names: Iterable[Mode | str]) -> tuple[Mode, ...]:
    return tuple(resolve_mode(n) for n in names)


def check_modes(scenario: ParsedScenario, modes: Iterable[Mode | str] | None = None) -> None:
    """ScenarioError if the scenario cannot run in one of ``modes`` (default: its own)."""
    for mode in resolve_modes(scenario.compare if modes is None else modes):
        mode.check(scenario)


def mode_objects(scenario: ParsedScenario, mode: Mode | str) -> list[KubeObject]:
    """Nodes, DeviceClasses and ResourceSlices for ``mode`` (no slices in device-plugin
    mode)."""
    return resolve_mode(mode).objects(scenario)


def fleet_nodes(objects: Iterable[KubeObject]) -> list[Node]:
    return [o for o in objects if isinstance(o, Node)]
