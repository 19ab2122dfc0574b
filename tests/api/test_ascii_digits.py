"""Durations, quantities and other numbers in user text are read with ASCII digits only.

Python's ``\\d`` matches every Unicode decimal digit and ``int()``/``float()`` accept them
too, so ``'٣s'`` (Arabic-Indic three) once read as three seconds. Go's parsers
(``time.ParseDuration``, ``resource.ParseQuantity``, robfig/cron, strconv) take only
'0'-'9'. Each parser below refuses a non-ASCII digit in any digit position, with the
same message as any other malformed value.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dralab.api.quantity import QuantityError, parse_quantity
from dralab.api.semver import SemverError, parse_semver
from dralab.controllers.cronschedule import next_activation
from dralab.fleet.spec import parse_fleet_duration
from dralab.sim.spec import parse_duration
from dralab.validation import validate_object

# Digits that are not ASCII: Arabic-Indic, fullwidth, Devanagari, mathematical bold
# (all category Nd, so int() reads them), and superscript two (isdigit() but not Nd).
FOREIGN_DIGITS = ("٣", "３", "३", "𝟑", "²")


def _every_position(text: str) -> list[str]:
    """``text`` with each ASCII digit in turn replaced by each foreign digit."""
    return [text[:i] + d + text[i + 1:] for i, ch in enumerate(text) if ch.isdigit()
            for d in FOREIGN_DIGITS]


def _cron_schedule(schedule: str) -> Any:
    return next_activation(schedule, datetime(2026, 1, 1, tzinfo=UTC))


# parser, accepted neighbours (text -> value), message every refusal starts with
PARSERS: dict[str, tuple[Callable[[str], Any], dict[str, Any], str]] = {
    "quantity": (lambda t: parse_quantity(t), {
        "1": "1", "+8Gi": "8Gi", "0": "0", "-1": "-1", "0.5": "500m", "500m": "500m",
        "1e3": "1e3", "12.5Ki": "12800",
    }, "quantities must match the regular expression"),
    "scenario duration": (parse_duration, {
        "3s": 3.0, "12.5m": 750.0, "250ms": 0.25, "2h": 7200.0, "1d": 86400.0, "90": 90.0,
    }, "not a duration (use e.g. 90s, 15m, 2h)"),
    "fleet duration": (parse_fleet_duration, {
        "3s": 3.0, "12.5m": 750.0, "250ms": 0.25, "2h": 7200.0, "1d": 86400.0, "90": 90.0,
    }, "not a duration (use e.g. 90s, 5m, 1h)"),
    "cron @every": (lambda t: _cron_schedule(f"@every {t}"), {
        "3s": datetime(2026, 1, 1, 0, 0, 3, tzinfo=UTC),
        "1h30m": datetime(2026, 1, 1, 1, 30, tzinfo=UTC),
    }, "bad duration"),
}


def _value(kind: str, result: Any) -> Any:
    return str(result) if kind == "quantity" else result


@pytest.mark.parametrize("kind", sorted(PARSERS))
def test_ascii_neighbours_are_read(kind: str) -> None:
    parse, accepted, _ = PARSERS[kind]
    for text, value in accepted.items():
        assert _value(kind, parse(text)) == value, text


@pytest.mark.parametrize("kind", sorted(PARSERS))
def test_a_foreign_digit_in_any_position_is_refused(kind: str) -> None:
    parse, accepted, message = PARSERS[kind]
    cases = [bad for text in accepted for bad in _every_position(text)]
    cases += ["٣s", "３", "٣", "１Gi", "８Gi", "1٣", "1.٣s", "1e٣"]
    assert len(cases) >= 28
    for bad in cases:
        with pytest.raises(ValueError) as info:
            parse(bad)
        # The same wording as for any other malformed value.
        assert message in str(info.value), bad


def test_issue_29_reproducer_three_seconds_in_arabic_indic() -> None:
    # issue 29: "a duration '٣s' (Arabic-Indic digit) read as 3 s".
    with pytest.raises(ValueError, match=r"not a duration"):
        parse_duration("٣s")
    with pytest.raises(ValueError, match=r"not a duration"):
        parse_fleet_duration("٣s")
    with pytest.raises(QuantityError):
        parse_quantity("٣")


def test_scenario_durations_take_ascii_space_only() -> None:
    assert parse_duration(" 3s ") == 3.0
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration("\u20033s")  # an em space is not blank to Go either


@pytest.mark.parametrize("text", ["١.0.0", "1.٣.0", "1.0.３", "1.0.0-rc.٣"])
def test_semver_refuses_foreign_digits(text: str) -> None:
    with pytest.raises(SemverError):
        parse_semver(text)


def _cron_job(schedule: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {"schedule": schedule, "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox"}]}}}}}}


@pytest.mark.parametrize(("schedule", "message"), [
    ("@every ٣s", "failed to parse duration @every ٣s"),
    ("٣ * * * *", "failed to parse int from ٣: invalid syntax"),
    # '²'.isdigit() is True but int('²') raises: this was an internal error.
    ("² * * * *", "failed to parse int from ²: invalid syntax"),
    ("*/٣ * * * *", "step of range should be a positive number: */٣"),
    ("*/² * * * *", "step of range should be a positive number: */²"),
])
def test_cron_schedules_refuse_foreign_digits(schedule: str, message: str) -> None:
    errors = validate_object(_cron_job(schedule))
    assert [e.path for e in errors] == ["spec.schedule"]
    assert message in str(errors[0])
    assert not validate_object(_cron_job("*/3 * * * *"))


# Every non-ASCII character str.isdigit() accepts (decimal digits of ~70 scripts,
# superscripts, circled digits, ...): 800-odd, computed once.
ALL_FOREIGN_DIGITS = [chr(c) for c in range(0x80, 0x110000) if chr(c).isdigit()]
# Around the digit: what a duration or quantity is made of, and anything else.
_NEAR = st.text(alphabet="0123456789.+-eEnumsdhkKMGTPi ", max_size=6) | st.text(max_size=4)


@given(prefix=_NEAR, digit=st.sampled_from(ALL_FOREIGN_DIGITS), suffix=_NEAR)
def test_any_text_with_a_non_ascii_digit_is_refused(prefix: str, digit: str,
                                                    suffix: str) -> None:
    text = prefix + digit + suffix
    for parse in (parse_quantity, parse_duration, parse_fleet_duration):
        with pytest.raises(ValueError):
            parse(text)
    with pytest.raises(ValueError):
        _cron_schedule(f"@every {text}")
