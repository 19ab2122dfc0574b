"""The trace loader on slices of the shipped copy, and the trace directory resolution."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralab.api.errors import LoadError
from dralab.replay.trace import (
    TRACE_DIR_ENV,
    WORKLOADS,
    TraceNotFoundError,
    decode_trace,
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


# --- hostile files (issue 16) --------------------------------------------------------------

NODE_TEXT = "sn,cpu_milli,memory_mib,gpu,model\n" + "".join(
    f"n{i},{64000 + i},262144,{i % 9},V100M16\n" for i in range(6))
POD_TEXT = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n" + "".join(
    f"p{i},{1000 * i},1024,{i % 2},{500 * (i % 2)},{'T4|P100' if i % 3 else ''}\n"
    for i in range(6))


@st.composite
def mutated(draw: st.DrawFn, text: str) -> bytes:
    """``text`` with a few random byte-level edits: replaced, inserted, deleted, or a cell
    swapped for a hostile value."""
    data = bytearray(text.encode())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data) - 1))
        op = draw(st.sampled_from(["replace", "insert", "delete", "cell"]))
        if op == "replace":
            data[at] = draw(st.integers(0, 255))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=4))
        elif op == "delete":
            del data[at]
        else:
            value = draw(st.sampled_from(
                ["-1", "nan", "1e9", "99999999999999999999", "9", "", "\"", "1_0", " 1", "+1",
                 "٣", "\x00", "\"a,b\"", "\"x\ny\"", "0x10", "9" * 5000]))
            comma = data.find(b",", at)
            if comma > 0:
                end = data.find(b",", comma + 1)
                end = len(data) if end < 0 else end
                data[comma + 1:end] = value.encode()
    return bytes(data)


@settings(max_examples=300, deadline=None)
@given(st.one_of(mutated(NODE_TEXT).map(lambda b: ("nodes", b)),
                 mutated(POD_TEXT).map(lambda b: ("pods", b))))
def test_mutated_trace_files_parse_or_fail_in_one_line(case: tuple[str, bytes]) -> None:
    kind, data = case
    parse = parse_nodes if kind == "nodes" else parse_pods
    try:
        records = parse(decode_trace(data, "f.csv"), "f.csv")
    except LoadError as exc:
        message = str(exc)
        assert re.match(r"f\.csv(:\d+)?: ", message), message
        assert "\n" not in message.replace("\\n", "") and len(message) < 400, message
        return
    for r in records:
        assert all(0 <= v <= 1 << 40 for v in r[1:4])
        if kind == "nodes":
            assert r.gpus <= 8
        else:
            assert r.gpu_milli <= 1000 and r.num_gpu <= 8


def test_every_shipped_file_passes_the_strict_checks() -> None:
    # The limits and the field-count check hold for the real trace (node lists included).
    here = default_trace_dir()
    assert len(parse_nodes(decode_trace((here / "openb_node_list_all_node.csv").read_bytes(),
                                        "all"))) == 1523
    for w in WORKLOADS:
        assert load_pods(w)


def test_a_file_that_cannot_be_opened_is_one_line(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # What a non-root user gets for a file of mode 000 (root reads it anyway).
    (tmp_path / "openb_node_list_gpu_node.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\n")
    real_open = Path.open

    def refuse(self: Path, *args: object, **kwargs: object) -> object:
        if self.name.endswith(".csv"):
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", refuse)
    with pytest.raises(LoadError, match=r"openb_node_list_gpu_node\.csv: cannot read: "
                                        r"Permission denied$"):
        load_nodes(tmp_path)
