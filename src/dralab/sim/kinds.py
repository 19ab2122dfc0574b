"""Job kinds with a manifest ``template``: resolved once, when the scenario loads.

For every such kind: the manifest is read and checked (``templates``), and its
claims are translated for device-plugin mode (``devplugin``) against the
scenario's fleet. Both results travel inside the ``Scenario`` value, so a run
(or a sweep worker on another machine) reads no manifest again.

What each mode's cluster gets from the templates:

* DRA: every kind's ResourceClaimTemplates (in the run's namespace) and
  DeviceClasses; a manifest's DeviceClass replaces the fleet's of the same name,
  as applying the manifest would.
* device-plugin: nothing; the pods ask for the translated extended resources.

Two kinds may bring the same template or class only if both are identical.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

from dralab.api.base import KubeObject, ObjectMeta
from dralab.api.core import Node, Pod
from dralab.api.errors import LoadError
from dralab.api.resource import DeviceClass, ResourceClaimTemplate

from .devplugin import DevicePluginPlan, FleetDevices, device_plugin_pod, plan_claims
from .fleets import device_plugin_fleet, dra_fleet, fleet_document
from .spec import DeviceShape, JobKind, ScenarioError
from .templates import KindTemplate, TemplateError, read_kind_template, resolve_path

if TYPE_CHECKING:
    from .parsedscenario import ParsedScenario

__all__ = [
    "check_translations",
    "device_plugin_gpus",
    "device_plugin_prototypes",
    "metrics_shape",
    "read_templates",
    "template_objects",
    "translate_templates",
]

NAMESPACE = "sim"


def device_plugin_gpus(shape: DeviceShape | None) -> int:
    """Whole GPUs the device-plugin model gives a built-in ``devices`` shape (its first
    alternative): MIG slices and shares cannot be expressed there."""
    if shape is None:
        return 0
    if shape.first_available:
        return device_plugin_gpus(shape.first_available[0])
    return shape.count if shape.type == "gpu" else 1


def _field(index: int) -> str:
    return f"spec.workload[{index}].template"


def read_templates(workload: Sequence[JobKind], base_dir: str, source: str,
                   allow_outside: bool = False) -> dict[str, KindTemplate]:
    """Read every kind's manifest once; ScenarioError naming the kind's field.

    A manifest outside ``base_dir`` is an error unless ``allow_outside``."""
    out: dict[str, KindTemplate] = {}
    rcts: dict[str, tuple[str, ResourceClaimTemplate]] = {}
    classes: dict[str, tuple[str, DeviceClass]] = {}
    generated = {k.name for k in workload if k.devices is not None}
    for i, kind in enumerate(workload):
        if not kind.template:
            continue
        try:
            path = resolve_path(kind.template, base_dir, allow_outside)
            template = read_kind_template(path, kind.name, kind.devices is not None)
        except (TemplateError, LoadError) as exc:
            raise ScenarioError(source, _field(i), str(exc)) from None
        for rct in template.claim_templates:
            if rct.name in generated:
                raise ScenarioError(source, _field(i), (
                    f"ResourceClaimTemplate {rct.name} of {path} has the name of the job kind "
                    f"{rct.name}, whose devices generate one: rename one of them"))
            seen = rcts.setdefault(rct.name, (kind.name, rct))
            if seen[1] != rct:
                raise ScenarioError(source, _field(i), (
                    f"ResourceClaimTemplate {rct.name} of {path} differs from the one of job "
                    f"kind {seen[0]}: give them different names"))
        for cls in template.device_classes:
            seen_cls = classes.setdefault(cls.name, (kind.name, cls))
            if seen_cls[1] != cls:
                raise ScenarioError(source, _field(i), (
                    f"DeviceClass {cls.name} of {path} differs from the one of job kind "
                    f"{seen_cls[0]}"))
        out[kind.name] = template
    return out


def template_objects(scenario: ParsedScenario) -> list[KubeObject]:
    """The ResourceClaimTemplates and DeviceClasses the templates bring (DRA mode)."""
    out: list[KubeObject] = []
    names: set[tuple[str, str]] = set()
    for template in scenario.templates.values():
        for rct in template.claim_templates:
            if ("rct", rct.name) not in names:
                names.add(("rct", rct.name))
                out.append(msgspec.structs.replace(rct, metadata=msgspec.structs.replace(
                    rct.metadata, namespace=NAMESPACE)))
        for cls in template.device_classes:
            if ("class", cls.name) not in names:
                names.add(("class", cls.name))
                out.append(cls)
    return out


def _advertised(nodes: Sequence[Node]) -> set[str]:
    return {name for n in nodes for name, q in n.status.allocatable.items() if q.value() > 0}


def translate_templates(scenario: ParsedScenario) -> dict[str, DevicePluginPlan]:
    """The device-plugin translation of every template kind, against the scenario's fleet.

    Fails for nothing: a kind that cannot be translated gets a plan with ``error``
    (raised by ``check_device_plugin`` only when device-plugin mode is compared).
    """
    if not scenario.templates:
        return {}
    doc = fleet_document(scenario)
    source = scenario.source + " (fleet)"
    dra = dra_fleet(doc, scenario.seed, source)
    devices = FleetDevices(dra.slices)
    fleet_classes = {o.name: o for o in dra.classes}
    advertised = _advertised(device_plugin_fleet(doc, scenario.seed, source).nodes)
    plans: dict[str, DevicePluginPlan] = {}
    for kind in scenario.workload:
        template = scenario.templates.get(kind.name)
        if template is None:
            continue
        classes = fleet_classes | {c.name: c for c in template.device_classes}
        rcts = {t.name: t for t in template.claim_templates}
        own = (kind.name, device_plugin_gpus(kind.devices)) if template.uses_kind_template \
            else None
        plan = plan_claims(template.pod, rcts, own, classes, devices)
        missing = [r for r in plan.requests if r[2] not in advertised]
        if plan.error is None and missing:
            claim, request, resource, _ = missing[0]
            plan = msgspec.structs.replace(plan, error=(
                f"claim {claim}{f' request {request}' if request else ''}: no node of the "
                f"fleet advertises {resource} "
                "in device-plugin mode (the device plugin advertises MIG devices only on "
                "pools with static MIG)"))
        plans[kind.name] = plan
    return plans


def check_translations(scenario: ParsedScenario) -> None:
    """ScenarioError for the first template kind without a device-plugin translation (run
    when device-plugin mode is compared, see ``modes``)."""
    for i, kind in enumerate(scenario.workload):
        plan = scenario.device_plugin.get(kind.name)
        if plan is not None and plan.error is not None:
            raise ScenarioError(scenario.source, _field(i), (
                f"job kind {kind.name}: {plan.error}; compare dra only "
                "(spec.compare: [dra] or --compare dra)"))


def metrics_shape(scenario: ParsedScenario, kind: JobKind) -> DeviceShape | None:
    """The device demand of ``kind`` as a built-in shape, for metrics: its ``devices``, or
    for a manifest template its device-plugin translation's shape."""
    plan = scenario.device_plugin.get(kind.name)
    if plan is not None:
        return plan.shape
    return kind.devices


def device_plugin_prototypes(scenario: ParsedScenario) -> dict[str, Pod]:
    """Per template kind, the pod every replica copies in device-plugin mode (no name yet):
    the manifest's pod with its claims translated into extended resources."""
    return {name: device_plugin_pod(template.pod, scenario.device_plugin.get(
        name, DevicePluginPlan())) for name, template in scenario.templates.items()}


def named_pod(prototype: Pod, name: str, labels: dict[str, str]) -> Pod:
    """A copy of ``prototype`` with its name, the run's namespace and extra labels."""
    meta = prototype.metadata
    return msgspec.structs.replace(prototype, api_version="v1", kind="Pod", metadata=ObjectMeta(
        name=name, namespace=NAMESPACE, labels={**meta.labels, **labels},
        annotations=dict(meta.annotations)))
