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

DRIVER = "drv.example.com"
OTHER = "other.example.com"
FEATURES = cel_features(True, False)
IDS = ["a", "b", "v"]
NAMES = ["a", "b", "v", f"{DRIVER}/a", f"{DRIVER}/v", f"{OTHER}/a", f"{OTHER}/b",
         # over API validation's limits: identifier, domain
         "n" * 33, f"{DRIVER}/{'i' * 33}", f"{'d' * 64}/a"]

attribute_values = st.one_of(
    st.builds(lambda s: DeviceAttribute(string=s),
              st.sampled_from(["", "A100", "x", "mig-1g", "nul\0byte", "y" * 70])),
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
literals = st.one_of(st.sampled_from(['"A100"', '"x"', '""', "1", "0", "-3", "true", "false"]))


@st.composite
def atoms(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 7))
    attr = f"device.attributes[{_string(draw(domains))}].{draw(ids)}"
    cap = f"device.capacity[{_string(draw(domains))}].{draw(ids)}"
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
        version = draw(st.sampled_from(["1.2.3", "1.0.0", "2.0.0-rc.1", "bad"]))
        how = draw(st.sampled_from(["isGreaterThan", "isLessThan", "compareTo"]))
        call = f'{attr}.{how}(semver("{version}"))'
        return f"{call} {draw(ops)} 0" if how == "compareTo" else call
    quantity = draw(st.sampled_from(["1", "1Mi", "2Gi", "500m", "bad"]))
    how = draw(st.sampled_from(["isGreaterThan", "isLessThan", "compareTo"]))
    call = f'{cap}.{how}(quantity("{quantity}"))'
    return f"{call} {draw(ops)} {draw(st.integers(-1, 1))}" if how == "compareTo" else call


expressions = st.recursive(
    atoms(),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["&&", "||"]), inner).map(
            lambda t: f"({t[0]}) {t[1]} ({t[2]})"),
        inner.map(lambda e: f"!({e})")),
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
    for expression in ['device.attributes["d"].model.startsWith("A")',
                       'device.attributes["d"].model < "B"',
                       '"d" in device.attributes']:
        assert selector(expression, FEATURES).fast is None, expression
