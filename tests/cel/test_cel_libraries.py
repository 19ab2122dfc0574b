"""Lists, regex, strings, bindings, optionals, macros and operators of the environment."""

from __future__ import annotations

import pytest

from dralab.cel import CelCompileError, CelRuntimeError, Features, compile_selector

from .helpers import gpu, run

LISTS_TRUE = [
    "[1, 2, 3].isSorted()",
    "['a', 'b', 'b', 'c'].isSorted()",
    "![2.0, 1.0].isSorted()",
    "[].isSorted()",
    "[1, 3].sum() == 4",
    "[1.0, 3.5].sum() == 4.5",
    "[duration('1m'), duration('1s')].sum() == duration('61s')",
    "[duration('1m'), duration('1s')].min() == duration('1s')",
    "[timestamp('2024-01-02T00:00:00Z'), timestamp('2024-01-01T00:00:00Z')].max()"
    " == timestamp('2024-01-02T00:00:00Z')",
    "[b'b', b'a'].min() == b'a'",
    "[1, 3].min() == 1",
    "[1, 3].max() == 3",
    "['b', 'a', 'c'].max() == 'c'",
    "[1, 2, 2, 3].indexOf(2) == 1",
    "['a', 'b', 'b', 'c'].lastIndexOf('b') == 2",
    "[1.0].indexOf(1.1) == -1",
    "[1, 2].indexOf(3) == -1",
    "[[1], [2]].indexOf([2]) == 1",
    # Strings-extension overloads of the same names stay available.
    "'abcabc'.indexOf('c') == 2",
    "'abcabc'.lastIndexOf('c') == 5",
    "'abcabc'.indexOf('c', 3) == 5",
]


@pytest.mark.parametrize("expression", LISTS_TRUE)
def test_list_library(expression: str) -> None:
    assert run(expression) is True


def test_list_functions_on_list_attributes() -> None:
    device = gpu()
    assert run('device.attributes["gpu.example.com"].ints.sum() == 6', device)
    assert run('device.attributes["gpu.example.com"].ints.min() == 1', device)
    assert run('device.attributes["gpu.example.com"].ints.max() == 3', device)
    assert not run('device.attributes["gpu.example.com"].ints.isSorted()', device)
    assert run('device.attributes["gpu.example.com"].ints.indexOf(2) == 2', device)
    assert run('device.attributes["gpu.example.com"].names.lastIndexOf("y") == 1', device)
    # A dyn receiver that turns out to be a string still finds the string overload.
    assert run('device.attributes["gpu.example.com"].model.indexOf("1") == 1', device)


@pytest.mark.parametrize(("expression", "message"), [
    ("[1].min() == 1 && [].min() == 0", "min called on empty list"),
    ("dyn([]).max() == 0", "max called on empty list"),
    ("'abc'.indexOf('c', 9) == 1", "index out of range"),
])
def test_list_runtime_errors(expression: str, message: str) -> None:
    with pytest.raises(CelRuntimeError, match=message):
        run(expression)


def test_includes_on_scalars_and_lists() -> None:
    device = gpu()
    assert run('device.attributes["gpu.example.com"].ints.includes(2)', device)
    assert not run('device.attributes["gpu.example.com"].ints.includes(7)', device)
    assert run('device.attributes["gpu.example.com"].model.includes("a100")', device)
    assert not run('device.attributes["gpu.example.com"].model.includes("h100")', device)
    assert run('device.attributes["gpu.example.com"].versions.includes(semver("2.0.0"))', device)
    # CEL equality: true is not 1.
    assert not run('device.attributes["gpu.example.com"].ints.includes(true)', device)
    assert run('device.attributes["gpu.example.com"].mig.includes(true)', device)


def test_includes_only_with_list_type_attributes() -> None:
    expression = 'device.attributes["gpu.example.com"].model.includes("a100")'
    with pytest.raises(CelCompileError, match="undeclared reference to 'includes'"):
        compile_selector(expression, Features(list_type_attributes=False))
    assert compile_selector(expression, Features(list_type_attributes=True)).evaluate(gpu())


def test_includes_rejects_overlong_lists() -> None:
    long_list = "[" + ", ".join(str(i) for i in range(49)) + "]"
    with pytest.raises(CelRuntimeError, match="longer than 48 values"):
        run(f"{long_list}.includes(3)")
    assert run(f"{long_list[:-5]}].includes(3)")  # 47 values are fine


REGEX_TRUE = [
    "'abc 123'.find('[0-9]+') == '123'",
    "'abc 123'.find('xyz') == ''",
    "'123 abc 456'.findAll('[0-9]+') == ['123', '456']",
    "'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
    "'123 abc 456'.findAll('xyz') == []",
    # Go skips an empty match that directly follows the previous match.
    "'123 ab'.findAll('[0-9]*') == ['123', '', '', '']",
    "'a1b2'.findAll('(?i)[A-Z]') == ['a', 'b']",
    "'gpu-0007'.find('[[:digit:]]+') == '0007'",
    "'nvidia-h100'.matches('^nvidia-[a-z][0-9]+$')",
    "!'nvidia-h100'.matches('^amd')",
]


@pytest.mark.parametrize("expression", REGEX_TRUE)
def test_regex_library(expression: str) -> None:
    assert run(expression) is True


