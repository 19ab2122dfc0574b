"""Static worst-case cost of a checked selector, after CEL's cost model.

cel-expr-python has no cost estimator, so this package re-implements the model
Kubernetes validates DRA selectors with: cel-go's checker cost estimation
(this module: the walk over the expression), the Kubernetes library call costs
(``costcalls``) and the DRA size estimator (``costmodel.device_size``), which
bounds what ``device`` can hold: 32 domains of at most 63 characters, 32 ids of
at most 32 characters per domain, attribute values of at most 64 characters or
list elements, a driver name of at most 63 characters.

Units: identifiers, field selections and most calls cost 1, constants 0,
creating a list 10, a map 30, a message 40; traversing a string costs 0.1 per
character, regex matching 0.25 per pattern character times the traversal; a
comprehension costs its range size times (condition + step). Sizes and costs
saturate at 2^64-1, so an unbounded loop yields an astronomically high cost.

On the expressions of Kubernetes' own DRA compiler tests the estimate equals
upstream's to the unit (see tests/cel/test_cel_cost.py); elsewhere it follows
the same rules but is not cross-checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from dralab.cel.costcalls import function_cost
from dralab.cel.costmodel import (
    DECLARED_DEVICE,
    LIST_CREATE,
    MAP_CREATE,
    MAX,
    ONE,
    STRUCT_CREATE,
    UNKNOWN,
    ZERO,
    CostOperand,
    Entry,
    Range,
    SizeTree,
    add,
    device_size,
    first_param,
    is_scalar,
    kind_of,
    literal_size,
    mul,
    union,
)
from dralab.cel.rewrite import is_bind

__all__ = ["Coster", "Local", "estimate_checked_cost"]

_ACCUMULATORS: Final = frozenset({"@result", "__result__"})


@dataclass
class Local:
    """A comprehension or bind variable: where it comes from and how big it is."""

    path: tuple[str, ...] | None
    size: Range | None
    entry: Entry | None
    weight: int | None = None
    """Only tracked by the runtime bound (``runtimecost``)."""


class Coster:
    """The walk; ``runtimecost.RuntimeCoster`` extends it through the ``_fold_*`` hooks."""

    def __init__(self, checked: Any, device: SizeTree = DECLARED_DEVICE) -> None:
        self.device = device
        self.types = checked.type_map
        self.refs = checked.reference_map
        self.paths: dict[int, tuple[str, ...]] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, Entry] = {}
        self.locals: dict[str, list[Local]] = {}

    # -- variables, paths and sizes ----------------------------------------------

    def type_of(self, e: Any) -> Any:
        return self.types.get(e.id)

    def local(self, name: str) -> Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, local: Local) -> None:
        self.locals.setdefault(name, []).append(local)

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    def path_of(self, e: Any) -> tuple[str, ...] | None:
        if e.WhichOneof("kind") == "ident_expr":
            local = self.local(e.ident_expr.name)
            if local is not None:
                return local.path
        return self.paths.get(e.id)

    def size_of(self, e: Any) -> Range | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        literal = literal_size(e)
        if literal is not None:
            return literal
        estimated = device_size(self.path_of(e), self.device)
        if estimated is not None:
            self.sizes[e.id] = estimated
            return estimated
        if is_scalar(self.type_of(e)):
            return ONE
        if e.WhichOneof("kind") == "ident_expr":
            local = self.local(e.ident_expr.name)
            if local is not None and local.size is not None:
                return local.size
        return None

    def size_or_unknown(self, e: Any) -> Range:
        size = self.size_of(e)
        return UNKNOWN if size is None else size

    def copy_sizes(self, dst: Any, src: Any) -> None:
        size = self.size_of(src)
        if size is not None:
            self.sizes[dst.id] = size
        entry = self.entry_of(src)
        if entry is not None:
            self.entries[dst.id] = entry

    def node(self, e: Any) -> CostOperand:
        path = self.path_of(e)
        if path and path[0] in _ACCUMULATORS:
            path = None
        return CostOperand(e, self.type_of(e), path, self.size_of(e))

    # -- the SizeOracle protocol of costcalls ----------------------------------------

    def size(self, node: CostOperand) -> Range:
        if node.size is not None:
            return node.size
        return device_size(node.path, self.device) or UNKNOWN

    def element(self, node: CostOperand) -> CostOperand | None:
        elem = first_param(node.type)
        if elem is None:
            return None
        path = (*node.path, "@items") if node.path else None
        # Elements of a list literal have known sizes; others come from the path.
        entry = self.entry_of(node.expr) if node.expr is not None else None
        return CostOperand(None, elem, path, entry.value if entry is not None else None)

    def entry_of(self, expr: Any) -> Entry | None:
        if expr.id in self.entries:
            return self.entries[expr.id]
        if expr.WhichOneof("kind") == "ident_expr":
            local = self.local(expr.ident_expr.name)
            if local is not None:
                return local.entry
        return None

    def set_entry(self, expr_id: int, entry: Entry) -> None:
        self.entries[expr_id] = entry

    # -- expressions ----------------------------------------------------------------

    def cost(self, e: Any) -> Range:
        kind = e.WhichOneof("kind")
        if kind == "ident_expr":
            return self.cost_ident(e)
        if kind == "select_expr":
            return self.cost_select(e)
        if kind == "call_expr":
            return self.cost_call(e)
        if kind == "list_expr":
            return self.cost_list(e)
        if kind == "struct_expr":
            return self.cost_struct(e)
        if kind == "comprehension_expr":
            return self.cost_bind(e) if is_bind(e) else self.cost_comprehension(e)
        return ZERO  # constants

    def cost_ident(self, e: Any) -> Range:
        name = e.ident_expr.name
        local = self.local(name)
        if local is not None:
            if local.path:
                self.paths[e.id] = local.path
            return ONE
        # A qualified variable stands for upstream's `device` plus field
        # selections: one unit for the identifier and one per selection.
        path = tuple(name.split("."))
        self.paths[e.id] = path
        return (len(path), len(path))

    def cost_select(self, e: Any) -> Range:
        select = e.select_expr
        total = self.cost(select.operand)
        if select.test_only:
            return total  # Kubernetes charges nothing for the presence test itself.
        if kind_of(self.type_of(select.operand)) in ("map", "struct", "typeparam"):
            total = add(total, ONE)
        self.paths[e.id] = (*(self.path_of(select.operand) or ()), select.field)
        return total

    def cost_list(self, e: Any) -> Range:
        total = ZERO
        elements = e.list_expr.elements
        item: Range = ZERO if not elements else (MAX, 0)
        for element in elements:
            total = add(total, self.cost(element))
            item = union(item, self.size_or_unknown(element))
        self.entries[e.id] = Entry("list", ONE, item)
        return add(total, (LIST_CREATE, LIST_CREATE))

    def cost_struct(self, e: Any) -> Range:
        struct = e.struct_expr
        total = ZERO
        if struct.message_name:
            for entry in struct.entries:
                total = add(total, self.cost(entry.value))
            return add(total, (STRUCT_CREATE, STRUCT_CREATE))
        keys: Range = ZERO if not struct.entries else (MAX, 0)
        values = keys
        for entry in struct.entries:
            total = add(add(total, self.cost(entry.map_key)), self.cost(entry.value))
            keys = union(keys, self.size_or_unknown(entry.map_key))
            values = union(values, self.size_or_unknown(entry.value))
        self.entries[e.id] = Entry("map", keys, values)
        return add(total, (MAP_CREATE, MAP_CREATE))

    def _accumulator(self, init: Any) -> Local:
        return Local(self.path_of(init), self.size_of(init), self.entry_of(init))

    def _fold_accumulator(self, e: Any, count: Range) -> Local:
        """The accumulator of a (non-bind) comprehension ``e`` over ``count`` items."""
        return self._accumulator(e.comprehension_expr.accu_init)

    def _fold_step_done(self, e: Any, count: Range) -> None:
        """Called after the loop step of ``e`` was walked, before its result."""

    def cost_bind(self, e: Any) -> Range:
        comp = e.comprehension_expr
        # The unused empty range is "created" too, as upstream counts it.
        total = add(self.cost(comp.iter_range), self.cost(comp.accu_init))
        self.push(comp.accu_var, self._accumulator(comp.accu_init))
        total = add(total, self.cost(comp.result))
        self.pop(comp.accu_var)
        self.copy_sizes(e, comp.result)
        return total

    def _iteration_variable(self, rng: Any, part: str) -> Local:
        """The variable over a range: part is "single", "key" or "value"."""
        entry = self.entry_of(rng)
        is_list = (entry.container if entry is not None else kind_of(self.type_of(rng))) == "list"
        if part == "key":
            sub, size = ("@indices" if is_list else "@keys"), (entry.key if entry else None)
        elif part == "value" or is_list:
            sub, size = ("@items" if is_list else "@values"), (entry.value if entry else None)
        else:
            sub, size = "@keys", (entry.key if entry else None)
        return Local((*(self.path_of(rng) or ()), sub), size, None)

    def cost_comprehension(self, e: Any) -> Range:
        comp = e.comprehension_expr
        total = add(self.cost(comp.iter_range), self.cost(comp.accu_init))
        count = self.size_or_unknown(comp.iter_range)
        self.push(comp.accu_var, self._fold_accumulator(e, count))
        if comp.iter_var2:
            self.push(comp.iter_var, self._iteration_variable(comp.iter_range, "key"))
            self.push(comp.iter_var2, self._iteration_variable(comp.iter_range, "value"))
        else:
            self.push(comp.iter_var, self._iteration_variable(comp.iter_range, "single"))
        per_iteration = add(self.cost(comp.loop_condition), self.cost(comp.loop_step))
        self.pop(comp.iter_var)
        if comp.iter_var2:
            self.pop(comp.iter_var2)
        self._fold_step_done(e, count)
        total = add(total, self.cost(comp.result))
        self.pop(comp.accu_var)
        total = add(total, mul(count, per_iteration))
        init_kind = comp.accu_init.WhichOneof("kind")
        if init_kind == "const_expr":
            literal = literal_size(comp.accu_init)
            if literal is not None:
                self.sizes[e.id] = literal
        elif init_kind in ("list_expr", "struct_expr"):
            # map()/filter() build at most one element per iteration.
            self.sizes[e.id] = count
            step_entry = self.entry_of(comp.loop_step)
            if step_entry is not None:
                self.entries[e.id] = step_entry
        return total

    def cost_call(self, e: Any) -> Range:
        call = e.call_expr
        if call.function == "dyn" and len(call.args) == 1:
            arg_cost = self.cost(call.args[0])
            self.copy_sizes(e, call.args[0])
            return add(ONE, arg_cost)
        arg_costs = [self.cost(a) for a in call.args]
        args = [self.node(a) for a in call.args]
        overloads = list(self.refs[e.id].overload_id) if e.id in self.refs else []
        if not overloads:
            return ZERO
        total = ZERO
        target: CostOperand | None = None
        if call.HasField("target"):
            total = self.cost(call.target)
            target = self.node(call.target)
        # A dynamically dispatched call may hit any candidate overload.
        fn: Range = (MAX, 0)
        result_size: Range | None = None
        for overload in overloads:
            estimate, size = function_cost(self, e, call.function, overload, target, args,
                                           arg_costs)
            fn = union(fn, estimate)
            if size is not None:
                result_size = size if result_size is None else union(result_size, size)
            if overload in ("index_list", "index_map") and call.args:
                entry = self.entry_of(call.args[0])
                result_size = None if entry is None else entry.value
                sub = "@items" if overload == "index_list" else "@values"
                self.paths[e.id] = (*(self.path_of(call.args[0]) or ()), sub)
            if result_size is None:
                result_size = self.size_of(e)
        if result_size is not None:
            self.sizes[e.id] = result_size
        return add(total, fn)


def estimate_checked_cost(checked: Any) -> int:
    """The worst-case cost of a decoded, unmodified CheckedExpr (saturates at 2^64-1)."""
    return Coster(checked).cost(checked.expr)[1]
