"""Rewrites of the checked AST between type-checking and evaluation.

1. **Unknown domains.** Upstream wraps ``device.attributes`` and
   ``device.capacity`` in a map whose lookups never miss: an unknown domain
   yields an empty map. cel-expr-python converts input dicts eagerly, so the
   same behaviour is obtained by rewriting every lookup on those two maps
   (also through ``cel.bind`` aliases) into native optional-typed CEL:

   ============================  ======================================================
   written                       evaluated
   ============================  ======================================================
   ``R[k]``                      ``R[?k].orValue({})``
   ``R.dom``                     ``R.?dom.orValue({})``
   ``R[?k]`` / ``R.?dom``        ``optional.of(R[?k].orValue({}))`` (always present)
   ``has(R.dom)``                ``true`` (upstream's lookup reports every key present)
   ``k in R``                    unchanged: false for an unknown domain
   ============================  ======================================================

2. **List indexOf/lastIndexOf.** Calls that may reach the Kubernetes list
   overloads are renamed to the runtime's Python implementation (see
   ``declarations.py``).

3. **Constant quantities and versions.** ``quantity("40Gi")`` and
   ``semver("1.2.3")`` with a valid literal become message literals, so they
   are built natively instead of calling Python on every evaluation. Invalid
   literals are left alone and fail at runtime, as upstream.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from dralab.cel.declarations import LIST_OVERLOAD_IDS
from dralab.cel.environment import ATTRIBUTES_VAR, CAPACITY_VAR
from dralab.cel.library import IMPLEMENTATIONS
from dralab.cel.values import QUANTITY_TYPE, SEMVER_TYPE

__all__ = ["children", "is_bind", "rewrite"]

_ROOTS: Final = frozenset({ATTRIBUTES_VAR, CAPACITY_VAR})
_ACCUMULATORS: Final = frozenset({"@result", "__result__"})
_STRING: Final = 5  # cel.expr.Type.PrimitiveType.STRING

# name -> True when it denotes one of the two domain maps (a cel.bind alias).
_Scope = dict[str, bool]


def children(expr: Any) -> Iterator[Any]:
    """The direct sub-expressions of a node, in evaluation order."""
    kind = expr.WhichOneof("kind")
    if kind == "select_expr":
        yield expr.select_expr.operand
    elif kind == "call_expr":
        if expr.call_expr.HasField("target"):
            yield expr.call_expr.target
        yield from expr.call_expr.args
    elif kind == "list_expr":
        yield from expr.list_expr.elements
    elif kind == "struct_expr":
        for entry in expr.struct_expr.entries:
            if entry.HasField("map_key"):
                yield entry.map_key
            yield entry.value
    elif kind == "comprehension_expr":
        comp = expr.comprehension_expr
        yield from (comp.iter_range, comp.accu_init, comp.loop_condition, comp.loop_step,
                    comp.result)


def is_bind(expr: Any) -> bool:
    """Whether a comprehension node is the expansion of ``cel.bind`` (cel-go's test)."""
    comp = expr.comprehension_expr
    cond = comp.loop_condition
    return (comp.iter_range.WhichOneof("kind") == "list_expr"
            and not comp.iter_range.list_expr.elements
            and cond.WhichOneof("kind") == "const_expr"
            and cond.const_expr.WhichOneof("kind") == "bool_value"
            and not cond.const_expr.bool_value
            and comp.accu_var not in _ACCUMULATORS)


class _Rewriter:
    def __init__(self, checked: Any) -> None:
        self.checked = checked
        self.changed = False
        used: list[int] = [*checked.type_map.keys(), *checked.reference_map.keys(),
                           *self._ids(checked.expr)]
        self._next_id = 1 + max(used)

    @staticmethod
    def _ids(expr: Any) -> Iterator[int]:
        stack = [expr]
        while stack:
            node = stack.pop()
            yield int(node.id)
            if node.WhichOneof("kind") == "struct_expr":
                yield from (entry.id for entry in node.struct_expr.entries)
            stack.extend(children(node))

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    def _new(self, template: Any) -> Any:
        node = type(template)()
        node.id = self._new_id()
        return node

    def _set_ref(self, node_id: int, name: str, *overloads: str) -> None:
        refs = self.checked.reference_map
        if node_id in refs:
            del refs[node_id]
        refs[node_id].name = name
        refs[node_id].overload_id.extend(overloads)

    # -- scopes -------------------------------------------------------------

    def _is_root(self, expr: Any, scope: _Scope) -> bool:
        if expr.WhichOneof("kind") != "ident_expr":
            return False
        name = expr.ident_expr.name
        return scope.get(name, name in _ROOTS)

    def walk(self, expr: Any, scope: _Scope) -> None:
        kind = expr.WhichOneof("kind")
        if kind == "comprehension_expr":
            comp = expr.comprehension_expr
            self.walk(comp.iter_range, scope)
            self.walk(comp.accu_init, scope)
            inner = dict(scope)
            for var in (comp.iter_var, comp.iter_var2):
                if var:
                    inner[var] = False
            inner[comp.accu_var] = is_bind(expr) and self._is_root(comp.accu_init, scope)
            for part in (comp.loop_condition, comp.loop_step, comp.result):
                self.walk(part, inner)
            return
        for child in children(expr):
            self.walk(child, scope)
        if kind == "call_expr":
            self._rewrite_call(expr, scope)
        elif kind == "select_expr" and self._is_root(expr.select_expr.operand, scope):
            self._rewrite_select(expr)

    # -- rewrites -----------------------------------------------------------

    def _rewrite_call(self, expr: Any, scope: _Scope) -> None:
        call = expr.call_expr
        args = call.args
        if call.function in ("_[_]", "_[?_]", "_?._") and not call.HasField("target") \
                and len(args) == 2 and self._is_root(args[0], scope):
            if call.function == "_[_]":
                self._default_lookup(expr)
            else:
                self._always_present(expr)
            return
        overloads = self.checked.reference_map[expr.id].overload_id \
            if expr.id in self.checked.reference_map else []
        renamed = {LIST_OVERLOAD_IDS[o] for o in overloads if o in LIST_OVERLOAD_IDS}
        if renamed:
            call.function = renamed.pop()
            self.checked.reference_map[expr.id].name = call.function
            self.changed = True
            return
        if call.function in ("quantity", "semver") and not call.HasField("target"):
            self._fold_constant(expr)

    def _value_type(self, node_id: int, optional: bool) -> Any:
        t = self.checked.type_map[node_id]
        return t.abstract_type.parameter_types[0] if optional else t

    def _or_empty(self, lookup: Any, map_type: Any) -> Any:
        """A new ``<lookup>.orValue({})`` node; ``lookup`` is an optional-typed node."""
        node = self._new(lookup)
        empty = self._new(lookup)
        empty.struct_expr.SetInParent()
        node.call_expr.function = "orValue"
        node.call_expr.target.CopyFrom(lookup)
        node.call_expr.args.append(empty)
        self.checked.type_map[empty.id].CopyFrom(map_type)
        self.checked.type_map[node.id].CopyFrom(map_type)
        self._set_ref(node.id, "orValue", "optional_orValue_value")
        return node

    def _optional_of(self, node_id: int, map_type: Any) -> None:
        t = self.checked.type_map[node_id]
        t.Clear()
        t.abstract_type.name = "optional_type"
        t.abstract_type.parameter_types.add().CopyFrom(map_type)

    def _default_lookup(self, expr: Any) -> None:
        map_type = self._value_type(expr.id, optional=False)
        lookup = self._new(expr)
        lookup.call_expr.function = "_[?_]"
        lookup.call_expr.args.extend(expr.call_expr.args)
        self._optional_of(lookup.id, map_type)
        self._set_ref(lookup.id, "_[?_]", "map_optindex_optional_value")
        self._replace(expr, self._or_empty(lookup, map_type))

    def _rewrite_select(self, expr: Any) -> None:
        select = expr.select_expr
        if select.test_only:
            expr.ClearField("select_expr")
            expr.const_expr.bool_value = True
            self.changed = True
            return
        map_type = self._value_type(expr.id, optional=False)
        lookup = self._new(expr)
        field = self._new(expr)
        field.const_expr.string_value = select.field
        self.checked.type_map[field.id].primitive = _STRING
        lookup.call_expr.function = "_?._"
        lookup.call_expr.args.append(select.operand)
        lookup.call_expr.args.append(field)
        self._optional_of(lookup.id, map_type)
        self._set_ref(lookup.id, "_?._", "select_optional_field")
        self._replace(expr, self._or_empty(lookup, map_type))

    def _always_present(self, expr: Any) -> None:
        map_type = self._value_type(expr.id, optional=True)
        lookup = self._new(expr)
        lookup.call_expr.CopyFrom(expr.call_expr)
        self.checked.type_map[lookup.id].CopyFrom(self.checked.type_map[expr.id])
        if expr.id in self.checked.reference_map:
            self.checked.reference_map[lookup.id].CopyFrom(self.checked.reference_map[expr.id])
        wrapped = self._or_empty(lookup, map_type)
        expr.ClearField("call_expr")
        expr.call_expr.function = "optional.of"
        expr.call_expr.args.append(wrapped)
        self._set_ref(expr.id, "optional.of", "optional_of")
        self.changed = True

    def _replace(self, expr: Any, replacement: Any) -> None:
        node_id = expr.id
        replacement_id = replacement.id
        expr.CopyFrom(replacement)
        expr.id = node_id
        refs = self.checked.reference_map
        if replacement_id in refs:
            self._set_ref(node_id, refs[replacement_id].name, *refs[replacement_id].overload_id)
            del refs[replacement_id]
        del self.checked.type_map[replacement_id]
        self.changed = True

    def _fold_constant(self, expr: Any) -> None:
        args = expr.call_expr.args
        if not args or any(a.WhichOneof("kind") != "const_expr" for a in args):
            return
        values = [getattr(a.const_expr, a.const_expr.WhichOneof("kind") or "null_value")
                  for a in args]
        function = expr.call_expr.function
        try:
            message = IMPLEMENTATIONS[function](*values)
        except (ValueError, TypeError, AttributeError):
            return  # not a valid literal: keep the call, it fails at runtime
        if function == "quantity":
            type_name, field_name, text = QUANTITY_TYPE, "nano", message.nano
        else:
            type_name, field_name, text = SEMVER_TYPE, "version", message.version
        entry_id = self._new_id()
        value = self._new(expr)
        value.const_expr.string_value = text
        self.checked.type_map[value.id].primitive = _STRING
        expr.ClearField("call_expr")
        expr.struct_expr.message_name = type_name
        entry = expr.struct_expr.entries.add(id=entry_id, field_key=field_name)
        entry.value.CopyFrom(value)
        self._set_ref(expr.id, type_name)
        self.changed = True


def rewrite(checked: Any) -> bool:
    """Apply all rewrites to a decoded CheckedExpr in place; True if anything changed."""
    rewriter = _Rewriter(checked)
    rewriter.walk(checked.expr, {})
    return rewriter.changed
