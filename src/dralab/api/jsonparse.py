"""JSON text -> plain data, bounded: the JSON half of ``io``'s reader.

msgspec decodes (fast, and it refuses integers beyond Python's int-str
conversion limit itself); then one walk over the containers enforces the
nesting limit and counts the keys, which tells whether any key was given twice.

Duplicate keys: msgspec keeps the last value silently. Finding them exactly
needs a second, slower parse, so it runs only when a key count says there may
be one: every key of ordinarily formatted JSON ends in ``":``, and a ``":``
inside a string is always escaped as ``\\":``. When the count of ``":`` minus
escaped ones equals the keys decoded, no key was dropped. Anything unusual
(a key ending in a backslash, whitespace before a colon, duplicates) takes the
exact path. (Left open: a file with as many keys written ``"key" :`` as
duplicate keys balances the count; its duplicates go unreported, and the last
value is used all the same.)
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from .duplicates import PathPart, paths_of_duplicates
from .errors import LoadError
from .gcpause import gc_paused
from .limits import MAX_INTEGER_DIGITS, MAX_NESTING_DEPTH, too_deep_message

__all__ = ["parse_json"]


class _TooDeepError(Exception):
    pass


def _count_keys(container: dict[str, Any] | list[Any], budget: int) -> int:
    """Keys in ``container`` and below; raise _TooDeepError past the nesting limit.

    Recursive on purpose (faster than an explicit stack here); the budget keeps
    the recursion within the depth limit.
    """
    if type(container) is dict:
        keys = len(container)
        values: Any = container.values()
    else:
        keys = 0
        values = container
    for value in values:
        kind = type(value)
        if kind is dict or kind is list:
            if budget == 0:
                raise _TooDeepError
            keys += _count_keys(value, budget - 1)
    return keys


def _may_have_duplicates(text: str, keys: int) -> bool:
    colons = text.count('":')
    if colons == keys:  # the common case: nothing escaped, nothing dropped
        return False
    if "\\\\\":" in text:  # a key ending in a backslash would be miscounted below
        return True
    return colons - text.count('\\":') != keys


def _duplicates(text: str) -> list[tuple[PathPart, ...]]:
    duplicated: dict[int, tuple[dict[str, Any], list[str]]] = {}

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            seen: set[str] = set()
            repeated: list[str] = []
            for key, _ in pairs:
                if key in seen and key not in repeated:
                    repeated.append(key)
                seen.add(key)
            duplicated[id(out)] = (out, repeated)
        return out

    with gc_paused():
        data = json.loads(text, object_pairs_hook=pairs_hook)
    return paths_of_duplicates(data, duplicated) if duplicated else []


def _message(exc: msgspec.DecodeError) -> str:
    text = str(exc)
    if text.startswith("Integer value out of range"):
        return (f"an integer has more than {MAX_INTEGER_DIGITS} digits "
                f"(Python's int-str conversion limit)")
    if text.startswith("Number out of range"):
        return "a number is out of the range of a 64-bit float"
    return text


def parse_json(text: str, source: str) -> tuple[Any, list[tuple[PathPart, ...]]]:
    """The decoded value of ``text`` and the field paths of duplicate keys.

    Raise LoadError for invalid JSON, too deep nesting or too long integers.
    """
    # The walk allocates views; with the collector running, those would make it
    # rescan the millions of objects just decoded.
    with gc_paused():
        try:
            data = msgspec.json.decode(text)
        except RecursionError:
            raise LoadError(f"{source}: invalid JSON: {too_deep_message()}") from None
        except msgspec.DecodeError as exc:
            raise LoadError(f"{source}: invalid JSON: {_message(exc)}") from None
        if type(data) is not dict and type(data) is not list:
            return data, []
        try:
            keys = _count_keys(data, MAX_NESTING_DEPTH - 1)
        except _TooDeepError:
            raise LoadError(f"{source}: invalid JSON: {too_deep_message()}") from None
    if keys and _may_have_duplicates(text, keys):
        return data, _duplicates(text)
    return data, []
