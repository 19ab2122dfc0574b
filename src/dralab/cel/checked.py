"""Reading and writing the checked-expression protos that cel-expr-python serializes.

``Expression.serialize()`` returns a ``google.protobuf.Any`` holding a
``cel.expr.CheckedExpr``; ``Env.deserialize()`` accepts the same bytes back.
cel-expr-python ships no Python classes for these protos, so the few messages
we need are declared here at runtime. Only field numbers and wire types have to
agree with the CEL spec; names are our own, and fields we never read (macro
calls, line offsets, ...) survive a decode/encode round trip as unknown fields.

The schema lives in a private descriptor pool so that it can never clash with
types registered in the default pool (which cel-expr-python reads).
"""

from __future__ import annotations

from typing import Any, Final

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

__all__ = [
    "CHECKED_EXPR_TYPE_URL",
    "Expr",
    "decode_checked",
    "encode_checked",
    "format_type",
    "new_expr",
]

CHECKED_EXPR_TYPE_URL: Final = "type.googleapis.com/cel.expr.CheckedExpr"

_PKG: Final = "dralab.celast"
_F = descriptor_pb2.FieldDescriptorProto

# (name, number, type, type_name or None, repeated, oneof index or None)
_FieldSpec = tuple[str, int, int, str | None, bool, int | None]


def _field(name: str, number: int, ftype: int, type_name: str | None = None,
           repeated: bool = False, oneof: int | None = None) -> _FieldSpec:
    return (name, number, ftype, type_name, repeated, oneof)


def _msg(ftype: str) -> str:
    return f".{_PKG}.{ftype}"


_MSG, _STR, _BOOL = _F.TYPE_MESSAGE, _F.TYPE_STRING, _F.TYPE_BOOL
_I64, _I32 = _F.TYPE_INT64, _F.TYPE_INT32

# Message layouts of cel/expr/syntax.proto and checked.proto (field numbers from the spec).
_MESSAGES: Final[dict[str, tuple[list[_FieldSpec], list[str]]]] = {
    "Empty": ([], []),
    "Constant": ([
        _field("null_value", 1, _I32, oneof=0),
        _field("bool_value", 2, _BOOL, oneof=0),
        _field("int64_value", 3, _I64, oneof=0),
        _field("uint64_value", 4, _F.TYPE_UINT64, oneof=0),
        _field("double_value", 5, _F.TYPE_DOUBLE, oneof=0),
        _field("string_value", 6, _STR, oneof=0),
        _field("bytes_value", 7, _F.TYPE_BYTES, oneof=0),
    ], ["kind"]),
    "Expr": ([
        _field("id", 2, _I64),
        _field("const_expr", 3, _MSG, _msg("Constant"), oneof=0),
        _field("ident_expr", 4, _MSG, _msg("Ident"), oneof=0),
        _field("select_expr", 5, _MSG, _msg("Select"), oneof=0),
        _field("call_expr", 6, _MSG, _msg("Call"), oneof=0),
        _field("list_expr", 7, _MSG, _msg("CreateList"), oneof=0),
        _field("struct_expr", 8, _MSG, _msg("CreateStruct"), oneof=0),
        _field("comprehension_expr", 9, _MSG, _msg("Comprehension"), oneof=0),
    ], ["kind"]),
    "Ident": ([_field("name", 1, _STR)], []),
    "Select": ([
        _field("operand", 1, _MSG, _msg("Expr")), _field("field", 2, _STR),
        _field("test_only", 3, _BOOL),
    ], []),
    "Call": ([
        _field("target", 1, _MSG, _msg("Expr")), _field("function", 2, _STR),
        _field("args", 3, _MSG, _msg("Expr"), repeated=True),
    ], []),
    "CreateList": ([
        _field("elements", 1, _MSG, _msg("Expr"), repeated=True),
        _field("optional_indices", 2, _I32, repeated=True),
    ], []),
    "CreateStruct": ([
        _field("message_name", 1, _STR),
        _field("entries", 2, _MSG, _msg("Entry"), repeated=True),
    ], []),
    "Entry": ([
        _field("id", 1, _I64), _field("field_key", 2, _STR, oneof=0),
        _field("map_key", 3, _MSG, _msg("Expr"), oneof=0), _field("value", 4, _MSG, _msg("Expr")),
        _field("optional_entry", 5, _BOOL),
    ], ["key_kind"]),
    "Comprehension": ([
        _field("iter_var", 1, _STR), _field("iter_range", 2, _MSG, _msg("Expr")),
        _field("accu_var", 3, _STR), _field("accu_init", 4, _MSG, _msg("Expr")),
        _field("loop_condition", 5, _MSG, _msg("Expr")), _field("loop_step", 6, _MSG, _msg("Expr")),
        _field("result", 7, _MSG, _msg("Expr")), _field("iter_var2", 8, _STR),
    ], []),
    "Type": ([
        _field("dyn", 1, _MSG, _msg("Empty"), oneof=0), _field("null", 2, _I32, oneof=0),
        _field("primitive", 3, _I32, oneof=0), _field("wrapper", 4, _I32, oneof=0),
        _field("well_known", 5, _I32, oneof=0),
        _field("list_type", 6, _MSG, _msg("ListType"), oneof=0),
        _field("map_type", 7, _MSG, _msg("MapType"), oneof=0),
        _field("function", 8, _MSG, _msg("Empty"), oneof=0),
        _field("message_type", 9, _STR, oneof=0), _field("type_param", 10, _STR, oneof=0),
        _field("type", 11, _MSG, _msg("Type"), oneof=0),
        _field("error", 12, _MSG, _msg("Empty"), oneof=0),
        _field("abstract_type", 14, _MSG, _msg("AbstractType"), oneof=0),
    ], ["kind"]),
    "ListType": ([_field("elem_type", 1, _MSG, _msg("Type"))], []),
    "MapType": ([
        _field("key_type", 1, _MSG, _msg("Type")), _field("value_type", 2, _MSG, _msg("Type")),
    ], []),
    "AbstractType": ([
        _field("name", 1, _STR), _field("parameter_types", 2, _MSG, _msg("Type"), repeated=True),
    ], []),
    "Reference": ([_field("name", 1, _STR), _field("overload_id", 3, _STR, repeated=True)], []),
    "SourceInfo": ([
        _field("positions", 4, _MSG, _msg("SourceInfo.PositionsEntry"), repeated=True),
    ], []),
    "CheckedExpr": ([
        _field("reference_map", 2, _MSG, _msg("CheckedExpr.ReferenceMapEntry"), repeated=True),
        _field("type_map", 3, _MSG, _msg("CheckedExpr.TypeMapEntry"), repeated=True),
        _field("expr", 4, _MSG, _msg("Expr")),
        _field("source_info", 5, _MSG, _msg("SourceInfo")),
    ], []),
}

