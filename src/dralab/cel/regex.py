"""RE2-flavoured regular expressions on top of Python's ``re`` for find()/findAll().

Kubernetes implements ``find``/``findAll`` with Go's ``regexp`` (RE2 syntax,
leftmost-first matching). ``matches()`` is evaluated natively by cel-cpp with
real RE2; only the two Kubernetes functions run here. Python's ``re`` matches
leftmost-first too, so translating the syntax is enough for the patterns
selectors use. Constructs RE2 rejects (look-around, back-references) are
rejected here as well rather than silently accepted; RE2-only syntax that has a
direct Python spelling (``\\z``, ``(?<name>``, POSIX classes) is rewritten.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

__all__ = ["RegexError", "compile_re2", "find", "find_all"]


class RegexError(ValueError):
    """A pattern that RE2 would not accept (or that we cannot translate)."""


_POSIX_CLASSES: Final = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7F", "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F", "digit": "0-9", "graph": "!-~", "lower": "a-z",
    "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z",
    "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}
_POSIX_RE: Final = re.compile(r"\[:(\^?)([a-z]+):\]")
_REJECTED: Final = (
    ("(?=", "look-ahead"), ("(?!", "negative look-ahead"), ("(?<=", "look-behind"),
    ("(?<!", "negative look-behind"), ("(?P=", "back-reference"), ("(?>", "atomic group"),
)


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt.isdigit() and nxt != "0" and not in_class:
                raise RegexError(f"invalid escape sequence: \\{nxt}")
            if nxt in "pP":
                raise RegexError(f"unsupported Unicode class: \\{nxt}")
            if nxt == "Z":
                raise RegexError("invalid escape sequence: \\Z")
            out.append("\\Z" if nxt == "z" and not in_class else pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            posix = _POSIX_RE.match(pattern, i)
            if posix:
                negated, name = posix.groups()
                if name not in _POSIX_CLASSES or negated:
                    raise RegexError(f"invalid character class range: {posix.group(0)}")
                out.append(_POSIX_CLASSES[name])
                i = posix.end()
                continue
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            # A leading ']' (or '^]') is a literal in both dialects.
            for lead in ("^]", "]", "^"):
                if pattern.startswith(lead, i):
                    out.append(lead)
                    i += len(lead)
                    break
            continue
        elif ch == "(":
            for prefix, what in _REJECTED:
                if pattern.startswith(prefix, i):
                    raise RegexError(f"invalid or unsupported Perl syntax: {what}")
            if pattern.startswith("(?<", i):
                out.append("(?P<")
                i += 3
                continue
        out.append(ch)
        i += 1
    return "".join(out)


@lru_cache(maxsize=1024)
def compile_re2(pattern: str) -> re.Pattern[str]:
    """Compile an RE2 pattern; raise RegexError if it is not acceptable."""
    try:
        # RE2's \\d, \\w, \\s and \\b are ASCII-only.
        return re.compile(_translate(pattern), re.ASCII)
    except re.error as err:
        raise RegexError(str(err)) from err


def find(text: str, pattern: str) -> str:
    """The leftmost match, or "" (Go's ``Regexp.FindString``)."""
    match = compile_re2(pattern).search(text)
    return match.group(0) if match else ""


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    """Successive non-overlapping matches (Go's ``Regexp.FindAllString``).

    Like Go, an empty match right after the previous match is skipped, and a
    negative limit means no limit.
    """
    compiled = compile_re2(pattern)
    results: list[str] = []
    pos = 0
    previous_end = -1
    while (limit < 0 or len(results) < limit) and pos <= len(text):
        match = compiled.search(text, pos)
        if match is None:
            break
        start, end = match.span()
        accept = True
        if end == pos:
            # An empty match at the current position (same rule as Go's allMatches).
            if start == previous_end:
                accept = False
            pos += 1
        else:
            pos = end
        previous_end = end
        if accept:
            results.append(match.group(0))
    return results
