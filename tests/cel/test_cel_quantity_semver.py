"""The Kubernetes quantity and semver CEL libraries, edge cases included."""

from __future__ import annotations

import re

import pytest

from dralab.cel import CelCompileError, CelRuntimeError, compile_selector

from .helpers import gpu, run

QUANTITY_TRUE = [
    'quantity("1Gi").compareTo(quantity("1024Mi")) == 0',
    'quantity("200M").compareTo(quantity("0.2G")) == 0',
    'quantity("50M").compareTo(quantity("50Mi")) == -1',
    'quantity("50Mi").compareTo(quantity("50M")) == 1',
    'quantity("150Mi").isGreaterThan(quantity("100Mi"))',
    '!quantity("50Mi").isGreaterThan(quantity("100Mi"))',
    'quantity("50M").isLessThan(quantity("100M"))',
    '!quantity("100M").isLessThan(quantity("50M"))',
    'quantity("50k").add(quantity("20")).compareTo(quantity("50.02k")) == 0',
    'quantity("50k").add(20).compareTo(quantity("50020")) == 0',
    'quantity("50k").sub(quantity("20")).compareTo(quantity("49.98k")) == 0',
    'quantity("50k").sub(20000).compareTo(quantity("30k")) == 0',
    'quantity("50k").add(20).sub(quantity("100k")).sub(-50000).compareTo(quantity("20")) == 0',
    'quantity("50k").asInteger() == 50000',
    'quantity("1.5k").asInteger() == 1500',
    'quantity("50k").add(20).sub(quantity("100k")).asInteger() == -49980',
    'quantity("50").isInteger()',
    'quantity("1.5k").isInteger()',
    'quantity("1500m").isInteger() == false',
    '!quantity("1.5").isInteger()',
    # 1.8e19 does not fit into int64.
    '!quantity("9E").add(quantity("9E")).isInteger()',
    'quantity("50.703k").asApproximateFloat() == 50703.0',
    'quantity("1Ki").asApproximateFloat() == 1024.0',
    'sign(quantity("-50k")) == -1',
    'sign(quantity("0")) == 0',
    'sign(quantity("3m")) == 1',
    'isQuantity("20Mi")',
    'isQuantity("1.3G")',
    '!isQuantity("200K")',
    '!isQuantity("1,3G")',
    '!isQuantity("Mi")',
    '!isQuantity("10Mm")',
]


@pytest.mark.parametrize("expression", QUANTITY_TRUE)
def test_quantity_library(expression: str) -> None:
    assert run(expression) is True


@pytest.mark.parametrize(("expression", "message"), [
    ('quantity("1.5").asInteger() == 1', "cannot convert value to integer"),
    ('quantity("9E").add(quantity("9E")).asInteger() == 1', "cannot convert value to integer"),
    ('quantity("10Mo").isInteger()', "quantities must match the regular expression"),
    ('quantity("Three").isInteger()', "quantities must match"),
])
def test_quantity_runtime_errors(expression: str, message: str) -> None:
    with pytest.raises(CelRuntimeError, match=message):
        run(expression)


@pytest.mark.parametrize(("expression", "message"), [
    ('quantity("1Gi") + 1 == quantity("1")', "found no matching overload for '_+_'"),
    ('quantity(1) == quantity("1")', "found no matching overload for 'quantity'"),
    ('quantity("1").compareTo(semver("1.0.0")) == 0', "no matching overload for 'compareTo'"),
    ('quantity("1") < quantity("2")', "no matching overload for '_<_'"),
    # Upstream declares sign() as a global function only.
    ('quantity("1").sign() == 1', "sign"),
])
def test_quantity_compile_errors(expression: str, message: str) -> None:
    with pytest.raises(CelCompileError, match=re.escape(message)):
        compile_selector(expression)


def test_capacity_values_are_quantities() -> None:
    device = gpu()
    assert run('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) == 0',
               device)
    # Message equality is value equality; the map-index form keeps the cost bounded.
    assert run('device.capacity["gpu.example.com"]["memory"] == quantity("40960Mi")', device)
    assert run('device.capacity["gpu.example.com"]["memory"] != quantity("40Gi").add(1)', device)
    assert run('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("39Gi"))',
               device)
    assert not run('device.capacity["gpu.example.com"].memory.isLessThan(quantity("40Gi"))',
                   device)
    assert run('device.capacity["gpu.example.com"].memory.asInteger() == 42949672960', device)
    assert run('device.capacity["topology.example.com"].lanes.add(16).asInteger() == 32',
               device)


SEMVER_TRUE = [
    'semver("1.2.3").major() == 1',
    'semver("1.2.3").minor() == 2',
    'semver("1.2.3").patch() == 3',
    'semver("1.2.3").compareTo(semver("1.2.3")) == 0',
    'semver("1.2.3").compareTo(semver("2.0.0")) == -1',
    'semver("1.2.3").compareTo(semver("0.1.2")) == 1',
    'semver("1.10.0").isGreaterThan(semver("1.9.9"))',
    'semver("1.0.0-alpha").isLessThan(semver("1.0.0"))',
    'semver("1.0.0-alpha.2").isGreaterThan(semver("1.0.0-alpha.10")) == false',
    'isSemver("1.0.0")',
    'isSemver("0.1.0-alpha.1+meta")',
    '!isSemver("v1.0.0")',
    '!isSemver("1.0")',
    '!isSemver("01.1.1")',
    '!isSemver("hello")',
    'isSemver("v1.0", true)',
    'semver("v1.2", true).minor() == 2',
    'semver("01.02.03", true).compareTo(semver("1.2.3")) == 0',
    'semver("1", true).patch() == 0',
    '!isSemver("1.0-alpha", true)',
]


@pytest.mark.parametrize("expression", SEMVER_TRUE)
def test_semver_library(expression: str) -> None:
    assert run(expression) is True


def test_semver_runtime_error() -> None:
    with pytest.raises(CelRuntimeError, match="not a valid semantic version"):
        run('semver("1.0").major() == 1')


def test_version_attributes_are_semvers() -> None:
    device = gpu()
    assert run('device.attributes["gpu.example.com"].driverVersion.isGreaterThan('
               'semver("535.0.0"))', device)
    assert run('device.attributes["gpu.example.com"].driverVersion.minor() == 104', device)
    assert run('device.attributes["gpu.example.com"].driverVersion == semver("535.104.5")',
               device)
    # Build metadata does not take part in equality, as upstream.
    assert run('device.attributes["gpu.example.com"].driverVersion == semver("535.104.5+b")',
               device)
    assert run('device.attributes["gpu.example.com"].driverVersion != semver("535.104.6")',
               device)
    assert not run('device.attributes["gpu.example.com"].driverVersion.isLessThan('
                   'semver("500.0.0"))', device)
