"""The state of one validation run and type-safe access to undecoded data.

Validation works on the document as decoded from YAML/JSON, not on typed
models: a wrong type is just one more field error, reported where it is, and
everything else in the object is still checked. The API server would stop at
the first decoding error; reporting them all is more useful for a file.

Paths are plain strings in the API server's notation (``a.b[0].c[key]``);
building them eagerly is cheap next to the checks themselves.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import Any, Final

from dralab.api.errors import ErrorType, FieldError
from dralab.api.features import FeatureGates
from dralab.api.quantity import Quantity, QuantityError, parse_quantity

__all__ = ["Ctx", "child", "index", "key", "type_name"]

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_INT32_MIN: Final = -(2**31)
_INT32_MAX: Final = 2**31 - 1


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    return f"{path}[{k}]"


def type_name(value: object) -> str:
    """The JSON type of a decoded value, as schema errors name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, _dt.date | _dt.datetime):
        return "timestamp"
    return type(value).__name__


class Ctx:
    """Collects FieldErrors in the order they are found; knows the feature gates.

    The ``as_*`` accessors return the value if it has the expected type, None if
    it is absent (missing or null, which the API server also treats as unset),
    and otherwise report a type error and return None, so that callers can
    simply skip what they cannot read.
    """

    __slots__ = ("errors", "features")

    def __init__(self, features: FeatureGates) -> None:
        self.features = features
        self.errors: list[FieldError] = []

    # reporting ----------------------------------------------------------------
    def required(self, path: str, detail: str = "") -> None:
        self.errors.append(FieldError(path=path, type=ErrorType.REQUIRED, detail=detail))

    def invalid(self, path: str, value: Any, detail: str) -> None:
        self.errors.append(
            FieldError(path=path, type=ErrorType.INVALID, detail=detail, value=_plain(value)))

    def forbidden(self, path: str, detail: str) -> None:
        self.errors.append(FieldError(path=path, type=ErrorType.FORBIDDEN, detail=detail))

    def not_supported(self, path: str, value: Any, supported: Sequence[str]) -> None:
        detail = "supported values: " + ", ".join(f'"{s}"' for s in supported)
        self.errors.append(
            FieldError(path=path, type=ErrorType.NOT_SUPPORTED, detail=detail,
                       value=_plain(value)))

    def duplicate(self, path: str, value: Any, detail: str = "") -> None:
        self.errors.append(
            FieldError(path=path, type=ErrorType.DUPLICATE, detail=detail, value=_plain(value)))

    def not_found(self, path: str, value: Any, detail: str = "") -> None:
        self.errors.append(
            FieldError(path=path, type=ErrorType.NOT_FOUND, detail=detail, value=_plain(value)))

    def too_many(self, path: str, actual: int, maximum: int) -> None:
        self.errors.append(FieldError(path=path, type=ErrorType.TOO_MANY,
                                      detail=f"must have at most {maximum} items", value=actual))

    def too_long(self, path: str, maximum: int) -> None:
        # The API server never echoes a value that is too long.
        self.errors.append(FieldError(path=path, type=ErrorType.TOO_LONG,
                                      detail=f"may not be more than {maximum} bytes"))

    def type_invalid(self, path: str, value: Any, expected: str) -> None:
        self.errors.append(FieldError(path=path, type=ErrorType.TYPE_INVALID,
                                      detail=f"must be of type {expected}",
                                      value=type_name(value)))

    def gate(self, name: str, path: str) -> bool:
        """True if the gate is on; otherwise report the field as forbidden.

        The API server silently drops fields of disabled gates on create. For a
        file that is worse than an error: the object would behave differently
        from what it says, so we report it instead.
        """
        if self.features.is_enabled(name):
            return True
        self.forbidden(path, f"requires feature gate {name}")
        return False

    # typed access ---------------------------------------------------------------
    def as_map(self, value: Any, path: str) -> Mapping[str, Any] | None:
        if value is None:
            return None
        if type(value) is not dict and not isinstance(value, Mapping):
            self.type_invalid(path, value, "object")
            return None
        bad = [k for k in value if type(k) is not str]
        if not bad:
            return value
        for k in bad:
            self.type_invalid(key(path, str(k)), k, "string (map key)")
        return {k: v for k, v in value.items() if isinstance(k, str)}

    def as_list(self, value: Any, path: str) -> Sequence[Any] | None:
        if value is None:
            return None
        if not isinstance(value, list | tuple):
            self.type_invalid(path, value, "array")
            return None
        return value

    def as_str(self, value: Any, path: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.type_invalid(path, value, "string")
            return None
        return value

    def as_bool(self, value: Any, path: str) -> bool | None:
        if value is None:
            return None
        if not isinstance(value, bool):
            self.type_invalid(path, value, "boolean")
            return None
        return value

    def as_int(self, value: Any, path: str, bits: int = 64) -> int | None:
        """An integer; integral floats pass because YAML-to-JSON conversion makes them ints."""
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self.type_invalid(path, value, f"int{bits}")
            return None
        low, high = (_INT32_MIN, _INT32_MAX) if bits == 32 else (_INT64_MIN, _INT64_MAX)
        if not low <= value <= high:
            self.invalid(path, value, f"must fit in a {bits}-bit signed integer")
            return None
        return value

    def as_time(self, value: Any, path: str) -> str | None:
        """A timestamp; YAML loaders turn unquoted ones into datetime objects."""
        if value is None:
            return None
        if isinstance(value, _dt.datetime | _dt.date):
            return value.isoformat()
        return self.as_str(value, path)

    def as_quantity(self, value: Any, path: str) -> Quantity | None:
        """A quantity; numbers are accepted as the API server does."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.type_invalid(path, value, "string or number (quantity)")
            return None
        text = value if isinstance(value, str) else _number_text(value)
        try:
            return parse_quantity(text)
        except QuantityError as err:
            self.invalid(path, value, str(err))
            return None

    def string_list(self, value: Any, path: str) -> list[tuple[int, str]]:
        """The string items of a list with their indices; other items are reported."""
        items = self.as_list(value, path)
        if items is None:
            return []
        out: list[tuple[int, str]] = []
        for i, item in enumerate(items):
            text = self.as_str(item, index(path, i))
            if text is not None:
                out.append((i, text))
        return out


def _plain(value: Any) -> Any:
    """A copy of a reported value that renders as JSON: string keys, lists not tuples.

    Values come straight from the document and may hold anything YAML allows
    (integer keys, dates); the error must still print.
    """
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _number_text(value: int | float) -> str:
    if isinstance(value, int):
        return str(value)
    # repr gives the shortest text that round-trips, e.g. 0.1 -> "0.1", 1e+20 -> "1e+20".
    text = repr(value)
    return text.replace("e+", "e")
