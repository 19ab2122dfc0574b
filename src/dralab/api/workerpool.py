"""A process pool whose workers die with dralab: the one way dralab starts processes.

Big YAML inputs (``io``), a grid of simulations (``sim.executor``) and the trace
replay grid (``replay.grid``) fan work out to worker processes. A stdlib pool's
workers outlive their parent: kill dralab (SIGKILL, or SIGTERM with no cleanup)
and they go on parsing or simulating, to write results nobody reads. Two guards:

* each worker asks the kernel to send it SIGKILL when its parent dies (Linux
  ``prctl(PR_SET_PDEATHSIG)``), then checks that the parent is still the process
  that made the pool: a parent that died between the fork and the ``prctl`` would
  never send the signal (the worker would have been re-parented already);
* ``worker_pool`` kills the workers when its block ends by an exception (a
  SIGTERM turned into ``SystemExit`` by the CLI, Ctrl-C, a failed run) instead
  of waiting, as ``ProcessPoolExecutor.__exit__`` does, for the tasks in flight.

Workers ignore SIGINT (Ctrl-C reaches the whole foreground process group; the parent
alone decides, and kills them) and take SIGTERM with the default action, whatever
handlers the parent had installed before forking.

The workers are forked where the platform can (Linux): they must be children of this
process for the parent-death signal to mean "dralab died" (a fork server's children
would watch the fork server instead). Elsewhere the platform's default start method
is used and only the exception guard applies.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

__all__ = ["kill_workers", "map_in_order", "worker_pool"]

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent: int) -> None:
    """Pool initializer, run in each worker before any task."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no libc to ask: the exception guard remains
            pass
    # The race the signal leaves open: the parent died before the prctl above.
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)
    # Last: a worker that ignores SIGINT is past the guards above (tests rely on it).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _context() -> Any:
    if "fork" in multiprocessing.get_all_start_methods() and sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def kill_workers(pool: ProcessPoolExecutor) -> None:
    """SIGKILL every live worker of ``pool`` (it is broken afterwards); never raises."""
    # ``_processes`` (pid -> Process) is private but has been there since Python 3.2;
    # 3.14's ``kill_workers`` does the same through it.
    processes: dict[int, Any] = dict(getattr(pool, "_processes", None) or {})
    for process in processes.values():
        with contextlib.suppress(Exception):
            process.kill()
    for process in processes.values():
        with contextlib.suppress(Exception):
            process.join(5)


@contextlib.contextmanager
def worker_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A ``ProcessPoolExecutor`` of ``workers`` processes that die with this one.

    On a normal exit the pool shuts down as usual (waiting for its tasks). When the
    block raises (any ``BaseException``: ``SystemExit`` from a signal, Ctrl-C, an
    error), the workers are killed first, so none is left running.
    """
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_context(),
                               initializer=_die_with_parent, initargs=(os.getpid(),))
    try:
        yield pool
    except BaseException:
        kill_workers(pool)
        # Not cancel_futures: the pool's manager thread fails every pending future
        # with BrokenProcessPool once it sees a worker gone, and on Python 3.11 it
        # crashes (a traceback on stderr) when one of them is already cancelled.
        with contextlib.suppress(Exception):
            pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)


def map_in_order(pool: ProcessPoolExecutor, fn: Callable[..., R],
                 *iterables: Sequence[Any]) -> list[R]:
    """``fn`` over the items (one task each), results in item order.

    Like ``pool.map(fn, ..., chunksize=1)`` but without its cancelling of the pending
    tasks when the wait is interrupted: on Python 3.11 the pool's manager thread,
    finding a worker killed (``worker_pool``'s cleanup), fails every pending task and
    crashes with a traceback on one already cancelled.
    """
    futures = [pool.submit(fn, *args) for args in zip(*iterables, strict=True)]
    return [f.result() for f in futures]
