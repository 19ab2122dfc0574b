"""Post-check AST validations of the Kubernetes base environment (1.29+).

cel-go runs these after type-checking; cel-cpp has no equivalents, so without
them the expressions below would compile here and fail (or even succeed) at
runtime, where upstream rejects them at validation time:

* aggregate literals must be homogeneous (``[1, "a"]`` is an error; wrap
  elements in ``dyn()`` to mix types),
* constant arguments of ``duration()``, ``timestamp()`` and ``matches()``
  must be valid,
* constant patterns of ``find()``/``findAll()`` must be valid (upstream
  compiles them when building the program).

Literals are checked with the real runtime (cel-cpp's parsers and RE2);
find/findAll patterns with the RE2 bindings that evaluate them (``regex.py``).
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from cel_expr_python import cel

from dralab.cel import regex
from dralab.cel.checked import format_type
from dralab.cel.errors import runtime_message
from dralab.cel.rewrite import children

__all__ = ["validate"]

# function name -> CEL expression that fails iff the string variable `s` is invalid
_LITERAL_PROBES: Final = {
    "duration": "duration(s) == duration(s)",
    "timestamp": "timestamp(s) == timestamp(s)",
    "matches": "''.matches(s)",
}


@cache
def _probe(function: str) -> Any:
    env = cel.NewEnv(variables={"s": cel.Type.STRING})
    return env.compile(_LITERAL_PROBES[function])


def _literal_problem(function: str, text: str) -> str | None:
    result = _probe(function).eval(data={"s": text})
    if result.type() == cel.Type.ERROR:
        return runtime_message(str(result.value()))
    return None


def _string_const(expr: Any) -> str | None:
    if expr.WhichOneof("kind") == "const_expr" and \
            expr.const_expr.WhichOneof("kind") == "string_value":
        return str(expr.const_expr.string_value)
    return None


class _Validator:
    def __init__(self, checked: Any, expression: str) -> None:
        self.checked = checked
        self.expression = expression
        self.problems: list[str] = []

    def report(self, node_id: int, message: str) -> None:
        offset = self.checked.source_info.positions.get(node_id, 0)
        line = self.expression.count("\n", 0, offset) + 1
        column = offset - (self.expression.rfind("\n", 0, offset) + 1) + 1
        self.problems.append(f"<input>:{line}:{column}: {message}")

    def type_name(self, expr: Any, optional: bool = False) -> str:
        t = self.checked.type_map.get(expr.id)
        if t is None:
            return "dyn"
        if optional and t.WhichOneof("kind") == "abstract_type" and \
                t.abstract_type.name == "optional_type":
            t = t.abstract_type.parameter_types[0]
        return format_type(t)

    def homogeneous(self, elements: list[tuple[Any, bool]]) -> None:
        first: str | None = None
        for expr, optional in elements:
            name = self.type_name(expr, optional)
            if first is None:
                first = name
            elif name != first:
                self.report(expr.id, f"expected type '{first}' but found '{name}'")
                return

    def check_call(self, expr: Any) -> None:
        call = expr.call_expr
        args = list(call.args)
        function = call.function
        if function in ("duration", "timestamp") and not call.HasField("target") and args:
            self.check_literal(function, args[0])
        elif function == "matches":
            pattern = args[0] if call.HasField("target") else (args[1] if len(args) > 1 else None)
            if pattern is not None:
                self.check_literal(function, pattern)
        elif function in ("find", "findAll") and call.HasField("target") and args:
            text = _string_const(args[0])
            if text is not None:
                try:
                    regex.compile_re2(text)
                except regex.RegexError as err:
                    self.report(args[0].id, f"invalid {function} argument: {err}")

    def check_literal(self, function: str, arg: Any) -> None:
        text = _string_const(arg)
        if text is None:
            return
        if _literal_problem(function, text) is not None:
            # cel-go's literal validators say no more than this (cel/validator.go).
            self.report(arg.id, f"invalid {function} argument")

    def walk(self, expr: Any) -> None:
        stack = [expr]
        while stack:
            node = stack.pop()
            kind = node.WhichOneof("kind")
            if kind == "list_expr":
                optional = set(node.list_expr.optional_indices)
                self.homogeneous([(e, i in optional)
                                  for i, e in enumerate(node.list_expr.elements)])
            elif kind == "struct_expr" and not node.struct_expr.message_name:
                entries = node.struct_expr.entries
                self.homogeneous([(e.map_key, False) for e in entries])
                self.homogeneous([(e.value, e.optional_entry) for e in entries])
            elif kind == "call_expr":
                self.check_call(node)
            stack.extend(reversed(list(children(node))))


def validate(checked: Any, expression: str) -> list[str]:
    """Every validation problem of a checked expression, ``<input>:line:col: message`` each."""
    validator = _Validator(checked, expression)
    validator.walk(checked.expr)
    return validator.problems
