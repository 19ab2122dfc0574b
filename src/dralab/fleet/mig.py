"""MIG placement rules: device names, valid layouts, and placing static partitions.

A *placement* is a (profile, start) pair; a *layout* is a set of placements
that can exist on one GPU at the same time. The hardware rules (MIG User
Guide, notes §5.1), checked independently of the driver's counter model:

* the start is one of the profile's valid starts;
* memory-slot ranges do not overlap (compute slices sit inside a GI's memory
  range, so this also keeps compute slices apart);
* compute slices add up to at most 7;
* no profile exceeds its maximum instance count;
* engines (copy, decode, encode, JPEG, OFA) add up to at most what the whole
  GPU has (the 7g profile) -- which is what limits ``+me`` profiles to one.

All functions are pure.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from .catalog import MigGeometry, MigProfile

__all__ = [
    "MigPlacement",
    "assign_placements",
    "enumerate_layouts",
    "layout_problem",
    "mig_device_name",
    "parse_mig_device_name",
    "placements_of",
    "profile_token",
]

_NOT_DNS = re.compile(r"[^a-z0-9-]")
_MIG_NAME = re.compile(r"^gpu-([0-9]+)-mig-(.+)-([0-9]+)-([0-9]+)$")


@dataclass(frozen=True, slots=True, order=True)
class MigPlacement:
    """A GPU instance of ``profile`` whose memory range begins at slot ``start``."""

    start: int
    profile: MigProfile

    @property
    def slots(self) -> range:
        return self.profile.slots(self.start)


def profile_token(profile: str) -> str:
    """The profile as it appears in a device name: ``1g.10gb+me`` -> ``1g10gb-me``.

    Lower-cased, dots dropped, anything else outside [a-z0-9-] turned into '-',
    leading/trailing '-' trimmed -- the driver's canonical-name rule.
    """
    return _NOT_DNS.sub("-", profile.lower().replace(".", "")).strip("-")


def mig_device_name(parent_minor: int, profile: MigProfile, start: int) -> str:
    """``gpu-<minor>-mig-<profile token>-<GI profile id>-<start>``."""
    return f"gpu-{parent_minor}-mig-{profile_token(profile.name)}-{profile.gi_id}-{start}"


def parse_mig_device_name(name: str) -> tuple[int, str, int, int] | None:
    """(parent minor, profile token, GI profile id, start) of a current-style MIG name."""
    match = _MIG_NAME.match(name)
    if match is None:
        return None
    return int(match[1]), match[2], int(match[3]), int(match[4])


def _engine_totals(placements: Iterable[MigPlacement]) -> dict[str, int]:
    totals: Counter[str] = Counter()
    for p in placements:
        prof = p.profile
        totals["copy engines"] += prof.copy_engines
        totals["decoders"] += prof.decoders
        totals["encoders"] += prof.encoders
        totals["JPEG engines"] += prof.jpeg_engines
        totals["OFA engines"] += prof.ofa_engines
    return dict(totals)


def _engine_limits(geometry: MigGeometry) -> dict[str, int]:
    cap = geometry.max_capacity()
    return {"copy engines": cap["copyEngines"], "decoders": cap["decoders"],
            "encoders": cap["encoders"], "JPEG engines": cap["jpegEngines"],
            "OFA engines": cap["ofaEngines"]}


def layout_problem(geometry: MigGeometry, placements: Sequence[MigPlacement]) -> str | None:
    """Why ``placements`` cannot coexist on one GPU, or None when they can."""
    used: set[int] = set()
    for p in placements:
        if p.start not in p.profile.starts:
            return f"{p.profile.name} cannot start at memory slot {p.start}"
        overlap = used.intersection(p.slots)
        if overlap:
            return f"{p.profile.name}@{p.start} overlaps memory slot {min(overlap)}"
        used.update(p.slots)
    compute = sum(p.profile.compute_slices for p in placements)
    if compute > geometry.compute_slices:
        return f"{compute} compute slices exceed the GPU's {geometry.compute_slices}"
    for name, n in Counter(p.profile.name for p in placements).items():
        limit = geometry.profile(name).max_instances
        if n > limit:
            return f"{n} instances of {name} exceed its maximum of {limit}"
    limits = _engine_limits(geometry)
    for engine, total in _engine_totals(placements).items():
        if total > limits[engine]:
            return f"{total} {engine} exceed the GPU's {limits[engine]}"
    return None


def enumerate_layouts(geometry: MigGeometry) -> list[tuple[MigPlacement, ...]]:
    """Every non-empty valid layout, each as placements sorted by start.

    Built by walking the memory axis left to right, so each layout appears
    exactly once. A100/H100/H200 have a few thousand.
    """
    by_start: dict[int, list[MigProfile]] = {}
    for prof in geometry.profiles:
        for s in prof.starts:
            by_start.setdefault(s, []).append(prof)
    out: list[tuple[MigPlacement, ...]] = []

    def walk(slot: int, chosen: list[MigPlacement]) -> None:
        if slot >= geometry.memory_slices:
            if chosen and layout_problem(geometry, chosen) is None:
                out.append(tuple(chosen))
            return
        walk(slot + 1, chosen)  # leave this slot free
        for prof in by_start.get(slot, ()):
            chosen.append(MigPlacement(slot, prof))
            if layout_problem(geometry, chosen) is None:
                walk(slot + prof.memory_slices, chosen)
            chosen.pop()

    walk(0, [])
    return out


def _parse_request(geometry: MigGeometry, item: str) -> tuple[MigProfile, int | None]:
    name, sep, at = item.partition("@")
    return geometry.profile(name.strip()), int(at) if sep else None


def assign_placements(geometry: MigGeometry, items: Sequence[str]) -> list[MigPlacement]:
    """Placements for static partitions ``items`` (``"3g.40gb"`` or ``"3g.40gb@4"``).

    Explicit starts are kept; the others get the first start (in memory order,
    largest profiles first) that leads to a valid layout, as an admin would
    pick with mig-parted. Returns placements in input order. Raises KeyError
    for an unknown profile and ValueError when no valid layout exists.
    """
    parsed = [_parse_request(geometry, item) for item in items]
    order = sorted(range(len(parsed)), key=lambda i: (-parsed[i][0].memory_slices, i))
    chosen: dict[int, MigPlacement] = {}

    def search(k: int) -> bool:
        if k == len(order):
            return True
        i = order[k]
        prof, fixed = parsed[i]
        for start in ([fixed] if fixed is not None else list(prof.starts)):
            chosen[i] = MigPlacement(start, prof)
            if layout_problem(geometry, list(chosen.values())) is None and search(k + 1):
                return True
            del chosen[i]
        return False

    if not search(0):
        first = layout_problem(geometry, [MigPlacement(p.starts[0] if s is None else s, p)
                                          for p, s in parsed])
        raise ValueError(f"no valid MIG layout for {list(items)}"
                         + (f" ({first})" if first else ""))
    return [chosen[i] for i in range(len(parsed))]


def placements_of(geometry: MigGeometry) -> Iterator[MigPlacement]:
    """Every (profile, start) the driver advertises under DynamicMIG, profile order."""
    for prof in geometry.profiles:
        for s in prof.starts:
            yield MigPlacement(s, prof)
