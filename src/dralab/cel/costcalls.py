"""Cost rules of function calls: Kubernetes' library costs, then cel-go's defaults.

Kubernetes' estimator (apiserver/pkg/cel/library/cost.go) is consulted first
and matches on function *names*; cel-go's built-in rules match on overload ids.
Anything else costs 1 plus its arguments. Each rule returns the call's own
cost (arguments included) and, for strings/lists, a bound on the result size.
"""

from __future__ import annotations

import math
from typing import Any, Final, Protocol

from dralab.cel.costmodel import (
    MAX,
    MAX_LIST_VALUES,
    ONE,
    REGEX_LENGTH,
    STRING_TRAVERSAL,
    ZERO,
    CostOperand,
    Entry,
    Range,
    add,
    entry_union,
    kind_of,
    mul,
    scale,
    union,
)

__all__ = ["SizeOracle", "function_cost"]

Estimate = tuple[Range, Range | None]  # (cost, result size)


class SizeOracle(Protocol):
    """What the rules need to know from the estimator walking the expression."""

    def size(self, node: CostOperand) -> Range: ...

    def element(self, node: CostOperand) -> CostOperand | None: ...

    def entry_of(self, expr: Any) -> Entry | None: ...

    def set_entry(self, expr_id: int, entry: Entry) -> None: ...


_SIZED_COMPARISONS: Final = frozenset({
    "less_string", "greater_string", "less_equals_string", "greater_equals_string",
    "less_bytes", "greater_bytes", "less_equals_bytes", "greater_equals_bytes",
    "equals", "not_equals",
})
_FLAT_LIBRARY_FUNCTIONS: Final = frozenset({
    "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
    "compareTo", "add", "sub",
})


def function_cost(sizes: SizeOracle, e: Any, function: str, overload: str,
                  target: CostOperand | None, args: list[CostOperand],
                  arg_costs: list[Range]) -> Estimate:
    """Cost of one candidate overload of a call (the target's own cost excluded)."""
    arg_sum = ZERO
    for cost in arg_costs:
        arg_sum = add(arg_sum, cost)
    library = _library_cost(sizes, function, target, args)
    if library is not None:
        return add(library[0], arg_sum), library[1]
    return _builtin_cost(sizes, e, overload, target, args, arg_costs, arg_sum)


def _library_cost(sizes: SizeOracle, function: str, target: CostOperand | None,
                  args: list[CostOperand]) -> Estimate | None:
    if function == "includes":
        # DRA charges the longest possible attribute list, whatever the receiver.
        return (MAX_LIST_VALUES, MAX_LIST_VALUES), None
    if function in _FLAT_LIBRARY_FUNCTIONS:
        return ONE, None
    if function == "_==_" and _same_constant_cost_type(args):
        return ONE, None
    if target is None:
        return None
    if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
        element = sizes.element(target)
        if element is None:  # a string receiver (indexOf/lastIndexOf)
            return scale(sizes.size(target), STRING_TRAVERSAL), None
        per_element = ONE
        if kind_of(element.type) in ("string", "bytes"):
            per_element = add(per_element, scale(sizes.size(element), STRING_TRAVERSAL))
        return mul(sizes.size(target), per_element), None
    if function in ("lowerAscii", "upperAscii", "substring", "trim"):
        size = sizes.size(target)
        return scale(size, STRING_TRAVERSAL), size
    if function == "replace" and len(args) >= 2:
        return _replace_cost(sizes, target, args)
    if function == "split":
        size = sizes.size(target)
        upper = size[1]
        if len(args) > 1 and args[1].expr is not None and \
                args[1].expr.WhichOneof("kind") == "const_expr":
            limit = args[1].expr.const_expr.int64_value
            upper = limit if limit >= 0 else upper
        return scale(size, 2 * STRING_TRAVERSAL), (0, upper)
    if function == "join":
        return _join_cost(sizes, target, args)
    if function in ("find", "findAll") and args:
        size = sizes.size(target)
        text = scale(add(size, ONE), STRING_TRAVERSAL)
        pattern = scale(sizes.size(args[0]), REGEX_LENGTH)
        return mul(text, pattern), (0, size[1])
    return None


# Kubernetes types whose equality the API server's estimator charges 1 (apiserver
# library/cost.go, EstimateCallCost for "_==_"): without this, CEL's generic rule charges
# an unbounded size and a plain `quantity == quantity(...)` selector is "too complex".
_CONSTANT_EQUALITY_TYPES: Final = frozenset({"kubernetes.Quantity", "kubernetes.Semver"})


