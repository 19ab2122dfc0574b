"""Names and UIDs as the API server hands them out, drawn from a seeded RNG.

``metadata.generateName`` becomes a name exactly as the API server's
SimpleNameGenerator makes it: the prefix cut to 58 characters plus five random
characters from an alphabet without vowels (so no words are spelled). The API
server retries a name that is taken; so does ``NameGenerator``: every name it
returns is unused among the objects of the same kind and namespace that it knows
(``taken`` is seeded with the names of the input).

Pure apart from the ``random.Random`` passed in; objects are never mutated.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import msgspec

from dralab.api.base import KubeObject
from dralab.api.keys import random_uid

__all__ = [
    "ALPHANUMS",
    "MAX_GENERATED_PREFIX",
    "RANDOM_LENGTH",
    "NameGenerator",
    "api_identity",
]

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
RANDOM_LENGTH = 5
MAX_GENERATED_PREFIX = 63 - RANDOM_LENGTH


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def api_identity(obj: KubeObject, name: str | None = None) -> tuple[str, str, str, str]:
    """(group, kind, namespace, name): what makes an object the same object in the
    API (any version of the group). Namespaced kinds without a namespace count as
    "default", as kubectl fills it in."""
    kind = obj.kind or type(obj).KIND
    group = _group(obj.api_version or type(obj).API_VERSION)
    namespace = obj.metadata.namespace or ("default" if type(obj).NAMESPACED else "")
    return group, kind, namespace, name if name is not None else obj.name


class NameGenerator:
    """Names for ``generateName`` and UUIDs, unique per (group, kind, namespace)."""

    def __init__(self, rng: random.Random, existing: Iterable[KubeObject] = ()) -> None:
        self.rng = rng
        self._taken: set[tuple[str, str, str, str]] = {
            api_identity(o) for o in existing if o.metadata.name}

    def take(self, key: tuple[str, str, str, str]) -> None:
        """Mark a name as used (an object created under a fixed name)."""
        self._taken.add(key)

    def is_taken(self, key: tuple[str, str, str, str]) -> bool:
        return key in self._taken

    def generate(self, group: str, kind: str, namespace: str, prefix: str) -> str:
        """A fresh name ``prefix[:58] + 5 random characters``, recorded as taken."""
        prefix = prefix[:MAX_GENERATED_PREFIX]
        while True:
            name = prefix + "".join(self.rng.choice(ALPHANUMS) for _ in range(RANDOM_LENGTH))
            key = (group, kind, namespace, name)
            if key not in self._taken:
                self._taken.add(key)
                return name

    def uid(self) -> str:
        return random_uid(self.rng)

    def name_object(self, obj: KubeObject) -> KubeObject:
        """``obj`` with a name generated from its ``generateName`` if it has none
        (a new object; ``raw`` is kept, the typed name wins when encoding)."""
        meta = obj.metadata
        if meta.name or not meta.generate_name:
            return obj
        group, kind, namespace, _ = api_identity(obj, "")
        name = self.generate(group, kind, namespace, meta.generate_name)
        return msgspec.structs.replace(obj, metadata=msgspec.structs.replace(meta, name=name))
