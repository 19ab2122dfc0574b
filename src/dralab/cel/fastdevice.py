"""The device side of the selector fast path (``fastpath``): which devices it
may answer for, and reading one device field as CEL would see it.

A device qualifies only if building its CEL input would succeed and it stays
within the sizes API validation allows; then a selector's declared cost bound
holds for it. Reads never raise: a field CEL would not find (or would find in
two spellings, where grouping order decides) reads as ``UNDECIDED`` and the
caller defers to CEL, which gives its own message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Final

from dralab.api.resource import Device, DeviceAttribute
from dralab.api.semver import Semver, SemverError, parse_semver

__all__ = ["UNDECIDED", "always", "has_value", "lookup", "parsed_semver", "present",
           "qualifies"]

UNDECIDED: Final[Any] = object()
"""A value the fast path cannot read; CEL decides."""

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
# API validation limits (as in costmodel's declared device).
_MAX_ENTRIES: Final = 32
_MAX_DOMAIN: Final = 63
_MAX_ID: Final = 32
_MAX_VALUE: Final = 64
_MAX_DRIVER: Final = 63


@lru_cache(maxsize=4096)
def parsed_semver(text: str) -> Semver | None:
    """The version, or None when it does not parse (then CEL's input could not be built)."""
    try:
        return parse_semver(text)
    except SemverError:
        return None


def _utf8(text: str) -> bool:
    """Whether CEL can hold the string: a lone surrogate fails its input's conversion."""
    if text.isascii():  # the common case, without encoding
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _name_ok(name: str, driver: str) -> bool:
    domain, sep, ident = name.partition("/")
    if not sep:
        domain, ident = driver, name
    return len(domain) <= _MAX_DOMAIN and len(ident) <= _MAX_ID


def _scalar_ok(value: Any) -> bool:
    cls = value.__class__
    if cls is str:
        return len(value) <= _MAX_VALUE and "\0" not in value and _utf8(value)
    if cls is int:
        return bool(_INT64_MIN <= value <= _INT64_MAX)
    return cls is bool


def _attribute_ok(attr: DeviceAttribute) -> bool:
    # The CEL input takes a version first, then the first field set in
    # DeviceAttribute.value's order; read the fields directly (this runs once
    # per device and attribute).
    if attr.version is not None:
        return parsed_semver(attr.version) is not None
    if attr.versions is not None:
        return (len(attr.versions) <= _MAX_VALUE
                and all(parsed_semver(v) is not None for v in attr.versions))
    for value in (attr.int_, attr.bool_, attr.string):
        if value is not None:
            return _scalar_ok(value)
    for values in (attr.ints, attr.bools, attr.strings):
        if values is not None:
            return len(values) <= _MAX_VALUE and all(_scalar_ok(v) for v in values)
    return True


def qualifies(driver: str, device: Device) -> bool:
    """Whether CEL could take the device as input and it stays within API limits.

    Conservative: False sends every evaluation on the device to CEL.
    """
    attributes, capacity = device.attributes, device.capacity
    if len(driver) > _MAX_DRIVER or len(attributes) > _MAX_ENTRIES \
            or len(capacity) > _MAX_ENTRIES:
        return False
    for name, attr in attributes.items():
        # A name of at most _MAX_ID characters fits either way it splits.
        if len(name) > _MAX_ID and not _name_ok(name, driver):
            return False
        # The common scalars: ``_attribute_ok`` inlined (this runs for every device
        # looked at), the same fields in the same order.
        if attr.version is None and attr.versions is None:
            value: Any = attr.int_
            if value is None:
                value = attr.bool_
                if value is None:
                    value = attr.string
            if value is not None:
                cls = value.__class__
                if cls is str:
                    if len(value) > _MAX_VALUE or "\0" in value or not _utf8(value):
                        return False
                elif cls is int:
                    if not _INT64_MIN <= value <= _INT64_MAX:
                        return False
                elif cls is not bool:
                    return False
                continue
        if not _attribute_ok(attr):
            return False
    for name in capacity:  # noqa: SIM110 -- a loop: no generator per device
        if len(name) > _MAX_ID and not _name_ok(name, driver):
            return False
    return True


# --- reading a device field -------------------------------------------------------


def lookup(entries: Mapping[str, Any], driver: str, domain: str, ident: str,
           reaches: Callable[[Any], bool]) -> Any:
    """The one entry CEL would see as ``[domain].ident``; UNDECIDED when missing or
    when both spellings exist (then the grouping order would decide)."""
    found = entries.get(f"{domain}/{ident}")
    if found is not None and not reaches(found):
        found = None
    if domain == driver:
        short = entries.get(ident)
        if short is not None and reaches(short):
            if found is not None:
                return UNDECIDED
            found = short
    return UNDECIDED if found is None else found


def has_value(attr: DeviceAttribute) -> bool:
    """Whether the attribute reaches CEL (one without a value is left out of its input)."""
    return attr.value is not None


def always(_: Any) -> bool:
    """Every capacity entry reaches CEL."""
    return True


def present(entries: Mapping[str, Any], driver: str, domain: str, ident: str | None,
            reaches: Callable[[Any], bool]) -> bool:
    """Whether CEL's ``device.<map>[domain]`` has the key ``ident`` (any key when None).

    Both spellings of one name (``model`` and ``<driver>/model``) make one key,
    so, unlike ``lookup``, two of them are no reason to defer. A domain CEL does
    not have reads as an empty map there, so absent is plainly False.
    """
    if ident is not None:
        found = entries.get(f"{domain}/{ident}")
        if found is not None and reaches(found):
            return True
        if domain != driver:
            return False
        short = entries.get(ident)
        return short is not None and reaches(short)
    for name, entry in entries.items():
        head, sep, _ = name.partition("/")
        if (head if sep else driver) == domain and reaches(entry):
            return True
    return False

