"""DNS-label names for node pools whose label values are not DNS labels.

A pool of a cluster dump is named by a label value: ``dralab.dev/pool`` or a cloud
node-pool label (usually DNS labels already), else the instance type
(``p5.48xlarge``) or the GPU product GPU feature discovery writes
(``NVIDIA-H100-80GB-HBM3``), which are not. The pilot's Fleet names its pool, and a
Fleet pool name is a DNS-1123 label (at most 63 characters of ``a-z``, ``0-9`` and
``-``, alphanumeric at both ends), so each value gets one: a value that already is
a DNS label keeps it; any other is lower-cased, every run of other characters
becomes one ``-``, the ends are trimmed and it is cut to 63. Two values that come
out the same are told apart by a suffix derived from the value itself, so a pool's
name depends only on the pools of the dump, never on input order.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

__all__ = ["MAX_LABEL", "dns_label", "is_dns_label", "pool_names"]

MAX_LABEL = 63
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_NOT_LABEL = re.compile(r"[^a-z0-9]+")
_FALLBACK = "pool"   # a value with no ASCII letter or digit at all


def is_dns_label(text: str, limit: int = MAX_LABEL) -> bool:
    return len(text) <= limit and _DNS_LABEL.fullmatch(text) is not None


def dns_label(text: str, limit: int = MAX_LABEL) -> str:
    """``text`` as a DNS-1123 label of at most ``limit`` characters (itself if it is one)."""
    if is_dns_label(text, limit):
        return text
    # ASCII-only lower-casing: str.lower() maps some non-ASCII letters to ASCII ones
    # (the Kelvin sign to 'k'), which would make two different values look alike.
    lowered = "".join(c.lower() if c.isascii() else "-" for c in text)
    label = _NOT_LABEL.sub("-", lowered).strip("-")[:limit].rstrip("-")
    return label or _FALLBACK


def _suffixed(label: str, value: str, attempt: int) -> str:
    digest = hashlib.sha256(f"{attempt}:{value}".encode()).hexdigest()[:6]
    return f"{label[:MAX_LABEL - len(digest) - 1].rstrip('-')}-{digest}"


def pool_names(values: Iterable[str]) -> dict[str, str]:
    """A distinct DNS label for each pool label value (value -> name).

    Values that are DNS labels keep themselves; the others take ``dns_label``, or,
    when that is already taken, the label with ``-`` and six hex digits of the
    value's SHA-256 (cut to fit 63 characters).
    """
    unique = sorted(set(values))
    names = {v: v for v in unique if is_dns_label(v)}
    taken = set(names.values())
    for value in unique:
        if value in names:
            continue
        name = dns_label(value)
        attempt = 0
        while name in taken:
            name = _suffixed(dns_label(value), value, attempt)
            attempt += 1
        names[value] = name
        taken.add(name)
    return names
