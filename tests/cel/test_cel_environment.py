"""The `device` variable and the error rules of DRA selectors."""

from __future__ import annotations

import pickle

import pytest

from dralab.api.quantity import parse_quantity
from dralab.cel import (
    MAX_COST,
    MAX_EXPRESSION_LENGTH,
    CelCompileError,
    CelError,
    CelRuntimeError,
    Features,
    compile_selector,
    device_input,
)

from .helpers import DRIVER, gpu, run

HINT = "Consider using CEL optional chaining (?), has() macro, or orValue() for optional fields"


def test_limits_are_the_upstream_constants() -> None:
    assert MAX_EXPRESSION_LENGTH == 10 * 1024
    assert MAX_COST == 1_000_000


def test_length_is_left_to_validation() -> None:
    # kube-scheduler compiles stored expressions whatever their length.
    long_expression = " || ".join(["device.driver == 'x'"] * 600)
    assert len(long_expression) > MAX_EXPRESSION_LENGTH
    assert compile_selector(long_expression).evaluate(gpu()) is False


def test_driver() -> None:
    assert run('device.driver == "gpu.example.com"', gpu())
    assert not run('device.driver == "nic.example.com"', gpu())


class TestDomains:
    def test_unqualified_and_self_qualified_names_share_a_path(self) -> None:
        device = gpu()
        assert run('device.attributes["gpu.example.com"].model == "a100"', device)
        assert run('device.attributes["gpu.example.com"].family == "ampere"', device)
        assert run('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("1Gi"))',
                   device)

    def test_same_key_qualified_or_not_is_one_attribute(self) -> None:
        device = device_input(DRIVER, {"model": "a", f"{DRIVER}/other": "b"}, {})
        assert run('device.attributes["gpu.example.com"].size() == 2', device)
        assert run('device.attributes.size() == 1', device)

    def test_foreign_domain_only_under_its_own_name(self) -> None:
        device = gpu()
        assert run('device.attributes["topology.example.com"].numa == 1', device)
        assert not run('has(device.attributes["gpu.example.com"].numa)', device)
        with pytest.raises(CelRuntimeError, match="no such key: numa"):
            run('device.attributes["gpu.example.com"].numa == 1', device)
        assert run('device.capacity["topology.example.com"].lanes.asInteger() == 16', device)

    def test_domains_are_keys(self) -> None:
        device = gpu()
        assert run('"topology.example.com" in device.attributes', device)
        assert run('device.attributes.exists(d, d == "topology.example.com")', device)
        assert run('device.capacity.all(d, d in ["gpu.example.com", "topology.example.com"])',
                   device)


class TestUnknownDomain:
    """An unknown domain is an empty map, not an error."""

    def test_lookup_yields_empty_map(self) -> None:
        assert run('size(device.attributes["nope.example.com"]) == 0', gpu())
        assert run('device.attributes["nope.example.com"] == {}', gpu())
        assert run('size(device.capacity["nope.example.com"]) == 0', gpu())

    def test_membership_is_false(self) -> None:
        assert not run('"nope.example.com" in device.attributes', gpu())
        assert not run('"nope.example.com" in device.capacity', gpu())

    def test_has_on_a_member_is_false(self) -> None:
        assert not run('has(device.attributes["nope.example.com"].model)', gpu())
        assert not run('has(device.capacity["nope.example.com"].memory)', gpu())

    def test_member_of_unknown_domain_is_a_missing_key(self) -> None:
        with pytest.raises(CelRuntimeError, match="no such key: model"):
            run('device.attributes["nope.example.com"].model == "a"', gpu())

    def test_domain_as_field_or_computed_key(self) -> None:
        device = gpu()
        assert run("size(device.attributes.nope) == 0", device)
        assert run('device.attributes[device.driver].model == "a100"', device)
        assert run('size(device.attributes[device.driver + ".x"]) == 0', device)

    def test_through_bind_aliases(self) -> None:
        device = gpu()
        assert run('cel.bind(a, device.attributes, size(a["nope"]) == 0)', device)
        assert run('cel.bind(a, device.attributes, cel.bind(b, a, size(b.nope) == 0))', device)
        assert not run('cel.bind(a, device.attributes, "nope" in a)', device)

    def test_optional_lookups_of_a_domain_are_always_present(self) -> None:
        # Upstream's lookup reports every domain as present.
        device = gpu()
        assert run('device.attributes[?"nope"].hasValue()', device)
        assert run('device.attributes.?nope.orValue({"x": 1}) == {}', device)
        assert run("has(device.attributes.nope)", device)

    def test_user_maps_keep_normal_semantics(self) -> None:
        with pytest.raises(CelRuntimeError, match="no such key"):
            run('{"a": {"b": 1}}["x"] == {}')
        with pytest.raises(CelRuntimeError, match="no such key"):
            run('[{"a": 1}].all(m, m["x"] == 1)')


