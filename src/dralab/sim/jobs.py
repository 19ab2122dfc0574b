"""Jobs of a scenario: when they arrive, how long their pods run, and their pods as objects.

Arrivals and durations are drawn once per scenario, before any mode runs, so
every compared mode replays exactly the same demand; each job kind draws from
its own seeded stream, so adding a kind does not shift the others.

Pods are real core/v1 Pods. In DRA mode a pod references a ResourceClaimTemplate
generated from the job kind's device shape; in device-plugin mode the same pod
asks for whole GPUs through the ``nvidia.com/gpu`` extended resource (MIG slices
and shares cannot be expressed there, which is what the comparison measures).
A kind with a manifest ``template`` copies that manifest's pod instead (see
``kinds``): as written in DRA mode, with its claims translated into extended
resources in device-plugin mode.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dralab.api.base import ObjectMeta
from dralab.api.claimshape import ClaimShape
from dralab.api.claimshape import claim_template as shaped_claim_template
from dralab.api.core import (
    Container,
    ContainerResourceClaim,
    Pod,
    PodResourceClaim,
    PodSpec,
    ResourceRequirements,
)
from dralab.api.quantity import Quantity
from dralab.api.resource import ResourceClaimTemplate

from .devplugin import GPU_RESOURCE
from .kinds import NAMESPACE, device_plugin_gpus, named_pod
from .limits import MAX_SCENARIO_PODS
from .model import Kind
from .spec import DeviceShape, JobKind, ScenarioError

if TYPE_CHECKING:
    from .parsedscenario import ParsedScenario

__all__ = [
    "GPU_RESOURCE",
    "NAMESPACE",
    "Arrival",
    "claim_shape",
    "claim_template",
    "device_plugin_gpus",
    "draw_arrivals",
    "make_pod",
    "templates_for",
]

CLAIM_NAME = "devices"


@dataclass(frozen=True, slots=True)
class Arrival:
    """One job: its kind, arrival time and each pod's run time (seconds)."""

    time: float
    kind: Kind
    index: int
    durations: tuple[float, ...]

    @property
    def name(self) -> str:
        return f"{self.kind.name}-{self.index:05d}"


def draw_arrivals(scenario: ParsedScenario) -> list[Arrival]:
    """Every job arriving before the scenario ends, in time order (ties: kind order).

    The scenario's expected pods were checked against MAX_SCENARIO_PODS when it
    loaded; a draw that still ends up with more than twice that many pods (far
    beyond any Poisson deviation) stops with ScenarioError rather than running on.
    """
    out: list[tuple[float, int, Arrival]] = []
    pods = 0
    for order, kind in enumerate(scenario.kinds):
        rng = random.Random(f"{scenario.seed}:{kind.name}")
        times: list[float]
        if kind.rate is None:
            times = list(kind.arrivals)
        else:
            rate = kind.rate
            times = []
            t = 0.0
            while rate > 0:
                t += rng.expovariate(rate)
                if t >= scenario.duration:
                    break
                times.append(t)
                if len(times) * kind.pods_per_job > 2 * MAX_SCENARIO_PODS:
                    raise ScenarioError(scenario.source, f"spec.workload[{order}].arrivalRate",
                                        f"more than {2 * MAX_SCENARIO_PODS:,} pods drawn "
                                        "(twice MAX_SCENARIO_PODS)")
        for index, t in enumerate(times):
            if t >= scenario.duration:
                continue
            pods += kind.pods_per_job
            if pods > 2 * MAX_SCENARIO_PODS:
                raise ScenarioError(scenario.source, "spec.workload",
                                    f"more than {2 * MAX_SCENARIO_PODS:,} pods drawn "
                                    "(twice MAX_SCENARIO_PODS)")
            if kind.compute_domain:
                # One multi-node job (its pods share an NVLink job): its pods run, and end,
                # together.
                durations = (max(1.0, kind.duration.draw(rng)),) * kind.pods_per_job
            else:
                durations = tuple(max(1.0, kind.duration.draw(rng))
                                  for _ in range(kind.pods_per_job))
            out.append((t, order, Arrival(t, kind, index, durations)))
    out.sort(key=lambda item: (item[0], item[1], item[2].index))
    return [a for _, _, a in out]


# --- device shapes -----------------------------------------------------------------------

def claim_shape(shape: DeviceShape) -> ClaimShape:
    """A scenario's device shape in the claim-shape vocabulary (``dralab.api.claimshape``)."""
    return ClaimShape(type=shape.type, count=shape.count, device_class=shape.class_,
                      product_name=shape.product_name, match_attribute=shape.match_attribute,
                      profile=shape.profile, memory=shape.memory,
                      first_available=tuple(claim_shape(a) for a in shape.first_available))


def claim_template(kind: JobKind) -> ResourceClaimTemplate | None:
    """The claim template a pod of ``kind`` uses in DRA mode (None for CPU-only kinds)."""
    if kind.devices is None:
        return None
    return shaped_claim_template(kind.name, NAMESPACE, claim_shape(kind.devices))


# --- pods -------------------------------------------------------------------------------

def make_pod(arrival: Arrival, replica: int, attempt: int = 0, template: Pod | None = None,
             *, extended: Mapping[str, Quantity] | None = None, claim: bool = False) -> Pod:
    """Pod ``replica`` of a job (the mode decides its devices, see ``modes``).

    ``template``: for a kind with a manifest template, the mode's pod prototype; the
    pod is a copy of it. Otherwise the pod is built from the kind: ``extended``
    resources as requests and limits (the device-plugin model), or with ``claim`` a
    claim from the kind's generated ResourceClaimTemplate (DRA).
    """
    kind = arrival.kind
    name = f"{arrival.name}-{replica}" + (f"-r{attempt}" if attempt else "")
    labels = {"dralab.dev/job": arrival.name, "dralab.dev/kind": kind.name}
    if template is not None:
        return named_pod(template, name, labels)
    requests = {"cpu": kind.cpu, "memory": kind.memory}
    limits: dict[str, Quantity] = {}
    claims: list[PodResourceClaim] = []
    container_claims: list[ContainerResourceClaim] = []
    for resource, quantity in (extended or {}).items():
        limits[resource] = quantity
        requests[resource] = quantity
    if claim:
        claims.append(PodResourceClaim(name=CLAIM_NAME, resource_claim_template_name=kind.name))
        container_claims.append(ContainerResourceClaim(name=CLAIM_NAME))
    container = Container(name="main", image="sim",
                          resources=ResourceRequirements(requests=requests, limits=limits,
                                                         claims=container_claims))
    return Pod(api_version="v1", kind="Pod",
               metadata=ObjectMeta(name=name, namespace=NAMESPACE, labels=labels),
               spec=PodSpec(containers=[container], resource_claims=claims,
                            priority=kind.priority, tolerations=list(kind.tolerations)))


def templates_for(workload: Sequence[JobKind]) -> list[ResourceClaimTemplate]:
    return [t for k in workload if (t := claim_template(k)) is not None]