def _same_constant_cost_type(args: list[CostOperand]) -> bool:
    if len(args) != 2 or any(a.type is None or a.type.WhichOneof("kind") != "message_type"
                             for a in args):
        return False
    left, right = (a.type.message_type for a in args)
    return left == right and left in _CONSTANT_EQUALITY_TYPES


def _join_cost(sizes: SizeOracle, target: CostOperand, args: list[CostOperand]) -> Estimate:
    joined: Range = ZERO
    element = sizes.element(target)
    count = sizes.size(target)
    if element is not None:
        joined = mul(count, sizes.size(element))
    if args:
        separators = (max(count[0] - 1, 0), max(count[1] - 1, 0))
        joined = add(joined, mul(sizes.size(args[0]), separators))
    return scale(joined, STRING_TRAVERSAL), joined


def _replace_cost(sizes: SizeOracle, target: CostOperand, args: list[CostOperand]) -> Estimate:
    size = sizes.size(target)
    old, new = sizes.size(args[0]), sizes.size(args[1])
    # Longest result: replace the shortest possible match by the longest replacement.
    if old[0] == 0:
        count_max, kept_max = min(size[1] + 1, MAX), size[1]
    elif new[1] <= old[0]:
        count_max, kept_max = 0, size[1]
    else:
        count_max, kept_max = math.ceil(size[1] / old[0]), 0
    if old[1] == 0:
        count_min, kept_min = min(size[0] + 1, MAX), size[0]
    elif old[1] <= new[0]:
        count_min, kept_min = 0, size[0]
    else:
        count_min, kept_min = math.ceil(size[0] / old[1]), 0
    result = add(mul((count_min, count_max), new), (kept_min, kept_max))
    return scale(size, 2 * STRING_TRAVERSAL), result


def _builtin_cost(sizes: SizeOracle, e: Any, overload: str, target: CostOperand | None,
                  args: list[CostOperand], arg_costs: list[Range], arg_sum: Range) -> Estimate:
    if overload == "string_format" and target is not None and args:
        size = sizes.size(target)
        return add(scale(size, STRING_TRAVERSAL), arg_sum), add(size, sizes.size(args[0]))
    if overload in ("string_to_bytes", "bytes_to_string", "strings_quote") and len(args) == 1:
        size = sizes.size(args[0])
        result = {"string_to_bytes": (size[0], min(size[1] * 4, MAX)),
                  "bytes_to_string": (size[0] // 4, size[1]),
                  "strings_quote": (size[0] + 2, min(size[1] * 2 + 2, MAX))}[overload]
        return add(scale(size, STRING_TRAVERSAL), arg_sum), result
    if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
        return add(scale(sizes.size(args[0]), STRING_TRAVERSAL), arg_sum), None
    if overload == "in_list" and len(args) == 2:
        return add(sizes.size(args[1]), arg_sum), None
    if overload == "matches_string" and target is not None and len(args) == 1:
        text = scale(add(sizes.size(target), ONE), STRING_TRAVERSAL)
        pattern = scale(sizes.size(args[0]), REGEX_LENGTH)
        return add(mul(text, pattern), arg_sum), None
    if overload == "contains_string" and target is not None and len(args) == 1:
        text = scale(sizes.size(target), STRING_TRAVERSAL)
        sub = scale(sizes.size(args[0]), STRING_TRAVERSAL)
        return add(mul(text, sub), arg_sum), None
    if overload in ("logical_or", "logical_and"):
        # Short-circuiting: the cheapest case evaluates only the left side.
        lhs, rhs = arg_costs[0], arg_costs[1]
        return (lhs[0], add(lhs, rhs)[1]), None
    if overload == "conditional":
        size = union(sizes.size(args[1]), sizes.size(args[2]))
        entry = entry_union(sizes.entry_of(args[1].expr), sizes.entry_of(args[2].expr))
        if entry is not None:
            sizes.set_entry(e.id, entry)
        return add(arg_costs[0], union(arg_costs[1], arg_costs[2])), size
    if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
        size = add(sizes.size(args[0]), sizes.size(args[1]))
        entry = entry_union(sizes.entry_of(args[0].expr), sizes.entry_of(args[1].expr))
        if entry is not None:
            sizes.set_entry(e.id, entry)
        if overload == "add_list":
            return add(ONE, arg_sum), size
        return add(scale(size, STRING_TRAVERSAL), arg_sum), size
    if overload in _SIZED_COMPARISONS:
        # Comparing costs a traversal of the shorter operand; scalars have size 1.
        smallest = min(sizes.size(args[0])[1], sizes.size(args[1])[1])
        low = 1 if smallest > 0 else 0
        return add(scale((low, smallest), STRING_TRAVERSAL), arg_sum), None
    return add(ONE, arg_sum), None
