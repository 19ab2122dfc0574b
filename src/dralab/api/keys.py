"""How dralab names objects: the ``namespace/name`` key and random UIDs.

One helper for the key, so that every map of pods, claims and templates agrees:
an unset namespace is "default" (as kubectl fills it in) and an unset name is "".
One function for UIDs (and DRA share IDs), so that every component that makes one
draws the same 128 bits from the run's seeded RNG: seeded runs stay reproducible
whichever component draws.
"""

from __future__ import annotations

import random
from typing import Protocol

__all__ = ["key_of", "object_key", "random_uid", "uid_text"]


# What ``key_of`` reads of an object (any ``base.KubeObject``): named structurally, so
# that this module, which ``base`` imports, does not import ``base`` back.
class _Metadata(Protocol):
    @property
    def namespace(self) -> str | None: ...
    @property
    def name(self) -> str | None: ...


class _Object(Protocol):
    @property
    def metadata(self) -> _Metadata: ...


def object_key(namespace: str | None, name: str | None) -> str:
    """``namespace/name``, "default" for an unset namespace."""
    return f"{namespace or 'default'}/{name or ''}"


def key_of(obj: _Object) -> str:
    """``object_key`` of an object's metadata (for namespaced kinds: pods, claims, ...)."""
    return object_key(obj.metadata.namespace, obj.metadata.name)


# The RFC 4122 variant (10) and version 4 bits, as uuid.UUID(int=..., version=4) sets them.
_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))
_SET = (0x8000 << 48) | (0x4000 << 64)


def random_uid(rng: random.Random) -> str:
    """A version-4 UUID from 128 bits of ``rng`` (as the API server's, but seeded).

    The text ``str(uuid.UUID(int=bits, version=4))`` gives, formatted directly: share
    IDs are drawn on every DRA Filter call that reuses a shared device's outcome."""
    return uid_text(rng.getrandbits(128))


def uid_text(bits: int) -> str:
    """The version-4 UUID text of 128 random ``bits``."""
    h = "%032x" % ((bits & _CLEAR) | _SET)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
