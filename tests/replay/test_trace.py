"""The trace loader on slices of the shipped copy, and the trace directory resolution."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dralab.api.errors import LoadError
from dralab.sim.trace import (
    TRACE_DIR_ENV,
    WORKLOADS,
    TraceNotFoundError,
    default_trace_dir,
    load_nodes,
    load_pods,
    parse_nodes,
    parse_pods,
    resolve_trace_dir,
    workload_file,
)


def test_shipped_copy_is_complete() -> None:
    here = default_trace_dir()
    assert here == Path(__file__).resolve().parents[2] / "src" / "dralab" / "data" \
        / "alibaba-gpu-2023"
    files = {p.name for p in here.glob("*.csv")}
    assert {workload_file(w) for w in WORKLOADS} | {"openb_node_list_gpu_node.csv",
                                                    "openb_node_list_all_node.csv"} == files
    assert (here / "README.md").is_file()


def test_first_nodes() -> None:
    nodes = load_nodes(limit=3)
    assert [tuple(n) for n in nodes] == [
        ("openb-node-0000", 64000, 262144, 2, "P100"),
        ("openb-node-0001", 64000, 262144, 2, "P100"),
        ("openb-node-0002", 64000, 262144, 2, "P100"),
    ]


def test_first_pods() -> None:
    pods = load_pods("default", limit=2)
    assert pods[0][:6] == ("openb-pod-0000", 12000, 16384, 1, 1000, frozenset())
    assert pods[1][:5] == ("openb-pod-0001", 6000, 12288, 1, 460)
    assert pods[1].gpu_request == 460


def test_gpu_spec_is_a_set_keeping_its_spelling() -> None:
    text = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
            "p,1000,1,1,1000,V100M16|V100M32|V100M32\n"
            "q,1000,1,0,0,\n")
    p, q = parse_pods(text)
    assert p.gpu_spec == frozenset({"V100M16", "V100M32"})
    assert p.gpu_spec_text == "V100M16|V100M32|V100M32"
    assert q.gpu_spec == frozenset() and q.gpu_request == 0


def test_multigpu_files_have_no_spec_column() -> None:
    pods = load_pods("multigpu20", limit=50)
    assert all(p.gpu_spec == frozenset() for p in pods)


@pytest.mark.parametrize(("row", "message"), [
    ("p,1000,1,2,500", "column gpu_milli (5): unsupported GPU request"),
    ("p,x,1,1,500", "column cpu_milli (2): not an integer"),
    ("p,1000,1,1,1500", "column gpu_milli (5): '1500' is more than 1,000"),
    ("p,-5,1,0,0", "column cpu_milli (2): negative"),
])
def test_bad_rows(row: str, message: str) -> None:
    with pytest.raises(LoadError, match=re.escape(message)):
        parse_pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n" + row + "\n", "f.csv")


def test_missing_column() -> None:
    with pytest.raises(LoadError, match="missing column"):
        parse_nodes("sn,cpu_milli\nx,1\n")


def test_trace_dir_resolution(tmp_path: Path) -> None:
    assert resolve_trace_dir(tmp_path) == tmp_path
    assert resolve_trace_dir(None, {TRACE_DIR_ENV: str(tmp_path)}) == tmp_path
    assert resolve_trace_dir(None, {}) == default_trace_dir()
    with pytest.raises(TraceNotFoundError, match="--trace-dir"):
        resolve_trace_dir(tmp_path / "missing")
    with pytest.raises(TraceNotFoundError, match="not found"):
        load_nodes(tmp_path)


def test_env_var_points_elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "openb_node_list_gpu_node.csv").write_text(
        "sn,cpu_milli,memory_mib,gpu,model\nonly,8000,1024,1,T4\n")
    monkeypatch.setenv(TRACE_DIR_ENV, str(tmp_path))
    assert [n.name for n in load_nodes()] == ["only"]


def test_unknown_workload() -> None:
    with pytest.raises(ValueError, match="unknown workload"):
        workload_file("nope")
