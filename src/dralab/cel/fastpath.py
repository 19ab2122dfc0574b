"""Common selector shapes evaluated in Python, without building a CEL input.

Most selectors in the wild are a few comparisons of one device field with a
literal, joined by ``&&``/``||``: ``device.driver == "gpu.example.com"`` in
every DeviceClass, ``device.attributes["d"].model == "A100"``,
``device.attributes["d"].driverVersion.major() >= 1``,
``device.capacity["d"].memory.isGreaterThan(quantity("1Mi"))``, and the
string forms: ``in`` a list of literals, ``startsWith``/``endsWith``/
``contains``/``matches`` with a literal, attribute presence (``"x" in
device.attributes["d"]``, ``has(device.attributes["d"].x)``). Building a
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
within the sizes API validation allows (``fastdevice.qualifies``); then the
selector's declared cost bound holds for it, and callers only use predicates of
selectors whose bound is within the limit, so no evaluation could fail on cost.

Values of another type than the literal's (CEL's heterogeneous equality would
say false; an ordering or a string function would fail) defer too: the
predicate answers only where the types are the plain ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from dralab.api.quantity import QuantityError, parse_quantity
from dralab.api.resource import Device
from dralab.api.semver import Semver
from dralab.cel.fastdevice import (
    UNDECIDED,
    always,
    has_value,
    lookup,
    parsed_semver,
    present,
    qualifies,
)
from dralab.cel.regex import RegexError, compile_re2

__all__ = ["FastPredicate", "compile_fast", "qualifies"]

FastPredicate = Callable[[str, Device], "bool | None"]
"""(driver, device) -> True/False, or None when CEL must decide."""

_Value = Callable[[str, Device], Any]  # the operand's value, or UNDECIDED

_ORDER: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "_==_": lambda a, b: a == b, "_!=_": lambda a, b: a != b,
    "_<_": lambda a, b: a < b, "_<=_": lambda a, b: a <= b,
    "_>_": lambda a, b: a > b, "_>=_": lambda a, b: a >= b,
}
_FLIPPED: Final = {"_==_": "_==_", "_!=_": "_!=_", "_<_": "_>_", "_<=_": "_>=_",
                   "_>_": "_<_", "_>=_": "_<=_"}
_VERSION_PARTS: Final = frozenset({"major", "minor", "patch"})
_MAPS: Final = {"device.attributes": has_value, "device.capacity": always}
_TYPES: Final = {"string": str, "int": int, "bool": bool}


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



def _operand(expr: Any) -> tuple[str, _Value] | None:
    """A recognised device-side operand: (type, value getter)."""
    kind = expr.WhichOneof("kind")
    if kind == "ident_expr" and expr.ident_expr.name == "device.driver":
        return "string", lambda driver, device: driver
    field = _domain_field(expr)
    if field is not None and field[0] == "device.attributes":
        _, domain, ident = field

        def attribute(driver: str, device: Device) -> Any:
            attr = lookup(device.attributes, driver, domain, ident, has_value)
            if attr is UNDECIDED:
                return UNDECIDED
            if attr.version is not None:
                return parsed_semver(attr.version)
            value = attr.value
            return UNDECIDED if isinstance(value, list) else value

        return "attribute", attribute
    call = _call(expr)
    if call is None or not call.HasField("target"):
        return None
    target = _domain_field(call.target)
    if target is None:
        if call.function == "compareTo" and len(call.args) == 1:
            # ``quantity("1Gi").compareTo(<capacity>)``: the field's comparison, negated.
            mirrored = _field_against_literal(call.args[0], call.target)
            if mirrored is not None:
                return "int", lambda driver, device: _negated(mirrored(driver, device))
        return None
    if target[0] == "device.attributes" and call.function in _VERSION_PARTS and not call.args:
        part = call.function
        getter = _operand(call.target)
        assert getter is not None

        def version_part(driver: str, device: Device) -> Any:
            value = getter[1](driver, device)
            return getattr(value, part) if isinstance(value, Semver) else UNDECIDED

        return "int", version_part
    if call.function == "compareTo" and len(call.args) == 1:
        compare = _comparison(target, call.args[0])
        if compare is not None:
            return "int", compare
    return None


def _negated(value: Any) -> Any:
    return value if value is UNDECIDED else -value


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
        return parsed_semver(literal[1])
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
            cap = lookup(device.capacity, driver, domain, ident, always)
            if cap is UNDECIDED:
                return UNDECIDED
            mine = cap.value.nano
            return (mine > nano) - (mine < nano)

        return capacity
    version: Semver = other

    def semver(driver: str, device: Device) -> Any:
        attr = lookup(device.attributes, driver, domain, ident, has_value)
        if attr is UNDECIDED or attr.version is None:
            return UNDECIDED
        mine = parsed_semver(attr.version)
        return UNDECIDED if mine is None else mine.compare(version)

    return semver


def _predicate(expr: Any) -> FastPredicate | None:
    call = _call(expr)
    if call is None:
        if expr.WhichOneof("kind") == "select_expr" and expr.select_expr.test_only:
            return _has(expr.select_expr)
        literal = _const(expr)
        if literal is not None:
            constant = literal[1] if literal[0] == "bool" else None
            return None if constant is None else lambda driver, device: constant
        operand = _operand(expr)
        if operand is None or operand[0] != "attribute":
            return None
        getter = operand[1]

        def boolean(driver: str, device: Device) -> bool | None:
            value = getter(driver, device)
            return value if value is True or value is False else None

        return boolean
    if call.HasField("target"):
        if call.function in _STRING_TESTS:
            return _string_test(call)
        return _member_predicate(call)
    if call.function == "@in" and len(call.args) == 2:
        return _membership(call.args[0], call.args[1])
    if call.function == "_?_:_" and len(call.args) == 3:
        return _conditional(call.args)
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
    """``<capacity|version>.isGreaterThan(lit)`` / ``.isLessThan(lit)``, and the literal
    first: ``quantity("1Gi").isLessThan(<capacity>)`` (the same test, mirrored)."""
    if call.function not in ("isGreaterThan", "isLessThan") or len(call.args) != 1:
        return None
    sign = 1 if call.function == "isGreaterThan" else -1
    compare = _field_against_literal(call.target, call.args[0])
    if compare is None:
        compare = _field_against_literal(call.args[0], call.target)
        sign = -sign
    if compare is None:
        return None

    def member(driver: str, device: Device) -> bool | None:
        value = compare(driver, device)
        return None if value is UNDECIDED else value == sign

    return member


def _field_against_literal(field: Any, literal: Any) -> _Value | None:
    """``<field>.compareTo(<literal>)`` as a getter of -1/0/1, for a capacity against
    ``quantity("...")`` or an attribute against ``semver("...")``; None otherwise."""
    target = _domain_field(field)
    return None if target is None else _comparison(target, literal)


def _typed_equality(function: str, left: Any, right: Any) -> FastPredicate | None:
    """``<capacity> ==/!= quantity("...")``, ``<attribute> ==/!= semver("...")`` (either
    side). CEL's equality on these types is their comparison's 0 (a semver's build
    metadata does not count, 1Gi equals 1024Mi); another type on the device side is
    CEL's heterogeneous false, left to CEL as everywhere else."""
    compare = _field_against_literal(left, right) or _field_against_literal(right, left)
    if compare is None:
        return None
    equal = function == "_==_"

    def typed_equality(driver: str, device: Device) -> bool | None:
        value = compare(driver, device)
        return None if value is UNDECIDED else (value == 0) is equal

    return typed_equality


