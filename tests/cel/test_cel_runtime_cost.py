"""The runtime cost bound: hostile selectors fail fast, ordinary ones are untouched."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cputime import cpu_budget, run_with_cpu_budget
from dralab.cel import (
    MAX_COST,
    CelError,
    CelRuntimeError,
    DeviceInput,
    compile_selector,
    device_input,
)
from dralab.cel import selector as selector_module
from dralab.cel.costmodel import DECLARED_DEVICE, actual_device

from .helpers import ALL_FEATURES, DRIVER, gpu

LIMIT_MESSAGE = "operation cancelled: actual cost limit exceeded"
TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"


def chain(levels: int, step: str, body: str, base: str = TEN) -> str:
    """``cel.bind(v1, step(v0), cel.bind(v2, step(v1), ... body(vN)))`` with v0 = base."""
    expression = body.replace("VN", f"v{levels}")
    for i in range(levels, 0, -1):
        expression = f"cel.bind(v{i}, {step.replace('P', f'v{i - 1}')}, {expression})"
    return f"cel.bind(v0, {base}, {expression})"


HOSTILE = {
    # The reproducer: 25 doublings of a 10-element list (335 M elements).
    "list doubling": chain(25, "P + P", "size(VN) > 0"),
    "list doubling, 22 levels": chain(22, "P + P", "size(VN) > 0"),
    "string doubling": chain(25, "P + P", "size(VN) > 0", base='"aaaaaaaaaa"'),
    "string doubling via format": chain(20, "'%s%s'.format([P, P])", "size(VN) > 0",
                                        base='"aaaaaaaaaa"'),
    "map over a large list": chain(11, "P + P", "VN.map(x, x * 2).size() > 0"),
    "filter over a large list": chain(11, "P + P", "VN.filter(x, x > 2).size() > 0"),
    "repeated findAll": chain(9, "P + P",
                              'VN.map(x, "' + "ab" * 2000 + '".findAll("a")).size() > 0'),
    # Shared sub-lists: sizes stay small, the fully expanded value doubles per level.
    "deep equality": chain(24, "[P, P]", "VN == VN"),
    "deep membership": chain(24, "[P, P]", "VN in [VN]"),
    "deep comparison in a loop": chain(24, "[P, P]", "[VN].exists(x, x == VN)"),
    "deep value through Python": chain(24, "[P, P]", "VN.indexOf([]) == -1"),
    "deep value printed": chain(24, "[P, P]", "'%s'.format([VN]).size() > 0"),
    "deep sets": chain(20, "[P, P]", "sets.contains([VN], [VN])"),
    "deep dyn result": chain(24, "[P, P]", "dyn(VN)"),
}


@pytest.mark.parametrize("expression", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_selectors_fail_fast_with_upstreams_error(expression: str) -> None:
    with cpu_budget(2):  # CPU seconds; unbounded, 24 doublings build 2^24 values
        selector = compile_selector(expression, ALL_FEATURES)
        assert selector.runtime_bound > MAX_COST
        with pytest.raises(CelRuntimeError) as caught:
            selector.evaluate(gpu())
    assert str(caught.value) == LIMIT_MESSAGE


SMALLER = {
    "list doubling": chain(12, "P + P", "size(VN) == 40960"),
    "shared sub-lists": chain(12, "[P, P]", "VN == VN"),
    "map": chain(5, "P + P", "VN.map(x, x * 2).size() == 320"),
    "findAll": chain(3, "P + P", 'VN.map(x, "abab".findAll("a")).size() == 80'),
}


@pytest.mark.parametrize("expression", SMALLER.values(), ids=SMALLER.keys())
def test_the_same_shapes_within_the_budget_evaluate(expression: str) -> None:
    selector = compile_selector(expression, ALL_FEATURES)
    assert selector.runtime_bound <= MAX_COST
    assert selector.evaluate(gpu()) is True


def test_ordinary_selectors_stay_far_below_the_bound() -> None:
    ordinary = [
        'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"',
        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0',
        'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))',
        'cel.bind(g, device.attributes["gpu.nvidia.com"], g.index < 4 && g.type == "mig")',
        'device.attributes["gpu.nvidia.com"].productName.matches("^NVIDIA (A|H)100")',
        'device.attributes["gpu.nvidia.com"].uuid.find("[0-9a-f]{8}") != ""',
        'device.attributes["gpu.nvidia.com"].ints.includes(3)',
    ]
    for expression in ordinary:
        assert compile_selector(expression, ALL_FEATURES).runtime_bound < 50_000, expression


def test_device_sizes_decide_when_the_declared_device_is_over() -> None:
    # 64 elements doubled 14 times is over the limit; gpu()'s 3 elements are not.
    expression = chain(14, "P + P", "size(VN) > 0", base=f'device.attributes["{DRIVER}"].ints')
    selector = compile_selector(expression, ALL_FEATURES)
    assert selector.runtime_bound > MAX_COST
    assert selector.evaluate(gpu()) is True
    full = device_input(DRIVER, {"ints": list(range(64))}, {})
    with pytest.raises(CelRuntimeError, match=LIMIT_MESSAGE):
        selector.evaluate(full)
    assert selector.device_bound(gpu()) <= MAX_COST < selector.device_bound(full)


def test_devices_larger_than_validation_allows_are_bounded_by_their_sizes() -> None:
    # Fine for any valid device (<= 64 values), but cel-cpp's map() is quadratic.
    selector = compile_selector(f'device.attributes["{DRIVER}"].ints.map(x, x).size() > 0',
                                ALL_FEATURES)
    assert selector.runtime_bound <= MAX_COST
    huge = device_input(DRIVER, {"ints": list(range(5000))}, {})
    assert huge.oversized and not gpu().oversized
    with cpu_budget(1), pytest.raises(CelRuntimeError, match=LIMIT_MESSAGE):
        selector.evaluate(huge)


def test_actual_size_tree_of_a_device() -> None:
    tree = gpu().size_tree()
    fields = dict(tree.fields)
    assert fields["driver"].max_size == len(DRIVER)
    assert fields["attributes"].max_size == 2  # the driver's domain and topology.example.com
    assert fields["attributes"].elem is not None
    assert fields["attributes"].elem.max_size == 8  # eight attributes in the driver's domain
    assert tree.weight < DECLARED_DEVICE.weight
    assert actual_device("d", {}, {}).weight == 1 + (1 + 1) + 1 + 1


# --- with and without the bound ------------------------------------------------

_ATTR = f'device.attributes["{DRIVER}"]'


_Grammar = tuple[st.SearchStrategy[str], st.SearchStrategy[str], st.SearchStrategy[str],
                 st.SearchStrategy[str]]


def _grammar(depth: int) -> _Grammar:
    """(ints, lists, strings, bools) expressions nested at most ``depth`` constructs deep."""
    ints = st.one_of(st.integers(0, 9).map(str), st.just(f"int({_ATTR}.cores)"))
    lists = st.one_of(st.lists(st.integers(0, 9).map(str), max_size=3)
                      .map(lambda xs: "[" + ", ".join(xs) + "]"),
                      st.just(f"{_ATTR}.ints.map(v, int(v))"))
    strings = st.sampled_from(['"ab"', '""', '"a1b2"', f"string({_ATTR}.model)"])
    bools = st.sampled_from(["true", f"{_ATTR}.mig == true"])
    if depth == 0:
        return ints, lists, strings, bools
    i, li, s, b = _grammar(depth - 1)
    pair = st.tuples
    ints = st.one_of(ints, li.map(lambda x: f"size({x})"), s.map(lambda x: f"{x}.size()"),
                     pair(i, i).map(lambda p: f"({p[0]} + {p[1]})"))
    lists = st.one_of(
        lists, pair(li, li).map(lambda p: f"({p[0]} + {p[1]})"),
        st.lists(i, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        li.map(lambda x: f"{x}.map(v, v * 2)"), li.map(lambda x: f"{x}.filter(v, v > 2)"),
        li.map(lambda x: f"cel.bind(b, {x}, b + b)"))
    strings = st.one_of(
        strings, pair(s, s).map(lambda p: f"({p[0]} + {p[1]})"),
        s.map(lambda x: f"{x}.upperAscii()"), s.map(lambda x: f'{x}.find("[a-z][0-9]")'),
        s.map(lambda x: f'{x}.findAll("[0-9]").join("-")'))
    bools = st.one_of(
        bools, pair(i, i).map(lambda p: f"{p[0]} < {p[1]}"),
        pair(li, li).map(lambda p: f"{p[0]} == {p[1]}"),
        pair(s, s).map(lambda p: f"{p[0]} == {p[1]}"),
        pair(i, li).map(lambda p: f"{p[0]} in {p[1]}"),
        li.map(lambda x: f"{x}.all(v, v >= 1)"), li.map(lambda x: f"{x}.exists(v, v == 4)"),
        pair(li, li).map(lambda p: f"sets.contains({p[0]}, {p[1]})"),
        s.map(lambda x: f'{x}.matches("^[a-z]")'),
        li.map(lambda x: f"{x}[0] > 0"),  # may fail at runtime: errors compare too
        pair(b, b).map(lambda p: f"({p[0]} && !({p[1]}))"))
    return ints, lists, strings, bools


SAFE_EXPRESSIONS = _grammar(4)[3]


def _outcome(selector: selector_module.CompiledSelector, device: DeviceInput) -> bool | str:
    try:
        return selector.evaluate(device)
    except CelError as err:
        return str(err)


def _oversized_gpu() -> DeviceInput:
    """gpu() plus one string longer than validation allows: bounds are checked per device."""
    attributes = {"model": "a100", "cores": 64, "mig": True, "ints": [3, 1, 2],
                  "other.example.com/note": "n" * 100}
    return device_input(DRIVER, attributes, {})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expression=SAFE_EXPRESSIONS)
def test_bound_never_changes_the_result_of_safe_expressions(expression: str) -> None:
    bounded = compile_selector(expression, ALL_FEATURES)
    # The bound is upstream's estimate plus this runtime's extra work.
    assert bounded.runtime_bound >= bounded.estimated_cost
    # What upstream's validation accepts in this grammar compiles; where this runtime's
    # eager copies put the bound for the largest declared device over the limit (e.g.
    # sets.contains over cel.bind doublings), each device's own sizes decide instead, so
    # the devices below must still give the unbounded result.
    assume(bounded.estimated_cost <= MAX_COST)
    devices = [gpu(), _oversized_gpu()]
    if bounded.runtime_bound > MAX_COST:
        assert all(bounded.device_bound(d) <= MAX_COST for d in devices)
    assert devices[1].oversized
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(selector_module, "MAX_COST", 2**64)
        unbounded = selector_module._compile.__wrapped__(expression, ALL_FEATURES)
        expected = [_outcome(unbounded, device) for device in devices]
    assert [_outcome(bounded, device) for device in devices] == expected


_ARENA_SCRIPT = """
import resource, sys
from dralab.cel import compile_selector, device_input
device = device_input("d.example.com", {"model": "a"}, {})
selector = compile_selector(sys.argv[1])
selector.evaluate(device)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(20_000):
    selector.evaluate(device)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def test_repeated_evaluations_on_one_device_do_not_accumulate_memory() -> None:
    # cel-expr-python keeps what an evaluation allocates until its activation
    # goes; 20,000 evaluations building 320-element lists kept about 200 MB.
    expression = chain(5, "P + P", "size(VN) == 320")
    # 20 CPU s: the run takes about two; the wall-clock timeout is only a safety net.
    done = run_with_cpu_budget([sys.executable, "-c", _ARENA_SCRIPT, expression], 20).done
    assert done.returncode == 0, done.stderr
    growth_kib = int(done.stdout)
    assert growth_kib < 20 * 1024
