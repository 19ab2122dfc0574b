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

__all__ = ["Quantity", "QuantityError", "QuantityFormat", "parse_quantity"]

_NANO: Final = 10**9
# Binary-suffixed quantities are capped at the largest int64 value, as the API server does.
_MAX_NANO: Final = (2**63 - 1) * _NANO

_QUANTITY_RE: Final = re.compile(
    r"^([+-]?)([0-9]+\.?[0-9]*|\.[0-9]+)"
    r"(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|([eE][+-]?[0-9]+))?$"
)

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


@lru_cache(maxsize=65536)
def parse_quantity(text: str) -> Quantity:
    """Parse a quantity string with the API server's grammar.

    Precision below one nano-unit is rounded up (away from zero), so that a tiny
    non-zero request never becomes zero; binary-suffixed amounts are capped at 2^63-1.
    """
    if not isinstance(text, str):
        raise QuantityError(f"quantities must be strings, not {type(text).__name__}")
    match = _QUANTITY_RE.match(text)
    if match is None:
        raise QuantityError(
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    sign, number, suffix, exponent = match.groups()
    if number == ".":
        raise QuantityError(f"unable to parse quantity's numeric part: {text!r}")
    whole, _, frac = number.partition(".")
    digits = int((whole or "0") + frac) if (whole or frac) else 0
    scale = -len(frac)
    if exponent is not None:
        fmt = QuantityFormat.DECIMAL_EXPONENT
        amount = Fraction(digits) * Fraction(10) ** (scale + int(exponent[1:]))
    elif suffix in _BINARY_SUFFIX:
        fmt = QuantityFormat.BINARY_SI
        amount = Fraction(digits) * Fraction(10) ** scale * (2 ** _BINARY_SUFFIX[suffix])
    else:
        fmt = QuantityFormat.DECIMAL_SI
        amount = Fraction(digits) * Fraction(10) ** (scale + _DECIMAL_SUFFIX[suffix or ""])
    nano_exact = amount * _NANO
    nano = _ceil_div(nano_exact.numerator, nano_exact.denominator)
    if fmt is QuantityFormat.BINARY_SI:
        # apimachinery caps binary amounts at int64; decimal ones keep full precision.
        nano = min(nano, _MAX_NANO)
    if sign == "-":
        nano = -nano
    return Quantity(nano, fmt)
