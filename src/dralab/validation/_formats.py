"""String formats of Kubernetes names, and the exact messages the API server uses.

Each ``is_*`` function is pure and returns the list of problems (empty if the
value is fine), mirroring apimachinery's ``util/validation`` helpers so that
messages match what ``kubectl apply`` prints. The ``check_*`` helpers turn
those into field errors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Final

from dralab.validation._context import Ctx

__all__ = [
    "DNS1123_LABEL_MAX",
    "DNS1123_SUBDOMAIN_MAX",
    "NameFn",
    "check_dns_label",
    "check_dns_subdomain",
    "check_label_name",
    "check_label_value",
    "check_node_name",
    "is_c_identifier",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_value",
    "is_qualified_name",
    "max_len_error",
    "name_is_dns_label",
    "name_is_dns_subdomain",
    "regex_error",
]

DNS1123_LABEL_MAX: Final = 63
DNS1123_SUBDOMAIN_MAX: Final = 253
_QUALIFIED_NAME_MAX: Final = 63
_LABEL_VALUE_MAX: Final = 63

_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT: Final = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_QNAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT: Final = "(" + _QNAME_FMT + ")?"
_C_IDENT_FMT: Final = "[A-Za-z_][A-Za-z0-9_]*"

# fullmatch everywhere: Go's "$" does not accept a trailing newline, Python's does.
_LABEL_RE: Final = re.compile(_LABEL_FMT)
_SUBDOMAIN_RE: Final = re.compile(_SUBDOMAIN_FMT)
_QNAME_RE: Final = re.compile(_QNAME_FMT)
_LABEL_VALUE_RE: Final = re.compile(_LABEL_VALUE_FMT)
_C_IDENT_RE: Final = re.compile(_C_IDENT_FMT)

_LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-',"
    " and must start and end with an alphanumeric character"
)
_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters,"
    " '-' or '.', and must start and end with an alphanumeric character"
)
_QNAME_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end"
    " with an alphanumeric character"
)
_LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_'"
    " or '.', and must start and end with an alphanumeric character"
)
_C_IDENT_MSG: Final = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string"
    " of alphanumeric characters or '_'"
)

NameFn = Callable[[str, bool], Sequence[str]]

# The checks are pure and names repeat a lot (every device has the same attribute
# keys), so results are memoised; they are tuples so that no caller can alter them.
_cached = lru_cache(maxsize=65536)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """The API server's wording for a failed pattern, examples included."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    # Upstream appends "', " after every example and " or " between them,
    # hence the double space; kept so messages compare equal.
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


@_cached
def is_dns1123_label(value: str) -> tuple[str, ...]:
    errs: list[str] = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _LABEL_RE.fullmatch(value):
        if _SUBDOMAIN_RE.fullmatch(value):
            # A valid subdomain of valid length that is no label can only have dots.
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return tuple(errs)


@_cached
def is_dns1123_subdomain(value: str) -> tuple[str, ...]:
    errs: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return tuple(errs)


@_cached
def is_qualified_name(value: str) -> tuple[str, ...]:
    """Label keys, annotation keys, condition types: ``[prefix/]name``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return (
            "a qualified name "
            + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        )
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > _QUALIFIED_NAME_MAX:
        errs.append("name part " + max_len_error(_QUALIFIED_NAME_MAX))
    if not _QNAME_RE.fullmatch(name):
        errs.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name",
                                                "123-abc"))
    return tuple(errs)


@_cached
def is_label_value(value: str) -> tuple[str, ...]:
    errs: list[str] = []
    if len(value) > _LABEL_VALUE_MAX:
        errs.append(max_len_error(_LABEL_VALUE_MAX))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value",
                                "12345"))
    return tuple(errs)


@_cached
def is_c_identifier(value: str) -> tuple[str, ...]:
    if _C_IDENT_RE.fullmatch(value):
        return ()
    return (regex_error(_C_IDENT_MSG, _C_IDENT_FMT, "my_name", "MY_NAME", "MyName"),)


def _mask_trailing_dash(name: str) -> str:
    # A generateName may end in '-' because a random suffix follows; upstream
    # swaps the tail for a letter before checking the format.
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> tuple[str, ...]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> tuple[str, ...]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


# field-error helpers ------------------------------------------------------------
def check_dns_label(ctx: Ctx, value: str, path: str) -> None:
    for msg in is_dns1123_label(value):
        ctx.invalid(path, value, msg)


def check_dns_subdomain(ctx: Ctx, value: str, path: str) -> None:
    for msg in is_dns1123_subdomain(value):
        ctx.invalid(path, value, msg)


def check_node_name(ctx: Ctx, value: str, path: str) -> None:
    check_dns_subdomain(ctx, value, path)


def check_label_name(ctx: Ctx, value: str, path: str) -> None:
    """Label keys and the like (``ValidateLabelName``); empty names are reported too."""
    for msg in is_qualified_name(value):
        ctx.invalid(path, value, msg)


def check_label_value(ctx: Ctx, value: str, path: str) -> None:
    for msg in is_label_value(value):
        ctx.invalid(path, value, msg)
