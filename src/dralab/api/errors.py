"""Errors of the api layer.

Exception tree::

    DralabError                 base of every error dralab raises on purpose
    ├── InputError              bad input: file, document, object or field is wrong
    │   ├── LoadError           cannot read or decode a document
    │   └── ValidationFailed    objects decoded but the API server would reject them
    └── (later layers add their own kinds, e.g. allocation errors)

Validation problems themselves are values (FieldError), not exceptions: a
validation run collects all of them, as the API server does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = [
    "DralabError",
    "ErrorType",
    "FieldError",
    "InputError",
    "LoadError",
    "ValidationFailed",
    "format_value",
]


class DralabError(Exception):
    """Base of every error dralab raises on purpose."""


class InputError(DralabError):
    """Bad input; the message is one line naming where the problem is."""


class LoadError(InputError):
    """A file or document could not be read or decoded."""


class ErrorType(Enum):
    """The kinds of field error of k8s.io/apimachinery's field package, with their wording."""

    REQUIRED = "Required value"
    INVALID = "Invalid value"
    NOT_SUPPORTED = "Unsupported value"
    DUPLICATE = "Duplicate value"
    TOO_MANY = "Too many"
    TOO_LONG = "Too long"
    FORBIDDEN = "Forbidden"
    TYPE_INVALID = "Invalid value "  # trailing space keeps the enum value unique; printed stripped
    NOT_FOUND = "Not found"
    INTERNAL = "Internal error"

    @property
    def text(self) -> str:
        return self.value.strip()


_NO_VALUE = object()
# Error kinds whose message shows the offending value, as apimachinery's field errors do.
_SHOWS_VALUE = frozenset({ErrorType.INVALID, ErrorType.TYPE_INVALID, ErrorType.NOT_SUPPORTED,
                          ErrorType.DUPLICATE, ErrorType.NOT_FOUND, ErrorType.TOO_MANY})


def format_value(value: Any) -> str:
    """Render a bad value the way Go's ``%#v``-ish field errors do: strings quoted."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except TypeError:  # mixed key types cannot be sorted
        return json.dumps(value, default=str)


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldError:
    """One validation problem at one field path, as the API server reports it.

    ``path`` is in the API server's form, e.g. ``spec.devices.requests[0].exactly.count``
    (map keys in brackets, unquoted).
    """

    path: str
    type: ErrorType
    detail: str = ""
    value: Any = _NO_VALUE

    @property
    def has_value(self) -> bool:
        return self.value is not _NO_VALUE

    def body(self) -> str:
        """The message after the path, e.g. ``Invalid value: 0: must be greater than zero``."""
        parts = [self.type.text]
        if self.has_value and self.type in _SHOWS_VALUE:
            parts.append(format_value(self.value))
        if self.detail:
            parts.append(self.detail)
        return ": ".join(parts)

    def __str__(self) -> str:
        return f"{self.path}: {self.body()}"


class ValidationFailed(InputError):
    """Raised by APIs that refuse invalid objects; carries every problem found."""

    def __init__(self, message: str, errors: list[Any]) -> None:
        super().__init__(message)
        self.errors = errors
