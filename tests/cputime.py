"""Time budgets for tests in CPU seconds, so that a loaded machine cannot fail a test.

Wall time stretches with the load: at load 20 on 2 cores a process gets about a tenth of
a core, and a case that needs 0.2 CPU seconds takes 2 wall seconds. A budget in wall
seconds against a fixed number therefore fails on a busy CI machine for no fault of the
code (issue 29: 25 of 3,292 tests, "still running after 20 s", all passing on rerun).
CPU time does not stretch (a few per cent from cache and scheduler noise), so a budget in
CPU seconds catches the regression it was written for (a regex that backtracks, an alias
bomb that expands, a loop that never ends: minutes of CPU) and nothing else.

Three tools:

* ``cpu_budget(seconds)``: a ``with`` block whose body may use ``seconds`` of CPU
  (this process, all its threads, and the children it reaped meanwhile). A runaway body is
  interrupted by ``ITIMER_PROF``, which counts CPU time, not wall time, raising
  ``CpuBudgetExceeded``; a body that ends over the budget raises it too. A body blocked
  without using CPU (a FIFO read, a sleep, a lock) is stopped by a wall-clock *safety*
  (``ITIMER_REAL``) only at ``safety_seconds(seconds)`` (ten times the budget, at least
  a minute), raising ``CaseBlocked``: still a failure, but one no load can cause by itself.
* For a forked child or a subprocess: ``limit_child_cpu(seconds)`` in the child (a precise
  ``ITIMER_PROF`` that kills with the default action of SIGPROF, and ``RLIMIT_CPU`` as the
  hard stop should anything catch SIGPROF); the child's CPU comes from ``wait4``'s rusage
  (``rusage_cpu``) or, for ``subprocess.run``, from ``run_with_cpu_budget``, which reads
  ``RUSAGE_CHILDREN`` around it. Its ``timeout`` is the wall safety, never the budget.
* ``slowdown()``: wall over CPU seconds of a short fixed loop, measured now: how much slower
  than an idle machine a wall clock runs, for the rare wait that cannot be in CPU time
  (a browser of several processes), via ``scaled(seconds)``.

The exceptions are ``BaseException`` subclasses, as ``KeyboardInterrupt`` is, so that no
``except Exception`` in the code under test (click's ``CliRunner`` catches ``Exception``)
swallows them.
"""

from __future__ import annotations

import gc
import math
import resource
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any

# The wall-clock safety: this many times the CPU budget, and never less than SAFETY_FLOOR
# seconds. At load 20 on 2 cores a process that is not blocked gets about a tenth of a core,
# so ten times its CPU budget is all the wall time a case within budget can need there.
SAFETY_FACTOR = 10.0
SAFETY_FLOOR = 60.0


class CaseTimeoutError(BaseException):
    """A budget was overrun; a BaseException so that no ``except Exception`` swallows it."""


class CpuBudgetExceeded(CaseTimeoutError):
    """The body used more CPU time than its budget."""


class CaseBlocked(CaseTimeoutError):
    """The body ran past the wall-clock safety while using less CPU than its budget."""


def safety_seconds(cpu_seconds: float) -> float:
    """The wall-clock safety net for a case with a budget of ``cpu_seconds`` of CPU."""
    return max(SAFETY_FLOOR, SAFETY_FACTOR * cpu_seconds)


def rusage_cpu(usage: Any) -> float:
    """User plus system seconds of a ``resource.struct_rusage`` (``getrusage``, ``wait4``)."""
    return float(usage.ru_utime + usage.ru_stime)


def cpu_now() -> float:
    """CPU seconds of this process (every thread) and of the children it has reaped."""
    return (rusage_cpu(resource.getrusage(resource.RUSAGE_SELF))
            + rusage_cpu(resource.getrusage(resource.RUSAGE_CHILDREN)))


@dataclass
class Spent:
    """What a ``cpu_budget`` body used; ``cpu`` and ``wall`` are final once the block ends."""

    budget: float
    cpu: float = 0.0
    wall: float = 0.0


