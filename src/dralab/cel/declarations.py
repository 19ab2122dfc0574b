"""Function declarations of the DRA CEL environment, for checking and for running.

Two environments are built (see ``environment.py``), because cel-expr-python
cannot add overloads to a function that an extension already declares:

* the **checker** environment declares every function with its upstream
  signature and no implementation. It declares the strings extension itself
  (instead of loading it) so that ``indexOf``/``lastIndexOf`` can carry both
  the string overloads and the Kubernetes list overloads, and it re-declares
  the ordering operators with the cross-type numeric overloads Kubernetes
  enables (``1 < 1.5``);
* the **runtime** environment loads the real strings extension and registers
  the Python implementations. cel-cpp picks implementations by the *kinds* of
  the runtime arguments, and a ``dyn`` parameter matches nothing there, so
  functions taking arbitrary values are registered once per kind.

Calls that reach a list overload of ``indexOf``/``lastIndexOf`` are renamed to
``LIST_INDEX_OF``/``LIST_LAST_INDEX_OF`` between the two (``rewrite.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from cel_expr_python import cel

from dralab.cel.library import IMPLEMENTATIONS
from dralab.cel.values import QUANTITY_TYPE, SEMVER_TYPE

__all__ = [
    "EXCLUDED_STDLIB_FUNCTIONS",
    "LIST_INDEX_OF",
    "LIST_LAST_INDEX_OF",
    "LIST_OVERLOAD_IDS",
    "checker_functions",
    "runtime_functions",
]

T = cel.Type
# Names starting with '@' cannot be written in an expression, so they never clash.
LIST_INDEX_OF: Final = "@dra.indexOf"
LIST_LAST_INDEX_OF: Final = "@dra.lastIndexOf"
LIST_OVERLOAD_IDS: Final = {
    "list_a_index_of_int": LIST_INDEX_OF,
    "list_a_last_index_of_int": LIST_LAST_INDEX_OF,
}
# Re-declared by checker_functions() with the cross-type numeric overloads added.
EXCLUDED_STDLIB_FUNCTIONS: Final = ("_<_", "_<=_", "_>_", "_>=_")

_Sig = tuple[str, Any, Sequence[Any]]  # (overload id, result type, parameter types)


def _quantity() -> Any:
    return T(QUANTITY_TYPE)


def _semver() -> Any:
    return T(SEMVER_TYPE)


def _decl(name: str, member: bool, signatures: Iterable[_Sig]) -> Any:
    return cel.FunctionDecl(name, [
        cel.Overload(overload_id, result, list(params), is_member=member)
        for overload_id, result, params in signatures
    ])


def _comparable() -> list[tuple[str, Any]]:
    return [("int", T.INT), ("uint", T.UINT), ("double", T.DOUBLE), ("bool", T.BOOL),
            ("duration", T.DURATION), ("timestamp", T.TIMESTAMP), ("string", T.STRING),
            ("bytes", T.BYTES)]


def _ordering_operators() -> list[Any]:
    same = [("bool", T.BOOL), ("int64", T.INT), ("uint64", T.UINT), ("double", T.DOUBLE),
            ("string", T.STRING), ("bytes", T.BYTES), ("timestamp", T.TIMESTAMP),
            ("duration", T.DURATION)]
    numeric = [("int64", T.INT), ("uint64", T.UINT), ("double", T.DOUBLE)]
    decls = []
    for op, stem in (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"),
                     ("_>=_", "greater_equals")):
        sigs: list[_Sig] = [(f"{stem}_{n}", T.BOOL, [t, t]) for n, t in same]
        sigs += [(f"{stem}_{a}_{b}", T.BOOL, [ta, tb])
                 for a, ta in numeric for b, tb in numeric if a != b]
        decls.append(_decl(op, False, sigs))
    return decls


def _strings_extension() -> list[Any]:
    # Version 2 of the CEL strings extension, as in the Kubernetes base environment.
    s, i, ls = T.STRING, T.INT, T.List(T.STRING)
    return [
        _decl("charAt", True, [("string_char_at_int", s, [s, i])]),
        _decl("indexOf", True, [
            ("string_index_of_string", i, [s, s]), ("string_index_of_string_int", i, [s, s, i]),
            ("list_a_index_of_int", i, [T.List(T.DYN), T.DYN])]),
        _decl("lastIndexOf", True, [
            ("string_last_index_of_string", i, [s, s]),
            ("string_last_index_of_string_int", i, [s, s, i]),
            ("list_a_last_index_of_int", i, [T.List(T.DYN), T.DYN])]),
        _decl("lowerAscii", True, [("string_lower_ascii", s, [s])]),
        _decl("upperAscii", True, [("string_upper_ascii", s, [s])]),
        _decl("replace", True, [("string_replace_string_string", s, [s, s, s]),
                                ("string_replace_string_string_int", s, [s, s, s, i])]),
        _decl("split", True, [("string_split_string", ls, [s, s]),
                              ("string_split_string_int", ls, [s, s, i])]),
        _decl("substring", True, [("string_substring_int", s, [s, i]),
                                  ("string_substring_int_int", s, [s, i, i])]),
        _decl("trim", True, [("string_trim", s, [s])]),
        _decl("join", True, [("list_join", s, [ls]), ("list_join_string", s, [ls, s])]),
        _decl("format", True, [("string_format", s, [s, T.List(T.DYN)])]),
        _decl("strings.quote", False, [("strings_quote", s, [s])]),
    ]


def _kubernetes_libraries(list_type_attributes: bool) -> list[Any]:
    q, v = _quantity(), _semver()
    s, b, i = T.STRING, T.BOOL, T.INT
    decls = [
        _decl("quantity", False, [("string_to_quantity", q, [s])]),
        _decl("isQuantity", False, [("is_quantity_string", b, [s])]),
        # Upstream declares sign() as a global function, not a member: sign(q).
        _decl("sign", False, [("quantity_sign", i, [q])]),
        _decl("isGreaterThan", True, [("quantity_is_greater_than", b, [q, q]),
                                      ("semver_is_greater_than", b, [v, v])]),
        _decl("isLessThan", True, [("quantity_is_less_than", b, [q, q]),
                                   ("semver_is_less_than", b, [v, v])]),
        _decl("compareTo", True, [("quantity_compare_to", i, [q, q]),
                                  ("semver_compare_to", i, [v, v])]),
        _decl("asApproximateFloat", True, [("quantity_get_float", T.DOUBLE, [q])]),
        _decl("asInteger", True, [("quantity_get_int", i, [q])]),
        _decl("isInteger", True, [("quantity_is_integer", b, [q])]),
        _decl("add", True, [("quantity_add", q, [q, q]), ("quantity_add_int", q, [q, i])]),
        _decl("sub", True, [("quantity_sub", q, [q, q]), ("quantity_sub_int", q, [q, i])]),
        _decl("semver", False, [("string_to_semver", v, [s]),
                                ("string_bool_to_semver", v, [s, b])]),
        _decl("isSemver", False, [("is_semver_string", b, [s]),
                                  ("is_semver_string_bool", b, [s, b])]),
        _decl("major", True, [("semver_major", i, [v])]),
        _decl("minor", True, [("semver_minor", i, [v])]),
        _decl("patch", True, [("semver_patch", i, [v])]),
        _decl("isSorted", True, [(f"list_{n}_is_sorted_bool", b, [T.List(t)])
                                 for n, t in _comparable()]),
        _decl("sum", True, [(f"list_{n}_sum_{n}", t, [T.List(t)]) for n, t in _comparable()
                            if n in ("int", "uint", "double", "duration")]),
        _decl("max", True, [(f"list_{n}_max_{n}", t, [T.List(t)]) for n, t in _comparable()]),
        _decl("min", True, [(f"list_{n}_min_{n}", t, [T.List(t)]) for n, t in _comparable()]),
        _decl("find", True, [("string_find_string", s, [s, s])]),
        _decl("findAll", True, [("string_find_all_string", T.List(s), [s, s]),
                                ("string_find_all_string_int", T.List(s), [s, s, i])]),
    ]
    if list_type_attributes:
        decls.append(_decl("includes", True, [("list_includes_dyn_dyn", b, [T.DYN, T.DYN])]))
    return decls


def checker_functions(list_type_attributes: bool) -> list[Any]:
    """Declarations (without implementations) for the type-checking environment."""
    return _ordering_operators() + _strings_extension() + _kubernetes_libraries(
        list_type_attributes)


def _value_kinds() -> list[Any]:
    """One type per runtime value kind; all messages share the "struct" kind."""
    return [T.INT, T.UINT, T.DOUBLE, T.BOOL, T.STRING, T.BYTES, T.NULL, T.List(T.DYN),
            T.Map(T.DYN, T.DYN), T.TIMESTAMP, T.DURATION, _semver()]


def _runtime_table() -> list[tuple[str, str, bool, list[list[Any]]]]:
    """(declared name, implementation key, member?, parameter kind lists)."""
    q, v, s = _quantity(), _semver(), T.STRING
    any_list = T.List(T.DYN)
    kinds = _value_kinds()
    index_sigs = [[any_list, k] for k in kinds] + [[s, s], [s, s, T.INT]]
    return [
        ("quantity", "quantity", False, [[s]]),
        ("isQuantity", "isQuantity", False, [[s]]),
        ("sign", "sign", False, [[q]]),
        ("compareTo", "compareTo", True, [[q, q]]),
        ("isGreaterThan", "isGreaterThan", True, [[q, q]]),
        ("isLessThan", "isLessThan", True, [[q, q]]),
        ("asApproximateFloat", "asApproximateFloat", True, [[q]]),
        ("asInteger", "asInteger", True, [[q]]),
        ("isInteger", "isInteger", True, [[q]]),
        ("add", "add", True, [[q, q], [q, T.INT]]),
        ("sub", "sub", True, [[q, q], [q, T.INT]]),
        ("semver", "semver", False, [[s], [s, T.BOOL]]),
        ("isSemver", "isSemver", False, [[s], [s, T.BOOL]]),
        ("major", "major", True, [[v]]),
        ("minor", "minor", True, [[v]]),
        ("patch", "patch", True, [[v]]),
        ("isSorted", "isSorted", True, [[any_list]]),
        ("sum", "sum", True, [[any_list]]),
        ("min", "min", True, [[any_list]]),
        ("max", "max", True, [[any_list]]),
        (LIST_INDEX_OF, "indexOf", True, index_sigs),
        (LIST_LAST_INDEX_OF, "lastIndexOf", True, index_sigs),
        ("includes", "includes", True, [[a, b] for a in kinds for b in kinds]),
        ("find", "find", True, [[s, s]]),
        ("findAll", "findAll", True, [[s, s], [s, s, T.INT]]),
    ]


def runtime_functions() -> list[Any]:
    """Declarations with implementations for the evaluating environment."""
    decls = []
    for name, key, member, param_lists in _runtime_table():
        impl = IMPLEMENTATIONS[key]
        decls.append(cel.FunctionDecl(name, [
            cel.Overload(f"dra_{key}_{n}", T.DYN, params, is_member=member, impl=impl)
            for n, params in enumerate(param_lists)
        ]))
    return decls
