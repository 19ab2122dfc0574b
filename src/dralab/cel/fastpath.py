"""Common selector shapes evaluated in Python, without building a CEL input.

Most selectors in the wild are a few comparisons of one device field with a
literal, joined by ``&&``/``||``: ``device.driver == "gpu.example.com"`` in
every DeviceClass, ``device.attributes["d"].model == "A100"``,
``device.attributes["d"].driverVersion.major() >= 1``,
``device.capacity["d"].memory.isGreaterThan(quantity("1Mi"))``. Building a
device's CEL input costs far more than such a comparison, and a cold
allocation (new pools, new claim) pays it for every device it looks at.

``compile_fast`` recognises these shapes in the checked AST (as written, before
the rewrites) and returns a predicate over a device's raw fields. The
predicate answers True, False or None; None means "not decided here" and the
caller evaluates the expression with CEL, so every error (a missing attribute,
a type mismatch, a device CEL cannot represent) and its message stay exactly
CEL's. The three-valued combination is exact because CEL's ``&&``/``||`` are
commutative over errors: ``false && error`` and ``error && false`` are both
false, ``true || error`` is true; only an undecided operand that would decide
the result defers to CEL.

A device qualifies only if building its CEL input would succeed and it stays
within the sizes API validation allows (``qualifies``); then the selector's
declared cost bound holds for it, and callers only use predicates of selectors
whose bound is within the limit, so no evaluation could fail on cost.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Final

from dralab.api.quantity import QuantityError, parse_quantity
from dralab.api.resource import Device, DeviceAttribute
from dralab.api.semver import Semver, SemverError, parse_semver

__all__ = ["FastPredicate", "compile_fast", "qualifies"]

FastPredicate = Callable[[str, Device], "bool | None"]
"""(driver, device) -> True/False, or None when CEL must decide."""

_Value = Callable[[str, Device], Any]  # the operand's value, or _UNDECIDED

_UNDECIDED: Final[Any] = object()
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
# API validation limits (as in costmodel's declared device).
_MAX_ENTRIES: Final = 32
_MAX_DOMAIN: Final = 63
_MAX_ID: Final = 32
_MAX_VALUE: Final = 64
_MAX_DRIVER: Final = 63

_ORDER: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "_==_": lambda a, b: a == b, "_!=_": lambda a, b: a != b,
    "_<_": lambda a, b: a < b, "_<=_": lambda a, b: a <= b,
    "_>_": lambda a, b: a > b, "_>=_": lambda a, b: a >= b,
}
_FLIPPED: Final = {"_==_": "_==_", "_!=_": "_!=_", "_<_": "_>_", "_<=_": "_>=_",
                   "_>_": "_<_", "_>=_": "_<=_"}
_VERSION_PARTS: Final = frozenset({"major", "minor", "patch"})


@lru_cache(maxsize=4096)
def _semver(text: str) -> Semver | None:
    try:
        return parse_semver(text)
    except SemverError:
        return None


def _name_ok(name: str, driver: str) -> bool:
    domain, sep, ident = name.partition("/")
    if not sep:
        domain, ident = driver, name
    return len(domain) <= _MAX_DOMAIN and len(ident) <= _MAX_ID


def _scalar_ok(value: Any) -> bool:
    cls = value.__class__
    if cls is str:
        return len(value) <= _MAX_VALUE and "\0" not in value
    if cls is int:
        return bool(_INT64_MIN <= value <= _INT64_MAX)
    return cls is bool


def _attribute_ok(attr: DeviceAttribute) -> bool:
    # The CEL input takes a version first, then the first field set in
    # DeviceAttribute.value's order; read the fields directly (this runs once
    # per device and attribute).
    if attr.version is not None:
        return _semver(attr.version) is not None
    if attr.versions is not None:
        return (len(attr.versions) <= _MAX_VALUE
                and all(_semver(v) is not None for v in attr.versions))
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
                    if len(value) > _MAX_VALUE or "\0" in value:
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


# --- recognising the AST -------------------------------------------------------------


def _const(expr: Any) -> tuple[str, Any] | None:
    """("string"|"int"|"bool", value) of a literal; None otherwise."""
    if expr.WhichOneof("kind") != "const_expr":
        return None
    c = expr.const_expr
    kind = c.WhichOneof("kind")
    if kind == "string_value":
        return "string", c.string_value
    if kind == "int64_value":
        return "int", c.int64_value
    if kind == "bool_value":
        return "bool", c.bool_value
    return None


def _call(expr: Any) -> Any | None:
    return expr.call_expr if expr.WhichOneof("kind") == "call_expr" else None


def _domain_field(expr: Any) -> tuple[str, str, str] | None:
    """``device.attributes["D"].ID`` / ``device.capacity["D"].ID`` -> (map, D, ID)."""
    if expr.WhichOneof("kind") != "select_expr" or expr.select_expr.test_only:
        return None
    operand = _call(expr.select_expr.operand)
    if operand is None or operand.function != "_[_]" or operand.HasField("target") \
            or len(operand.args) != 2:
        return None
    root, key = operand.args
    literal = _const(key)
    if root.WhichOneof("kind") != "ident_expr" or literal is None or literal[0] != "string":
        return None
    name = root.ident_expr.name
    if name not in ("device.attributes", "device.capacity"):
        return None
    return name, literal[1], expr.select_expr.field


def _lookup(entries: Mapping[str, Any], driver: str, domain: str, ident: str,
            present: Callable[[Any], bool]) -> Any:
    """The one entry CEL would see as ``[domain].ident``; _UNDECIDED when missing or
    when both spellings exist (then the grouping order would decide)."""
    found = entries.get(f"{domain}/{ident}")
    if found is not None and not present(found):
        found = None
    if domain == driver:
        short = entries.get(ident)
        if short is not None and present(short):
            if found is not None:
                return _UNDECIDED
            found = short
    return _UNDECIDED if found is None else found


def _has_value(attr: DeviceAttribute) -> bool:
    return attr.value is not None


def _always(_: Any) -> bool:
    return True


def _operand(expr: Any) -> tuple[str, _Value] | None:
    """A recognised device-side operand: (type, value getter)."""
    kind = expr.WhichOneof("kind")
    if kind == "ident_expr" and expr.ident_expr.name == "device.driver":
        return "string", lambda driver, device: driver
    field = _domain_field(expr)
    if field is not None and field[0] == "device.attributes":
        _, domain, ident = field

        def attribute(driver: str, device: Device) -> Any:
            attr = _lookup(device.attributes, driver, domain, ident, _has_value)
            if attr is _UNDECIDED:
                return _UNDECIDED
            if attr.version is not None:
                return _semver(attr.version)
            value = attr.value
            return _UNDECIDED if isinstance(value, list) else value

        return "attribute", attribute
    call = _call(expr)
    if call is None or not call.HasField("target"):
        return None
    target = _domain_field(call.target)
    if target is None:
        return None
    if target[0] == "device.attributes" and call.function in _VERSION_PARTS and not call.args:
        part = call.function
        getter = _operand(call.target)
        assert getter is not None

        def version_part(driver: str, device: Device) -> Any:
            value = getter[1](driver, device)
            return getattr(value, part) if isinstance(value, Semver) else _UNDECIDED

        return "int", version_part
    if call.function == "compareTo" and len(call.args) == 1:
        compare = _comparison(target, call.args[0])
        if compare is not None:
            return "int", compare
    return None


def _literal_argument(target: tuple[str, str, str], arg: Any) -> Any:
    """``quantity("...")`` for capacity, ``semver("...")`` for attributes; None otherwise."""
    call = _call(arg)
    if call is None or call.HasField("target") or len(call.args) != 1:
        return None
    literal = _const(call.args[0])
    if literal is None or literal[0] != "string":
        return None
    if target[0] == "device.capacity" and call.function == "quantity":
        try:
            return parse_quantity(literal[1])
        except QuantityError:
            return None
    if target[0] == "device.attributes" and call.function == "semver":
        return _semver(literal[1])
    return None


def _comparison(target: tuple[str, str, str], arg: Any) -> _Value | None:
    """``<target>.compareTo(<literal>)`` as a getter of -1/0/1."""
    other = _literal_argument(target, arg)
    if other is None:
        return None
    kind, domain, ident = target
    if kind == "device.capacity":
        nano = other.nano

        def capacity(driver: str, device: Device) -> Any:
            cap = _lookup(device.capacity, driver, domain, ident, _always)
            if cap is _UNDECIDED:
                return _UNDECIDED
            mine = cap.value.nano
            return (mine > nano) - (mine < nano)

        return capacity
    version: Semver = other

    def semver(driver: str, device: Device) -> Any:
        attr = _lookup(device.attributes, driver, domain, ident, _has_value)
        if attr is _UNDECIDED or attr.version is None:
            return _UNDECIDED
        mine = _semver(attr.version)
        return _UNDECIDED if mine is None else mine.compare(version)

    return semver


def _predicate(expr: Any) -> FastPredicate | None:
    call = _call(expr)
    if call is None:
        operand = _operand(expr)
        if operand is None or operand[0] != "attribute":
            return None
        getter = operand[1]

        def boolean(driver: str, device: Device) -> bool | None:
            value = getter(driver, device)
            return value if value is True or value is False else None

        return boolean
    if call.HasField("target"):
        return _member_predicate(call)
    if call.function in ("_&&_", "_||_"):
        parts = [_predicate(a) for a in call.args]
        if len(parts) != 2 or None in parts:
            return None
        left, right = parts
        assert left is not None and right is not None
        deciding = call.function == "_||_"  # the value that decides the result

        def logical(driver: str, device: Device) -> bool | None:
            a = left(driver, device)
            if a is deciding:
                return deciding
            b = right(driver, device)
            if b is deciding:
                return deciding
            return None if a is None or b is None else not deciding

        return logical
    if call.function == "!_" and len(call.args) == 1:
        inner = _predicate(call.args[0])
        if inner is None:
            return None

        def negation(driver: str, device: Device) -> bool | None:
            value = inner(driver, device)
            return None if value is None else not value

        return negation
    if call.function in _ORDER and len(call.args) == 2:
        return _relation(call.function, call.args[0], call.args[1])
    return None


def _member_predicate(call: Any) -> FastPredicate | None:
    """``<capacity|version>.isGreaterThan(lit)`` / ``.isLessThan(lit)``."""
    if call.function not in ("isGreaterThan", "isLessThan") or len(call.args) != 1:
        return None
    target = _domain_field(call.target)
    if target is None:
        return None
    compare = _comparison(target, call.args[0])
    if compare is None:
        return None
    sign = 1 if call.function == "isGreaterThan" else -1

    def member(driver: str, device: Device) -> bool | None:
        value = compare(driver, device)
        return None if value is _UNDECIDED else value == sign

    return member


def _relation(function: str, left: Any, right: Any) -> FastPredicate | None:
    """``<operand> op <literal>`` (either side), for types whose meaning is plain."""
    literal = _const(right)
    operand = _operand(left)
    if literal is None or operand is None:
        literal, operand = _const(left), _operand(right)
        function = _FLIPPED[function]
    if literal is None or operand is None:
        return None
    (literal_type, constant), (operand_type, getter) = literal, operand
    compare = _ORDER[function]
    ordered = function not in ("_==_", "_!=_")
    if ordered and literal_type != "int":
        return None  # string and bool ordering: left to CEL
    if operand_type in ("string", "int"):
        if operand_type != literal_type:
            return None

        def fixed(driver: str, device: Device) -> bool | None:
            value = getter(driver, device)
            return None if value is _UNDECIDED else compare(value, constant)

        return fixed
    # An attribute: its type is only known per device; mixed types go to CEL.
    wanted = {"string": str, "int": int, "bool": bool}[literal_type]

    def attribute(driver: str, device: Device) -> bool | None:
        value = getter(driver, device)
        if value.__class__ is not wanted:
            return None
        return compare(value, constant)

    return attribute


def compile_fast(expr: Any) -> FastPredicate | None:
    """The predicate for a checked expression of a recognised shape; None otherwise."""
    return _predicate(expr)
