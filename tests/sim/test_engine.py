"""The event engine: one clock, deterministic ordering, cancellation."""

from __future__ import annotations

import pytest

from dralab.sim.engine import Environment, Stage, StageError
from dralab.sim.stages import Completion, JobController, NodeLifecycle, Sampling, SchedulingStage


def _stage(name: str, order: int) -> type[Stage]:
    return type(f"Stage_{name}", (Stage,), {"name": name, "order": order})


def test_events_run_in_time_then_priority_then_insertion_order() -> None:
    env = Environment()
    sample, arrival, completion = (_stage("sampling", 40)(env), _stage("arrival", 20)(env),
                                   _stage("completion", 10)(env))
    env.register(sample, arrival, completion)
    seen: list[str] = []
    sample.at(5, lambda: seen.append("sample@5"))
    arrival.at(5, lambda: seen.append("arrival@5-a"))
    arrival.at(5, lambda: seen.append("arrival@5-b"))
    completion.at(5, lambda: seen.append("completion@5"))
    arrival.at(1, lambda: seen.append("arrival@1"))
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


def test_the_run_stages_keep_their_order() -> None:
    # Capacity returns before new demand; the scheduler sees the whole instant; sampling
    # sees the final state. Admission (25) and autoscaling (35) have room in between.
    stages = [NodeLifecycle, Completion, JobController, SchedulingStage, Sampling]
    assert [s.order for s in stages] == sorted(s.order for s in stages)
    assert [s.name for s in stages] == ["node-lifecycle", "completion", "arrival",
                                        "scheduling", "sampling"]
    orders = {s.order for s in stages}
    assert 25 not in orders and 35 not in orders
    assert JobController.order < 25 < SchedulingStage.order < 35 < Sampling.order


def test_a_new_stage_slots_in_by_its_order() -> None:
    env = Environment()
    arrival, admission, scheduling = (_stage("arrival", 20)(env), _stage("admission", 25)(env),
                                      _stage("scheduling", 30)(env))
    env.register(scheduling, arrival, admission)
    assert env.stages() == ["arrival", "admission", "scheduling"]
    seen: list[str] = []
    scheduling.at(1, lambda: seen.append("scheduling"))
    admission.at(1, lambda: seen.append("admission"))
    arrival.at(1, lambda: seen.append("arrival"))
    env.run()
    assert seen == ["arrival", "admission", "scheduling"]


def test_stages_register_once_with_distinct_orders() -> None:
    env = Environment()
    env.register(_stage("a", 1)(env))
    with pytest.raises(StageError, match="registered twice"):
        env.register(_stage("a", 2)(env))
    with pytest.raises(StageError, match="both have order 1"):
        env.register(_stage("b", 1)(env))
    with pytest.raises(StageError, match="not registered"):
        _stage("c", 3)(env).at(0, lambda: None)
