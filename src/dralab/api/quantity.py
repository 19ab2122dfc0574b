"""Exact Kubernetes resource quantities.

The grammar, the rounding of sub-nano precision and the canonical output follow
k8s.io/apimachinery's ``resource.Quantity``: a quantity remembers the format its
suffix implied (binary, decimal or exponent) and prints itself in the shortest
form of that format that is exact, e.g. ``1024Mi`` -> ``1Gi``, ``0.5`` -> ``500m``.

Internally a quantity is an integer count of nano-units, so arithmetic and
comparisons are exact and hashing is cheap. The type is immutable.
"""

from __future__ import annotations

import re
from decimal import Decimal
from enum import Enum
from fractions import Fraction
from functools import lru_cache
from typing import Final

__all__ = ["MAX_QUANTITY_DIGITS", "Quantity", "QuantityError", "QuantityFormat", "parse_quantity"]

_NANO: Final = 10**9
# Binary-suffixed quantities are capped at the largest int64 value, as the API server does.
_MAX_NANO: Final = (2**63 - 1) * _NANO


_BINARY_SUFFIX: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX: Final = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}
_DECIMAL_BY_EXP: Final = {v: k for k, v in _DECIMAL_SUFFIX.items()}
_BINARY_BY_EXP: Final = {0: ""} | {v: k for k, v in _BINARY_SUFFIX.items()}


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


class QuantityFormat(Enum):
    """How a quantity prints itself; decided by the suffix it was written with."""

    DECIMAL_SI = "DecimalSI"
    BINARY_SI = "BinarySI"
    DECIMAL_EXPONENT = "DecimalExponent"


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


class Quantity:
    """An exact, immutable Kubernetes quantity.

    Equality and ordering compare the amount only (``1Gi == 1024Mi``), as
    ``Quantity.Cmp`` does upstream; the format only matters for printing.
    """

    __slots__ = ("_format", "_nano")

    def __init__(self, nano: int, fmt: QuantityFormat = QuantityFormat.DECIMAL_SI) -> None:
        self._nano = nano
        self._format = fmt

    # construction -----------------------------------------------------------
    @staticmethod
    def parse(text: str) -> Quantity:
        """Parse ``text`` strictly; raise QuantityError for anything else."""
        return parse_quantity(text)

    @classmethod
    def from_int(cls, value: int, fmt: QuantityFormat = QuantityFormat.DECIMAL_SI) -> Quantity:
        return cls(value * _NANO, fmt)

    @classmethod
    def from_milli(cls, milli: int, fmt: QuantityFormat = QuantityFormat.DECIMAL_SI) -> Quantity:
        return cls(milli * 10**6, fmt)

    # accessors --------------------------------------------------------------
    @property
    def nano(self) -> int:
        """The amount in nano-units (exact)."""
        return self._nano

    @property
    def format(self) -> QuantityFormat:
        return self._format

    def value(self) -> int:
        """The amount rounded up to a whole unit, like ``Quantity.Value()``."""
        return _ceil_div(self._nano, _NANO)

    def milli_value(self) -> int:
        """The amount in milli-units rounded up, like ``Quantity.MilliValue()``."""
        return _ceil_div(self._nano, 10**6)

    def as_fraction(self) -> Fraction:
        return Fraction(self._nano, _NANO)

    def as_decimal(self) -> Decimal:
        return Decimal(self._nano).scaleb(-9)

    def as_approximate_float(self) -> float:
        return self._nano / _NANO

    def is_integer(self) -> bool:
        return self._nano % _NANO == 0

    def sign(self) -> int:
        return (self._nano > 0) - (self._nano < 0)

    def is_zero(self) -> bool:
        return self._nano == 0

    # arithmetic -------------------------------------------------------------
    def __add__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        return Quantity(self._nano + other._nano, self._format)

    def __sub__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        return Quantity(self._nano - other._nano, self._format)

    def __neg__(self) -> Quantity:
        return Quantity(-self._nano, self._format)

    def compare(self, other: Quantity) -> int:
        """-1, 0 or 1, like ``Quantity.Cmp``."""
        return (self._nano > other._nano) - (self._nano < other._nano)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self._nano == other._nano
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._nano)

    def __lt__(self, other: Quantity) -> bool:
        return self._nano < other._nano

    def __le__(self, other: Quantity) -> bool:
        return self._nano <= other._nano

    def __gt__(self, other: Quantity) -> bool:
        return self._nano > other._nano

    def __ge__(self, other: Quantity) -> bool:
        return self._nano >= other._nano

    # formatting -------------------------------------------------------------
    def __str__(self) -> str:
        return _canonical(self._nano, self._format)

    def __repr__(self) -> str:
        return f"Quantity({_canonical(self._nano, self._format)!r})"

    def __reduce__(self) -> tuple[type[Quantity], tuple[int, QuantityFormat]]:
        return (Quantity, (self._nano, self._format))


def _canonical(nano: int, fmt: QuantityFormat) -> str:
    if nano == 0:
        return "0"
    if fmt is QuantityFormat.BINARY_SI:
        # Small or fractional binary amounts print in decimal so that nothing is rounded.
        if -1024 * _NANO < nano < 1024 * _NANO or nano % _NANO != 0:
            fmt = QuantityFormat.DECIMAL_SI
        else:
            whole = nano // _NANO
            exp = 0
            while exp < 60 and whole % 1024 == 0:
                whole //= 1024
                exp += 10
            return f"{whole}{_BINARY_BY_EXP[exp]}"
    mantissa, exp = nano, -9
    while mantissa % 1000 == 0:
        mantissa //= 1000
        exp += 3
    if fmt is QuantityFormat.DECIMAL_SI:
        suffix = _DECIMAL_BY_EXP.get(exp)
        if suffix is not None:
            return f"{mantissa}{suffix}"
    return f"{mantissa}e{exp}" if exp != 0 else str(mantissa)


