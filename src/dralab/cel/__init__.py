"""The CEL environment of DRA device selectors, on top of cel-expr-python (cel-cpp).

Typical use::

    selector = compile_selector('device.attributes["gpu.example.com"].model == "a100"')
    device = device_input("gpu.example.com", {"model": "a100"}, {"memory": parse_quantity("40Gi")})
    selector.evaluate(device)   # True

Semantics follow k8s.io/dynamic-resource-allocation/cel: the ``device``
variable with domain-grouped attributes and capacity, an empty map for an
unknown domain, an error for a missing attribute, the Kubernetes quantity,
semver, list and regex libraries, cel.bind, optional types and the strings
extension. See the module docstrings of ``selector`` (cost limits),
``environment`` (how ``device`` is declared) and ``rewrite`` (unknown domains)
for where and how the implementation differs from cel-go internally.
"""

from __future__ import annotations

from dralab.cel.device import AttributeValue, DeviceInput, device_input
from dralab.cel.environment import Features
from dralab.cel.errors import CelCompileError, CelError, CelRuntimeError
from dralab.cel.selector import (
    MAX_COST,
    MAX_EXPRESSION_LENGTH,
    CompiledSelector,
    compile_selector,
    estimate_cost,
)

__all__ = [
    "MAX_COST",
    "MAX_EXPRESSION_LENGTH",
    "AttributeValue",
    "CelCompileError",
    "CelError",
    "CelRuntimeError",
    "CompiledSelector",
    "DeviceInput",
    "Features",
    "compile_selector",
    "device_input",
    "estimate_cost",
]
