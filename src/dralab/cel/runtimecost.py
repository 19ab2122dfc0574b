"""A static bound on what evaluating a selector costs in *this* runtime.

Upstream meters every evaluation (cel-go's runtime cost tracker, limit
1,000,000 per evaluation) and cancels it once over the limit. cel-expr-python
has no cost tracking and no interrupt, so the same limit is enforced with a
bound computed before evaluating: if the bound stays within the limit, so does
the evaluation; otherwise it is not started and fails with upstream's error.

The bound starts from upstream's cost model (``cost.Coster``: loops times
iterations, strings by length, ...) and adds the work that is O(1) in cel-go
but not here, where values are materialised eagerly:

* ``a + b`` on lists copies both lists (cel-go concatenates lazily), so it
  also costs the result's size. This includes the accumulator of ``map()`` /
  ``filter()``, which cel-cpp copies on every iteration.
* deep walks of values: ``==``/``!=`` on lists and maps, ``in`` on a list,
  ``format()`` and every Kubernetes library function implemented in Python
  (whose arguments and result are converted in full) cost the *weight* of the
  values involved: one per value plus one per string character, over all
  nested elements. ``cel.bind(v1, [v0, v0], ...)`` doubles the weight without
  doubling any size, so sizes alone cannot bound this work.
* a non-bool result is converted to be reported, which costs its weight.

Weights are tracked like sizes: exact for literals, from the device's size
tree for ``device.*`` paths, through bind and loop variables, and
conservatively for function results. ``format()`` also gets a result size
that covers what it prints (upstream's estimate counts only the list's
length).

A bound is computed twice: at compile time with the largest device upstream
allows (``DECLARED_DEVICE``); only if that exceeds the limit, again before each
evaluation with the sizes of the actual device, so a selector fails only on
devices where its work could really exceed the limit, as upstream's does.
"""

from __future__ import annotations

from typing import Any, Final

from dralab.cel.cost import Coster, Local
from dralab.cel.costmodel import (
    DECLARED_DEVICE,
    MAX,
    MESSAGE_WEIGHT,
    Range,
    SizeTree,
    add,
    device_weight,
    is_scalar,
    kind_of,
)
from dralab.cel.library import IMPLEMENTATIONS

__all__ = ["FORMAT_EXPANSION", "runtime_bound"]

FORMAT_EXPANSION: Final = 320
"""Characters ``format()`` may print per unit of weight (``%f`` of 1.8e308 prints 316)."""

# Calls whose result is one of their arguments or a part of one.
_PASS_THROUGH: Final = frozenset({
    "_[_]", "_[?_]", "_?._", "_?_:_", "dyn", "optional.of", "optional.ofNonZeroValue",
    "orValue", "value", "or",
})
_SETS: Final = frozenset({"sets.contains", "sets.equivalent", "sets.intersects"})
_PYTHON: Final = frozenset(IMPLEMENTATIONS)
# Python functions that take only quantities, versions (and ints): cel-cpp
# dispatches on the runtime kind, so whatever reaches them is a small message.
_MESSAGE_ONLY: Final = frozenset({
    "sign", "compareTo", "isGreaterThan", "isLessThan", "asApproximateFloat", "asInteger",
    "isInteger", "add", "sub", "major", "minor", "patch",
})
_FLAT: Final = frozenset({"string", "bytes"})


def _sat(value: int) -> int:
    return min(value, MAX)


