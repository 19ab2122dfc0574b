"""Compile errors as the API server prints them: cel-go's display form.

Expected texts are the answers of a real kube-apiserver v1.36.2 (dry-run create of a
DeviceClass with the expression, fieldValidation=Strict), taken by the conformance tier
(tests/k8s) on 2026-12-04.
"""

from __future__ import annotations

import pytest

from dralab.cel import CelCompileError, compile_selector
from dralab.validation import validate_object

_EXPECTING = ("expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, "
              "NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}")

SERVER = [
    ('device.attributes["gpu.nvidia.com"].productName ==',
     f"ERROR: <input>:1:51: Syntax error: mismatched input '<EOF>' {_EXPECTING}\n"
     ' | device.attributes["gpu.nvidia.com"].productName ==\n'
     " | " + "." * 50 + "^"),
    ("foo == 1", "ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n"
     " | foo == 1\n | ^"),
    ("device.driver == 1", "ERROR: <input>:1:15: found no matching overload for '_==_' "
     "applied to '(string, int)'\n | device.driver == 1\n | ..............^"),
    ("1 +\n 2 ==", f"ERROR: <input>:2:6: Syntax error: mismatched input '<EOF>' {_EXPECTING}\n"
     " |  2 ==\n | .....^"),
    ("device.nosuch", "ERROR: <input>:1:7: undefined field 'nosuch'\n"
     " | device.nosuch\n | ......^"),
    ('device.driver == "ü" ||',
     f"ERROR: <input>:1:24: Syntax error: mismatched input '<EOF>' {_EXPECTING}\n"
     ' | device.driver == "ü" ||\n | ..................\uff0e....^'),
    ('"日本" == ', f"ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' {_EXPECTING}\n"
     ' | "日本" == \n | .\uff0e\uff0e.....^'),
    ("device.driver == 'a' && foo && bar",
     "ERROR: <input>:1:25: undeclared reference to 'foo' (in container '')\n"
     " | device.driver == 'a' && foo && bar\n | ........................^\n"
     "ERROR: <input>:1:32: undeclared reference to 'bar' (in container '')\n"
     " | device.driver == 'a' && foo && bar\n | ...............................^"),
    ("device.driver.matches('[')", "ERROR: <input>:1:23: invalid matches argument\n"
     " | device.driver.matches('[')\n | ......................^"),
]


@pytest.mark.parametrize(("expression", "display"), SERVER)
def test_compile_error_reads_as_the_api_server_prints_it(expression: str, display: str) -> None:
    with pytest.raises(CelCompileError) as info:
        compile_selector(expression)
    assert info.value.display == display
    assert "\n" not in str(info.value)  # the one-line form stays one line


@pytest.mark.parametrize(("expression", "display"), SERVER[:2])
def test_validation_detail_is_the_servers(expression: str, display: str) -> None:
    errors = validate_object({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                              "metadata": {"name": "c"},
                              "spec": {"selectors": [{"cel": {"expression": expression}}]}})
    assert [e.path for e in errors] == ["spec.selectors[0].cel.expression"]
    assert errors[0].body().endswith(": compilation failed: " + display)


def test_quantity_equality_costs_one_as_upstream_estimates() -> None:
    # The server accepts this (website example); CEL's generic equality rule would not.
    compiled = compile_selector('device.capacity["driver.example.com"].memory == quantity("64Gi")')
    assert compiled.estimated_cost < 10
