"""A job kind's ``template``: a real manifest, read once when the scenario loads.

The file (or directory, read like ``kubectl apply -f``) must hold exactly one pod
template: a Pod, or a workload carrying ``spec.template`` (Job, Deployment,
StatefulSet, ReplicaSet, DaemonSet, ReplicationController) or
``spec.jobTemplate.spec.template`` (CronJob). Every pod of the kind is a copy of
it. The ResourceClaimTemplates and DeviceClasses of the same file or directory
come with it into the run, as ``kubectl apply`` of the manifest would create them;
the pod template's claims must name one of those templates (or, when the job
kind also sets ``devices``, the template generated from it, named after the kind).

Everything is checked here, once: the documents we use are validated as the API
server would, and references are resolved. Errors are one line naming the file,
document, object and field path, never a Python rendering of the input.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from dralab.api import io as api_io
from dralab.api.codec import DecodeError, decode
from dralab.api.core import Pod
from dralab.api.errors import InputError
from dralab.api.io import Document
from dralab.api.kindcount import warn_unused_kinds
from dralab.api.podtemplate import POD_TEMPLATE_KINDS, pod_template_data, template_path
from dralab.api.resource import DeviceClass, ResourceClaimTemplate
from dralab.validation.check import validate_documents

__all__ = ["POD_CARRIERS", "KindTemplate", "TemplateError", "read_kind_template",
           "resolve_path"]

# Kinds whose spec.template is a pod template (CronJob: spec.jobTemplate.spec.template).
POD_CARRIERS = POD_TEMPLATE_KINDS
_USED_KINDS = frozenset({"Pod", *POD_CARRIERS, "ResourceClaimTemplate", "DeviceClass"})


class TemplateError(InputError):
    """A job kind's template that cannot be used (the message names file and field)."""


class KindTemplate(msgspec.Struct, frozen=True, kw_only=True):
    """A job kind's manifest, resolved.

    ``pod`` is the pod template as a Pod without name or namespace; its ``raw`` is the
    template as written (``_scheduling_document``), which the scheduler's plugins read.
    ``claim_templates`` are the manifest's ResourceClaimTemplates the pod uses, without
    namespace (the run puts them in its own); ``uses_kind_template`` says whether the
    pod also uses the template generated from the kind's ``devices``.
    ``device_classes`` are the manifest's DeviceClasses. ``workload`` names the carrier
    for messages (``FILE:DOC Job ml/trainer``).
    """

    source: str
    workload: str
    pod: Pod
    claim_templates: tuple[ResourceClaimTemplate, ...] = ()
    device_classes: tuple[DeviceClass, ...] = ()
    uses_kind_template: bool = False


def _as_map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _namespace(data: Mapping[str, Any]) -> str | None:
    ns = _as_map(data.get("metadata")).get("namespace")
    return ns if isinstance(ns, str) and ns else None


def _first_problem(docs: Sequence[Document]) -> str | None:
    problems = validate_documents(docs)
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{problems[0]}{more}"


def _decode(doc: Document, data: Mapping[str, Any]) -> Any:
    try:
        return decode(data)
    except DecodeError as exc:
        raise TemplateError(f"{doc.describe()}: {exc}") from None


def _scheduling_document(pod_data: Mapping[str, Any]) -> dict[str, Any]:
    """The template's pod as written, for every copy to carry as its ``raw``: the
    scheduler's InterPodAffinity, PodTopologySpread, NodePorts and ImageLocality read
    affinity terms, spread constraints, host ports and images from the document, not
    the typed fields, so without it a copy would schedule as if the manifest had none
    of them. Name and namespace are each copy's own typed fields. Volumes that claim
    storage are left out: a run has no PersistentVolumeClaims (a template brings only
    ResourceClaimTemplates and DeviceClasses), and storage is not what it compares."""
    document = copy.deepcopy(dict(pod_data))
    spec = document.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("volumes"), list):
        spec["volumes"] = [v for v in spec["volumes"] if not (
            isinstance(v, Mapping) and (v.get("persistentVolumeClaim") or v.get("ephemeral")))]
    return document


