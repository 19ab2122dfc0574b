"""How dralab names objects: the ``namespace/name`` key and random UIDs.

One helper for the key, so that every map of pods, claims and templates agrees:
an unset namespace is "default" (as kubectl fills it in) and an unset name is "".
One function for UIDs (and DRA share IDs), so that every component that makes one
draws the same 128 bits from the run's seeded RNG: seeded runs stay reproducible
whichever component draws.
"""

from __future__ import annotations

import random
import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import KubeObject

__all__ = ["key_of", "object_key", "random_uid"]


def object_key(namespace: str | None, name: str | None) -> str:
    """``namespace/name``, "default" for an unset namespace."""
    return f"{namespace or 'default'}/{name or ''}"


def key_of(obj: KubeObject) -> str:
    """``object_key`` of an object's metadata (for namespaced kinds: pods, claims, ...)."""
    return object_key(obj.metadata.namespace, obj.metadata.name)


def random_uid(rng: random.Random) -> str:
    """A version-4 UUID from 128 bits of ``rng`` (as the API server's, but seeded)."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))
