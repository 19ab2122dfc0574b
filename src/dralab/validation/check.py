"""Validation of whole inputs: documents in, problems out (one per field error).

Joins decoding (types) and API-server validation (rules) so that callers get a
single list of problems, each naming file, document, object and field path.
Problems of a whole document (no apiVersion, a version Kubernetes 1.37 does not
serve) are one line each, in kubectl's words. Documents of kinds dralab does
not model are not problems; ``not_checked`` lists them so that callers can say
so instead of calling them valid.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dralab.api.base import KubeObject
from dralab.api.codec import HUBS, DecodeError, decode, encode, resolve_kind
from dralab.api.computedomain import (
    compute_domain_problems,
    decode_compute_domain,
    is_compute_domain_document,
)
from dralab.api.errors import ErrorType, FieldError, one_line
from dralab.api.features import FeatureGates
from dralab.api.io import Document
from dralab.api.versions import Served, missing_api_version
from dralab.validation._across import validate_across
from dralab.validation._dispatch import SUPPORTED_KINDS, validate_object
from dralab.validation._strict import strict_decoding_message, unknown_fields

__all__ = ["Problem", "not_checked", "not_checked_reason", "validate_documents", "validate_objects"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one object: ``FILE[:DOC] Kind namespace/name: path: message``.

    ``message``, when set, is the whole text for a problem of the document as
    such (``has no apiVersion``, ``no matches for kind ...``); ``error`` still
    carries it as a field error for programs.
    """

    where: str
    error: FieldError
    message: str = ""

    def __str__(self) -> str:
        # One problem, one line: a kind, a name or a map key in the path may hold a line
        # break (YAML allows it), which would otherwise split the report.
        text = f"{self.where}: {self.message or self.error}"
        return one_line(text.replace("\r", "\\r").replace("\n", "\\n"))


def _document_problem(data: dict[str, object]) -> tuple[FieldError, str] | None:
    """What makes the document as a whole unreadable, if anything."""
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(api_version, str) or not api_version:
        return (FieldError(path="apiVersion", type=ErrorType.REQUIRED),
                missing_api_version(kind, HUBS))
    if not isinstance(kind, str) or not kind:
        return FieldError(path="kind", type=ErrorType.REQUIRED), "has no kind"
    resolution = resolve_kind(api_version, kind)
    if resolution.served is Served.NOT_SERVED:
        return (FieldError(path="apiVersion", type=ErrorType.NOT_SUPPORTED, value=api_version,
                           detail=resolution.message), resolution.message)
    return None


def not_checked(docs: Iterable[Document]) -> list[Document]:
    """The documents whose kind dralab does not model (passed through, never validated), or
    models without the API server's rules (a Service: dralab reads only its selector)."""
    out: list[Document] = []
    for doc in docs:
        data = doc.data
        if not isinstance(data, dict) or _document_problem(data) is not None \
                or is_compute_domain_document(data):
            continue
        resolution = resolve_kind(data["apiVersion"], data["kind"])
        if resolution.served is Served.UNMODELLED or \
                (resolution.hub, data["kind"]) not in SUPPORTED_KINDS:
            out.append(doc)
    return out


# Kinds of other projects dralab reads without their validation rules (Karpenter's
# NodePool: the Karpenter model's disruption, limits and template; dralab autoscale
# checks the fields it reads).
_READ_FOREIGN = frozenset({("karpenter.sh/v1", "NodePool")})


def not_checked_reason(doc: Document) -> str:
    """Why ``not_checked`` lists ``doc``: a kind dralab does not model at all, or one it
    reads (a Service's selector, the storage kinds the volume plugins read) without the
    API server's validation rules."""
    data = doc.data
    if isinstance(data, dict) and (data.get("apiVersion"), data.get("kind")) in _READ_FOREIGN:
        return "kind read by dralab, not validated"
    if isinstance(data, dict) and isinstance(data.get("apiVersion"), str) and \
            isinstance(data.get("kind"), str) and \
            resolve_kind(data["apiVersion"], data["kind"]).served is not Served.UNMODELLED:
        return "kind read by dralab, not validated"
    return "kind not modelled by dralab"


