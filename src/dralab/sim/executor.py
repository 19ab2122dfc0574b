"""Where a grid of independent runs executes: in-process, worker processes, or a Dask cluster.

Everything that fans runs out (``dralab replay``, ``dralab sweep``) goes through
one small interface, ``Executor.map(fn, items) -> list``: results come back in
``items`` order whatever the completion order, so a grid is as reproducible as
a single run. ``fn`` and the items must be picklable (module-level functions and
plain data), because both process pools and Dask ship them to other processes.

Dask is an optional extra (``pip install 'dralab[distributed]'``); it is imported
only when a Dask executor is built, and its absence is reported as one
``InputError`` line rather than an ImportError traceback.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from dralab.api.errors import InputError
from dralab.api.workerpool import map_in_order, worker_pool

__all__ = [
    "DaskExecutor",
    "Executor",
    "InlineExecutor",
    "ProcessExecutor",
    "check_dask_address",
    "default_workers",
    "make_executor",
]

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs ``fn`` on every item; results in item order."""

    @property
    def description(self) -> str: ...

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]: ...


def default_workers() -> int:
    """One worker per CPU this process may use: the runs are CPU-bound Python."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class InlineExecutor:
    """Runs everything in this process: for one worker, and for debugging."""

    description = "in-process"

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        return [fn(x) for x in items]


class ProcessExecutor:
    """A process pool sized to the work (never more workers than items) whose workers
    die with dralab (``dralab.api.workerpool``)."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)

    @property
    def description(self) -> str:
        return f"{self.workers} worker process(es)"

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        n = min(self.workers, len(items))
        if n <= 1:
            return [fn(x) for x in items]
        # One task per item: runs differ a lot in cost (policies, workloads), so hand them
        # out one at a time instead of in fixed slices that would leave workers idle.
        with worker_pool(n) as pool:
            return map_in_order(pool, fn, items)


# scheme://host:port, host:port, [v6]:port, inproc://host/pid/n: no spaces, a host part,
# a port if given of at most 5 digits, path segments. Anything else is refused before
# distributed is even imported.
_DASK_ADDRESS = re.compile(r"(?:[a-z][a-z0-9+.-]*://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)"
                           r"(?::[0-9]{1,5})?(?:/[A-Za-z0-9_.-]*)*")


def check_dask_address(address: str) -> None:
    """InputError unless ``address`` looks like a Dask scheduler address
    (``tcp://host:8786``, ``host:8786``, ``tls://[::1]:8786``)."""
    if not _DASK_ADDRESS.fullmatch(address):
        raise InputError(f"--dask {_one_line(repr(address))}: not a scheduler address "
                         "(use e.g. tcp://host:8786)")


def _one_line(value: object) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= 200 else text[:200] + "..."


class DaskExecutor:
    """Submits every item to a dask.distributed scheduler and gathers the results.

    ``address`` is a scheduler address (``tcp://host:8786``) or an existing
    ``distributed.Client``-compatible object (tests pass a client of a LocalCluster).
    """

    def __init__(self, address: str | Any) -> None:
        if isinstance(address, str):
            check_dask_address(address)
        try:
            # Through importlib: the extra is optional, so type checking must not need it.
            client_type: Any = importlib.import_module("distributed").Client
        except ImportError:
            raise InputError("--dask needs the optional Dask extra: "
                             "pip install 'dralab[distributed]'") from None
        self._own = isinstance(address, str)
        try:
            self.client: Any = client_type(address) if self._own else address
        except OSError as exc:
            raise InputError(f"--dask {address!r}: cannot reach the Dask scheduler: "
                             f"{_one_line(exc)}") from None
        except (ValueError, TypeError) as exc:
            # distributed's own parsing of the address (e.g. a missing port).
            raise InputError(f"--dask {address!r}: not a scheduler address: "
                             f"{_one_line(exc)}") from None
        self.address = address if isinstance(address, str) else str(
            getattr(getattr(address, "scheduler", None), "address", "client"))

    @property
    def description(self) -> str:
        return f"Dask cluster {self.address}"

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        if not items:
            return []
        # pure=False: identical items (same cell twice) must still each run; the
        # default would deduplicate them by hash.
        futures = self.client.map(fn, list(items), pure=False)
        results: list[R] = self.client.gather(futures)
        return results

    def close(self) -> None:
        if self._own:
            self.client.close()


def make_executor(workers: int | None = None, dask: str | None = None) -> Executor:
    """Dask when ``dask`` (an address) is given, else a process pool of ``workers``
    (default: one per CPU), else in-process for ``workers`` <= 1."""
    if dask:
        return DaskExecutor(dask)
    n = default_workers() if workers is None else workers
    return InlineExecutor() if n <= 1 else ProcessExecutor(n)
