"""Error lines that echo input: cut at a bound, control characters escaped (issue 16)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dralab.api.errors import (
    MAX_LINE_CHARS,
    MAX_VALUE_CHARS,
    ErrorType,
    FieldError,
    format_value,
    one_line,
)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain", "plain"),
        ("two\nlines\r\nand\rmore", "two lines and more"),
        ("evil\u202egnp.exe", "evil\\u202egnp.exe"),  # right-to-left override
        ("red\x1b[31m", "red\\x1b[31m"),  # terminal escape
        ("tab\there", "tab\\there"),
        ("nul\x00", "nul\\x00"),
        ("\U000e0001tag", "\\U000e0001tag"),
        ("caf\u00e9 \u4e2d", "caf\u00e9 \u4e2d"),  # printable non-ASCII stays
    ],
)
def test_one_line_escapes(text: str, shown: str) -> None:
    assert one_line(text) == shown


def test_one_line_cuts_long_lines() -> None:
    size = 10 * 1024 * 1024
    line = one_line("x" * size)
    assert line == "x" * MAX_LINE_CHARS + f"... ({size - MAX_LINE_CHARS} more characters)"


@given(st.text(max_size=300))
def test_one_line_is_one_printable_line(text: str) -> None:
    line = one_line(text, 200)
    assert line.isprintable()
    assert len(line) <= 200 * 10 + 40  # escapes at most 10 characters each, plus the marker


def test_values_are_cut_and_escaped() -> None:
    assert format_value("x" * 1000) == '"' + "x" * MAX_VALUE_CHARS + '"... (744 more characters)'
    assert format_value("a\u202eb") == '"a\\u202eb"'
    assert len(format_value(list(range(100_000)))) < MAX_VALUE_CHARS + 40
    assert format_value(10**300).endswith("more characters)")


def test_field_error_line_is_bounded() -> None:
    err = FieldError(path="metadata.labels[\x1b]", type=ErrorType.INVALID, value="v" * 10**6,
                     detail="must be no more than 63 characters")
    text = str(err)
    assert text.isprintable() and len(text) < 400
    assert text.startswith('metadata.labels[\\x1b]: Invalid value: "vvv')
    assert text.endswith("(999744 more characters): must be no more than 63 characters")