class RuntimeCoster(Coster):
    """Upstream's walk plus the extra work of this runtime (see the module docstring)."""

    def __init__(self, checked: Any, device: SizeTree) -> None:
        super().__init__(checked, device)
        self.weights: dict[int, int] = {}

    # -- weights ----------------------------------------------------------------------

    def weight(self, e: Any) -> int:
        return self.weights.get(e.id, MAX)

    def _size_weight(self, e: Any) -> int | None:
        """Weight of a scalar (1) or a string of known size, else None."""
        t = self.type_of(e)
        if is_scalar(t):
            return 1
        if kind_of(t) in _FLAT:
            size = self.size_of(e)
            return None if size is None else _sat(1 + size[1])
        return None

    def _weigh(self, e: Any) -> int:
        kind = e.WhichOneof("kind")
        if kind == "const_expr":
            const = e.const_expr
            which = const.WhichOneof("kind")
            if which == "string_value":
                return 1 + len(const.string_value)
            if which == "bytes_value":
                return 1 + len(const.bytes_value)
            return 1
        tree = device_weight(self.path_of(e), self.device)
        if tree is not None:
            return tree
        if kind == "ident_expr":
            local = self.local(e.ident_expr.name)
            if local is not None and local.weight is not None:
                return local.weight
            weight = self._size_weight(e)
            return MAX if weight is None else weight
        if kind == "select_expr":
            return 1 if e.select_expr.test_only else self.weight(e.select_expr.operand)
        if kind == "list_expr":
            return _sat(1 + sum(self.weight(x) for x in e.list_expr.elements))
        if kind == "struct_expr":
            total = 1
            for entry in e.struct_expr.entries:
                if entry.HasField("map_key"):
                    total += self.weight(entry.map_key)
                total += self.weight(entry.value)
            return _sat(total)
        if kind == "comprehension_expr":
            return self.weight(e.comprehension_expr.result)
        if kind == "call_expr":
            return self._weigh_call(e)
        return MAX

    def _operands(self, e: Any) -> list[Any]:
        call = e.call_expr
        return ([call.target] if call.HasField("target") else []) + list(call.args)

    def _weigh_call(self, e: Any) -> int:
        flat = self._size_weight(e)
        if flat is not None:
            return flat
        call = e.call_expr
        operands = self._operands(e)
        if call.function == "optional.none":
            return 1
        if call.function in _PASS_THROUGH:
            return max((self.weight(x) for x in operands), default=1)
        if call.function == "_+_":
            return _sat(sum(self.weight(x) for x in operands))
        # Anything else that builds a container (split, findAll, a map insert, ...)
        # holds at most about twice what went in: the pieces and their separators.
        return _sat(1 + 2 * sum(self.weight(x) for x in operands))

    # -- variables --------------------------------------------------------------------

    def _accumulator(self, init: Any) -> Local:
        local = super()._accumulator(init)
        local.weight = self.weight(init)
        return local

    def _fold_accumulator(self, e: Any, count: Range) -> Local:
        local = super()._fold_accumulator(e, count)
        if e.comprehension_expr.accu_init.WhichOneof("kind") in ("list_expr", "struct_expr"):
            # map()/filter()/transform*() add at most one entry per iteration.
            local.size = add(local.size or (0, 0), count)
        return local

    def _fold_step_done(self, e: Any, count: Range) -> None:
        # Each iteration adds at most what one step adds to the accumulator.
        comp = e.comprehension_expr
        local = self.local(comp.accu_var)
        if local is None:
            return
        start = self.weight(comp.accu_init)
        growth = max(0, self.weight(comp.loop_step) - start)
        local.weight = _sat(start + count[1] * growth)

    def _iteration_variable(self, rng: Any, part: str) -> Local:
        local = super()._iteration_variable(rng, part)
        tree = device_weight(local.path, self.device)
        if tree is not None:
            local.weight = tree
            return local
        t = self.type_of(rng)
        kind = kind_of(t)
        if kind == "list":
            element = t.list_type.elem_type if part != "key" else None
        elif kind == "map":
            element = t.map_type.value_type if part == "value" else t.map_type.key_type
        else:
            element = t
        if element is None or is_scalar(element):
            local.weight = 1  # a list index, or a scalar element
        elif kind_of(element) in _FLAT and local.size is not None:
            local.weight = _sat(1 + local.size[1])
        else:
            local.weight = self.weight(rng)  # an element never weighs more than its container
        return local

    # -- extra charges ----------------------------------------------------------------

    def cost(self, e: Any) -> Range:
        total = super().cost(e)
        if e.WhichOneof("kind") == "call_expr":
            extra = self._call_extra(e)
            if extra:
                total = (total[0], _sat(total[1] + extra))
        self.weights[e.id] = self._weigh(e)
        return total

    def composite(self, e: Any) -> bool:
        """Whether a value of this node may be a list, map or message (walked deeply)."""
        return kind_of(self.type_of(e)) not in ("bool", "int", "uint", "double", "string",
                                               "bytes", "duration", "timestamp")

    def _call_extra(self, e: Any) -> int:
        call = e.call_expr
        overloads = set(self.refs[e.id].overload_id) if e.id in self.refs else set()
        operands = self._operands(e)
        extra = 0
        if "add_list" in overloads:
            size = self.size_of(e)
            extra += MAX if size is None else size[1]
        if overloads & {"equals", "not_equals"} and any(self.composite(x) for x in operands):
            extra += min(self.weight(x) for x in operands)
        if "in_list" in overloads:
            extra += self.weight(call.args[1])
        if call.function in _PYTHON:
            # Arguments are converted to Python objects and the result back.
            if call.function in _MESSAGE_ONLY:
                extra += MESSAGE_WEIGHT * len(operands) + MESSAGE_WEIGHT
            else:
                extra += sum(self.weight(x) for x in operands) + self._weigh_call(e)
        if "string_format" in overloads and len(operands) == 2:
            printed = self.weight(operands[1])
            extra += printed
            size = self.size_of(operands[0])
            self.sizes[e.id] = (0, _sat((MAX if size is None else size[1])
                                        + FORMAT_EXPANSION * printed))
        if call.function in _SETS and len(operands) == 2:
            a, b = operands
            size_a, size_b = self.size_of(a), self.size_of(b)
            extra += (_sat((MAX if size_a is None else size_a[1]) * self.weight(b))
                      + _sat((MAX if size_b is None else size_b[1]) * self.weight(a)))
        return _sat(extra)


def runtime_bound(checked: Any, device: SizeTree = DECLARED_DEVICE) -> int:
    """The bound for a decoded, unmodified CheckedExpr on ``device`` (saturates at 2^64-1)."""
    coster = RuntimeCoster(checked, device)
    total = coster.cost(checked.expr)[1]
    if coster.composite(checked.expr):
        # A dyn result that is not a bool is converted to report its type.
        total += coster.weight(checked.expr)
    return _sat(total)
