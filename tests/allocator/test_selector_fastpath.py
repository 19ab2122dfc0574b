"""The selector fast path (cel.fastpath) against the plain CEL path, device by device.

Every recognised shape must give exactly CEL's verdict: the same True/False,
and where CEL fails (missing attribute, type mismatch, a device CEL cannot
take as input), the fast path must defer so that the failure and its message
are CEL's.
"""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralab.allocator import SliceIndex
from dralab.allocator.index import DeviceRecord, SelectorFailure
from dralab.allocator.selection import Selector, _evaluate, cel_features, selector
from dralab.api.base import ObjectMeta
from dralab.api.quantity import parse_quantity
from dralab.api.resource import (
    Device,
    DeviceAttribute,
    DeviceCapacity,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from dralab.cel.fastpath import qualifies

DRIVER = "drv.example.com"
OTHER = "other.example.com"
FEATURES = cel_features(True, False)
IDS = ["a", "b", "v"]
NAMES = ["a", "b", "v", f"{DRIVER}/a", f"{DRIVER}/v", f"{OTHER}/a", f"{OTHER}/b",
         # over API validation's limits: identifier, domain
         "n" * 33, f"{DRIVER}/{'i' * 33}", f"{'d' * 64}/a"]

attribute_values = st.one_of(
    st.builds(lambda s: DeviceAttribute(string=s),
              st.sampled_from(["", "A100", "x", "mig-1g", "nul\0byte", "y" * 70,
                               "é-100", "B", "lone\ud800surrogate"])),
    st.builds(lambda i: DeviceAttribute(int_=i),
              st.sampled_from([0, 1, 2, -3, 2**63 - 1, 2**63])),
    st.builds(lambda b: DeviceAttribute(bool_=b), st.booleans()),
    st.builds(lambda v: DeviceAttribute(version=v),
              st.sampled_from(["1.2.3", "0.9.0", "2.0.0-rc.1", "1.2", "bad"])),
    st.builds(lambda xs: DeviceAttribute(ints=xs), st.lists(st.integers(-2, 2), max_size=2)),
    st.just(DeviceAttribute()),
)
capacities = st.sampled_from(["0", "1", "500m", "1Mi", "2", "1Gi", "40Gi"])


@st.composite
def devices(draw: st.DrawFn) -> DeviceRecord:
    attributes = draw(st.dictionaries(st.sampled_from(NAMES), attribute_values, max_size=5))
    capacity = draw(st.dictionaries(st.sampled_from(NAMES),
                                    capacities.map(lambda q: DeviceCapacity(
                                        value=parse_quantity(q))), max_size=3))
    device = Device(name="dev", attributes=attributes, capacity=capacity)
    index = SliceIndex([ResourceSlice(metadata=ObjectMeta(name="s"), spec=ResourceSliceSpec(
        driver=DRIVER, node_name="n", pool=ResourcePool(name="p", resource_slice_count=1),
        devices=[device]))])
    return index.candidate_slices("n")[0].devices[0]


def _string(s: str) -> str:
    return '"' + s + '"'


domains = st.sampled_from([DRIVER, OTHER, "unknown.example.com"])
ids = st.sampled_from(IDS)
ops = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
literals = st.one_of(st.sampled_from(['"A100"', '"x"', '""', "1", "0", "-3", "true", "false",
                                      '"é"', '"B"']))
# Literal lists of one type each, and a mixed one (CEL's checker refuses it; a
# compile error never reaches either path).
lists = st.sampled_from(['["A100", "x"]', '["mig-1g"]', '[0, 1, 2]', '[-3]', '[true]',
                         '[false, true]', '[]', '["", "B", "é-100"]'])
patterns = st.sampled_from(["^A", "1g$", "[0-9]+", "(?i)a1", "\\\\C", "é", "", "^$",
                            "^(mig|A)", "x*"])


@st.composite
def atoms(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 12))
    attr = f"device.attributes[{_string(draw(domains))}].{draw(ids)}"
    cap = f"device.capacity[{_string(draw(domains))}].{draw(ids)}"
    if kind >= 8:
        return draw(string_atoms(attr))
    if kind == 0:
        return f"device.driver {draw(st.sampled_from(['==', '!=']))} " \
               f"{_string(draw(st.sampled_from([DRIVER, OTHER])))}"
    if kind == 1:
        return f"{attr} {draw(ops)} {draw(literals)}"
    if kind == 2:
        return f"{draw(literals)} {draw(ops)} {attr}"
    if kind == 3:
        return attr
    if kind == 4:
        part = draw(st.sampled_from(["major", "minor", "patch"]))
        return f"{attr}.{part}() {draw(ops)} {draw(st.integers(-1, 3))}"
    if kind == 5:
        version = draw(st.sampled_from(["1.2.3", "1.0.0", "2.0.0-rc.1", "1.2.3+build",
                                        "bad"]))
        return draw(typed_atoms(attr, f'semver("{version}")'))
    quantity = draw(st.sampled_from(["1", "1Mi", "2Gi", "500m", "1024Ki", "bad"]))
    return draw(typed_atoms(cap, f'quantity("{quantity}")'))


