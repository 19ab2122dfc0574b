"""The CPU-time budgets of ``tests/cputime.py`` count CPU, not wall time: a body that waits
(as a loaded machine makes every body wait) keeps its budget, a body that spins loses it,
and a body blocked without using CPU is stopped by the wall-clock safety."""

from __future__ import annotations

import signal
import sys
import time

import pytest

from cputime import (
    CaseBlocked,
    CpuBudgetExceeded,
    cpu_budget,
    run_with_cpu_budget,
    safety_seconds,
    scaled,
    slowdown,
)


def spin(seconds: float) -> None:
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def test_waiting_is_not_charged() -> None:
    # 0.3 s of wall time but almost no CPU: a wall-clock budget of 0.2 s would fail here.
    with cpu_budget(0.2) as spent:
        time.sleep(0.3)
    assert spent.wall >= 0.3 and spent.cpu < 0.1


def test_a_runaway_body_is_stopped_at_its_cpu_budget() -> None:
    with pytest.raises(CpuBudgetExceeded, match=r"used more than 0.3 CPU s") as caught, \
            cpu_budget(0.3) as spent:
        spin(30)
    assert 0.2 <= spent.cpu < 1.5, caught.value  # rusage and the timer tick apart
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)  # disarmed afterwards
    assert signal.getsignal(signal.SIGPROF) in (signal.SIG_DFL, None)


def test_a_body_over_budget_in_uninterruptible_code_fails_at_the_end() -> None:
    # The timer's signal is handled only between bytecodes; the check at the end still holds.
    with pytest.raises(CpuBudgetExceeded, match=r"^used 0\.\d\d CPU s, more than 0.05"), \
            cpu_budget(0.05):
        signal.setitimer(signal.ITIMER_PROF, 0)  # as if the signal never came
        spin(0.2)


def test_a_body_blocked_without_cpu_is_stopped_by_the_safety() -> None:
    with pytest.raises(CaseBlocked, match=r"^blocked \d+ s using 0\.\d\d of its 5 CPU s$"), \
            cpu_budget(5, safety=0.2):
        time.sleep(5)


def test_the_safety_is_a_large_multiple_of_the_budget() -> None:
    assert safety_seconds(0.1) == 60
    assert safety_seconds(30) == 300


def test_a_subprocess_is_charged_its_cpu_and_stopped_by_it() -> None:
    ok = run_with_cpu_budget([sys.executable, "-c", "print(sum(range(10**6)))"], 5)
    assert ok.done.returncode == 0 and ok.done.stdout == f"{sum(range(10**6))}\n", ok
    assert 0 < ok.cpu < 5, ok
    loop = run_with_cpu_budget([sys.executable, "-c", "while True: pass"], 0.5)
    assert loop.done.returncode == -signal.SIGPROF, loop
    assert 0.4 <= loop.cpu < 3, loop  # rusage may read 0.45 s for the 0.5 s timer


def test_slowdown_is_at_least_one() -> None:
    assert slowdown() >= 1.0
    assert scaled(2.0) >= 2.0


def test_property_tests_have_no_wall_clock_deadline() -> None:
    # tests/conftest.py's profile: a test's own @settings inherits it.
    from hypothesis import HealthCheck, settings

    for chosen in (settings(), settings(max_examples=5)):
        assert chosen.deadline is None
        assert HealthCheck.too_slow in chosen.suppress_health_check
