"""find()/findAll() on RE2: Go's syntax and match rules, linear time, Go's error wording."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cputime import cpu_budget
from dralab.cel import CelCompileError, CelRuntimeError, compile_selector
from dralab.cel.regex import RegexError, compile_re2, find, find_all

from .helpers import gpu, run

# Nested quantifiers that take exponential time in a backtracking engine.
CATASTROPHIC = ["(a+)+$", "(a|a)+$", "(a*)*b", "((a+)+)+c", "(a|aa)+$"]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_catastrophic_patterns_run_in_linear_time(pattern: str) -> None:
    text = "a" * 40 + "!"
    # CPU seconds: a backtracking engine would need about 2^40 steps, hours of CPU.
    with cpu_budget(2):
        assert run(f'"{text}".find("{pattern}") == ""') is True
        assert run(f'"{text}".findAll("{pattern}") == []') is True
        assert find("a" * 100_000 + "!", pattern) == ""


def test_the_issue_reproducer_evaluates() -> None:
    selector = compile_selector('"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!".find("(a+)+$") == ""')
    with cpu_budget(1):
        assert selector.evaluate(gpu()) is True


GO_SEMANTICS = [
    # Leftmost-first (Perl) alternation, not leftmost-longest (POSIX).
    ("abcd", "a|ab", ["a"]),
    ("abcd", "(?U)b.*", ["b"]),
    # ^ and \b see the text before where the next search starts.
    ("aaa", "^a", ["a"]),
    ("ab ab", "\\bab", ["ab", "ab"]),
    ("xab", "\\bab", []),
    # An empty match right after a match is skipped; empty matches advance by a character.
    ("123 ab", "[0-9]*", ["123", "", "", ""]),
    ("ééa", "", ["", "", "", ""]),
    ("héllo wörld", "\\pL+", ["héllo", "wörld"]),
    ("gpu-0007", "[[:digit:]]+", ["0007"]),
    ("a1b2", "[[:^alpha:]]", ["1", "2"]),
    ("a.b*c", "\\Q.b*\\E", [".b*"]),
    ("model-x", "(?<kind>[a-z]+)-", ["model-"]),
    ("line\nline", "line\\z", ["line"]),
    ("ÀÉ", "(?i)àé", ["ÀÉ"]),
]


@pytest.mark.parametrize(("text", "pattern", "expected"), GO_SEMANTICS)
def test_go_semantics(text: str, pattern: str, expected: list[str]) -> None:
    assert find_all(text, pattern) == expected
    assert find(text, pattern) == (expected[0] if expected else "")


def test_find_all_limit() -> None:
    assert find_all("a1b2c3", "[0-9]", 2) == ["1", "2"]
    assert find_all("a1b2c3", "[0-9]", 0) == []
    assert find_all("a1b2c3", "[0-9]", -5) == ["1", "2", "3"]


BAD_PATTERNS = [
    ("(", "missing closing ): `(`"),
    ("a)", "unexpected ): `a)`"),
    ("[a", "missing closing ]: `[a`"),
    ("a(?=b)", "invalid or unsupported Perl syntax: `(?=`"),
    ("(a)\\1", "invalid escape sequence: `\\1`"),
    ("a**", "invalid nested repetition operator: `**`"),
    ("*a", "missing argument to repetition operator: `*`"),
    ("a{1001}", "invalid repeat count: `{1001}`"),
    ("[z-a]", "invalid character class range: `z-a`"),
    ("\\p{Foo}", "invalid character class range: `\\p{Foo}`"),
    ("\\Z", "invalid escape sequence: `\\Z`"),
    ("\\C", "invalid escape sequence: `\\C`"),
    ("a\\", "trailing backslash at end of expression: ``"),
]


@pytest.mark.parametrize(("pattern", "message"), BAD_PATTERNS)
def test_invalid_patterns_use_gos_wording(pattern: str, message: str) -> None:
    with pytest.raises(RegexError) as caught:
        compile_re2(pattern)
    assert str(caught.value) == f"error parsing regexp: {message}"


def test_escaped_backslash_before_c_is_a_literal() -> None:
    assert find("a\\Cb", "\\\\C") == "\\C"


@pytest.mark.parametrize(("pattern", "message"), BAD_PATTERNS[:4])
def test_invalid_patterns_fail_at_compile_time_or_runtime(pattern: str, message: str) -> None:
    cel_pattern = pattern.replace("\\", "\\\\")
    with pytest.raises(CelCompileError) as compiled:
        compile_selector(f"'ab'.find('{cel_pattern}') == ''")
    assert f"invalid find argument: error parsing regexp: {message}" in str(compiled.value)
    with pytest.raises(CelRuntimeError) as ran:
        run(f"'ab'.findAll('{cel_pattern}' + '') == []")
    assert str(ran.value) == f"Illegal regex: error parsing regexp: {message}"


def test_no_log_lines_for_bad_patterns(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RegexError):
        compile_re2("(unclosed")
    assert capfd.readouterr().err == ""


# --- agreement with Python's re where both dialects mean the same -----------

_ATOMS = st.sampled_from(["a", "b", "1", " ", ".", "[ab]", "[0-9]", "\\d", "\\s", "\\w", "x"])
_QUANTIFIERS = st.sampled_from(["", "", "*", "+", "?", "*?", "{1,2}"])
_PIECES = st.tuples(_ATOMS, _QUANTIFIERS).map("".join)
_BRANCHES = st.lists(_PIECES, min_size=1, max_size=4).map("".join)
SAFE_PATTERNS = st.lists(_BRANCHES, min_size=1, max_size=3).map("|".join)


def _reference_find_all(text: str, pattern: str) -> list[str]:
    """Go's FindAllString on Python's re (ASCII texts, patterns without look-around)."""
    compiled = re.compile(pattern, re.ASCII)
    out: list[str] = []
    pos, previous_end = 0, -1
    while pos <= len(text):
        match = compiled.search(text, pos)
        if match is None:
            break
        start, end = match.span()
        accept = not (end == pos and start == previous_end)
        pos = pos + 1 if end == pos else end
        previous_end = end
        if accept:
            out.append(match.group(0))
    return out


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab1 x", max_size=12), pattern=SAFE_PATTERNS)
def test_agrees_with_a_backtracking_reference_on_safe_patterns(text: str, pattern: str) -> None:
    expected = _reference_find_all(text, pattern)
    assert find_all(text, pattern) == expected
    assert find(text, pattern) == (expected[0] if expected else "")
