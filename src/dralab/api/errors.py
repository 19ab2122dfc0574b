"""Errors of the api layer.

Exception tree::

    DralabError                 base of every error dralab raises on purpose
    ├── InputError              bad input: file, document, object or field is wrong
    │   ├── LoadError           cannot read or decode a document
    │   ├── ObjectError         one decoded object is wrong (the CLI adds its file)
    │   └── ValidationFailed    objects decoded but the API server would reject them
    └── (later layers add their own kinds, e.g. allocation errors)

Validation problems themselves are values (FieldError), not exceptions: a
validation run collects all of them, as the API server does.

Warnings (``DralabWarning``, a UserWarning) report what the input gets away
with, e.g. a duplicate mapping key; the CLI prints each as one line.

Every message that may echo input goes through ``one_line`` (the CLI does it
for whole lines, FieldError for paths, ``format_value`` for values): values are
cut at MAX_VALUE_CHARS and lines at MAX_LINE_CHARS, the per-warning and total
limits (256 and 4,096 runes) the API server applies to the warnings it sends
kubectl; control and format characters (a terminal escape, a right-to-left
override) are escaped as Go's ``%q`` does, so a line shows what it says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = [
    "MAX_LINE_CHARS",
    "MAX_VALUE_CHARS",
    "DralabError",
    "DralabWarning",
    "DuplicateFieldWarning",
    "ErrorType",
    "FieldError",
    "InputError",
    "LoadError",
    "ObjectError",
    "ValidationFailed",
    "format_value",
    "go_quote",
    "one_line",
]

MAX_VALUE_CHARS = 256
MAX_LINE_CHARS = 4096


class DralabError(Exception):
    """Base of every error dralab raises on purpose."""


class InputError(DralabError):
    """Bad input; the message is one line naming where the problem is."""


class LoadError(InputError):
    """A file or document could not be read or decoded."""


class ObjectError(InputError):
    """Bad input in one object, found after its document was decoded, where the layer
    that finds it no longer knows the file: the message is ``Kind namespace/name:
    DETAIL``, and the CLI, which holds the documents, puts ``FILE[:DOC]`` in front."""

    def __init__(self, kind: str, namespace: str, name: str, detail: str) -> None:
        self.kind, self.namespace, self.name, self.detail = kind, namespace, name, detail
        super().__init__(f"{kind} {namespace + '/' if namespace else ''}{name}: {detail}")


class DralabWarning(UserWarning):
    """Base of dralab's warnings: input that is accepted but probably not meant."""


class DuplicateFieldWarning(DralabWarning):
    """A mapping key given twice in one document; the last value is used."""


def _escape(char: str) -> str:
    code = ord(char)
    if char == "\t":
        return "\\t"
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def one_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """``text`` as one printable line of at most ``limit`` characters (plus a marker).

    Line breaks become spaces; other characters that are not printable (control
    and format characters, e.g. ESC or U+202E) are escaped; text beyond
    ``limit`` is cut and the cut is said.
    """
    cut = len(text) - limit
    if cut > 0:
        text = text[:limit]
    if not text.isprintable():
        text = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
        if not text.isprintable():
            text = "".join(c if c.isprintable() else _escape(c) for c in text)
    return f"{text}... ({cut} more characters)" if cut > 0 else text


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


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t", "\v": "\\v", '"': '\\"', "\\": "\\\\"}


def go_quote(text: str) -> str:
    """``text`` as Go's ``%q`` (strconv.Quote) prints it, which field errors use for strings.

    Printable characters stay as they are, non-ASCII included (``"gpü"``, not JSON's
    ``"gp\\u00fc"``); quotes and backslashes are escaped; other characters become
    ``\\n``-style escapes, ``\\xHH`` below U+0020 and for DEL, else ``\\uHHHH`` /
    ``\\UHHHHHHHH``. A lone surrogate reads U+FFFD, as Go's JSON decoding turns it into one.
    """
    out = ['"']
    for char in text:
        code = ord(char)
        if 0xD800 <= code <= 0xDFFF:
            char, code = "\ufffd", 0xFFFD
        if char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif char.isprintable():  # Python's printable set is Go's unicode.IsPrint
            out.append(char)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def format_value(value: Any) -> str:
    """Render a bad value the way apimachinery's field errors do: strings as Go's ``%q``.

    At most MAX_VALUE_CHARS characters of the value are shown (escapes keep
    control characters visible), then how much was left out.
    """
    if isinstance(value, str):
        if len(value) <= MAX_VALUE_CHARS:
            return go_quote(value)
        return (f"{go_quote(value[:MAX_VALUE_CHARS])}... "
                f"({len(value) - MAX_VALUE_CHARS} more characters)")
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return one_line(str(value), MAX_VALUE_CHARS)
    try:
        text = json.dumps(value, sort_keys=True, default=str)
    except TypeError:  # mixed key types cannot be sorted
        text = json.dumps(value, default=str)
    return one_line(text, MAX_VALUE_CHARS)


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
        return one_line(f"{self.path}: {self.body()}")


class ValidationFailed(InputError):
    """Raised by APIs that refuse invalid objects; carries every problem found."""

    def __init__(self, message: str, errors: list[Any]) -> None:
        super().__init__(message)
        self.errors = errors