class TestMissingKeys:
    def test_missing_attribute_is_an_error_with_hint(self) -> None:
        with pytest.raises(CelRuntimeError) as info:
            run('device.attributes["gpu.example.com"].noSuchAttr == "x"', gpu())
        assert str(info.value) == f"no such key: noSuchAttr. {HINT}"

    def test_missing_attribute_by_index(self) -> None:
        with pytest.raises(CelRuntimeError, match="no such key: noSuchAttr"):
            run('device.attributes["gpu.example.com"]["noSuchAttr"] == "x"', gpu())

    def test_missing_capacity_is_an_error(self) -> None:
        with pytest.raises(CelRuntimeError, match="no such key: bandwidth"):
            run('device.capacity["gpu.example.com"].bandwidth.isGreaterThan(quantity("1"))',
                gpu())

    def test_safe_forms(self) -> None:
        device = gpu()
        assert not run('has(device.attributes["gpu.example.com"].nope) && '
                       'device.attributes["gpu.example.com"].nope == "x"', device)
        assert run('device.attributes["gpu.example.com"].?nope.orValue("") == ""', device)

    def test_short_circuit_absorbs_errors(self) -> None:
        device = gpu()
        assert not run('false && device.attributes["gpu.example.com"].nope == "x"', device)
        assert run('device.attributes["gpu.example.com"].nope == "x" || true', device)
        assert run('true || quantity("bad").isInteger()', device)
        assert not run('quantity("bad").isInteger() && false', device)
        assert run('false ? quantity("bad").isInteger() : true', device)


class TestResultType:
    @pytest.mark.parametrize(("expression", "type_name"), [
        ("1", "int"),
        ("device.driver", "string"),
        ('device.attributes["gpu.example.com"]', "map(string, dyn)"),
        ('quantity("1")', "kubernetes.Quantity"),
        ("[true]", "list(bool)"),
    ])
    def test_known_non_bool_type_is_a_compile_error(self, expression: str,
                                                    type_name: str) -> None:
        with pytest.raises(CelCompileError) as info:
            compile_selector(expression)
        assert str(info.value) == f"must evaluate to bool or the unknown type, not {type_name}"

    def test_dyn_result_is_checked_at_runtime(self) -> None:
        device = gpu()
        assert run('device.attributes["gpu.example.com"].mig', device) is True
        with pytest.raises(CelRuntimeError,
                           match="CEL result of type string could not be converted to bool"):
            run('device.attributes["gpu.example.com"].model', device)
        with pytest.raises(CelRuntimeError, match="CEL result of type list"):
            run('device.attributes["gpu.example.com"].ints', device)
        with pytest.raises(CelRuntimeError, match=r"CEL result of type kubernetes\.Semver"):
            run('device.attributes["gpu.example.com"].driverVersion', device)


