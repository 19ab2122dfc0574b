"""Validation of CEL device selectors, as the API server does for new expressions.

Compiling is the expensive part, and fleets repeat the same few selectors in
every class and claim, so outcomes are memoised per (expression, CEL
features). The cache holds only small tuples, never compiled programs.

``dralab.cel`` is imported on first use: building its environments is slow,
and objects without selectors (most of them) should not pay for it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Final

from dralab.api.features import FeatureGates, Gate
from dralab.validation._context import Ctx

if TYPE_CHECKING:
    from dralab.cel import Features

__all__ = ["check_cel_length", "check_cel_selector"]

_COMPILE_PREFIX: Final = "compilation failed: "
# Messages that are not compiler diagnostics and read fine on their own.
_UNPREFIXED: Final = (_COMPILE_PREFIX, "must evaluate to ")


def check_cel_length(ctx: Ctx, expression: str, path: str) -> bool:
    """Empty or too long expressions; True if the expression may be compiled."""
    from dralab.cel import MAX_EXPRESSION_LENGTH

    if not expression:
        ctx.required(path, "")
        return False
    if len(expression.encode()) > MAX_EXPRESSION_LENGTH:
        # Upstream does not compile what is too long: it would only cost time.
        ctx.too_long(path, MAX_EXPRESSION_LENGTH)
        return False
    return True


def check_cel_selector(ctx: Ctx, expression: str, path: str) -> None:
    """A selector expression: present, short enough, compiles to bool, affordable."""
    from dralab.cel import MAX_COST

    if not check_cel_length(ctx, expression, path):
        return
    error, cost = _compile(expression, _cel_features(ctx.features))
    if error is not None:
        detail = error if error.startswith(_UNPREFIXED) else _COMPILE_PREFIX + error
        ctx.invalid(path, expression, detail)
    elif cost > MAX_COST:
        ctx.forbidden(path, "too complex, exceeds cost limit")


def _cel_features(gates: FeatureGates) -> Features:
    from dralab.cel import Features

    # Only these two gates change the selector environment.
    return Features(
        consumable_capacity=gates.is_enabled(Gate.DRA_CONSUMABLE_CAPACITY),
        list_type_attributes=gates.is_enabled(Gate.DRA_LIST_TYPE_ATTRIBUTES),
    )


@lru_cache(maxsize=4096)
def _compile(expression: str, features: Features) -> tuple[str | None, int]:
    from dralab.cel import CelCompileError, compile_selector

    try:
        compiled = compile_selector(expression, features)
    except CelCompileError as err:
        # The API server's text: cel-go's diagnostics with source line and caret marker.
        return err.display, 0
    return None, compiled.estimated_cost