# Quantities as the API server bounds them: a decimal exponent must fit in
# int32 (apimachinery refuses wider ones), and precision below one nano-unit is
# rounded up without materialising it, so "1e-2147483647" costs no more than
# "1n". Above, dralab keeps exact integers, which it can only do for bounded
# values: at most MAX_QUANTITY_DIGITS integer digits (Kubernetes' own int64
# consumers, Value() and MilliValue(), stop at 19; every bounded value also
# converts to a float for the scoring plugins).
MAX_QUANTITY_DIGITS: Final = 64
_MAX_EXPONENT: Final = 2**31 - 1
# Fraction digits that decide rounding when a binary suffix multiplies by up to
# 2^60: with at least 60 of them the rest can only tell "exact or not" (see below).
_GUARD_DIGITS: Final = 64
_GUARD_SCALE: Final = 10**_GUARD_DIGITS
# Longer strings are parsed uncached, so that the cache cannot hold huge keys.
_CACHED_CHARS: Final = 64

_QUANTITY_RE: Final = re.compile(  # possessive: no backtracking over long digit runs
    r"^([+-]?+)([0-9]++\.?+[0-9]*+|\.[0-9]++)"
    r"(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|([eE][+-]?+[0-9]++))?$"
)


def _exponent(text: str) -> int:
    sign = -1 if text[0] == "-" else 1
    digits = text.lstrip("+-").lstrip("0") or "0"
    # apimachinery refuses exponents outside [-MaxInt32, MaxInt32] (ErrSuffix).
    if len(digits) > 10 or int(digits) > _MAX_EXPONENT:
        raise QuantityError("unable to parse quantity's suffix")
    return sign * int(digits)


def _nano(digits: str, power: int, binary: int) -> int:
    """ceil(int(digits) * 10**power * 2**binary), for ``digits`` without leading zeros.

    Only the digits that can matter are converted: the integer part (bounded by
    the callers' magnitude checks) and _GUARD_DIGITS fraction digits; beyond
    those, any non-zero digit rounds up. Exact: the fraction f contributes
    ceil(f * 2**binary); with L >= binary guard digits, the truncated f_L * 2**binary
    leaves a remainder that is a multiple of 2**binary, so what the dropped digits
    add (less than 2**binary units of 10**-L) can never carry into the integer part.
    """
    split = len(digits) + power  # digits before the decimal point
    if power >= 0:
        scale: int = 10**power
        return (int(digits) * scale) << binary
    whole = int(digits[:split]) if split > 0 else 0
    fraction = digits[split:] if split > 0 else digits
    leading_zeros = -split if split < 0 else 0
    if leading_zeros >= _GUARD_DIGITS:
        return (whole << binary) + 1  # non-zero, far below 1n
    kept = ("0" * leading_zeros + fraction)[:_GUARD_DIGITS]
    dropped = fraction[_GUARD_DIGITS - leading_zeros:].strip("0") != ""
    q, r = divmod(int(kept.ljust(_GUARD_DIGITS, "0")) << binary, _GUARD_SCALE)
    return int((whole << binary) + q + (1 if r or dropped else 0))


def parse_quantity(text: str) -> Quantity:
    """Parse a quantity string with the API server's grammar.

    Precision below one nano-unit is rounded up (away from zero), so that a tiny
    non-zero request never becomes zero; binary-suffixed amounts are capped at
    2^63-1; decimal exponents must fit in int32; values with more than
    MAX_QUANTITY_DIGITS integer digits are refused. Work is linear in the text.
    """
    if not isinstance(text, str):
        raise QuantityError(f"quantities must be strings, not {type(text).__name__}")
    if len(text) <= _CACHED_CHARS:
        return _parse_cached(text)
    return _parse(text)


@lru_cache(maxsize=65536)
def _parse_cached(text: str) -> Quantity:
    return _parse(text)


def _parse(text: str) -> Quantity:
    match = _QUANTITY_RE.match(text)
    if match is None:
        raise QuantityError(
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    sign, number, suffix, exponent = match.groups()
    if number == ".":
        raise QuantityError("unable to parse quantity's numeric part")
    whole, _, frac = number.partition(".")
    digits = (whole + frac).lstrip("0")
    if exponent is not None:
        fmt = QuantityFormat.DECIMAL_EXPONENT
        power, binary = _exponent(exponent[1:]) - len(frac), 0
    elif suffix in _BINARY_SUFFIX:
        fmt = QuantityFormat.BINARY_SI
        power, binary = -len(frac), _BINARY_SUFFIX[suffix]
    else:
        fmt = QuantityFormat.DECIMAL_SI
        power, binary = _DECIMAL_SUFFIX[suffix or ""] - len(frac), 0
    if not digits:
        return Quantity(0, fmt)
    magnitude = len(digits) + power  # integer digits of the amount before the binary factor
    if fmt is QuantityFormat.BINARY_SI:
        # apimachinery caps binary amounts at int64; 10^20 is above the cap for any suffix.
        nano = _MAX_NANO if magnitude > 20 else min(_nano(digits, power + 9, binary), _MAX_NANO)
    elif magnitude > MAX_QUANTITY_DIGITS:
        raise QuantityError(
            f"quantity too large: more than {MAX_QUANTITY_DIGITS} integer digits "
            f"(dralab's limit; Kubernetes' int64 consumers stop at 19)")
    else:
        nano = _nano(digits, power + 9, 0)
    return Quantity(-nano if sign == "-" else nano, fmt)
