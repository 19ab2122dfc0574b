"""The time the API objects of a run carry: one deterministic clock.

A real control plane stamps what it writes with its wall clock: a pod condition's
``lastTransitionTime``, a claim allocation's ``allocationTimestamp``. dralab has
no wall clock (same inputs and seed, same output), so its clock starts at the
moment of the snapshot it was given, the newest ``metadata.creationTimestamp``
among the input objects (the Unix epoch when none has one), and moves with the
run's own clock: seconds the simulator has run, or a scheduling run's still
clock that only jumps to reach Permit timeouts.

Times are written as the API server serialises ``metav1.Time``: RFC 3339 in UTC
with whole seconds (``2026-11-20T08:00:00Z``), the fraction cut off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from dralab.api.base import KubeObject

__all__ = ["RunClock", "api_time", "snapshot_moment"]


def _seconds(text: str) -> float | None:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def snapshot_moment(objects: Iterable[KubeObject]) -> float:
    """The newest creationTimestamp among ``objects``, in seconds since the epoch
    (0.0 when none has one; unreadable timestamps are skipped)."""
    newest = 0.0
    for obj in objects:
        stamp = obj.metadata.creation_timestamp
        if stamp:
            seconds = _seconds(stamp)
            if seconds is not None and seconds > newest:
                newest = seconds
    return newest


def api_time(seconds: float) -> str:
    """``seconds`` since the epoch as metav1.Time marshals it: RFC 3339, UTC, the
    fraction of a second dropped (Go formats with layout RFC3339, no rounding)."""
    moment = datetime.fromtimestamp(int(seconds // 1), tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _no_time_passes() -> float:
    return 0.0


class RunClock:
    """The API time of one run: ``moment`` (the snapshot's, in seconds since the
    epoch) plus what ``elapsed`` says has passed since the run began."""

    __slots__ = ("elapsed", "moment")

    def __init__(self, moment: float = 0.0,
                 elapsed: Callable[[], float] = _no_time_passes) -> None:
        self.moment = moment
        self.elapsed = elapsed

    def seconds(self) -> float:
        return self.moment + self.elapsed()

    def now(self) -> str:
        """The current time as the API server writes it into objects."""
        return api_time(self.seconds())
