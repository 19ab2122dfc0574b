"""Compiling and evaluating device selectors.

Compilation = parse + type-check (checker environment) + Kubernetes' literal
validations + result-type check + static cost estimate + AST rewrites +
loading into the runtime environment.
Compiled selectors are cached per (expression, features).

**Runtime cost limit.** Kubernetes meters every evaluation and aborts it once
it exceeds 1,000,000 units. cel-expr-python offers no cost tracking, so an
evaluation is refused up front when the *estimated worst case* exceeds the
limit, with upstream's error text. For expressions that pass API validation the
two agree (validation bounds the worst case, so runtime cannot exceed it).
The difference concerns only stored expressions that were accepted under
laxer rules: upstream evaluates them and fails only on devices where the
actual cost goes over the limit, whereas here every evaluation fails.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

from cel_expr_python import cel

from dralab.cel.checked import decode_checked, encode_checked, format_type
from dralab.cel.cost import estimate_checked_cost
from dralab.cel.device import DeviceInput
from dralab.cel.environment import Features, checker_env, runtime_env
from dralab.cel.errors import (
    CelCompileError,
    CelRuntimeError,
    compile_message,
    runtime_message,
)
from dralab.cel.rewrite import rewrite
from dralab.cel.validators import validate

__all__ = [
    "MAX_COST",
    "MAX_EXPRESSION_LENGTH",
    "CompiledSelector",
    "compile_selector",
    "estimate_cost",
]

MAX_EXPRESSION_LENGTH: Final = 10240
"""CELSelectorExpressionMaxLength; enforced by API validation, not by compiling."""
MAX_COST: Final = 1_000_000
"""CELSelectorExpressionMaxCost, for validation and for evaluation."""

COST_LIMIT_MESSAGE: Final = "operation cancelled: actual cost limit exceeded"
_DEFAULT: Final = Features()


class CompiledSelector:
    """A type-checked selector, ready to evaluate against prepared devices."""

    __slots__ = ("_over_limit", "_program", "estimated_cost", "expression", "features")

    def __init__(self, expression: str, features: Features, estimated_cost: int,
                 program: Any) -> None:
        self.expression = expression
        self.features = features
        self.estimated_cost = estimated_cost
        self._program = program
        self._over_limit = estimated_cost > MAX_COST

    def evaluate(self, device: DeviceInput) -> bool:
        """Whether ``device`` matches.

        Raises CelRuntimeError for any evaluation error (missing attribute,
        failed function, non-bool result, cost over MAX_COST).
        """
        if self._over_limit:
            raise CelRuntimeError(COST_LIMIT_MESSAGE)
        try:
            result = self._program.eval(device.activation)
        except RuntimeError as err:  # e.g. a value cel-expr-python cannot convert
            raise CelRuntimeError(runtime_message(str(err))) from None
        value = result.value()
        if value is True or value is False:
            return bool(value)
        if result.type() == cel.Type.ERROR:
            raise CelRuntimeError(runtime_message(str(value)))
        type_name = result.type().name().partition("<")[0]
        if type_name.isupper():  # built-in types print as INT, LIST<...>; upstream says int, list
            type_name = type_name.lower()
        raise CelRuntimeError(f"CEL result of type {type_name} could not be converted to bool")

    def __repr__(self) -> str:
        return f"CompiledSelector({self.expression!r}, estimated_cost={self.estimated_cost})"


def _result_type_error(checked: Any) -> str | None:
    result = checked.type_map[checked.expr.id]
    kind = result.WhichOneof("kind")
    if (kind == "primitive" and result.primitive == 1) or kind == "dyn":
        return None
    return f"must evaluate to bool or the unknown type, not {format_type(result)}"


@lru_cache(maxsize=4096)
def _compile(expression: str, features: Features) -> CompiledSelector:
    try:
        expression.encode()
    except UnicodeEncodeError:
        raise CelCompileError("expression is not valid UTF-8 text") from None
    try:
        serialized = checker_env(features).compile(expression).serialize()
    except RuntimeError as err:
        raise CelCompileError(compile_message(str(err))) from None
    checked = decode_checked(serialized)
    problem = validate(checked, expression) or _result_type_error(checked)
    if problem is not None:
        raise CelCompileError(problem)
    cost = estimate_checked_cost(checked)  # on the AST as written, before rewriting
    if rewrite(checked):
        serialized = encode_checked(checked)
    try:
        program = runtime_env().deserialize(serialized)
    except RuntimeError as err:
        raise CelCompileError(f"internal error loading the program: {err}") from None
    return CompiledSelector(expression, features, cost, program)


def compile_selector(expression: str, features: Features = _DEFAULT) -> CompiledSelector:
    """Compile a selector expression for an environment with ``features``.

    Raises CelCompileError with a one-line reason for syntax errors, unknown
    functions, overload mismatches, invalid literals (mixed-type list/map
    literals, bad duration/timestamp/regex constants) and results that cannot
    be bool. The
    expression length is not checked here (API validation does, against
    MAX_EXPRESSION_LENGTH); neither is the estimated cost (see
    ``CompiledSelector.estimated_cost`` and ``evaluate``).
    """
    return _compile(expression, features)


def estimate_cost(expression: str, features: Features = _DEFAULT) -> int:
    """The static worst-case cost of ``expression``.

    Raises CelCompileError if the expression does not compile.
    """
    return _compile(expression, features).estimated_cost