@st.composite
def typed_atoms(draw: st.DrawFn, field: str, literal: str) -> str:
    """A field against a quantity or semver literal: the member tests and compareTo
    with either side as the receiver, and == / != either way round."""
    how = draw(st.sampled_from(["isGreaterThan", "isLessThan", "compareTo", "==", "!="]))
    left, right = draw(st.sampled_from([(field, literal), (literal, field)]))
    if how in ("==", "!="):
        return f"{left} {how} {right}"
    call = f"{left}.{how}({right})"
    return f"{call} {draw(ops)} {draw(st.integers(-1, 1))}" if how == "compareTo" else call


@st.composite
def string_atoms(draw: st.DrawFn, attr: str) -> str:
    """The forms issue 34 added: in-list, string functions, presence."""
    kind = draw(st.integers(0, 4))
    subject = draw(st.sampled_from([attr, attr, "device.driver"]))
    if kind == 0:
        return f"{subject} in {draw(lists)}"
    if kind == 1:
        how = draw(st.sampled_from(["startsWith", "endsWith", "contains"]))
        text = draw(st.sampled_from(["A", "1g", "", "é", "drv", ".com", "x"]))
        return f"{subject}.{how}({_string(text)})"
    if kind == 2:
        return f'{subject}.matches("{draw(patterns)}")'
    domain = _string(draw(domains))
    which = draw(st.sampled_from(["attributes", "capacity"]))
    if kind == 3:
        key = _string(draw(st.sampled_from([*IDS, DRIVER, OTHER, "unknown.example.com"])))
        return draw(st.sampled_from([f"{key} in device.{which}[{domain}]",
                                     f"{key} in device.{which}"]))
    return f"has(device.{which}[{domain}].{draw(ids)})"


expressions = st.recursive(
    atoms(),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["&&", "||"]), inner).map(
            lambda t: f"({t[0]}) {t[1]} ({t[2]})"),
        inner.map(lambda e: f"!({e})"),
        st.tuples(inner, inner, inner).map(lambda t: f"({t[0]}) ? ({t[1]}) : ({t[2]})")),
    max_leaves=4)


def _verdict(rec: DeviceRecord, sel: Selector) -> object:
    made = _evaluate(rec, sel)
    return made.message if isinstance(made, SelectorFailure) else made


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, devices())
def test_fast_path_gives_cel_verdict(expression: str, rec: DeviceRecord) -> None:
    sel = selector(expression, FEATURES)
    plain = dataclasses.replace(sel, fast=None)
    fast = _verdict(rec, sel)
    # A fresh record: the CEL path must not see what the fast path cached.
    fresh = dataclasses.replace(rec, sel_cache={}, cel_inputs=None, fast_ok=None,
                                default_amounts={})
    assert fast == _verdict(fresh, plain), expression


def test_common_shapes_are_recognised() -> None:
    for expression in [
        f'device.driver == "{DRIVER}"',
        f'device.attributes["{DRIVER}"].driverVersion.major() >= 1 && '
        f'device.capacity["{DRIVER}"].memory.isGreaterThan(quantity("1Mi"))',
        f'device.attributes["{DRIVER}"].profile == "mig-1g" || '
        f'device.attributes["{DRIVER}"].productName != "A100"',
        f"device.capacity['{DRIVER}'].counters.compareTo(quantity('2')) >= 0 && "
        f"device.attributes['{DRIVER}'].preallocate",
    ]:
        assert selector(expression, FEATURES).fast is not None, expression
    for expression in ['device.attributes["d"].model.size() > 1',
                       'device.attributes["d"].model < device.attributes["d"].other',
                       'device.attributes["d"].flag < true',
                       'device.attributes["d"].model in []',
                       'device.attributes["d"].model.matches("\\\\C")',
                       'device.attributes["d"].model.startsWith(device.driver)']:
        assert selector(expression, FEATURES).fast is None, expression


