"""The ``device`` variable: turning one device into prepared CEL input.

Attribute and capacity names are grouped by domain exactly like upstream's
``parseQualifiedName``: the part before the first ``/`` is the domain, and a
name without ``/`` belongs to the driver's own domain. So ``model`` and
``<driver>/model`` are the same CEL path, and other domains are reachable only
under their own name.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

from dralab.api.quantity import Quantity
from dralab.api.semver import Semver
from dralab.cel.costmodel import SizeTree, actual_device, within_declared
from dralab.cel.environment import (
    ALLOW_MULTIPLE_ALLOCATIONS_VAR,
    ATTRIBUTES_VAR,
    CAPACITY_VAR,
    DRIVER_VAR,
    runtime_env,
)
from dralab.cel.errors import CelError
from dralab.cel.values import (
    QuantityMessage,
    SemverMessage,
    quantity_from_message,
    quantity_message,
    semver_from_message,
    semver_message,
)

__all__ = ["AttributeValue", "DeviceInput", "device_input"]

AttributeValue = int | bool | str | Semver | list[int] | list[bool] | list[str] | list[Semver]

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


ARENA_BUDGET: Final = 4096
"""Cost units of evaluations after which a device's activation is rebuilt.

cel-expr-python allocates every value an evaluation creates in the arena of the
activation it runs on, and frees that arena only with the activation. A device
kept for a whole run would so grow by what each evaluation built (a selector
within the cost limit can build a few MB). Work in cost units stands in for
bytes (about 1 to 32 per unit): a device keeps at most this budget plus one
evaluation's garbage; ordinary selectors (tens of units) rebuild rarely.
"""


class DeviceInput:
    """Prepared CEL input for one device; build it once and evaluate many selectors on it.

    The values are immutable. Holds a cel-expr-python activation, so it is
    cheap to evaluate against; the activation is replaced from time to time to
    free what evaluations allocated in it (``charge``). Pickles by rebuilding it.
    """

    __slots__ = ("_activation", "_data", "_size_tree", "_spent", "driver", "oversized")

    def __init__(self, driver: str, data: dict[str, Any]) -> None:
        self.driver = driver
        self._data = data
        self._activation = runtime_env().Activation(data)
        self._spent = 0
        self._size_tree: SizeTree | None = None
        self.oversized = not within_declared(driver, data[ATTRIBUTES_VAR], data[CAPACITY_VAR])
        """Larger than API validation allows: cost bounds must use its actual sizes."""

    def size_tree(self) -> SizeTree:
        """The sizes of this device's values, for the runtime cost bound (computed once)."""
        if self._size_tree is None:
            self._size_tree = actual_device(self.driver, self._data[ATTRIBUTES_VAR],
                                            self._data[CAPACITY_VAR])
        return self._size_tree

    def charge(self, units: int) -> None:
        """Record an evaluation of at most ``units`` cost; frees its garbage when due."""
        self._spent += units
        if self._spent > ARENA_BUDGET:
            self._activation = runtime_env().Activation(self._data)
            self._spent = 0

    @property
    def activation(self) -> Any:
        """The cel-expr-python activation holding the ``device.*`` variables."""
        return self._activation

    def __reduce__(self) -> tuple[Any, tuple[str, dict[str, Any]]]:
        # The value messages come from a runtime-built descriptor and do not
        # pickle; ship plain Semver/Quantity objects instead.
        return (_restore, (self.driver, _map_values(self._data, _to_python)))

    def __repr__(self) -> str:
        return f"DeviceInput(driver={self.driver!r})"


def _map_values(data: dict[str, Any], convert: Any) -> dict[str, Any]:
    out = dict(data)
    for var in (ATTRIBUTES_VAR, CAPACITY_VAR):
        out[var] = {domain: {ident: ([convert(v) for v in value] if isinstance(value, list)
                                     else convert(value))
                             for ident, value in entries.items()}
                    for domain, entries in data[var].items()}
    return out


def _to_python(value: Any) -> Any:
    if isinstance(value, SemverMessage):
        return semver_from_message(value)
    if isinstance(value, QuantityMessage):
        return quantity_from_message(value)
    return value


def _to_message(value: Any) -> Any:
    if isinstance(value, Semver):
        return _semver(value)
    if isinstance(value, Quantity):
        return _quantity(value)
    return value


def _restore(driver: str, data: dict[str, Any]) -> DeviceInput:
    return DeviceInput(driver, _map_values(data, _to_message))


@lru_cache(maxsize=4096)
def _semver(value: Semver) -> Any:
    # Fleets repeat the same few versions; the messages are never mutated.
    return semver_message(value)


@lru_cache(maxsize=4096)
def _quantity(value: Quantity) -> Any:
    return quantity_message(value)


def _scalar(name: str, value: Any) -> Any:
    if isinstance(value, str):
        if "\0" in value:
            # cel-expr-python would silently cut the string at the NUL.
            raise CelError(f"attribute {name}: strings containing NUL are not supported")
        return value
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise CelError(f"attribute {name}: integer {value} does not fit into int64")
        return value
    if isinstance(value, Semver):
        return _semver(value)
    raise CelError(f"attribute {name}: unsupported attribute value of type {type(value).__name__}")


def _attribute(name: str, value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_scalar(name, v) for v in value]
    return _scalar(name, value)


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def device_input(driver: str, attributes: Mapping[str, AttributeValue],
                 capacity: Mapping[str, Quantity],
                 allow_multiple_allocations: bool | None = None) -> DeviceInput:
    """Build the CEL input of one device.

    Keys are written as in a ResourceSlice: ``"model"`` (domain = ``driver``)
    or ``"domain/id"``. Versions must already be parsed (``Semver``);
    ``allow_multiple_allocations=None`` reads as false. Raises CelError for a
    value that cannot be represented faithfully (an int outside int64, a
    string containing NUL, an unsupported type).
    """
    attrs: dict[str, dict[str, Any]] = {}
    for name, value in attributes.items():
        domain, ident = _split(name, driver)
        attrs.setdefault(domain, {})[ident] = _attribute(name, value)
    caps: dict[str, dict[str, Any]] = {}
    for name, amount in capacity.items():
        if not isinstance(amount, Quantity):
            raise CelError(f"capacity {name}: expected a Quantity, not {type(amount).__name__}")
        domain, ident = _split(name, driver)
        caps.setdefault(domain, {})[ident] = _quantity(amount)
    return DeviceInput(driver, {
        DRIVER_VAR: driver,
        ATTRIBUTES_VAR: attrs,
        CAPACITY_VAR: caps,
        ALLOW_MULTIPLE_ALLOCATIONS_VAR: bool(allow_multiple_allocations),
    })
