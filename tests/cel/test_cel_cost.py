"""Static cost estimation and the cost limit.

The exact figures are those Kubernetes reports for the same expressions (its
DRA compiler tests record them), so they pin the estimator to upstream's model:
attribute strings <= 64, domains <= 63, ids <= 32, <= 32 map entries.
"""

from __future__ import annotations

import pytest

from dralab.cel import (
    MAX_COST,
    CelCompileError,
    CelRuntimeError,
    Features,
    compile_selector,
    device_input,
    estimate_cost,
)

from .helpers import gpu

D = 'device.attributes["dra.example.com"]'
C = 'device.capacity["dra.example.com"]'
LISTS = Features(list_type_attributes=True)

UPSTREAM_COSTS = [
    ('device.driver == ""', 2),
    ('device.driver == "dra.example.com"', 4),
    ('"no-such-domain" in device.attributes', 3),
    (f"{D}.name", 4),
    (f'{D}["name"]', 4),
    (f"{D}.name > 0", 5),
    (f'{D}.name == "fish"', 5),
    (f"{D}.a && {D}.b && {D}.c", 12),
    (f'cel.bind(dra, {D}, dra.name)', 15),
    (f'{D}.name.isGreaterThan(semver("0.0.1"))', 6),
    (f'{D}.name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)', 7),
    (f'{C}.name.isGreaterThan(quantity("1Ki"))', 6),
    (f'"name" in {C} && {C}.name.isGreaterThan(quantity("1Ki"))', 10),
    (f'!("name" in {C}) || {C}.name.isGreaterThan(quantity("1Ki"))', 11),
    (f"{D}.names.size() == 2", 6),
    (f"1 in {D}.names", 4 + 64),
    (f"{D}.name.exists(x, x > 0)", 5 + (3 + 3) * 64),
    (f'{D}.names.all(x, x != "")', 5 + (2 + 2) * 64),
    ('device.attributes.exists_one(x, x == "dra.example.com")', 164),
    (f'{D}.exists_one(x, x == "services")', 133),
    (f'{D}.services.split("example").size() >= 2', 19),
    (f'{D}.services.matches("[^a]?sym")', 18),
    ("device.allowMultipleAllocations == true", 3),
    (f'{D}.name.includes("fish")', 4 + 48),
    (f'{D}.name.includes(semver("1.0.0"))', 4 + 48 + 1),
    ("['012345678901', '012345678901', '012345678901'].isSorted()", 10 + 3 * 3),
    ("[1, 2, 3, 4, 5].sum() == 15", 16),
    ("'01234567890123456789012345678901234567890123456789'.indexOf('123') == 5", 6),
]


@pytest.mark.parametrize(("expression", "cost"), UPSTREAM_COSTS)
def test_matches_upstream_estimates(expression: str, cost: int) -> None:
    assert estimate_cost(expression, LISTS) == cost


def test_simple_selectors_are_far_below_the_limit() -> None:
    simple = [
        'device.driver == "gpu.nvidia.com" && '
        'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"',
        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0',
        'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))',
        'cel.bind(g, device.attributes["gpu.nvidia.com"], g.index < 4 && g.type == "mig")',
    ]
    for expression in simple:
        assert estimate_cost(expression) < 100


def _nested_all(depth: int) -> str:
    expression = "true"
    for level in reversed(range(depth)):
        expression = f"device.attributes.all(d{level}, {expression})"
    return expression


def test_nested_comprehensions_over_attribute_maps_exceed_the_limit() -> None:
    assert estimate_cost(_nested_all(3)) < MAX_COST
    assert estimate_cost(_nested_all(4)) > MAX_COST
    assert estimate_cost(_nested_all(5)) > 30 * MAX_COST


def test_string_work_inside_comprehensions_adds_up() -> None:
    inner = 'device.attributes["a"].all(k, device.attributes["a"][k].matches("^(a|b|c|d|e)+$"))'
    expression = f"device.attributes.all(d, device.attributes[d].all(i, {inner}))"
    assert estimate_cost(expression) > MAX_COST


def test_upstreams_seven_level_example() -> None:
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    body = "int('1'.find('[0-9]*')) < 100"
    for var in ("z5", "z4", "z3", "z2", "z", "y", "x"):
        body = f"{ten}.all({var}, {body})"
    assert estimate_cost(body) == 85_555_551


def test_unbounded_sizes_saturate() -> None:
    # Comparing two values of unknown size is unbounded in CEL's model.
    # (Equality of two quantities is the exception: upstream's estimator charges 1 for it,
    # apiserver library/cost.go "_==_"; inequality keeps CEL's generic rule.)
    assert estimate_cost('quantity("1") != quantity("1")') > 2**60
    assert estimate_cost('quantity("1") == quantity("1")') == 3


def test_over_limit_fails_on_devices_where_it_would_exceed() -> None:
    # Like upstream's runtime limit: what counts is the device at hand. A
    # device with 32 domains makes 32^4 iterations; gpu() has two domains.
    selector = compile_selector(_nested_all(4))
    assert selector.estimated_cost > MAX_COST
    many_domains = device_input("d.example.com", {f"d{i}.example.com/a": i for i in range(32)}, {})
    with pytest.raises(CelRuntimeError, match=r"^operation cancelled: actual cost limit exceeded$"):
        selector.evaluate(many_domains)
    assert selector.evaluate(gpu()) is True
    assert compile_selector(_nested_all(2)).evaluate(many_domains) is True


def test_estimate_cost_reports_compile_errors() -> None:
    with pytest.raises(CelCompileError):
        estimate_cost("device.attributes[")


def test_estimate_is_of_the_expression_as_written() -> None:
    # The unknown-domain rewrite adds nodes; the estimate must not include them.
    assert estimate_cost(f"{D}.name") == estimate_cost(f'{D}["name"]') == 4