def _record(attributes: dict[str, DeviceAttribute],
            capacity: dict[str, str] | None = None) -> DeviceRecord:
    device = Device(name="dev", attributes=attributes, capacity={
        name: DeviceCapacity(value=parse_quantity(q)) for name, q in (capacity or {}).items()})
    index = SliceIndex([ResourceSlice(metadata=ObjectMeta(name="s"), spec=ResourceSliceSpec(
        driver=DRIVER, node_name="n", pool=ResourcePool(name="p", resource_slice_count=1),
        devices=[device]))])
    return index.candidate_slices("n")[0].devices[0]


_GPU = _record({"model": DeviceAttribute(string="NVIDIA A100-SXM4"),
                "index": DeviceAttribute(int_=3), "mig": DeviceAttribute(bool_=True),
                "driverVersion": DeviceAttribute(version="550.54.15"),
                f"{OTHER}/zone": DeviceAttribute(string="é-1"),
                "empty": DeviceAttribute()},
               {"memory": "80Gi"})
_A = f'device.attributes["{DRIVER}"]'
_C = f'device.capacity["{DRIVER}"]'

# (expression, the fast path's verdict on _GPU: True/False, or None = CEL decides)
FORMS: list[tuple[str, bool | None]] = [
    # in a list of literals
    (f'{_A}.model in ["NVIDIA A100-SXM4", "NVIDIA L4"]', True),
    (f'{_A}.model in ["NVIDIA L4"]', False),
    (f"{_A}.index in [1, 2, 3]", True),
    (f"{_A}.mig in [false]", False),
    (f'device.driver in ["{DRIVER}"]', True),
    (f"{_A}.driverVersion.major() in [550, 560]", True),
    (f"{_A}.index in [true]", None),          # int against bools: CEL's false
    (f'{_A}.mig in [1]', None),               # bool against ints (True == 1 in Python)
    (f'{_A}.missing in ["x"]', None),         # no such key: CEL's error
    (f'{_A}.driverVersion in ["550.54.15"]', None),  # a version, not a string
    # string functions
    (f'{_A}.model.startsWith("NVIDIA")', True),
    (f'{_A}.model.endsWith("SXM4")', True),
    (f'{_A}.model.contains("A100")', True),
    (f'{_A}.model.contains("H100")', False),
    (f'device.attributes["{OTHER}"].zone.startsWith("é")', True),
    ('device.driver.endsWith(".example.com")', True),
    (f'{_A}.index.startsWith("3")', None),    # no overload for an int: CEL's error
    (f'{_A}.missing.contains("")', None),
    # matches: RE2, a search
    (f'{_A}.model.matches("A[0-9]+")', True),
    (f'{_A}.model.matches("^A[0-9]+")', False),
    (f'{_A}.model.matches("(?i)nvidia a100")', True),
    (f'device.attributes["{OTHER}"].zone.matches("^.-1$")', True),  # é is one character
    (f'{_A}.index.matches("3")', None),
    # presence
    (f'"model" in {_A}', True),
    (f'"empty" in {_A}', False),              # no value: not in CEL's input
    (f'"zone" in {_A}', False),
    (f'"zone" in device.attributes["{OTHER}"]', True),
    ('"x" in device.attributes["unknown.example.com"]', False),
    (f'"{OTHER}" in device.attributes', True),
    ('"unknown.example.com" in device.attributes', False),
    (f'"memory" in {_C}', True),
    (f"has({_A}.model)", True),
    (f"has({_A}.nothing)", False),
    (f"has({_C}.memory)", True),
    # string ordering, as CEL: UTF-8 bytes, i.e. code points
    (f'{_A}.model < "NVIDIA B"', True),
    (f'device.attributes["{OTHER}"].zone > "z"', True),
    (f'{_A}.index < "z"', None),
    # quantity and semver, combined with !, (), ?:
    (f'{_C}.memory.isGreaterThan(quantity("40Gi")) && '
     f'!({_A}.driverVersion.isLessThan(semver("550.0.0")))', True),
    (f'{_C}.memory.compareTo(quantity("80Gi")) == 0 || {_A}.missing == 1', True),
    (f'({_A}.missing == 1) && !("model" in {_A})', False),   # false && error: false
    (f'({_A}.missing == 1) || !("model" in {_A})', None),    # false || error: CEL's error
    (f'{_A}.mig ? {_A}.model.startsWith("NVIDIA") : {_A}.missing', True),
    (f'!{_A}.mig ? true : {_A}.index in [4]', False),
    (f'{_A}.missing ? true : false', None),
    # equality on quantities and versions, and the literal as the receiver
    (f'{_A}.driverVersion == semver("550.54.15")', True),
    (f'{_A}.driverVersion == semver("550.54.15+build.7")', True),  # build ignored
    (f'semver("550.0.0") != {_A}.driverVersion', True),
    (f'{_A}.model == semver("1.0.0")', None),       # a string: CEL's false
    (f'{_A}.missing == semver("1.0.0")', None),     # no such key: CEL's error
    (f'{_C}.memory == quantity("81920Mi")', True),  # 80Gi, spelled otherwise
    (f'quantity("80Gi") == {_C}.memory', True),
    (f'{_C}.memory == quantity("40Gi")', False),
    (f'quantity("40Gi").isLessThan({_C}.memory)', True),
    (f'semver("600.0.0").isLessThan({_A}.driverVersion)', False),
    (f'quantity("100Gi").compareTo({_C}.memory) > 0', True),
    (f'semver("550.54.15").compareTo({_A}.driverVersion) == 0 && {_A}.mig', True),
]