class TestCompileErrors:
    def test_syntax_error_is_one_line(self) -> None:
        with pytest.raises(CelCompileError) as info:
            compile_selector('device.driver == "a" &&')
        message = str(info.value)
        assert "\n" not in message
        assert message.startswith("<input>:1:")
        assert "Syntax error" in message
        assert "^" not in message

    def test_several_diagnostics_are_joined(self) -> None:
        with pytest.raises(CelCompileError) as info:
            compile_selector('"a === (')
        assert "\n" not in str(info.value)
        assert str(info.value).count("<input>:") == 2

    def test_unknown_function(self) -> None:
        with pytest.raises(CelCompileError, match="undeclared reference to 'nosuchfn'"):
            compile_selector("nosuchfn(1) == 1")

    def test_unknown_device_field(self) -> None:
        with pytest.raises(CelCompileError, match=r"undefined field .name.$"):
            compile_selector("device.name == 'gpu-0'")

    def test_overload_mismatch(self) -> None:
        with pytest.raises(CelCompileError, match=r"no matching overload for '_\+_' applied to "
                                                  r"'\(kubernetes\.Quantity, int\)'"):
            compile_selector('quantity("1Gi") + 1 == quantity("2Gi")')

    @pytest.mark.parametrize(("expression", "message"), [
        ('[1, "a"].size() == 2', "<input>:1:5: expected type 'int' but found 'string'"),
        ('{"a": 1, "b": true}.size() == 2', "<input>:1:15: expected type 'int' but found 'bool'"),
        ('duration("soon") > duration("1s")', "<input>:1:10: invalid duration argument"),
        ('timestamp("today") > timestamp("2024-01-01T00:00:00Z")',
         "<input>:1:11: invalid timestamp argument"),
    ])
    def test_kubernetes_literal_validators(self, expression: str, message: str) -> None:
        with pytest.raises(CelCompileError) as info:
            compile_selector(expression)
        assert str(info.value).startswith(message)

    def test_mixed_literals_are_fine_with_dyn(self) -> None:
        assert run('[dyn(1), dyn("a")].size() == 2')
        assert run('duration("1h30m") > duration("90s")')

    def test_text_that_is_not_utf8(self) -> None:
        with pytest.raises(CelCompileError, match="not valid UTF-8"):
            compile_selector('device.driver == "\ud800"')

    def test_compile_error_is_a_dralab_error(self) -> None:
        from dralab.api.errors import DralabError
        with pytest.raises(DralabError):
            compile_selector("(")
        assert issubclass(CelCompileError, CelError)
        assert issubclass(CelRuntimeError, CelError)


class TestFeatures:
    def test_allow_multiple_allocations_needs_consumable_capacity(self) -> None:
        expression = "device.allowMultipleAllocations"
        with pytest.raises(CelCompileError, match="allowMultipleAllocations"):
            compile_selector(expression, Features(consumable_capacity=False))
        assert compile_selector(expression, Features(consumable_capacity=True)).evaluate(gpu())

    def test_allow_multiple_allocations_defaults_to_false(self) -> None:
        device = device_input(DRIVER, {}, {})
        assert run("device.allowMultipleAllocations == false", device)
        assert run("device.allowMultipleAllocations == false",
                   device_input(DRIVER, {}, {}, allow_multiple_allocations=False))

    def test_features_are_part_of_the_cache_key(self) -> None:
        with_lists = compile_selector("true", Features(list_type_attributes=True))
        without = compile_selector("true", Features(list_type_attributes=False))
        assert with_lists is not without
        assert compile_selector("true", Features(list_type_attributes=True)) is with_lists


class TestDeviceInput:
    def test_rejects_values_cel_cannot_hold(self) -> None:
        with pytest.raises(CelError, match="int64"):
            device_input(DRIVER, {"big": 2**63}, {})
        with pytest.raises(CelError, match="unsupported attribute value"):
            device_input(DRIVER, {"ratio": 0.5}, {})  # type: ignore[dict-item]
        with pytest.raises(CelError, match="NUL"):
            device_input(DRIVER, {"name": "a\0b"}, {})
        with pytest.raises(CelError, match="expected a Quantity"):
            device_input(DRIVER, {}, {"memory": "40Gi"})  # type: ignore[dict-item]

    def test_pickles(self) -> None:
        device = pickle.loads(pickle.dumps(gpu()))
        assert device.driver == DRIVER
        assert run('device.attributes["gpu.example.com"].model == "a100"', device)

    def test_one_input_serves_many_selectors(self) -> None:
        device = device_input(DRIVER, {"index": 3}, {"memory": parse_quantity("8Gi")})
        selectors = [compile_selector(f'device.attributes["{DRIVER}"].index == {i}')
                     for i in range(6)]
        assert [s.evaluate(device) for s in selectors] == [i == 3 for i in range(6)]
