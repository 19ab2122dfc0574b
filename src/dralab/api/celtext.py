"""CEL source text built from values: the one place that quotes a string for CEL.

Selectors we generate (a job kind's ``productName``, a MIG profile, a trace's GPU
models) embed values that come from files. Pasting them between quotes lets a
value end the string and add its own expression (``L4" || "a" == "a``), or
breaks every claim that uses it. ``cel_string`` renders any value as one CEL
string literal (cel-spec "String and Bytes Literals") that evaluates back to
exactly that value.
"""

from __future__ import annotations

__all__ = ["cel_string"]

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def cel_string(value: str) -> str:
    """``value`` as a double-quoted CEL string literal. Pure.

    Backslash, double quote and the common control characters get their short
    escapes; every other character that is not printable (control and format
    characters such as bidirectional overrides, line separators) becomes
    ``\\uXXXX`` or ``\\UXXXXXXXX``; printable text stays as it is. ValueError for
    a lone surrogate, which no CEL string can hold.
    """
    out = ['"']
    for ch in value:
        escaped = _ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
            continue
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            raise ValueError(f"not a Unicode string: lone surrogate U+{code:04X}")
        if ch.isprintable():
            out.append(ch)
        else:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    out.append('"')
    return "".join(out)
