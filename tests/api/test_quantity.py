"""Quantity grammar, rounding, arithmetic and canonical formatting (apimachinery semantics)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cputime import cpu_budget
from dralab.api.quantity import (
    MAX_QUANTITY_DIGITS,
    Quantity,
    QuantityError,
    QuantityFormat,
    parse_quantity,
)

CANONICAL = [
    # input, canonical output
    ("0", "0"),
    ("0Mi", "0"),
    ("-0", "0"),
    ("1", "1"),
    ("+1", "1"),
    ("0.5", "500m"),
    (".5", "500m"),
    ("1.", "1"),
    ("1000m", "1"),
    ("1500m", "1500m"),
    ("100m", "100m"),
    ("0.1", "100m"),
    ("1500", "1500"),
    ("2000", "2k"),
    ("1k", "1k"),
    ("1000k", "1M"),
    ("1M", "1M"),
    ("1G", "1G"),
    ("1T", "1T"),
    ("1P", "1P"),
    ("1E", "1E"),
    ("1n", "1n"),
    ("1u", "1u"),
    ("1000n", "1u"),
    ("0.1n", "1n"),  # sub-nano precision rounds up
    ("1.0000000001", "1000000001n"),
    ("1Ki", "1Ki"),
    ("1024", "1024"),
    ("1024Mi", "1Gi"),
    ("1536Mi", "1536Mi"),
    ("1.5Gi", "1536Mi"),
    ("0.5Gi", "512Mi"),
    ("1023Ki", "1023Ki"),
    ("1000Ki", "1000Ki"),
    ("512Ki", "512Ki"),
    ("1Ei", "1Ei"),
    ("81559Mi", "81559Mi"),
    ("0.5Ki", "512"),  # small binary amounts print in decimal
    ("1.5Ki", "1536"),
    ("-1Gi", "-1Gi"),
    ("-500m", "-500m"),
    ("1e3", "1e3"),
    ("1E3", "1e3"),
    ("1.5e3", "1500"),
    ("12e2", "1200"),
    ("1e-3", "1e-3"),
    ("1e0", "1"),
    ("5e+6", "5e6"),
]


@pytest.mark.parametrize(("text", "expected"), CANONICAL)
def test_canonical_form(text: str, expected: str) -> None:
    assert str(parse_quantity(text)) == expected


@pytest.mark.parametrize(
    "text",
    ["", " 1", "1 ", "1K", "1kb", "1_000", "NaN", "Infinity", "inf", "1.2.3", "1Mii", "Mi",
     "e3", "1e", "1e1.5", "--1", "+-1", "0x10", ".", "1i", "1 Gi", "１"],
)
def test_rejects_invalid(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_rejects_non_strings() -> None:
    with pytest.raises(QuantityError):
        parse_quantity(5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "fmt"),
    [("1Gi", QuantityFormat.BINARY_SI), ("1G", QuantityFormat.DECIMAL_SI),
     ("1", QuantityFormat.DECIMAL_SI), ("1e9", QuantityFormat.DECIMAL_EXPONENT)],
)
def test_format_follows_suffix(text: str, fmt: QuantityFormat) -> None:
    assert parse_quantity(text).format is fmt


def test_equality_ignores_format() -> None:
    assert parse_quantity("1Gi") == parse_quantity("1024Mi")
    assert parse_quantity("1G") != parse_quantity("1Gi")
    assert parse_quantity("1e3") == parse_quantity("1k")
    assert hash(parse_quantity("1e3")) == hash(parse_quantity("1k"))


def test_ordering_and_compare() -> None:
    small, big = parse_quantity("999Mi"), parse_quantity("1Gi")
    assert small < big <= big and big > small >= small
    assert small.compare(big) == -1 and big.compare(small) == 1 and big.compare(big) == 0


def test_add_sub_keep_first_format() -> None:
    total = parse_quantity("1Gi") + parse_quantity("512Mi")
    assert str(total) == "1536Mi"
    assert str(parse_quantity("1") - parse_quantity("250m")) == "750m"
    assert str(parse_quantity("1Gi") - parse_quantity("1Gi")) == "0"
    assert str(-parse_quantity("1Gi")) == "-1Gi"


def test_values() -> None:
    q = parse_quantity("1500m")
    assert q.value() == 2  # rounds up like Quantity.Value()
    assert q.milli_value() == 1500
    assert q.as_approximate_float() == 1.5
    assert not q.is_integer() and parse_quantity("2k").is_integer()
    assert parse_quantity("-1").sign() == -1 and parse_quantity("0").sign() == 0
    assert parse_quantity("-1.5").value() == -1


def test_binary_amounts_cap_at_int64_decimal_do_not() -> None:
    assert parse_quantity("100000Ei").value() == 2**63 - 1
    assert parse_quantity("1e30").value() == 10**30
    assert str(parse_quantity("1e30")) == "1e30"


def test_constructors() -> None:
    assert str(Quantity.from_int(3)) == "3"
    assert str(Quantity.from_milli(250)) == "250m"
    assert str(Quantity.from_int(2 * 1024**3, QuantityFormat.BINARY_SI)) == "2Gi"


_suffix = st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "n", "u"])


@given(st.integers(min_value=0, max_value=10**6), _suffix)
def test_canonical_round_trip(number: int, suffix: str) -> None:
    q = parse_quantity(f"{number}{suffix}")
    again = parse_quantity(str(q))
    assert again == q
    assert str(again) == str(q)


@given(st.integers(min_value=-(10**9), max_value=10**9), st.integers(min_value=0, max_value=10**9))
def test_arithmetic_is_exact(a: int, b: int) -> None:
    qa, qb = Quantity.from_milli(a), Quantity.from_milli(b)
    assert (qa + qb - qb) == qa
    assert (qa + qb).milli_value() == a + b


# --- bounds (issue 16): refused or computed fast, never expanded exactly ------------

@pytest.mark.parametrize(
    "text",
    ["1e99999999", "1E2147483647", "1" + "0" * 64, "9" * 5000, "1e65", "0.1e66", "-1e65",
     "1" + "0" * 55 + "E"],
)
def test_values_beyond_the_bound_are_refused_fast(text: str) -> None:
    with cpu_budget(0.1), pytest.raises(QuantityError,
                                        match=f"more than {MAX_QUANTITY_DIGITS} integer digits"):
        parse_quantity(text)


def test_bound_edge() -> None:
    assert parse_quantity("9" * MAX_QUANTITY_DIGITS).value() == 10**MAX_QUANTITY_DIGITS - 1
    assert parse_quantity("1e63").value() == 10**63
    assert parse_quantity("0.1e64").value() == 10**63
    assert parse_quantity("1e63").as_approximate_float() == 1e63  # bounded values are floats


@pytest.mark.parametrize("text", ["1e2147483648", "1e-2147483648", "1e99999999999",
                                  "1e" + "9" * 5000])
def test_exponent_must_fit_int32_like_apimachinery(text: str) -> None:
    with pytest.raises(QuantityError, match="unable to parse quantity's suffix"):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("text", "nano"),
    [("1e-2147483647", 1), ("-1e-2147483647", -1), ("1e-99999999", 1), ("9e-10", 1),
     ("15e-10", 2), ("0e-2147483647", 0), ("0." + "0" * 100_000 + "1", 1),
     ("1." + "0" * 100_000 + "1", 10**9 + 1), ("0.00000000000000000000001Ki", 1),
     ("1000000000000000000001e-30", 2), ("999999999999999999999e-30", 1)],
)
def test_sub_nano_precision_rounds_up_without_expanding(text: str, nano: int) -> None:
    with cpu_budget(0.1):
        assert parse_quantity(text).nano == nano


@pytest.mark.parametrize("text", ["1" * 20 + "Ki", "9" * 30 + "Ei",
                                  "1" * 5000 + "Mi", "1" + "0" * 100_000 + ".5Ki"])
def test_binary_amounts_cap_without_expanding(text: str) -> None:
    with cpu_budget(0.1):
        assert parse_quantity(text).value() == 2**63 - 1


@pytest.mark.parametrize("text", ["1" * 100_000 + "x", "1." + "1" * 100_000 + "Kx",
                                  "1" * 50_000 + "." + "1" * 50_000 + "Kix", "+" * 100_000])
def test_invalid_long_strings_fail_in_linear_time(text: str) -> None:
    # The grammar's regex must not backtrack over digit runs.
    with cpu_budget(0.1), pytest.raises(QuantityError):
        parse_quantity(text)


@given(st.integers(min_value=0, max_value=10**12),
       st.text(alphabet="0123456789", min_size=0, max_size=150),
       st.sampled_from(["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "m", "n", "k"]))
def test_long_fractions_round_exactly(whole: int, fraction: str, suffix: str) -> None:
    # Only some fraction digits are converted; the result must equal exact arithmetic.
    scale = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
             "m": Fraction(1, 1000), "n": Fraction(1, 10**9), "k": 1000, "": 1}[suffix]
    text = f"{whole}.{fraction}{suffix}" if fraction else f"{whole}{suffix}"
    exact = Fraction(int(f"{whole}{fraction}"), 10 ** len(fraction)) * scale * 10**9
    nano = -((-exact.numerator) // exact.denominator)
    if suffix.endswith("i"):
        nano = min(nano, (2**63 - 1) * 10**9)
    assert parse_quantity(text).nano == nano
