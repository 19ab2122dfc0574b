"""The event engine: one clock, deterministic ordering, cancellation."""

from __future__ import annotations

import pytest

from dralab.sim.engine import Environment, Priority


def test_events_run_in_time_then_priority_then_insertion_order() -> None:
    env = Environment()
    seen: list[str] = []
    env.at(5, lambda: seen.append("sample@5"), Priority.SAMPLE)
    env.at(5, lambda: seen.append("arrival@5-a"), Priority.ARRIVAL)
    env.at(5, lambda: seen.append("arrival@5-b"), Priority.ARRIVAL)
    env.at(5, lambda: seen.append("completion@5"), Priority.COMPLETION)
    env.at(1, lambda: seen.append("arrival@1"), Priority.ARRIVAL)
    env.run()
    assert seen == ["arrival@1", "completion@5", "arrival@5-a", "arrival@5-b", "sample@5"]
    assert env.now == 5 and env.processed == 5


def test_actions_schedule_more_and_until_stops_the_clock() -> None:
    env = Environment()
    ticks: list[float] = []

    def tick() -> None:
        ticks.append(env.now)
        env.after(10, tick)

    env.at(0, tick)
    env.run(until=35)
    assert ticks == [0, 10, 20, 30]
    assert env.now == 35


def test_cancelled_events_are_skipped_and_counted() -> None:
    env = Environment()
    seen: list[int] = []
    event = env.at(1, lambda: seen.append(1))
    env.at(2, lambda: seen.append(2))
    event.cancel()
    env.run()
    assert seen == [2] and env.cancelled == 1


def test_cannot_schedule_in_the_past() -> None:
    env = Environment()
    env.at(10, lambda: None)
    env.run()
    with pytest.raises(ValueError):
        env.at(5, lambda: None)
