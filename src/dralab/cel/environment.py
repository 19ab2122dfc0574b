"""The DRA selector environment: variables, libraries and feature switches.

Expressions are type-checked in a per-``Features`` checker environment and
run in one shared runtime environment (the split is explained in
``declarations.py``). Both are built once and cached.

Upstream declares ``device`` as an object type with fields. cel-expr-python has
no object types besides protobuf messages, and a message cannot hold
``map(string, map(string, dyn))``, so each member is declared as a qualified
variable instead: ``device.driver``, ``device.attributes``, ... The checker
resolves ``device.attributes`` to that variable, so every documented form
type-checks with the upstream types. Only ``device`` on its own (e.g.
``cel.bind(d, device, ...)``) is not a value here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from cel_expr_python import cel

from dralab.cel.declarations import (
    EXCLUDED_STDLIB_FUNCTIONS,
    checker_functions,
    runtime_functions,
)
from dralab.cel.values import QUANTITY_TYPE, pool

__all__ = [
    "ALLOW_MULTIPLE_ALLOCATIONS_VAR",
    "ATTRIBUTES_VAR",
    "CAPACITY_VAR",
    "DRIVER_VAR",
    "Features",
    "checker_env",
    "runtime_env",
]

DRIVER_VAR: Final = "device.driver"
ATTRIBUTES_VAR: Final = "device.attributes"
CAPACITY_VAR: Final = "device.capacity"
ALLOW_MULTIPLE_ALLOCATIONS_VAR: Final = "device.allowMultipleAllocations"


@dataclass(frozen=True, slots=True)
class Features:
    """Which optional parts of the environment exist (mirrors two feature gates)."""

    consumable_capacity: bool = True
    """DRAConsumableCapacity: declares ``device.allowMultipleAllocations``."""
    list_type_attributes: bool = False
    """DRAListTypeAttributes: declares ``includes()`` (list values work regardless)."""


# Extensions of the Kubernetes base environment that cel-cpp provides natively.
# Sets (1.29+) and two-variable comprehensions (1.32+) are part of it too.
_COMMON_EXTENSIONS: Final = """\
  - name: "bindings"
  - name: "optional"
  - name: "sets"
  - name: "two-var-comprehensions"
"""


def _checker_config() -> Any:
    excluded = "".join(f'    - name: "{name}"\n' for name in EXCLUDED_STDLIB_FUNCTIONS)
    return cel.NewEnvConfigFromYaml(
        "extensions:\n" + _COMMON_EXTENSIONS + "stdlib:\n  exclude_functions:\n" + excluded)


def _runtime_config() -> Any:
    return cel.NewEnvConfigFromYaml(
        "extensions:\n" + _COMMON_EXTENSIONS + '  - name: "strings"\n    version: 2\n')


def _variables(allow_multiple_allocations: bool) -> dict[str, Any]:
    t = cel.Type
    variables = {
        DRIVER_VAR: t.STRING,
        ATTRIBUTES_VAR: t.Map(t.STRING, t.Map(t.STRING, t.DYN)),
        CAPACITY_VAR: t.Map(t.STRING, t.Map(t.STRING, t(QUANTITY_TYPE))),
    }
    if allow_multiple_allocations:
        variables[ALLOW_MULTIPLE_ALLOCATIONS_VAR] = t.BOOL
    return variables


@cache
def checker_env(features: Features) -> Any:
    """The environment that parses and type-checks selectors for ``features``."""
    return cel.NewEnv(
        pool(),
        config=_checker_config(),
        variables=_variables(features.consumable_capacity),
        functions=checker_functions(features.list_type_attributes),
    )


@cache
def runtime_env() -> Any:
    """The environment that evaluates checked selectors (all features included)."""
    return cel.NewEnv(
        pool(),
        config=_runtime_config(),
        variables=_variables(True),
        functions=runtime_functions(),
    )
