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
    "runtime_message",
]


class CelError(DralabError):
    """Base of every CEL problem; the message is a single line."""


class CelCompileError(CelError):
    """The expression does not parse, does not type-check or does not yield a bool."""


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
        _STATUS_SUFFIX.sub("", line[len("ERROR: "):]).strip()
        for line in text.splitlines()
        if line.startswith("ERROR: ")
    ]
    if not diagnostics:
        first = text.splitlines()[0] if text else "unknown compilation error"
        return _STATUS_SUFFIX.sub("", first).strip()
    return "; ".join(diagnostics)


def runtime_message(raw: str) -> str:
    """Turn a runtime error value into upstream wording, on one line."""
    text = _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", raw.strip(), count=1))
    text = " ".join(text.split())
    missing = _MISSING_KEY.match(text)
    if missing:
        return f"no such key: {missing.group(1)}. {MISSING_KEY_HINT}"
    return text
