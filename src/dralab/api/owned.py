"""A deep copy of a typed API value, for handing one object to a new owner.

API structs are frozen, but the lists and maps inside them are not. A value kept
in a cache and also written into an object (the DRA plugin's remembered
allocations, written into claims at Reserve) would let a caller's in-place change
to that object reach every later user of the cache. ``owned_copy`` gives the new
owner its own containers: an encode and decode with msgspec, a few microseconds
for an allocation, and a field added to the API later is copied too; untyped
payloads msgpack would change (opaque parameters holding a tuple or a huge int)
take ``copy.deepcopy`` instead.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import msgspec

from .base import Spec
from .quantity import Quantity, parse_quantity

__all__ = ["owned_copy"]

S = TypeVar("S", bound=Spec)


def owned_copy(value: S) -> S:
    """An equal ``value`` sharing no list, map or struct with it. Pure."""
    try:
        copied = msgspec.msgpack.decode(_ENCODER.encode(value), type=type(value),
                                        dec_hook=_decode)
    except (msgspec.MsgspecError, OverflowError, TypeError, ValueError, NotImplementedError):
        return copy.deepcopy(value)  # an untyped payload msgpack cannot carry (a huge int)
    # Untyped payloads (opaque parameters) could come back changed (a tuple as a list):
    # the slow copy keeps them as they were.
    return copied if copied == value else copy.deepcopy(value)


def _encode(obj: Any) -> Any:
    if isinstance(obj, Quantity):
        return str(obj)  # its own text: the copy prints as the original does
    raise NotImplementedError(f"cannot copy {type(obj)!r}")


def _decode(tp: type, obj: Any) -> Any:
    if tp is Quantity and isinstance(obj, str):
        return parse_quantity(obj)
    raise NotImplementedError(f"cannot copy {tp!r}")


_ENCODER = msgspec.msgpack.Encoder(enc_hook=_encode)