@contextmanager
def cpu_budget(seconds: float, *, safety: float | None = None) -> Iterator[Spent]:
    """Fail the body if it uses more than ``seconds`` of CPU; stop it there if it runs away.

    ``safety`` (default ``safety_seconds(seconds)``) is the wall time after which a body
    is stopped as blocked. Not reentrant: it owns SIGPROF, SIGALRM and their timers while
    it runs, and must run in the main thread (where Python delivers signals).
    A small budget (under a second) starts after a full garbage collection, so that a
    collection of the test session's heap is not charged to the body."""
    spent = Spent(seconds)
    safety = safety_seconds(seconds) if safety is None else safety
    if seconds < 1:
        gc.collect()
    cpu_start = cpu_now()
    wall_start = time.monotonic()

    def measure() -> None:
        spent.cpu = cpu_now() - cpu_start
        spent.wall = time.monotonic() - wall_start

    def over_cpu(signum: int, frame: FrameType | None) -> Any:
        measure()
        raise CpuBudgetExceeded(f"used more than {seconds:g} CPU s "
                                f"({spent.cpu:.2f} CPU s in {spent.wall:.1f} s)")

    def over_wall(signum: int, frame: FrameType | None) -> Any:
        measure()
        raise CaseBlocked(f"blocked {spent.wall:.0f} s using {spent.cpu:.2f} of its "
                          f"{seconds:g} CPU s")

    previous = (signal.signal(signal.SIGPROF, over_cpu), signal.signal(signal.SIGALRM, over_wall))
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, safety)
    try:
        yield spent
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])
        measure()
    # Reached only when the body ended without an exception: ITIMER_PROF counts this
    # process only (not reaped children), and a signal inside a long C call lands late.
    if spent.cpu > seconds:
        raise CpuBudgetExceeded(f"used {spent.cpu:.2f} CPU s, more than {seconds:g} "
                                f"(in {spent.wall:.1f} s)")


def limit_child_cpu(seconds: float) -> None:
    """In a forked child (or a ``preexec_fn``): die after ``seconds`` of CPU time.

    SIGPROF with its default action ends the process even inside C code, at the budget to
    the timer's tick; ``RLIMIT_CPU`` (SIGXCPU a second later, SIGKILL one after that) is the
    hard stop should the code under test catch SIGPROF. No core file is written."""
    signal.signal(signal.SIGPROF, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    soft, hard = math.ceil(seconds) + 1, math.ceil(seconds) + 2
    _, limit = resource.getrlimit(resource.RLIMIT_CPU)
    if limit != resource.RLIM_INFINITY:
        soft, hard = min(soft, limit), min(hard, limit)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


CPU_LIMIT_SIGNALS = frozenset({signal.SIGPROF, signal.SIGXCPU})


@dataclass(frozen=True)
class ChildRun:
    """A finished subprocess and the CPU seconds it (and the children it reaped) used."""

    done: subprocess.CompletedProcess[str]
    cpu: float


def run_with_cpu_budget(command: Sequence[str], cpu_seconds: float, *,
                        preexec: Callable[[], None] | None = None,
                        **kwargs: Any) -> ChildRun:
    """``subprocess.run(command, capture_output=True, text=True)`` bounded by CPU time.

    The child dies after ``cpu_seconds`` of CPU (``limit_child_cpu``; then its return code
    is ``-SIGPROF`` or ``-SIGXCPU``); the wall-clock ``timeout`` is only the safety net for
    a child blocked without using CPU (``safety_seconds``), and raises
    ``subprocess.TimeoutExpired`` as usual. ``preexec`` runs in the child after the CPU limit.
    The CPU is read from ``RUSAGE_CHILDREN`` before and after: run nothing else in parallel."""

    def setup() -> None:
        limit_child_cpu(cpu_seconds)
        if preexec is not None:
            preexec()

    before = rusage_cpu(resource.getrusage(resource.RUSAGE_CHILDREN))
    done = subprocess.run(list(command), capture_output=True, text=True, check=False,
                          timeout=safety_seconds(cpu_seconds), preexec_fn=setup, **kwargs)
    cpu = rusage_cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - before
    return ChildRun(done, cpu)


def _spin(loops: int) -> int:
    total = 0
    for i in range(loops):
        total += i * i % 7
    return total


def slowdown(cpu_seconds: float = 0.05) -> float:
    """How many wall seconds a CPU second takes right now (1.0 on an idle machine, about 10
    at load 20 on 2 cores): a fixed loop is run until it has used ``cpu_seconds`` of CPU."""
    wall_start, cpu_start = time.monotonic(), time.process_time()
    while time.process_time() - cpu_start < cpu_seconds:
        _spin(20_000)
    cpu = time.process_time() - cpu_start
    return max(1.0, (time.monotonic() - wall_start) / cpu)


def scaled(seconds: float) -> float:
    """``seconds`` of wall time as measured on an idle machine, stretched by ``slowdown()``,
    for a wait that cannot be counted in CPU time. Use it as a safety net, not a budget."""
    return seconds * slowdown()
