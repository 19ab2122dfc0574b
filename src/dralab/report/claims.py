"""Claim allocation status over time, from a run's pod records (no extra simulation data).

At each sample time a pod that has arrived and not ended is *allocated* (running: its
claims, or under the device plugin its extended resources, are allocated), *failed*
(pending after a scheduling cycle said no; by its last reason) or *pending* (not tried
yet, or held before the queue). The first failed cycle of a pod is taken to be at its
arrival, where the simulator's round runs: pods that fail later are counted failed a
little early. Preempted incarnations count while they ran. Pure.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate

from dralab.sim.results import ModeResult

__all__ = ["MAX_REASONS", "ClaimStatus", "claim_status"]

MAX_REASONS = 4          # the most frequent reasons get their own band; the rest are "other"
_WAITING = "waiting (PreEnqueue or no profile)"


@dataclass(frozen=True, slots=True)
class ClaimStatus:
    """Counts of pods per state at ``times``: ``allocated``, ``pending``, and
    ``failed`` (reason -> counts; reasons most frequent first)."""

    times: tuple[float, ...]
    allocated: tuple[int, ...]
    pending: tuple[int, ...]
    failed: tuple[tuple[str, tuple[int, ...]], ...]


def claim_status(mode: ModeResult) -> ClaimStatus:
    times = tuple(s.t for s in mode.samples)
    reasons: dict[str, int] = {}
    for p in mode.pods:
        r = p.unschedulable_reason
        if r and r != _WAITING:
            reasons[r] = reasons.get(r, 0) + 1
    top = [r for r, _ in sorted(reasons.items(), key=lambda x: (-x[1], x[0]))[:MAX_REASONS]]
    # Difference arrays over the sample indices: a pod adds one state per time range, so
    # the cost is pods x log(samples), not pods x samples.
    n = len(times)
    bands: dict[str | None, list[int]] = {None: [0] * (n + 1)}
    running = [0] * (n + 1)
    for p in mode.pods:
        reason = p.unschedulable_reason if p.unschedulable_reason != _WAITING else None
        band = None if reason is None else (reason if reason in top else "other reasons")
        first = bisect_left(times, p.arrival)
        last = bisect_left(times, p.end) if p.end is not None else n
        start = min(bisect_left(times, p.start), last) if p.start is not None else last
        waiting = bands.setdefault(band, [0] * (n + 1))
        waiting[first] += 1
        waiting[max(first, start)] -= 1
        running[max(first, start)] += 1
        running[max(first, last)] -= 1
    allocated = list(accumulate(running))[:n]
    pending = list(accumulate(bands.pop(None)))[:n]
    failed = {r: list(accumulate(v))[:n] for r, v in bands.items() if r is not None}
    order = [*(r for r in top if r in failed), *(["other reasons"] if "other reasons" in failed
                                                 else [])]
    return ClaimStatus(times, tuple(allocated), tuple(pending),
                       tuple((r, tuple(failed[r])) for r in order))
