"""Next activation time of a CronJob schedule (five-field cron, @descriptors, @every).

Semantics of robfig/cron's standard parser, which the CronJob controller uses:
day-of-month and day-of-week are ANDed when either is a plain ``*``/``?``
(without a step), ORed otherwise. Schedules are assumed valid (the API layer
validates them); an impossible one raises ValueError.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

__all__ = ["next_activation"]

_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = {m: i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_BOUNDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}), (0, 23, {}), (1, 31, {}), (1, 12, _MONTHS), (0, 6, _DAYS))
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)")  # ASCII digits only
# 28 years: the longest a valid schedule can wait (a 29 February falling on a given
# weekday with ANDed day fields recurs within 28 years).
_HORIZON_DAYS = 366 * 28


def _number(text: str, names: dict[str, int]) -> int:
    return names[text.lower()] if text.lower() in names else int(text)


def _field(text: str, low: int, high: int, names: dict[str, int]) -> tuple[set[int], bool]:
    """Values of one field, and whether it counts as "*" for the day rule."""
    values: set[int] = set()
    star = False
    for part in text.split(","):
        span, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if span in ("*", "?"):
            start, end = low, high
            star = star or step == 1
        else:
            first, dash, last = span.partition("-")
            start = _number(first, names)
            end = _number(last, names) if dash else (high if step_text else start)
        values.update(range(start, end + 1, step))
    return values, star


def _duration(text: str) -> timedelta:
    seconds = 0.0
    pos = 0
    for match in _DURATION_PART.finditer(text):
        if match.start() != pos:
            raise ValueError(f"bad duration {text!r}")
        seconds += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos != len(text) or not text:
        raise ValueError(f"bad duration {text!r}")
    return timedelta(seconds=seconds)


def next_activation(schedule: str, after: datetime) -> datetime:
    """The first activation strictly after ``after`` (whose tzinfo is kept)."""
    text = schedule.strip()
    if text.startswith("@every "):
        delay = _duration(text[len("@every "):].strip())
        return after.replace(microsecond=0) + delay
    text = _DESCRIPTORS.get(text, text)
    fields = text.split()
    if len(fields) != 5:
        raise ValueError(f"bad schedule {schedule!r}")
    parsed = [_field(f, lo, hi, names) for f, (lo, hi, names) in zip(fields, _BOUNDS,
                                                                     strict=True)]
    minutes, hours = sorted(parsed[0][0]), sorted(parsed[1][0])
    (dom, dom_star), months, (dow, dow_star) = parsed[2], parsed[3][0], parsed[4]
    start = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    day = start.replace(hour=0, minute=0)
    for offset in range(_HORIZON_DAYS):
        current = day + timedelta(days=offset)
        if current.month not in months:
            continue
        dom_ok = current.day in dom
        dow_ok = (current.weekday() + 1) % 7 in dow
        if not ((dom_ok and dow_ok) if dom_star or dow_star else (dom_ok or dow_ok)):
            continue
        for hour in hours:
            for minute in minutes:
                candidate = current.replace(hour=hour, minute=minute)
                if candidate >= start:
                    return candidate
    raise ValueError(f"schedule {schedule!r} never activates")
