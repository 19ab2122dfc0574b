"""Python implementations of the Kubernetes CEL library functions.

These are the bodies behind the declarations in ``declarations.py``; cel-cpp
calls them with plain Python values (int, str, list, ...) and protobuf
messages for Quantity/Semver. Raising an exception turns into a CEL error
value, which short-circuiting (``false && ...``) can still absorb, exactly like
an error result upstream.

Semantics follow k8s.io/apiserver/pkg/cel/library (quantity.go, semverlib.go,
lists.go, regex.go): e.g. ``asInteger`` fails unless the quantity is an exact
int64, ``min``/``max`` fail on an empty list.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Final

from google.protobuf import duration_pb2, timestamp_pb2

from dralab.api.quantity import Quantity, QuantityError, parse_quantity
from dralab.api.semver import SemverError, parse_semver
from dralab.cel import regex
from dralab.cel.values import (
    QUANTITY_TYPE,
    SEMVER_TYPE,
    quantity_from_message,
    quantity_message,
    semver_from_message,
    semver_message,
)

__all__ = ["IMPLEMENTATIONS", "MAX_LIST_VALUES", "cel_equal"]

_NANO: Final = 10**9
MAX_LIST_VALUES: Final = 48  # ResourceSliceMaxAttributeValues
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


class NoSuchOverload(TypeError):
    """A dynamically typed call whose runtime argument types fit no overload."""

    def __init__(self, function: str) -> None:
        super().__init__(f"no such overload: {function}")


# --- equality ---------------------------------------------------------------


def cel_equal(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality on the Python values cel-cpp hands us.

    Unlike Python, ``true != 1`` and lists/maps compare element-wise with the
    same rules; numbers of different kinds compare by value.
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, bytes | bytearray) and isinstance(b, bytes | bytearray):
        return bytes(a) == bytes(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        for key, value in a.items():
            match = [other for k2, other in b.items() if cel_equal(key, k2)]
            if not match or not cel_equal(value, match[0]):
                return False
        return True
    if a is None or b is None:
        return a is None and b is None
    if hasattr(a, "DESCRIPTOR") and hasattr(b, "DESCRIPTOR"):
        return bool(a.DESCRIPTOR.full_name == b.DESCRIPTOR.full_name and a == b)
    if isinstance(a, datetime | timedelta) and type(a) is type(b):
        return bool(a == b)
    return False


# --- quantity ---------------------------------------------------------------


def _quantity(text: str) -> Any:
    return quantity_message(parse_quantity(text))


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def _sign(message: Any) -> int:
    return quantity_from_message(message).sign()


def _compare(a: Any, b: Any, function: str) -> int:
    # cel-cpp dispatches member overloads by value kind, and every message is a
    # "struct", so one implementation serves Quantity and Semver receivers.
    kind = a.DESCRIPTOR.full_name
    if kind != b.DESCRIPTOR.full_name:
        raise NoSuchOverload(function)
    if kind == QUANTITY_TYPE:
        x, y = int(a.nano), int(b.nano)
        return (x > y) - (x < y)
    if kind == SEMVER_TYPE:
        return semver_from_message(a).compare(semver_from_message(b))
    raise NoSuchOverload(function)


def _compare_to(a: Any, b: Any) -> int:
    return _compare(a, b, "compareTo")


def _is_greater_than(a: Any, b: Any) -> bool:
    return _compare(a, b, "isGreaterThan") > 0


def _is_less_than(a: Any, b: Any) -> bool:
    return _compare(a, b, "isLessThan") < 0


def _as_approximate_float(message: Any) -> float:
    nano = int(message.nano)
    try:
        return nano / _NANO
    except OverflowError:
        return math.copysign(math.inf, nano)


def _exact_int64(message: Any) -> int | None:
    whole, rest = divmod(int(message.nano), _NANO)
    if rest or not _INT64_MIN <= whole <= _INT64_MAX:
        return None
    return whole


def _as_integer(message: Any) -> int:
    value = _exact_int64(message)
    if value is None:
        raise ValueError("cannot convert value to integer")
    return value


def _is_integer(message: Any) -> bool:
    return _exact_int64(message) is not None


def _operand(value: Any) -> Quantity:
    # add/sub accept a Quantity or an int (taken as a whole number of units).
    if isinstance(value, int) and not isinstance(value, bool):
        return Quantity.from_int(value)
    return quantity_from_message(value)


def _add(a: Any, b: Any) -> Any:
    return quantity_message(quantity_from_message(a) + _operand(b))


def _sub(a: Any, b: Any) -> Any:
    return quantity_message(quantity_from_message(a) - _operand(b))


# --- semver -----------------------------------------------------------------


def _normalized(text: str) -> str:
    """Tolerant spelling to strict: drop a "v", add missing parts, strip leading zeros."""
    parts = text.removeprefix("v").split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in "0123456789":
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _semver(text: str, normalize: bool = False) -> Any:
    return semver_message(parse_semver(_normalized(text) if normalize else text))


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(_normalized(text) if normalize else text)
    except SemverError:
        return False
    return True


def _major(message: Any) -> int:
    return semver_from_message(message).major


def _minor(message: Any) -> int:
    return semver_from_message(message).minor


def _patch(message: Any) -> int:
    return semver_from_message(message).patch


# --- lists ------------------------------------------------------------------


def _ordered(values: list[Any], function: str) -> list[Any]:
    # Python would order bools among ints; CEL keeps them apart.
    kinds = {bool if isinstance(v, bool) else int | float if isinstance(v, int | float)
             else type(v) for v in values}
    if len(kinds) > 1:
        raise NoSuchOverload(function)
    return values


def _returnable(value: Any) -> Any:
    # cel-expr-python passes durations/timestamps in as datetime objects but
    # only accepts them back as the protobuf well-known types.
    if isinstance(value, timedelta):
        duration = duration_pb2.Duration()
        duration.FromTimedelta(value)
        return duration
    if isinstance(value, datetime):
        timestamp = timestamp_pb2.Timestamp()
        timestamp.FromDatetime(value)
        return timestamp
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def _is_sorted(values: list[Any]) -> bool:
    _ordered(values, "isSorted")
    return all(not values[i] > values[i + 1] for i in range(len(values) - 1))


def _sum(values: list[Any]) -> Any:
    if not values:
        # The element type of an empty list is unknown at runtime; 0 compares
        # equal to every numeric zero.
        return 0
    total = values[0]
    for value in values[1:]:
        total = total + value
    if isinstance(total, int) and not isinstance(total, bool) and not (
            _INT64_MIN <= total <= _INT64_MAX):
        raise OverflowError("integer overflow")
    return _returnable(total)


def _min(values: list[Any]) -> Any:
    if not values:
        raise ValueError("min called on empty list")
    return _returnable(min(_ordered(values, "min")))


def _max(values: list[Any]) -> Any:
    if not values:
        raise ValueError("max called on empty list")
    return _returnable(max(_ordered(values, "max")))


def _string_index(text: str, sub: str, offset: int | None, last: bool) -> int:
    # Strings-extension semantics, for calls whose receiver was only known as dyn.
    if offset is None:
        return text.rfind(sub) if last else text.find(sub)
    if not sub:
        return offset
    if offset < 0 or offset >= len(text):
        raise IndexError(f"index out of range: {offset}")
    if last:
        return text.rfind(sub, 0, offset + len(sub))
    return text.find(sub, offset)


def _index_of(target: Any, item: Any, offset: int | None = None) -> int:
    if isinstance(target, str) and isinstance(item, str):
        return _string_index(target, item, offset, last=False)
    if isinstance(target, list) and offset is None:
        return next((i for i, v in enumerate(target) if cel_equal(v, item)), -1)
    raise NoSuchOverload("indexOf")


def _last_index_of(target: Any, item: Any, offset: int | None = None) -> int:
    if isinstance(target, str) and isinstance(item, str):
        return _string_index(target, item, offset, last=True)
    if isinstance(target, list) and offset is None:
        return next((i for i in range(len(target) - 1, -1, -1) if cel_equal(target[i], item)), -1)
    raise NoSuchOverload("lastIndexOf")


def _includes(target: Any, item: Any) -> bool:
    if isinstance(target, list):
        if len(target) > MAX_LIST_VALUES:
            # The cost estimate charges at most this many comparisons.
            raise ValueError("'includes' function cannot be applied to lists longer than "
                             f"{MAX_LIST_VALUES} values")
        return any(cel_equal(v, item) for v in target)
    return cel_equal(target, item)


# --- regex ------------------------------------------------------------------


def _find(text: str, pattern: str) -> str:
    try:
        return regex.find(text, pattern)
    except regex.RegexError as err:
        raise ValueError(f"Illegal regex: {err}") from err


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    try:
        return regex.find_all(text, pattern, limit)
    except regex.RegexError as err:
        raise ValueError(f"Illegal regex: {err}") from err


IMPLEMENTATIONS: Final[dict[str, Callable[..., Any]]] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "sign": _sign,
    "compareTo": _compare_to,
    "isGreaterThan": _is_greater_than,
    "isLessThan": _is_less_than,
    "asApproximateFloat": _as_approximate_float,
    "asInteger": _as_integer,
    "isInteger": _is_integer,
    "add": _add,
    "sub": _sub,
    "semver": _semver,
    "isSemver": _is_semver,
    "major": _major,
    "minor": _minor,
    "patch": _patch,
    "isSorted": _is_sorted,
    "sum": _sum,
    "min": _min,
    "max": _max,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "includes": _includes,
    "find": _find,
    "findAll": _find_all,
}