def _relation(function: str, left: Any, right: Any) -> FastPredicate | None:
    """``<operand> op <literal>`` (either side), for types whose meaning is plain."""
    if function in ("_==_", "_!=_"):
        typed = _typed_equality(function, left, right)
        if typed is not None:
            return typed
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
    if ordered and literal_type == "bool":
        return None  # bool ordering: left to CEL
    # Strings order as CEL's, byte-wise on UTF-8: the same order as Python's by
    # code point, since UTF-8 keeps code point order (and qualifies() lets no
    # string through that is not UTF-8).
    if operand_type in ("string", "int"):
        if operand_type != literal_type:
            return None

        def fixed(driver: str, device: Device) -> bool | None:
            value = getter(driver, device)
            return None if value is UNDECIDED else compare(value, constant)

        return fixed
    # An attribute: its type is only known per device; mixed types go to CEL.
    wanted = {"string": str, "int": int, "bool": bool}[literal_type]

    def attribute(driver: str, device: Device) -> bool | None:
        value = getter(driver, device)
        if value.__class__ is not wanted:
            return None
        return compare(value, constant)

    return attribute


# --- the string forms -----------------------------------------------------------------


_STRING_TESTS: Final = frozenset({"startsWith", "endsWith", "contains", "matches"})


def _string_value(expr: Any) -> _Value | None:
    """A device-side operand that may be a string (the driver, or an attribute)."""
    operand = _operand(expr)
    if operand is None or operand[0] not in ("string", "attribute"):
        return None
    return operand[1]


def _string_test(call: Any) -> FastPredicate | None:
    """``<string>.startsWith|endsWith|contains|matches("literal")``."""
    if len(call.args) != 1:
        return None
    literal = _const(call.args[0])
    getter = _string_value(call.target)
    if literal is None or literal[0] != "string" or getter is None:
        return None
    text: str = literal[1]
    test: Callable[[str], bool]
    if call.function == "matches":
        # RE2, as cel-cpp's matches(): a search, not a full match. A pattern the
        # Go dialect refuses (``\\C``) stays with CEL, which accepts it.
        try:
            search = compile_re2(text).search
        except RegexError:
            return None
        test = _remembered(lambda value: search(value) is not None)
    else:
        # Code point prefixes, suffixes and substrings are the UTF-8 byte ones.
        test = {"startsWith": lambda value: value.startswith(text),
                "endsWith": lambda value: value.endswith(text),
                "contains": lambda value: text in value}[call.function]

    def string_test(driver: str, device: Device) -> bool | None:
        value = getter(driver, device)
        # Another type has no such overload: CEL's error, CEL's message.
        if value.__class__ is not str:
            return None
        try:
            return test(value)
        except UnicodeEncodeError:  # not UTF-8: CEL could not hold it either
            return None

    return string_test


