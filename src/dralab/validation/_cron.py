"""Syntax check of CronJob schedules (standard five-field cron and @descriptors).

Follows the grammar the API server accepts (robfig/cron's standard parser);
the messages are ours but name the offending part the same way.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["cron_problem"]

_DESCRIPTORS: Final = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily",
                                 "@midnight", "@hourly"})
_DURATION_RE: Final = re.compile(r"([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+")  # ASCII digits only
_MONTHS: Final = {m: i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_DAYS: Final = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
# (name, minimum, maximum, names)
_FIELDS: Final[tuple[tuple[str, int, int, dict[str, int]], ...]] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 6, _DAYS),
)


def cron_problem(schedule: str) -> str:
    """Why ``schedule`` is not a valid cron schedule, or "" if it is."""
    text = schedule.strip()
    if text.startswith(("TZ=", "CRON_TZ=")):
        return "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
    if text.startswith("@"):
        if text in _DESCRIPTORS:
            return ""
        if text.startswith("@every "):
            duration = text[len("@every "):].strip()
            return "" if _DURATION_RE.fullmatch(duration) else f"failed to parse duration {text}"
        return f"unrecognized descriptor: {text}"
    fields = text.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    for value, (_, low, high, names) in zip(fields, _FIELDS, strict=True):
        for part in value.split(","):
            problem = _range_problem(part, low, high, names)
            if problem:
                return problem
    return ""


def _number(text: str, names: dict[str, int]) -> int | None:
    if text.lower() in names:
        return names[text.lower()]
    return int(text) if text.isascii() and text.isdigit() else None


def _range_problem(part: str, low: int, high: int, names: dict[str, int]) -> str:
    span, _, step_text = part.partition("/")
    if span in ("*", "?"):
        start, end = low, high
    else:
        first, dash, last = span.partition("-")
        start_n = _number(first, names)
        end_n = _number(last, names) if dash else start_n
        if start_n is None or end_n is None:
            bad = first if start_n is None else last
            return f"failed to parse int from {bad}: invalid syntax"
        start, end = start_n, end_n
    if start < low:
        return f"beginning of range ({start}) below minimum ({low}): {part}"
    if end > high:
        return f"end of range ({end}) above maximum ({high}): {part}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {part}"
    has_step = bool(step_text) or part.endswith("/")
    if has_step and (not (step_text.isascii() and step_text.isdigit()) or int(step_text) == 0):
        return f"step of range should be a positive number: {part}"
    return ""
