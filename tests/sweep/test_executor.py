"""The executor interface: in-process, process pool, and Dask on a LocalCluster."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from dralab.api.errors import InputError
from dralab.replay.runs import ReplayResults, grid, run_cell
from dralab.sim.executor import (
    DaskExecutor,
    InlineExecutor,
    ProcessExecutor,
    make_executor,
)

distributed = pytest.importorskip("distributed")


def square(x: int) -> int:
    return x * x


def where(_x: int) -> str:
    """The address of the Dask worker running the task (raises outside one)."""
    address: str = distributed.get_worker().address
    return address


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    # In-process workers (threads): fast to start, and still the real scheduler,
    # serialisation of tasks and gather path.
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as c:
        yield c


def test_local_executors_keep_item_order() -> None:
    items = list(range(7))
    assert InlineExecutor().map(square, items) == [x * x for x in items]
    assert ProcessExecutor(2).map(square, items) == [x * x for x in items]
    assert isinstance(make_executor(1), InlineExecutor)
    assert isinstance(make_executor(3), ProcessExecutor)


def test_dask_runs_the_tasks_on_the_cluster(cluster: Any) -> None:
    with distributed.Client(cluster) as client:
        ex = DaskExecutor(client)
        worker = next(iter(client.scheduler_info()["workers"]))
        # Every task ran on the cluster's worker, results in item order.
        assert ex.map(where, [1, 2, 3]) == [worker] * 3
        assert ex.map(square, [3, 1, 2]) == [9, 1, 4]
        # Equal items are separate tasks (pure=False), not deduplicated.
        assert ex.map(square, [2, 2]) == [4, 4]


def test_dask_replay_grid_matches_local(cluster: Any) -> None:
    specs = grid(["default"], ["FGD", "BestFit"], [42, 43], None, 60, 200)
    with distributed.Client(cluster) as client:
        remote = ReplayResults(DaskExecutor(client).map(run_cell, specs))
    local = ReplayResults(InlineExecutor().map(run_cell, specs))
    assert remote.results_json() == local.results_json()
    assert [(r.policy, r.seed) for r in remote.runs] == [(s.policy, s.seed) for s in specs]


def test_dask_missing_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes the import fail as if the extra were not installed.
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(InputError, match=r"dralab\[distributed\]"):
        DaskExecutor("tcp://127.0.0.1:8786")
