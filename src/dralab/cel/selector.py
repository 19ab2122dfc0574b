"""Compiling and evaluating device selectors.

Compilation = parse + type-check (checker environment) + Kubernetes' literal
validations + result-type check + static cost estimate + AST rewrites +
loading into the runtime environment.
Compiled selectors are cached per (expression, features).

**Runtime cost limit.** Kubernetes meters every evaluation and aborts it once
it exceeds 1,000,000 units. cel-expr-python offers no cost tracking, so an
evaluation is refused up front, with upstream's error text, when a bound on
its cost in this runtime exceeds the limit (``runtimecost``: upstream's cost
model plus the copying and deep walks that cel-go avoids). The bound is
computed at compile time for the largest allowed device; only a selector over
the limit there is bounded again per device, with the device's actual sizes.
So a selector fails on exactly the devices where its bound exceeds the limit,
never part-way through an evaluation. Where upstream would still finish
(its actual cost stays below our bound, e.g. lazily concatenated lists that
are never walked) this is stricter; see ``runtimecost``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

from cel_expr_python import cel

from dralab.cel.checked import decode_checked, encode_checked, format_type
from dralab.cel.cost import estimate_checked_cost
from dralab.cel.costmodel import SizeTree
from dralab.cel.device import DeviceInput
from dralab.cel.environment import Features, checker_env, runtime_env
from dralab.cel.errors import (
    CelCompileError,
    CelRuntimeError,
    compile_message,
    display_message,
    runtime_message,
)
from dralab.cel.fastpath import FastPredicate, compile_fast
from dralab.cel.rewrite import rewrite
from dralab.cel.runtimecost import runtime_bound
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


_BOUND_CACHE_SIZE: Final = 256


class CompiledSelector:
    """A type-checked selector, ready to evaluate against prepared devices."""

    __slots__ = ("_bounds", "_checked", "_over_declared", "_program", "_source",
                 "estimated_cost", "expression", "features", "runtime_bound")

    def __init__(self, expression: str, features: Features, estimated_cost: int,
                 program: Any, runtime_bound: int, source: bytes) -> None:
        self.expression = expression
        self.features = features
        self.estimated_cost = estimated_cost
        self.runtime_bound = runtime_bound
        """Bound on the cost of one evaluation on any device that passes API validation."""
        self._program = program
        self._over_declared = runtime_bound > MAX_COST
        self._source = source  # the serialized AST as written, for per-device bounds
        self._checked: Any = None
        self._bounds: dict[SizeTree, int] = {}

    def device_bound(self, device: DeviceInput) -> int:
        """Bound on the cost of evaluating on ``device``, from its actual sizes."""
        tree = device.size_tree()
        found = self._bounds.get(tree)
        if found is None:
            if self._checked is None:
                self._checked = decode_checked(self._source)
            found = runtime_bound(self._checked, tree)
            if len(self._bounds) >= _BOUND_CACHE_SIZE:
                self._bounds.clear()
            self._bounds[tree] = found
        return found

    def fast_predicate(self) -> FastPredicate | None:
        """A Python predicate over raw devices for a recognised shape (``fastpath``);
        None when the shape is not recognised or the declared cost bound is over
        the limit (then a device's own sizes decide and CEL must evaluate)."""
        if self._over_declared:
            return None
        return compile_fast(decode_checked(self._source).expr)

    def evaluate(self, device: DeviceInput) -> bool:
        """Whether ``device`` matches.

        Raises CelRuntimeError for any evaluation error (missing attribute,
        failed function, non-bool result, cost bound over MAX_COST).
        """
        bound = self.runtime_bound
        # The declared bound holds for every device API validation accepts;
        # otherwise (rare) the device's own sizes decide.
        if self._over_declared or device.oversized:
            bound = self.device_bound(device)
            if bound > MAX_COST:
                raise CelRuntimeError(COST_LIMIT_MESSAGE)
        result: Any = None
        try:
            result = self._program.eval(device.activation)
            value = result.value()
            if value is True or value is False:
                return bool(value)
            raise _not_bool(result, value)
        except RuntimeError as err:  # e.g. a value cel-expr-python cannot convert
            raise CelRuntimeError(runtime_message(str(err))) from None
        finally:
            # Only now, and without our reference: the result lives in the
            # activation's arena, which charge() may free.
            result = None
            device.charge(bound)

    def __repr__(self) -> str:
        return f"CompiledSelector({self.expression!r}, estimated_cost={self.estimated_cost})"


def _not_bool(result: Any, value: Any) -> CelRuntimeError:
    if result.type() == cel.Type.ERROR:
        return CelRuntimeError(runtime_message(str(value)))
    type_name = result.type().name().partition("<")[0]
    if type_name.isupper():  # built-in types print as INT, LIST<...>; upstream says int, list
        type_name = type_name.lower()
    return CelRuntimeError(f"CEL result of type {type_name} could not be converted to bool")


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
        raise CelCompileError(compile_message(str(err)),
                              display_message(str(err), expression)) from None
    checked = decode_checked(serialized)
    problems = validate(checked, expression)
    if problems:
        # Shown like the compiler's own diagnostics, as cel-go's validators' are.
        raw = "\n".join(f"ERROR: {p}" for p in problems)
        raise CelCompileError(compile_message(raw), display_message(raw, expression))
    problem = _result_type_error(checked)
    if problem is not None:
        raise CelCompileError(problem)
    # Both on the AST as written, before rewriting.
    cost = estimate_checked_cost(checked)
    bound = runtime_bound(checked)
    as_written = serialized
    if rewrite(checked):
        serialized = encode_checked(checked)
    try:
        program = runtime_env().deserialize(serialized)
    except RuntimeError as err:
        raise CelCompileError(f"internal error loading the program: {err}") from None
    return CompiledSelector(expression, features, cost, program, bound, as_written)


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
