"""Property tests: CEL evaluation agrees with the same comparison done in Python."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from dralab.api.quantity import Quantity
from dralab.api.semver import parse_semver
from dralab.cel import CelRuntimeError, device_input

from .helpers import run

INT64 = st.integers(min_value=-(2**62), max_value=2**62)
# NUL is excluded: device_input() rejects it (cel-expr-python would truncate there).
TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\0"), max_size=12)
SCALAR = st.one_of(INT64, TEXT)
NAMES = st.sampled_from(["x", "y", "model", "cores"])


def _literal(value: int | str) -> str:
    # JSON string escapes (\", \\, \n, \uXXXX) are valid CEL escapes too.
    return str(value) if isinstance(value, int) else json.dumps(value, ensure_ascii=False)


@settings(max_examples=200, deadline=None)
@given(attributes=st.dictionaries(NAMES, SCALAR, max_size=4), other=SCALAR,
       wanted=SCALAR, driver_domain=st.booleans())
def test_equality_selector_matches_python(attributes: dict[str, int | str], other: int | str,
                                          wanted: int | str, driver_domain: bool) -> None:
    # Attributes live in domain "d", either as the driver's own (unqualified keys)
    # or as a foreign domain (qualified keys); "e/x" must never be visible as d's x.
    driver = "d" if driver_domain else "drv"
    keys = {(name if driver_domain else f"d/{name}"): value for name, value in attributes.items()}
    keys["e/x"] = other
    device = device_input(driver, keys, {})
    expression = f'device.attributes["d"].x == {_literal(wanted)}'
    if "x" not in attributes:
        try:
            run(expression, device)
        except CelRuntimeError as err:
            assert str(err).startswith("no such key: x")
        else:
            raise AssertionError("a missing attribute must be an error")
        return
    value = attributes["x"]
    # CEL equality across int and string is simply false, as in Python.
    assert run(expression, device) is (value == wanted)


@settings(max_examples=200, deadline=None)
@given(a=st.integers(min_value=-(10**15), max_value=10**15),
       b=st.integers(min_value=-(10**15), max_value=10**15))
def test_quantity_ordering_matches_python(a: int, b: int) -> None:
    # Amounts in milli-units: exercises fractional quantities too.
    device = device_input("d", {}, {"a": Quantity.from_milli(a), "b": Quantity.from_milli(b)})
    expected = (a > b) - (a < b)
    assert run(f'device.capacity["d"].a.compareTo(device.capacity["d"].b) == {expected}', device)
    assert run(f'device.capacity["d"].a.isLessThan(device.capacity["d"].b) == {str(a < b).lower()}',
               device)
    assert run(f'device.capacity["d"].a.sub(device.capacity["d"].b).compareTo('
               f'quantity("{a - b}m")) == 0', device)


VERSIONS = st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30),
                     st.sampled_from(["", "-alpha", "-alpha.1", "-beta", "-rc.2"]))


@settings(max_examples=200, deadline=None)
@given(a=VERSIONS, b=VERSIONS)
def test_semver_ordering_matches_python(a: tuple[int, int, int, str],
                                        b: tuple[int, int, int, str]) -> None:
    va, vb = (parse_semver(f"{x[0]}.{x[1]}.{x[2]}{x[3]}") for x in (a, b))
    device = device_input("d", {"a": va}, {})
    expected = va.compare(vb)
    assert run(f'device.attributes["d"].a.compareTo(semver("{vb}")) == {expected}', device)
    assert run(f'device.attributes["d"].a.major() == {va.major}', device)
