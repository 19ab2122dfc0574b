"""Go's duration syntax (time.ParseDuration), as Cluster Autoscaler's and Karpenter's
flags and fields take it: "10m", "1h30m", "1.5h", "90s", "250ms", "0", with an
optional sign; units ns, us (µs, μs), ms, s, m, h. One parser for every verb; with
``str2duration`` it is xhit/go-str2duration's ParseDuration (KAI Scheduler's minimum
runtimes): days ``d`` and weeks ``w`` too, and no surrounding blanks."""

from __future__ import annotations

import re

__all__ = ["parse_go_duration"]

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
          "h": 3600.0, "d": 86400.0, "w": 604800.0}
# Go reads ASCII digits only ([0-9], not \d, which also matches other scripts' digits)
_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_PART_STR2DURATION = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h|d|w)")


def parse_go_duration(text: str, *, str2duration: bool = False) -> float:
    """Seconds from a Go duration; ValueError("invalid duration ...") otherwise."""
    rest = text if str2duration else text.strip()
    part = _PART_STR2DURATION if str2duration else _PART
    sign = -1.0 if rest.startswith("-") else 1.0
    if rest[:1] in ("-", "+"):
        rest = rest[1:]
    if rest == "0":
        return 0.0
    if not rest:
        raise ValueError(f"invalid duration {text!r}")
    total, pos = 0.0, 0
    while pos < len(rest):
        match = part.match(rest, pos)
        if match is None:
            raise ValueError(f"invalid duration {text!r}")
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    return sign * total