def _decode_error(err: DecodeError) -> FieldError:
    return FieldError(path=err.path or "<document>", type=ErrorType.TYPE_INVALID,
                      detail=err.detail)


def _strict_problems(where: str, data: dict[str, object],
                     errors: list[FieldError]) -> list[Problem]:
    """The strict-decoding problem of a document with unknown fields, if it has any.

    A field dralab already names as Forbidden (a removed field, the other version's layout)
    keeps that error instead of the bare ``unknown field``; if only such fields are unknown,
    validation goes on as usual.
    """
    unknown = unknown_fields(data)
    if not unknown:
        return []
    named = {e.path: e for e in errors if e.type is ErrorType.FORBIDDEN}
    bare = [(strict, path) for strict, path in unknown if path not in named]
    if not bare:
        return []
    message = strict_decoding_message(str(data["kind"]), str(data["apiVersion"]),
                                      [strict for strict, _ in bare])
    first = FieldError(path=bare[0][1], type=ErrorType.FORBIDDEN, detail="unknown field")
    return [Problem(where, first, message),
            *(Problem(where, named[path]) for _, path in unknown if path in named)]


def _compute_domain_errors(data: dict[str, object]) -> list[FieldError]:
    try:
        obj = decode_compute_domain(data)
    except DecodeError as exc:
        return [_decode_error(exc)]
    return compute_domain_problems(obj)


def validate_documents(docs: Iterable[Document], features: FeatureGates | None = None, *,
                       stored: bool = False) -> list[Problem]:
    """All problems of all documents, in input order. Pure; never raises for bad content.

    ``stored=True`` reads the documents as a cluster's stored state rather than as
    objects about to be created: a field of a gate that is off now was accepted
    when it was written, so it is not a problem here (the allocator and
    scheduler decide what it means under ``features``), and fields dralab does not
    know are not checked (a newer server wrote them). Otherwise a resource.k8s.io/v1
    object with unknown fields gets the API server's strict-decoding answer alone.
    """
    docs = list(docs)
    per_object = FeatureGates.all_enabled() if stored else features
    across: dict[int, list[FieldError]] = {}
    for n, error in validate_across([d.data for d in docs], features):
        across.setdefault(n, []).append(error)
    problems: list[Problem] = []
    for n, doc in enumerate(docs):
        where = doc.describe()
        if not isinstance(doc.data, dict):
            problems.append(Problem(doc.where, FieldError(
                path="<document>", type=ErrorType.TYPE_INVALID,
                detail=f"a document must be a mapping, not {type(doc.data).__name__}")))
            continue
        if is_compute_domain_document(doc.data):
            # NVIDIA's CRD kinds: checked against their CRD schema, not Kubernetes' rules.
            problems.extend(Problem(where, e) for e in _compute_domain_errors(doc.data))
            continue
        whole = _document_problem(doc.data)
        if whole is not None:
            problems.append(Problem(where, whole[0], whole[1]))
            continue
        errors = validate_object(doc.data, features=per_object)
        # Stored state may come from a newer server, whose fields are not unknown there.
        strict = [] if stored else _strict_problems(where, doc.data, errors)
        if strict:
            # The API server rejects the request at decoding: no validation runs.
            problems.extend(strict)
            continue
        if not errors:
            # Rules passed; the types must decode too (the validator may be laxer on types).
            try:
                decode(doc.data)
            except DecodeError as exc:
                errors = [_decode_error(exc)]
        problems.extend(Problem(where, e) for e in errors + across.get(n, []))
    return problems


def validate_objects(objects: Iterable[KubeObject],
                     features: FeatureGates | None = None) -> list[Problem]:
    """Problems of objects built or changed in code (validated in their encoded form)."""
    docs = [Document("<object>", n, encode(o)) for n, o in enumerate(objects, start=1)]
    return validate_documents(docs, features)
