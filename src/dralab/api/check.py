"""Validation of whole inputs: documents in, problems out (one per field error).

Joins decoding (types) and API-server validation (rules) so that callers get a
single list of problems, each naming file, document, object and field path.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .base import KubeObject
from .codec import DecodeError, decode, encode
from .errors import ErrorType, FieldError
from .features import FeatureGates
from .io import Document
from .validation import validate_object

__all__ = ["Problem", "validate_documents", "validate_objects"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one object: ``FILE[:DOC] Kind namespace/name: path: message``."""

    where: str
    error: FieldError

    def __str__(self) -> str:
        # One problem, one line: a kind, a name or a map key in the path may hold a line
        # break (YAML allows it), which would otherwise split the report.
        return f"{self.where}: {self.error}".replace("\r", "\\r").replace("\n", "\\n")


def _decode_error(err: DecodeError) -> FieldError:
    return FieldError(path=err.path or "<document>", type=ErrorType.TYPE_INVALID,
                      detail=err.detail)


def validate_documents(docs: Iterable[Document],
                       features: FeatureGates | None = None) -> list[Problem]:
    """All problems of all documents, in input order. Pure; never raises for bad content."""
    problems: list[Problem] = []
    for doc in docs:
        where = doc.describe()
        if not isinstance(doc.data, dict):
            problems.append(Problem(doc.where, FieldError(
                path="<document>", type=ErrorType.TYPE_INVALID,
                detail=f"a document must be a mapping, not {type(doc.data).__name__}")))
            continue
        errors = validate_object(doc.data, features=features)
        if not errors:
            # Rules passed; the types must decode too (the validator may be laxer on types).
            try:
                decode(doc.data)
            except DecodeError as exc:
                errors = [_decode_error(exc)]
        problems.extend(Problem(where, e) for e in errors)
    return problems


def validate_objects(objects: Iterable[KubeObject],
                     features: FeatureGates | None = None) -> list[Problem]:
    """Problems of objects built or changed in code (validated in their encoded form)."""
    docs = [Document("<object>", n, encode(o)) for n, o in enumerate(objects, start=1)]
    return validate_documents(docs, features)
