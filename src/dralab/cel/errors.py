"""Errors of the CEL layer and the one-line messages they carry.

cel-expr-python reports problems as absl status strings
(``INVALID_ARGUMENT: ERROR: <input>:1:6: ...`` plus caret art for compile
errors, ``NOT_FOUND: Key not found in map : "model"`` for runtime errors).
The helpers here turn them into the single-line, upstream-like wording that
the rest of dralab prints.
"""

from __future__ import annotations

import re
from typing import Final

from dralab.api.errors import DralabError

__all__ = [
    "CelCompileError",
    "CelError",
    "CelRuntimeError",
    "compile_message",
    "display_message",
    "runtime_message",
]


class CelError(DralabError):
    """Base of every CEL problem; the message is a single line."""


class CelCompileError(CelError):
    """The expression does not parse, does not type-check or does not yield a bool.

    ``str(err)`` is one line; ``display`` is the text the API server puts after
    ``compilation failed: `` (cel-go's ``ERROR: <input>:L:C: ...`` with the source line
    and caret marker under each diagnostic), the message itself when the problem is not a
    compiler diagnostic.
    """

    def __init__(self, message: str, display: str | None = None) -> None:
        super().__init__(message)
        self.display = message if display is None else display


class CelRuntimeError(CelError):
    """Evaluating a compiled selector against one device failed."""


_STATUS_PREFIX: Final = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX: Final = re.compile(r"\s*\[[A-Z_]+\]\s*$")
_MISSING_KEY: Final = re.compile(r'^Key not found in map ?: ?"?(.*?)"?$')

# Upstream (k8s.io/dynamic-resource-allocation/cel.EnhanceRuntimeError) appends this hint.
MISSING_KEY_HINT: Final = (
    "Consider using CEL optional chaining (?), has() macro, or orValue() for optional fields"
)


def compile_message(raw: str) -> str:
    """Condense a compiler status message to its diagnostics, joined on one line.

    Each diagnostic keeps its ``<input>:line:col:`` location; the echoed source
    line and caret marker are dropped.
    """
    text = _STATUS_PREFIX.sub("", raw.strip(), count=1)
    diagnostics = [
        _upstream_wording(_STATUS_SUFFIX.sub("", line[len("ERROR: "):]).strip())
        for line in text.splitlines()
        if line.startswith("ERROR: ")
    ]
    if not diagnostics:
        first = text.splitlines()[0] if text else "unknown compilation error"
        return _STATUS_SUFFIX.sub("", first).strip()
    return "; ".join(diagnostics)


# cel-cpp resolves `device.x` as one dotted name and reports it undeclared; cel-go checks
# the field of the declared `device` object and says so.
_UNDECLARED_DEVICE_FIELD: Final = re.compile(
    r"^(<input>:\d+:\d+: )?undeclared reference to 'device\.([A-Za-z_][A-Za-z0-9_]*)' "
    r"\(in container ''\)$")


def _upstream_wording(diagnostic: str) -> str:
    match = _UNDECLARED_DEVICE_FIELD.match(diagnostic)
    if match:
        return f"{match[1] or ''}undefined field '{match[2]}'"
    return diagnostic


_DIAGNOSTIC: Final = re.compile(r"^ERROR: (<input>):(\d+):(\d+): (.*)$")
# cel-go's limits on what it renders (common/error.go, common/errors.go).
_MAX_SNIPPET_BYTES: Final = 16384
_MAX_ERRORS: Final = 100


def _caret_lines(source_line: str, column: int) -> str:
    """The echoed source line and its marker, as cel-go draws them under a diagnostic.

    ``column`` is 0-based in characters. Tabs show as spaces; a character that takes
    more than one byte in UTF-8 is passed over with a full-width dot (and pointed at with
    a full-width caret), so the marker lines up in a terminal with wide glyphs.
    """
    snippet = source_line.replace("\t", " ")
    marker = "".join("\uff0e" if len(c.encode()) > 1 else "." for c in snippet[:column])
    at = snippet[column:column + 1]
    marker += "\uff3e" if at and len(at.encode()) > 1 else "^"
    return f"\n | {snippet}\n | {marker}"


def display_message(raw: str, expression: str) -> str:
    """The compiler's diagnostics in cel-go's display form, as the API server prints them.

    Each diagnostic is ``ERROR: <input>:line:col: message`` followed by the source line
    and a caret marker; they are ordered by position and joined by line breaks; past 100,
    ``N more errors were truncated``. Falls back to ``compile_message`` when the raw
    text holds no diagnostic.
    """
    text = raw.strip()
    if not text.startswith("ERROR: "):  # the absl status code in front of cel-cpp's text
        text = _STATUS_PREFIX.sub("", text, count=1)
    found: list[tuple[int, int, str]] = []
    for line in text.splitlines():
        match = _DIAGNOSTIC.match(_STATUS_SUFFIX.sub("", line))
        if match:
            found.append((int(match[2]), int(match[3]), _upstream_wording(match[4].rstrip())))
    if not found:
        return compile_message(raw)
    found.sort(key=lambda item: (item[0], item[1]))
    lines = expression.split("\n")
    out: list[str] = []
    for line_no, column, message in found[:_MAX_ERRORS]:
        shown = f"ERROR: <input>:{line_no}:{column}: {message}"
        if 1 <= line_no <= len(lines) and len(lines[line_no - 1].encode()) <= _MAX_SNIPPET_BYTES:
            shown += _caret_lines(lines[line_no - 1], column - 1)
        out.append(shown)
    if len(found) > _MAX_ERRORS:
        out.append(f"{len(found) - _MAX_ERRORS} more errors were truncated")
    return "\n".join(out)


def runtime_message(raw: str) -> str:
    """Turn a runtime error value into upstream wording, on one line."""
    text = _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", raw.strip(), count=1))
    text = " ".join(text.split())
    missing = _MISSING_KEY.match(text)
    if missing:
        return f"no such key: {missing.group(1)}. {MISSING_KEY_HINT}"
    return text