def test_each_form_decides_as_cel_or_defers() -> None:
    for expression, expected in FORMS:
        sel = selector(expression, FEATURES)
        assert sel.fast is not None, expression
        assert sel.fast(_GPU.driver, _GPU.device) is expected, expression
        plain = _verdict(dataclasses.replace(_GPU, sel_cache={}, cel_inputs=None,
                                             fast_ok=None, default_amounts={}),
                         dataclasses.replace(sel, fast=None))
        # Deferred: CEL answers, with its error (a missing key, no overload) or with
        # its heterogeneous equality's false.
        if expected is not None:
            assert plain is expected, expression


def test_a_device_cel_cannot_hold_is_left_to_cel() -> None:
    # A lone surrogate cannot become a CEL string: CEL fails, so the fast path must
    # not answer (it did for ==, before the device check knew).
    rec = _record({"model": DeviceAttribute(string="A\ud800")})
    assert not qualifies(rec.driver, rec.device)
    sel = selector(f'{_A}.model == "A"', FEATURES)
    assert isinstance(_verdict(rec, sel), str)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), devices())
def test_string_forms_give_cel_verdict(data: st.DataObject, rec: DeviceRecord) -> None:
    attr = f"device.attributes[{_string(data.draw(domains))}].{data.draw(ids)}"
    expression = data.draw(string_atoms(attr))
    sel = selector(expression, FEATURES)
    if sel.fast is None:
        return  # a compile error, or a shape left to CEL
    fresh = dataclasses.replace(rec, sel_cache={}, cel_inputs=None, fast_ok=None,
                                default_amounts={})
    assert _verdict(rec, sel) == _verdict(fresh, dataclasses.replace(sel, fast=None)), \
        expression


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), devices())
def test_quantity_and_semver_forms_give_cel_verdict(data: st.DataObject,
                                                    rec: DeviceRecord) -> None:
    domain = _string(data.draw(domains))
    ident = data.draw(ids)
    if data.draw(st.booleans()):
        version = data.draw(st.sampled_from(["1.2.3", "1.2.3+b", "2.0.0-rc.1", "0.9.0", "bad"]))
        expression = data.draw(typed_atoms(f"device.attributes[{domain}].{ident}",
                                           f'semver("{version}")'))
    else:
        quantity = data.draw(st.sampled_from(["1", "1Mi", "1024Ki", "2Gi", "500m", "bad"]))
        expression = data.draw(typed_atoms(f"device.capacity[{domain}].{ident}",
                                           f'quantity("{quantity}")'))
    sel = selector(expression, FEATURES)
    if sel.fast is None:
        return  # a compile error, or over the declared cost bound
    fresh = dataclasses.replace(rec, sel_cache={}, cel_inputs=None, fast_ok=None,
                                default_amounts={})
    assert _verdict(rec, sel) == _verdict(fresh, dataclasses.replace(sel, fast=None)), \
        expression


def test_matches_remembers_a_bounded_number_of_answers() -> None:
    sel = selector(f'{_A}.model.matches("^v[0-9]*7$")', FEATURES)
    assert sel.fast is not None
    # More distinct values than are kept: answers stay right after the memo is cleared.
    for i in range(2500):
        rec = _record({"model": DeviceAttribute(string=f"v{i}")})
        assert sel.fast(rec.driver, rec.device) is str(i).endswith("7"), i