_REMEMBERED: Final = 1024


def _remembered(test: Callable[[str], bool]) -> Callable[[str], bool]:
    """``test`` with its last answers kept: a fleet repeats a few values (productName)
    on every device, and one RE2 search through its bindings costs about 4 us."""
    seen: dict[str, bool] = {}

    def remembered(value: str) -> bool:
        found = seen.get(value)
        if found is None:
            if len(seen) >= _REMEMBERED:
                seen.clear()  # bounded: a fleet of all-distinct values must not grow it
            found = seen[value] = test(value)
        return found

    return remembered


def _membership(element: Any, container: Any) -> FastPredicate | None:
    """``<operand> in [literals]`` and the presence tests ``"id" in device.<map>["D"]``,
    ``"D" in device.<map>``."""
    if container.WhichOneof("kind") == "list_expr":
        return _in_list(element, container.list_expr.elements)
    key = _const(element)
    if key is None or key[0] != "string":
        return None
    if container.WhichOneof("kind") == "ident_expr" and container.ident_expr.name in _MAPS:
        return _presence(container.ident_expr.name, None, key[1])
    index = _call(container)
    if index is None or index.function != "_[_]" or index.HasField("target") \
            or len(index.args) != 2:
        return None
    root, domain = index.args
    literal = _const(domain)
    if root.WhichOneof("kind") != "ident_expr" or root.ident_expr.name not in _MAPS \
            or literal is None or literal[0] != "string":
        return None
    return _presence(root.ident_expr.name, literal[1], key[1])


def _has(select: Any) -> FastPredicate | None:
    """``has(device.<map>["D"].id)`` and ``has(device.<map>.D)``."""
    operand = select.operand
    if operand.WhichOneof("kind") == "ident_expr" and operand.ident_expr.name in _MAPS:
        return _presence(operand.ident_expr.name, None, select.field)
    index = _call(operand)
    if index is None or index.function != "_[_]" or index.HasField("target") \
            or len(index.args) != 2:
        return None
    root, domain = index.args
    literal = _const(domain)
    if root.WhichOneof("kind") != "ident_expr" or root.ident_expr.name not in _MAPS \
            or literal is None or literal[0] != "string":
        return None
    return _presence(root.ident_expr.name, literal[1], select.field)


def _presence(kind: str, domain: str | None, key: str) -> FastPredicate:
    """Whether the key is in ``device.<kind>[domain]`` (in ``device.<kind>`` if no domain).

    Never an error in CEL: a domain the device lacks is an empty map."""
    reaches = _MAPS[kind]
    attributes = kind == "device.attributes"

    def presence(driver: str, device: Device) -> bool:
        entries = device.attributes if attributes else device.capacity
        if domain is None:
            return present(entries, driver, key, None, reaches)
        return present(entries, driver, domain, key, reaches)

    return presence


def _in_list(element: Any, items: Any) -> FastPredicate | None:
    """``<operand> in [l1, l2, ...]``, literals of one type (an empty list: CEL)."""
    literals = [_const(item) for item in items]
    operand = _operand(element)
    if not literals or operand is None or None in literals:
        return None
    kinds = {literal[0] for literal in literals if literal is not None}
    if len(kinds) != 1:
        return None
    literal_type = kinds.pop()
    operand_type, getter = operand
    if operand_type != "attribute" and operand_type != literal_type:
        return None
    wanted = _TYPES[literal_type]
    # A set, not a list: one hash per device; the class check keeps True and 1 apart.
    values = frozenset(literal[1] for literal in literals if literal is not None)

    def in_list(driver: str, device: Device) -> bool | None:
        value = getter(driver, device)
        if value.__class__ is not wanted:
            return None
        return value in values

    return in_list


def _conditional(args: Any) -> FastPredicate | None:
    """``c ? a : b`` over predicates; an undecided condition defers."""
    parts = [_predicate(a) for a in args]
    if None in parts:
        return None
    condition, then, otherwise = parts
    assert condition is not None and then is not None and otherwise is not None

    def conditional(driver: str, device: Device) -> bool | None:
        chosen = condition(driver, device)
        if chosen is None:
            return None
        return (then if chosen else otherwise)(driver, device)

    return conditional


def compile_fast(expr: Any) -> FastPredicate | None:
    """The predicate for a checked expression of a recognised shape; None otherwise."""
    return _predicate(expr)
