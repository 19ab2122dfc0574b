"""benchmarks/bench_allocator.py: its procedure and the side-by-side table, without Go."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_allocator.py"


@pytest.fixture(scope="module")
def ba() -> ModuleType:
    if str(BENCH.parent) not in sys.path:  # its sibling hetero_fleet.py, as when run
        sys.path.append(str(BENCH.parent))
    spec = importlib.util.spec_from_file_location("bench_allocator_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("nodes", "expected"), [(1, 1), (2, 2), (99, 99), (100, 100),
                                                  (500, 230), (1000, 420), (5000, 500),
                                                  (10000, 500)])
def test_feasible_nodes_follow_kube_scheduler(ba: ModuleType, nodes: int, expected: int) -> None:
    assert ba.feasible_nodes_to_find(nodes) == expected


def test_pod_search_stops_at_enough_feasible_nodes_and_continues_round_robin(
        ba: ModuleType) -> None:
    cluster = ba.node_cluster(150, devices=2)
    first = ba.schedule_pod(cluster, ba.CLAIM_SHAPES["one-device"]("a"), cold=True, record=True)
    assert len(first.calls) == 100  # all feasible: 100 of 150 nodes
    assert cluster.position == 100
    second = ba.schedule_pod(cluster, ba.CLAIM_SHAPES["one-device"]("b"), cold=False,
                             record=True)
    assert [n for n, _ in second.calls][:3] == ["node-0100", "node-0101", "node-0102"]
    assert second.calls[50][0] == "node-0000"  # wrapped around


def test_cold_and_warm_choose_the_same_devices(ba: ModuleType) -> None:
    cluster = ba.node_cluster(20, devices=2)
    ba.fill_state(cluster, 2, 0.5)
    for shape, make in ba.CLAIM_SHAPES.items():
        cluster.position = 0
        cold = ba.schedule_pod(cluster, make(shape), cold=True, record=True)
        cluster.position = 0
        warm = ba.schedule_pod(cluster, make(shape), cold=False, record=True)
        assert ba.check_digest(cold.calls) == ba.check_digest(warm.calls), shape


def test_backtracking_shape_needs_upstreams_backtracking(ba: ModuleType) -> None:
    cluster = ba.Cluster(ba.backtracking_slices(), ba.CLASSES[:1],
                         [ba.NodeView("scheduler-perf-dra-0", ba.DRA_LABEL),
                          ba.NodeView("scheduler-perf-0")])
    result = ba.schedule_pod(cluster, ba.make_claim("c", [ba.request("req-0", ba.CLASS, 7)]),
                             cold=True, record=True)
    (node, out), (other, miss) = result.calls
    assert node == "scheduler-perf-dra-0" and other == "scheduler-perf-0"
    devices = [r.device for r in out.claims[0].status.allocation.devices.results]
    assert devices == [f"device-{k}" for k in range(2, 9)]  # device-1's 20Gi cannot fit
    assert out.steps > 7 and miss.kind == "unschedulable"


def test_partitionable_shape_takes_two_single_counter_devices_of_one_pool(
        ba: ModuleType) -> None:
    cluster = ba.partitionable_cluster(3, 2)
    out = ba.schedule_pod(cluster, ba.partitionable_claim("c"), cold=True).first_fit
    assert out is not None
    results = out.claims[0].status.allocation.devices.results
    assert [(r.pool, r.device) for r in results] == [
        ("resourceslice-0", "device-1-counter-3"), ("resourceslice-0", "device-1-counter-4")]


def test_quick_run_prints_figures_and_checks(ba: ModuleType,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert ba.main(["--quick", "--only", "backtracking"]) == 0
    run = ba.parse_run(capsys.readouterr().out)
    assert set(run.figures) == {
        f"backtracking, {what} {variant}" for variant in ("cold", "warm")
        for what in ("first Allocate with a new allocator", "pod (2 nodes)")}
    assert all(unit == "us" and value > 0 for value, unit in run.figures.values())
    assert list(run.checks) == ["backtracking"]


GO_OUTPUT = """\
figure                                                         measured   (Go go1.26.6)
check backtracking 0123456789abcdef
backtracking, pod (2 nodes)                                       500.0 us
fill 5000 pods on 500 nodes, second half                          400.0 pods/s
"""
PY_OUTPUT = """\
check backtracking 0123456789abcdef
backtracking, pod (2 nodes) cold                                  1000.0 us
backtracking, pod (2 nodes) warm                                   250.0 us
fill 5000 pods on 500 nodes, second half cold                     100.0 pods/s
fill 5000 pods on 500 nodes, second half warm                     800.0 pods/s
"""


def test_side_by_side_pairs_figures_and_reports_time_ratios(ba: ModuleType) -> None:
    go = [ba.parse_run(GO_OUTPUT), ba.parse_run(GO_OUTPUT.replace("500.0 us", "700.0 us"))]
    py = [ba.parse_run(PY_OUTPUT), ba.parse_run(PY_OUTPUT)]
    rows = ba.side_by_side(go, [py[0], py[1], py[0]][:2])
    assert "| backtracking, pod (2 nodes) | us | 600.0 | 1000.0 | 250.0 | 1.67 | 0.42 |" in rows
    # rates: the time ratio is Go's rate over dralab's
    assert ("| fill 5000 pods on 500 nodes, second half | pods/s | 400.0 | 100.0 | 800.0 "
            "| 4.00 | 0.50 |") in rows
    assert "\ncheck backtracking: same devices and search steps" in rows
    other = ba.parse_run(GO_OUTPUT.replace("0123456789abcdef", "fedcba9876543210"))
    assert "\ncheck backtracking: DIFFERENT outcomes" in ba.side_by_side([other], py)


# ---- the heterogeneous fleet (issue 34) -------------------------------------------------


@pytest.fixture(scope="module")
def hetero_doc(ba: ModuleType) -> dict[str, object]:
    doc: dict[str, object] = ba.hetero_fleet.generate("mixed", 60, 12)
    return doc


def test_hetero_input_is_seeded_and_no_two_nodes_alike(ba: ModuleType,
                                                       hetero_doc: dict[str, object]) -> None:
    assert ba.hetero_fleet.generate("mixed", 60, 12) == hetero_doc
    inp = ba.hetero_fleet.read(hetero_doc)
    devices: dict[str, list[object]] = {}
    for s in inp.slices:
        devices.setdefault(s.spec.pool.name, []).extend(
            {k: v for k, v in d.attributes.items() if k != "uuid"} for d in s.spec.devices)
    assert len(devices) == 60
    assert {len(v) for v in devices.values()} == {4, 8}
    uuids = [d.attributes["uuid"].string for s in inp.slices for d in s.spec.devices]
    assert len(set(uuids)) == len(uuids)
    assert any(len(s.spec.devices) < 4 for s in inp.slices)  # pools of two slices
    assert [p.shape for p in inp.pods[:10]] == list(ba.hetero_fleet.SHAPES)
    assert len(inp.pods[-1].claims) == 1 and len(inp.pods[9].claims) == 2  # two claims
    churn = [i for i, p in enumerate(inp.pods) if p.add]
    assert churn == [5, 10]
    # a rollout in progress: some pools keep the old generation's slices
    removed = {n for p in inp.pods for n in p.remove}
    added_pools = {s.spec.pool.name for p in inp.pods for s in p.add}
    kept = [s for s in inp.slices if s.spec.pool.name in added_pools and s.name not in removed]
    assert kept and all(s.spec.pool.generation == 1 for s in kept)


def test_hetero_dense_fleet_has_8_or_16_devices(ba: ModuleType) -> None:
    inp = ba.hetero_fleet.read(ba.hetero_fleet.generate("dense", 40, 1))
    counts: dict[str, int] = {}
    for s in inp.slices:
        counts[s.spec.pool.name] = counts.get(s.spec.pool.name, 0) + len(s.spec.devices)
    assert set(counts.values()) == {8, 16}


def test_hetero_run_gives_the_same_outcomes_with_and_without_twins(
        ba: ModuleType, hetero_doc: dict[str, object]) -> None:
    runs = ba.run_hetero(ba.hetero_fleet.read(hetero_doc))
    assert runs[True].text == runs[False].text
    assert set(runs[True].text) == set(ba.hetero_fleet.SHAPES)
    allocated = "".join("".join(t) for t in runs[True].text.values()).count("|allocated|")
    assert allocated > 100  # most searches find devices


def test_hetero_reads_the_json_it_writes(ba: ModuleType, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert ba.main(["--quick", "--write-hetero", str(tmp_path)]) == 0
    capsys.readouterr()
    path = tmp_path / "hetero.json"
    assert ba.main(["--quick", "--only", "hetero", "--hetero-input", str(path)]) == 0
    from_file = ba.parse_run(capsys.readouterr().out)
    assert ba.main(["--quick", "--only", "hetero"]) == 0
    generated = ba.parse_run(capsys.readouterr().out)
    assert from_file.checks == generated.checks
    label = "hetero mixed 100 nodes"
    assert len(from_file.checks) == 11 and f"{label} all pods" in from_file.checks
    assert f"{label} 1-gpu p50 cold" in from_file.figures
    assert f"{label} two claims p90, no twins cold" in from_file.figures


def test_hetero_bad_input_is_one_line_exit_2(ba: ModuleType, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"format": "something else"}')
    with pytest.raises(SystemExit) as exit_info:
        ba.main(["--only", "hetero", "--hetero-input", str(path)])
    assert exit_info.value.code == 2
    assert "not a dralab-allocator-bench-v1 document" in capsys.readouterr().err


def test_percentile_is_nearest_rank(ba: ModuleType) -> None:
    values = [float(v) for v in range(20, 0, -1)]
    assert ba.percentile(values, 50) == 10.0
    assert ba.percentile(values, 90) == 18.0
    assert ba.percentile([3.0], 90) == 3.0


def test_side_by_side_pairs_no_twins_with_go(ba: ModuleType) -> None:
    go = ba.parse_run("hetero mixed 500 nodes 1-gpu p50     100.0 us\n")
    py = ba.parse_run("hetero mixed 500 nodes 1-gpu p50 cold     150.0 us\n"
                      "hetero mixed 500 nodes 1-gpu p50, no twins cold     120.0 us\n")
    rows = ba.side_by_side([go], [py])
    assert "| hetero mixed 500 nodes 1-gpu p50 | us | 100.0 | 150.0 | - | 1.50 | - |" in rows
    assert ("| hetero mixed 500 nodes 1-gpu p50, no twins | us | 100.0 | 120.0 | - | 1.20 "
            "| - |") in rows