# Map fields are repeated nested "entry" messages with the map_entry option:
# message -> {entry name: (key type, value type or message name)}.
_MAP_ENTRIES: Final[dict[str, dict[str, tuple[int, int | str]]]] = {
    "CheckedExpr": {"ReferenceMapEntry": (_I64, "Reference"), "TypeMapEntry": (_I64, "Type")},
    "SourceInfo": {"PositionsEntry": (_I64, _I32)},
}


def _build_classes() -> tuple[Any, Any]:
    fdp = descriptor_pb2.FileDescriptorProto(
        name="dralab/celast.proto", package=_PKG, syntax="proto3")
    for name, (fields, oneofs) in _MESSAGES.items():
        message = fdp.message_type.add(name=name)
        for oneof in oneofs:
            message.oneof_decl.add(name=oneof)
        for fname, number, ftype, type_name, repeated, oneof_index in fields:
            label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
            field = message.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name is not None:
                field.type_name = type_name
            if oneof_index is not None:
                field.oneof_index = oneof_index
        for entry_name, (key_type, value_type) in _MAP_ENTRIES.get(name, {}).items():
            entry = message.nested_type.add(name=entry_name)
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, type=key_type, label=_F.LABEL_OPTIONAL)
            if isinstance(value_type, str):
                entry.field.add(name="value", number=2, type=_MSG, label=_F.LABEL_OPTIONAL,
                                type_name=_msg(value_type))
            else:
                entry.field.add(name="value", number=2, type=value_type, label=_F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    checked = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PKG}.CheckedExpr"))
    expr = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PKG}.Expr"))
    return checked, expr


_CheckedExpr, Expr = _build_classes()


def decode_checked(serialized: bytes) -> Any:
    """Decode ``Expression.serialize()`` output into a mutable CheckedExpr message."""
    wrapper = any_pb2.Any()
    wrapper.ParseFromString(serialized)
    checked = _CheckedExpr()
    checked.ParseFromString(wrapper.value)
    return checked


def encode_checked(checked: Any) -> bytes:
    """Inverse of decode_checked: bytes that ``Env.deserialize()`` accepts."""
    wrapper = any_pb2.Any(type_url=CHECKED_EXPR_TYPE_URL, value=checked.SerializeToString())
    encoded: bytes = wrapper.SerializeToString()
    return encoded


def new_expr() -> Any:
    """An empty Expr node, to be filled in by AST rewrites."""
    return Expr()


_PRIMITIVE_NAMES: Final = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN_NAMES: Final = {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}


def format_type(t: Any) -> str:
    """A checked type as cel-go prints it, e.g. ``map(string, dyn)`` or ``list(int)``."""
    kind = t.WhichOneof("kind")
    if kind == "primitive":
        return _PRIMITIVE_NAMES.get(t.primitive, "unknown")
    if kind == "wrapper":
        return f"wrapper({_PRIMITIVE_NAMES.get(t.wrapper, 'unknown')})"
    if kind == "well_known":
        return _WELL_KNOWN_NAMES.get(t.well_known, "unknown")
    if kind == "list_type":
        return f"list({format_type(t.list_type.elem_type)})"
    if kind == "map_type":
        return f"map({format_type(t.map_type.key_type)}, {format_type(t.map_type.value_type)})"
    if kind == "message_type":
        return str(t.message_type)
    if kind == "type_param":
        return str(t.type_param)
    if kind == "type":
        return f"type({format_type(t.type)})"
    if kind == "abstract_type":
        params = ", ".join(format_type(p) for p in t.abstract_type.parameter_types)
        return f"{t.abstract_type.name}({params})" if params else str(t.abstract_type.name)
    if kind == "null":
        return "null_type"
    if kind == "error":
        return "*error*"
    return "dyn"
