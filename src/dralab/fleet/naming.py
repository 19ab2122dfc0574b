"""Deterministic identities: UUIDs, slice-name suffixes, semver normalisation.

Everything a real cluster makes up at random (GPU UUIDs, the five characters
kubelet's generateName appends, Node UIDs) is derived here from the seed and
a stable key, so one spec and seed always give byte-identical output.
"""

from __future__ import annotations

import hashlib
import uuid

__all__ = [
    "SUFFIX_ALPHABET",
    "driver_semver",
    "slice_suffixes",
    "stable_uuid",
]

# The alphabet of apimachinery's rand.String (no vowels, no 0/1/3): what generateName uses.
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _digest(seed: int, key: str) -> bytes:
    return hashlib.blake2b(f"{seed}\x00{key}".encode(), digest_size=16).digest()


def stable_uuid(seed: int, key: str) -> str:
    """A version-5-shaped UUID string derived from ``seed`` and ``key``."""
    raw = bytearray(_digest(seed, key))
    raw[6] = (raw[6] & 0x0F) | 0x50
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))


def slice_suffixes(seed: int, key: str, count: int) -> list[str]:
    """``count`` distinct 5-character suffixes for the slices of one pool."""
    out: list[str] = []
    n = 0
    while len(out) < count:
        digest = _digest(seed, f"{key}/{n}")
        n += 1
        suffix = "".join(SUFFIX_ALPHABET[b % len(SUFFIX_ALPHABET)] for b in digest[:5])
        if suffix not in out:
            out.append(suffix)
    return out


def driver_semver(version: str) -> str:
    """NVML version text as the driver publishes it: ``580.105.08`` -> ``580.105.8``.

    Leading zeros are dropped and a missing minor/patch becomes 0 (``13.0`` ->
    ``13.0.0``), as Masterminds/semver's coercion does.
    """
    parts = [str(int(p)) for p in version.split(".")]
    while len(parts) < 3:
        parts.append("0")
    return ".".join(parts[:3])
