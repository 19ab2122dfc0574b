"""Reading a snapshot that mixes Kubernetes and Kueue objects (``dralab admit``, and the
simulator's ``spec.queueing``): Kueue documents are decoded by the queueing layer, the
rest as every other verb decodes them; problems come back as one line each."""

from __future__ import annotations

from dralab.api.base import KubeObject
from dralab.api.codec import DecodeError
from dralab.api.errors import LoadError
from dralab.api.io import Document, decode_document
from dralab.api.resource import ResourceClaimTemplate
from dralab.controllers.computedomain import compute_domains, workload_claim_template
from dralab.validation.check import validate_documents

from .checks import kueue_problems
from .objects import KueueConfiguration, decode_kueue, is_kueue_document
from .reader import generated_name

__all__ = ["load_snapshot"]


def _decode(doc: Document) -> KubeObject:
    if isinstance(doc.data, dict) and is_kueue_document(doc.data):
        try:
            return decode_kueue(doc.data)
        except DecodeError as exc:
            raise LoadError(f"{doc.describe()}: {exc}") from None
    return decode_document(doc)


def _with_generated_names(docs: list[Document]) -> list[Document]:
    """Documents written for ``kubectl create`` (``generateName``, no name) as the API
    server would store them: named, deterministically."""
    out = []
    for order, doc in enumerate(docs):
        meta = doc.data.get("metadata") if isinstance(doc.data, dict) else None
        if isinstance(meta, dict) and not meta.get("name") \
                and isinstance(meta.get("generateName"), str) and meta["generateName"]:
            ns = meta.get("namespace")
            name = generated_name(ns if isinstance(ns, str) else "", meta["generateName"], order)
            data = dict(doc.data) | {"metadata": dict(meta) | {"name": name}}
            doc = Document(doc.source, doc.index, data)
        out.append(doc)
    return out


def load_snapshot(docs: list[Document]) -> tuple[list[KubeObject], list[str]]:
    """The objects of a snapshot, and one line per problem found in them."""
    docs = _with_generated_names(docs)
    others = [d for d in docs if not (isinstance(d.data, dict) and is_kueue_document(d.data))]
    problems = [str(p) for p in validate_documents(others, stored=True)]
    objects = []
    config: Document | None = None
    for doc in docs:
        obj = _decode(doc)
        problems += [f"{doc.describe()}: {path}: {message}"
                     for path, message in kueue_problems(obj)]
        if isinstance(obj, KueueConfiguration):
            # Kueue reads one configuration file; taking the first of two would ignore
            # the other's gates and fair sharing without a word.
            if config is not None:
                problems.append(f"{doc.describe()}: a second Kueue Configuration (the first "
                                f"is {config.where}): Kueue reads one")
            config = config or doc
        objects.append(obj)
    return [*objects, *channel_templates(objects)], problems


def channel_templates(objects: list[KubeObject]) -> list[ResourceClaimTemplate]:
    """The workload channel ResourceClaimTemplate of each ComputeDomain that the
    snapshot lacks: NVIDIA's compute-domain controller creates it with the
    ComputeDomain, so Kueue finds it when it reads a pod set that claims from it (as
    ``build_cluster`` adds it for the scheduler)."""
    present = {(o.namespace or "default", o.name) for o in objects
               if isinstance(o, ResourceClaimTemplate)}
    out = []
    for cd in compute_domains(objects):
        template = workload_claim_template(cd)
        if (template.namespace or "default", template.name) not in present:
            present.add((template.namespace or "default", template.name))
            out.append(template)
    return out