@pytest.mark.parametrize("pattern", ["(", "a(?=b)", "(a)\\\\1"])
def test_find_rejects_bad_or_non_re2_patterns(pattern: str) -> None:
    # A constant pattern is checked when compiling, as upstream does.
    with pytest.raises(CelCompileError, match="invalid find argument"):
        compile_selector(f"'ab'.find('{pattern}') == ''")
    with pytest.raises(CelCompileError, match="invalid findAll argument"):
        compile_selector(f"'ab'.findAll('{pattern}') == []")
    # A computed one fails when evaluated.
    with pytest.raises(CelRuntimeError, match="Illegal regex"):
        run(f"'ab'.find('{pattern}' + '') == ''")


def test_invalid_constant_regex_for_matches_is_a_compile_error() -> None:
    with pytest.raises(CelCompileError, match=r"1:14: invalid matches argument$"):
        compile_selector("'ab'.matches('(')")
    with pytest.raises(CelCompileError, match="invalid matches argument"):
        compile_selector("matches('ab', '[')")
    with pytest.raises(CelRuntimeError, match="invalid regular expression"):
        run("'ab'.matches('(' + '')")


STRINGS_TRUE = [
    "'abc'.charAt(1) == 'b'",
    "'abc'.charAt(3) == ''",
    "'TacoCat'.lowerAscii() == 'tacocat'",
    "'TacoCat'.upperAscii() == 'TACOCAT'",
    "'a-b-c'.replace('-', '+') == 'a+b+c'",
    "'a-b-c'.replace('-', '+', 1) == 'a+b-c'",
    "'a,b,c'.split(',') == ['a', 'b', 'c']",
    "'a,b,c'.split(',', 2) == ['a', 'b,c']",
    "'tacocat'.substring(4) == 'cat'",
    "'tacocat'.substring(0, 4) == 'taco'",
    "'  trim  '.trim() == 'trim'",
    "['a', 'b'].join() == 'ab'",
    "['a', 'b'].join('-') == 'a-b'",
    "'%s has %d cores'.format([dyn('gpu'), dyn(64)]) == 'gpu has 64 cores'",
    "strings.quote('a\"b') == '\"a\\\\\"b\"'",
    "'nvidia'.startsWith('nv') && 'nvidia'.endsWith('ia') && 'nvidia'.contains('vid')",
    "size('héllo') == 5",
]


@pytest.mark.parametrize("expression", STRINGS_TRUE)
def test_strings_extension(expression: str) -> None:
    assert run(expression) is True


def test_strings_on_attributes() -> None:
    device = gpu()
    assert run('device.attributes["gpu.example.com"].model.upperAscii() == "A100"', device)
    assert run('device.driver.split(".")[0] == "gpu"', device)


def test_reverse_is_not_in_strings_version_2() -> None:
    with pytest.raises(CelCompileError, match="reverse"):
        compile_selector("'abc'.reverse() == 'cba'")


def test_bind() -> None:
    device = gpu()
    assert run('cel.bind(g, device.attributes["gpu.example.com"], '
               'g.model == "a100" && g.cores >= 64 && g.mig)', device)
    assert not run('cel.bind(g, device.attributes["gpu.example.com"], g.cores > 64)', device)
    assert run("cel.bind(x, 2, cel.bind(y, x * 3, y == 6))")


def test_optional_types() -> None:
    device = gpu()
    assert run('device.attributes["gpu.example.com"].?model.orValue("") == "a100"', device)
    assert run('device.attributes["gpu.example.com"].?nothing.orValue("none") == "none"',
               device)
    assert run('device.attributes["gpu.example.com"][?"cores"].orValue(0) == 64', device)
    assert not run('device.attributes["gpu.example.com"].?nothing.hasValue()', device)
    assert run("optional.of(1).value() == 1 && !optional.none().hasValue()")
    assert run("[1, 2][?5].orValue(7) == 7")


MACROS_TRUE = [
    "[1, 2, 3].all(x, x > 0)",
    "[1, 2, 3].exists(x, x == 2)",
    "[1, 2, 3].exists_one(x, x > 2)",
    "[1, 2, 3].map(x, x * 2) == [2, 4, 6]",
    "[1, 2, 3].filter(x, x % 2 == 1) == [1, 3]",
    "[1, 2, 3].map(x, x > 1, x * 10) == [20, 30]",
    "{'a': 1}.all(k, k == 'a')",
    "has({'a': 1}.a) && !has({'a': 1}.b)",
    # Two-variable comprehensions and sets are in the Kubernetes base environment.
    "[10, 20].all(i, v, v == (i + 1) * 10)",
    "sets.contains([1, 2, 3], [3, 1])",
    "sets.intersects([1], [2, 1]) && sets.equivalent([1, 1], [1])",
]


@pytest.mark.parametrize("expression", MACROS_TRUE)
def test_macros_and_extensions(expression: str) -> None:
    assert run(expression) is True


OPERATORS_TRUE = [
    "1 < 1.5",  # cross-type numeric comparisons, as enabled upstream
    "2.0 >= 2",
    "uint(3) > 2",
    "1 <= uint(1)",
    "dyn(1) == 1.0",
    "'a' < 'b'",
    "timestamp('2024-01-01T00:00:00Z') < timestamp('2024-01-02T00:00:00Z')",
    "duration('1h') > duration('59m')",
    "7 / 2 == 3 && 7 % 2 == 1 && -(3) == -3",
    "int('12') == 12 && string(12) == '12' && double(1) == 1.0 && bool('true')",
]


@pytest.mark.parametrize("expression", OPERATORS_TRUE)
def test_standard_operators(expression: str) -> None:
    assert run(expression) is True


def test_dyn_attribute_compares_across_numeric_types() -> None:
    device = gpu()
    assert run('device.attributes["gpu.example.com"].cores > 63.5', device)
    assert run('device.attributes["gpu.example.com"].cores == 64.0', device)