def read_kind_template(path: str, kind_name: str, kind_devices: bool) -> KindTemplate:
    """Read and check the manifest at ``path`` for job kind ``kind_name``.

    ``kind_devices``: the kind also sets ``devices`` (its generated claim template,
    named ``kind_name``, may be referenced). Raises LoadError for unreadable files
    and TemplateError for manifests that cannot serve as a template.
    """
    read = api_io.read_documents([path])
    docs = [d for d in read if isinstance(d.data, dict) and d.data.get("kind") in _USED_KINDS]
    carriers = [d for d in docs if d.data.get("kind") in ("Pod", *POD_CARRIERS)]
    if not carriers:
        raise TemplateError(
            f"{path}: no pod template: expected a Pod or a workload with one "
            f"({', '.join(POD_CARRIERS)})")
    if len(carriers) > 1:
        names = ", ".join(c.describe() for c in carriers[:3])
        raise TemplateError(f"{path}: {len(carriers)} pod templates ({names}"
                            f"{', ...' if len(carriers) > 3 else ''}): "
                            "a job kind's template must hold exactly one")
    problem = _first_problem(docs)
    if problem is not None:
        raise TemplateError(problem)
    warn_unused_kinds(read, f"dralab simulate (the template of job kind {kind_name})",
                      lambda key: key[1] in _USED_KINDS)
    carrier = carriers[0]
    workload = carrier.describe()
    template = pod_template_data(carrier.data)
    if template is None:
        raise TemplateError(f"{workload}: has no pod template (spec.template)")
    pod_ns = _namespace(carrier.data)
    templates: dict[str, tuple[Document, ResourceClaimTemplate]] = {}
    elsewhere: dict[str, str] = {}  # templates of other namespaces, which the pod cannot use
    classes: dict[str, DeviceClass] = {}
    for doc in docs:
        kind = doc.data.get("kind")
        if kind == "ResourceClaimTemplate":
            ns = _namespace(doc.data)
            # Unset namespaces are filled in by whoever applies the file (-n NS).
            if ns is not None and pod_ns is not None and ns != pod_ns:
                elsewhere.setdefault(str(_as_map(doc.data.get("metadata")).get("name")), ns)
                continue
            rct = _decode(doc, doc.data)
            if rct.name in templates:
                raise TemplateError(f"{doc.describe()}: ResourceClaimTemplate {rct.name} "
                                    f"already in {templates[rct.name][0].where}")
            templates[rct.name] = (doc, rct)
        elif kind == "DeviceClass":
            cls = _decode(doc, doc.data)
            classes[cls.name] = cls
    meta = _as_map(template.get("metadata"))
    pod_data = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {k: meta[k] for k in ("labels", "annotations") if k in meta},
                "spec": template.get("spec") or {}}
    pod = _decode(carrier, pod_data)
    assert isinstance(pod, Pod)
    pod = msgspec.structs.replace(pod, raw=_scheduling_document(pod_data))
    used: list[ResourceClaimTemplate] = []
    uses_kind = False
    base = template_path(str(carrier.data.get("kind")))
    path_of = f"{base}.spec" if base else "spec"  # a Pod is its own template
    for i, ref in enumerate(pod.spec.resource_claims):
        field = f"{path_of}.resourceClaims[{i}]"
        if ref.resource_claim_name:
            raise TemplateError(
                f"{workload}: {field}.resourceClaimName: pods of a job kind cannot share "
                f"the claim {ref.resource_claim_name}: use resourceClaimTemplateName")
        name = ref.resource_claim_template_name or ""
        if name in templates:
            rct = templates[name][1]
            if rct not in used:
                used.append(rct)
        elif kind_devices and name == kind_name:
            uses_kind = True
        elif name in elsewhere:
            raise TemplateError(
                f"{workload}: {field}.resourceClaimTemplateName: ResourceClaimTemplate "
                f"{name} is in namespace {elsewhere[name]}, the pod in {pod_ns}")
        else:
            raise TemplateError(
                f"{workload}: {field}.resourceClaimTemplateName: ResourceClaimTemplate "
                f"{name} is not in {path}" + (f" (nor the job kind's own {kind_name})"
                                              if kind_devices else ""))
    if kind_devices and not uses_kind:
        raise TemplateError(
            f"{workload}: the pod template uses no ResourceClaimTemplate {kind_name}, so the "
            "job kind's devices would be ignored: drop devices or claim them")
    stripped = tuple(msgspec.structs.replace(
        t, raw=None, metadata=msgspec.structs.replace(t.metadata, namespace=None))
        for t in used)
    return KindTemplate(source=path, workload=workload, pod=pod, claim_templates=stripped,
                        device_classes=tuple(msgspec.structs.replace(c, raw=None)
                                             for c in classes.values()),
                        uses_kind_template=uses_kind)


def resolve_path(template: str, base_dir: str, allow_outside: bool = True) -> str:
    """``template`` relative to the scenario file's directory (absolute paths unchanged).

    Unless ``allow_outside``, the file or directory must lie inside ``base_dir`` once
    ``..`` and symbolic links are resolved (TemplateError otherwise): a scenario
    found in a repository must not make dralab read files elsewhere on the machine.
    """
    path = Path(template)
    joined = path if path.is_absolute() else Path(base_dir) / path
    if not allow_outside:
        root = Path(base_dir).resolve()
        if not joined.resolve().is_relative_to(root):
            raise TemplateError(f"{template!r} is outside the scenario's directory {root}; "
                                "pass --allow-outside-files to read it")
    return str(joined)
