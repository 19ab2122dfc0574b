"""find()/findAll() on RE2: upstream's syntax, leftmost-first matches, linear time.

Kubernetes implements ``find``/``findAll`` with Go's ``regexp`` package, an
RE2 dialect whose matching time is linear in pattern size times text length.
``matches()`` is evaluated natively by cel-cpp with RE2; the two Kubernetes
functions run here on the RE2 library too (the ``google-re2`` bindings), so
no pattern can make a selector backtrack for ever, e.g.
``"aaaa…!".find("(a+)+$")`` returns at once.

Go's dialect and RE2's differ only at the edges: ``\\C`` (any byte) exists
only in RE2 and is refused here as Go refuses it. Parse errors carry Go's
wording (``error parsing regexp: missing closing ): `(```), mapped from RE2's
error codes, since that is what upstream prints after ``Illegal regex:``.

Matching works on the UTF-8 bytes, with byte offsets, like Go; results are
decoded back to text (RE2 in UTF-8 mode never splits a character).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

import re2

__all__ = ["RegexError", "compile_re2", "find", "find_all"]


class RegexError(ValueError):
    """A pattern that Go's regexp (and so upstream) would not accept."""


# RE2's error code texts -> Go's regexp/syntax wording of the same error.
_GO_WORDING: Final = (
    ("missing )", "missing closing )"),
    ("missing ]", "missing closing ]"),
    ("unexpected )", "unexpected )"),
    ("trailing \\", "trailing backslash at end of expression"),
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("invalid repetition size", "invalid repeat count"),
    ("invalid named capture group", "invalid named capture"),
    ("pattern too large - compile failed", "expression too large"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("invalid UTF-8", "invalid UTF-8"),
)


def _go_message(raw: str, pattern: str) -> str:
    for re2_text, go_text in _GO_WORDING:
        if raw.startswith(re2_text):
            arg = raw[len(re2_text):].removeprefix(":").strip()
            if re2_text == "trailing \\":
                arg = ""
            return f"error parsing regexp: {go_text}: `{arg}`"
    return f"error parsing regexp: {raw}: `{pattern}`"


def _byte_escape(pattern: str) -> bool:
    """Whether the pattern uses ``\\C``, which Go rejects (and which could split a character)."""
    i = 0
    while i < len(pattern) - 1:
        if pattern[i] == "\\":
            if pattern[i + 1] == "C":
                return True
            i += 2
        else:
            i += 1
    return False


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # errors come back as exceptions; RE2 must not print them
    return options


_OPTIONS: Final = _options()


@lru_cache(maxsize=1024)
def compile_re2(pattern: str) -> Any:
    """Compile a pattern with RE2; raise RegexError (with Go's wording) if it is invalid."""
    if _byte_escape(pattern):
        raise RegexError("error parsing regexp: invalid escape sequence: `\\C`")
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as err:
        detail = err.args[0] if err.args else ""
        text = detail.decode(errors="replace") if isinstance(detail, bytes) else str(detail)
        raise RegexError(_go_message(text, pattern)) from None
    except UnicodeEncodeError:
        raise RegexError("error parsing regexp: invalid UTF-8: ``") from None


def _utf8(text: str) -> bytes:
    try:
        return text.encode()
    except UnicodeEncodeError:
        raise ValueError("string is not valid UTF-8") from None


def find(text: str, pattern: str) -> str:
    """The leftmost-first match, or "" (Go's ``Regexp.FindString``)."""
    data = _utf8(text)
    match = compile_re2(pattern).search(data)
    if match is None:
        return ""
    start, stop = match.span()
    return data[start:stop].decode()


def _char_width(data: bytes, pos: int) -> int:
    """Length of the UTF-8 sequence starting at ``pos`` (valid UTF-8 assumed)."""
    lead = data[pos]
    if lead < 0x80:
        return 1
    if lead >= 0xF0:
        return 4
    return 3 if lead >= 0xE0 else 2


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    """Successive non-overlapping matches (Go's ``Regexp.FindAllString``).

    Like Go, an empty match right after the previous match is skipped, and a
    negative limit means no limit. Each search starts where the last one
    stopped but sees the text before it, so ``^`` and ``\\b`` keep their meaning.
    """
    compiled = compile_re2(pattern)
    data = _utf8(text)
    end = len(data)
    results: list[str] = []
    pos = 0
    previous_end = -1
    while (limit < 0 or len(results) < limit) and pos <= end:
        match = compiled.search(data, pos)
        if match is None:
            break
        start, stop = match.span()
        accept = True
        if stop == pos:
            # An empty match at the current position (Go's allMatches rule).
            if start == previous_end:
                accept = False
            pos += _char_width(data, pos) if pos < end else 1
        else:
            pos = stop
        previous_end = stop
        if accept:
            results.append(data[start:stop].decode())
    return results
