"""Issue 16's reproducers for simulate, replay, sweep and fleet: exit 0-3, fast, one line.

Each case runs the real CLI in-process (CliRunner) under a CPU-time budget: a
hang fails the case instead of the suite, and a loaded machine (which stretches
wall time, not CPU time) fails nothing by itself (``tests/cputime.py``).
Asserted for every case: the documented exit status, the field, file, line or
limit named in the one-line error, no traceback, nothing written to ``--out``
when the input is refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from cputime import cpu_budget
from dralab.cli.main import cli
from dralab.replay.trace import alibaba

# CPU seconds a case may use; the cases use well under one (a refused input, a few
# milliseconds; a two-hour simulation of two nodes, about a second).
CASE_CPU_SECONDS = 20.0
# What a refusal at load time may use: it must not start the simulation or the replay.
REFUSAL_CPU_SECONDS = 5.0

NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model\n"
POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
NODES = NODE_HEADER + "n0,64000,262144,2,V100M16\n"
PODS = POD_HEADER + "p0,1000,1024,1,500\n"

SCENARIO = """\
apiVersion: dralab.dev/v1alpha1
kind: Scenario
metadata: {name: small}
spec:
  seed: 5
  duration: 2h
  sampleInterval: 10m
  fleet:
    spec:
      pools:
      - {name: l4, count: 2, cpu: "48", memory: 192Gi,
         gpu: {model: l4, count: 4, sharing: {consumableShares: memory}}}
  workload:
  - name: infer
    arrivalRate: 20/h
    duration: {distribution: exponential, mean: 30m}
    cpu: "2"
    memory: 4Gi
    devices: {type: share, memory: 4Gi}
"""
FLEET = SCENARIO[SCENARIO.index("  fleet:"):SCENARIO.index("  workload:")]


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str
    cpu_seconds: float  # this process's and its reaped children's, not wall time


def run(*args: str) -> Outcome:
    with cpu_budget(CASE_CPU_SECONDS) as spent:
        result = CliRunner().invoke(cli, list(args), prog_name="dralab")
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return Outcome(result.exit_code, result.stdout, result.stderr, spent.cpu)


def refused(outcome: Outcome, *fragments: str) -> None:
    """Exit 2 with exactly one error line naming every fragment."""
    assert outcome.code == 2, outcome.stderr or outcome.stdout
    assert "Traceback" not in outcome.stderr
    lines = outcome.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), outcome.stderr
    assert len(lines[0]) < 600 and lines[0].isprintable(), lines[0][:300]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


# --- trace CSVs (replay and sweep) ---------------------------------------------------

def trace_dir(tmp: Path, nodes: str | bytes = NODES, pods: str | bytes = PODS) -> Path:
    out = tmp / "trace"
    out.mkdir(exist_ok=True)
    for name, text in ((alibaba.CLUSTER_FILE, nodes),
                       (alibaba.workload_file("default"), pods)):
        data = text.encode() if isinstance(text, str) else text
        (out / name).write_bytes(data)
    return out


def replay(trace: Path, *extra: str) -> Outcome:
    return run("replay", "alibaba-2023", "--trace-dir", str(trace), "--workers", "1",
               "--seeds", "1", "--policy", "FGD", *extra)


def sweep(trace: Path, *extra: str) -> Outcome:
    return run("sweep", "alibaba-2023", "--trace-dir", str(trace), "--workers", "1",
               "--seeds", "1", "--policies", "FGD", *extra)


NODES_FILE = "openb_node_list_gpu_node.csv:2"
PODS_FILE = "openb_pod_list_default.csv:2"

TRACE_CASES: list[tuple[str, str | bytes, str | bytes, tuple[str, ...]]] = [
    # (name, node list, pod list, fragments of the error)
    ("no-gpu-pod", NODES, POD_HEADER + "p0,1000,1024,0,0\n",
     ("workload default: no pod requests a GPU",)),
    ("no-gpu-node", NODE_HEADER + "n0,64000,262144,0,\n", PODS,
     ("workload default: the nodes have no GPU",)),
    ("no-pods", NODES, POD_HEADER, ("no pod requests a GPU",)),
    ("more-than-8-gpus", NODE_HEADER + "n0,64000,262144,9,V100M16\n", PODS,
     (NODES_FILE, "column gpu (4)", "more than 8")),
    ("above-int64", NODE_HEADER + "n0,99999999999999999999999,262144,2,V100M16\n", PODS,
     (NODES_FILE, "column cpu_milli (2)", "more than 1,000,000,000")),
    ("not-utf8", NODE_HEADER.encode() + b"n0,64\xff00,262144,2,V100M16\n", PODS,
     (NODES_FILE, "byte 6", "not UTF-8 (0xff)")),
    ("field-over-128k", NODE_HEADER + "n0," + "1" * 140_000 + ",262144,2,V\n", PODS,
     (NODES_FILE, "malformed CSV", "field larger than field limit")),
    ("field-over-limit", NODE_HEADER + "n" * 2000 + ",64000,262144,2,V\n", PODS,
     (NODES_FILE, "column sn (1)", "MAX_TRACE_FIELD_CHARS")),
    ("too-few-fields", NODE_HEADER + "n0,64000,262144,2\n", PODS,
     (NODES_FILE, "4 fields, but the header has 5")),
    ("too-many-fields", NODES, POD_HEADER + "p0,1000,1024,1,500,x\n",
     (PODS_FILE, "6 fields, but the header has 5")),
    ("negative", NODES, POD_HEADER + "p0,-1000,1024,1,500\n",
     (PODS_FILE, "column cpu_milli (2)", "negative value '-1000'")),
    ("nan", NODES, POD_HEADER + "p0,nan,1024,1,500\n",
     (PODS_FILE, "column cpu_milli (2)", "not an integer: 'nan'")),
    ("underscore-digits", NODES, POD_HEADER + "p0,1_000,1024,1,500\n",
     (PODS_FILE, "not an integer: '1_000'")),
    ("multi-gpu-share", NODES, POD_HEADER + "p0,1000,1024,2,500\n",
     (PODS_FILE, "column gpu_milli (5)", "unsupported GPU request")),
    ("missing-column", "sn,cpu_milli\nn0,1\n", PODS, ("missing column(s)",)),
    # 1 milli-GPU pods on 1,600 GPUs: about 2 million arrivals to reach 130 %.
    ("too-many-arrivals", NODE_HEADER + "".join(f"n{i},64000,262144,8,V\n" for i in range(200)),
     POD_HEADER + "p0,1000,1024,1,1\n", ("MAX_REPLAY_ARRIVALS", "2,080,000 arrivals")),
    # 100,000 one-GPU nodes: 130,000 arrivals, each looking at every node.
    ("too-many-node-arrivals",
     NODE_HEADER + "".join(f"n{i},64000,262144,1,V\n" for i in range(100_000)),
     POD_HEADER + "p0,1000,1024,1,1000\n", ("MAX_REPLAY_NODE_ARRIVALS", "100,000 nodes")),
]


@pytest.mark.parametrize(("name", "nodes", "pods", "fragments"), TRACE_CASES,
                         ids=[c[0] for c in TRACE_CASES])
def test_hostile_trace_files_are_refused_before_any_run(
        name: str, nodes: str | bytes, pods: str | bytes, fragments: tuple[str, ...],
        tmp_path: Path) -> None:
    trace = trace_dir(tmp_path, nodes, pods)
    out = tmp_path / "report"
    outcome = replay(trace, "--out", str(out))
    refused(outcome, *fragments)
    assert not out.exists()
    # sweep reads the same files through the same checks
    refused(sweep(trace), *fragments)


def test_trace_files_that_are_no_regular_files(tmp_path: Path) -> None:
    trace = trace_dir(tmp_path)
    (trace / alibaba.CLUSTER_FILE).unlink()
    (trace / alibaba.CLUSTER_FILE).mkdir()
    refused(replay(trace), "openb_node_list_gpu_node.csv: not a regular file")
    (trace / alibaba.CLUSTER_FILE).rmdir()
    os.mkfifo(trace / alibaba.CLUSTER_FILE)  # nobody writes: reading would block forever
    refused(replay(trace), "openb_node_list_gpu_node.csv: not a regular file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_trace_file(tmp_path: Path) -> None:
    trace = trace_dir(tmp_path)
    (trace / alibaba.workload_file("default")).chmod(0)
    refused(replay(trace), "openb_pod_list_default.csv: cannot read: Permission denied")


@pytest.mark.parametrize(("limit", "value", "fragment"), [
    ("MAX_TRACE_ROWS", 3, "openb_pod_list_default.csv:5: more than 3 rows (MAX_TRACE_ROWS)"),
    ("MAX_TRACE_BYTES", 60, "more than 60 (MAX_TRACE_BYTES)"),
])
def test_trace_size_limits(limit: str, value: int, fragment: str, tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(alibaba, limit, value)
    pods = POD_HEADER + "".join(f"p{i},1000,1024,1,500\n" for i in range(4))
    refused(replay(trace_dir(tmp_path, pods=pods)), fragment)


def test_a_trace_that_can_be_replayed_still_runs(tmp_path: Path) -> None:
    outcome = replay(trace_dir(tmp_path), "-o", "json")
    assert outcome.code == 0, outcome.stderr
    assert '"policy": "FGD"' in outcome.stdout


# --- scenarios (simulate and sweep scenarios) ------------------------------------------

def scenario_file(tmp: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp / name
    path.write_text(text)
    return path


def simulate(path: Path, *extra: str) -> Outcome:
    return run("simulate", "--scenario", str(path), "--quiet", *extra)


def edit(old: str, new: str) -> Callable[[str], str]:
    def apply(text: str) -> str:
        assert old in text
        return text.replace(old, new)
    return apply


SCENARIO_CASES: list[tuple[str, Callable[[str], str], tuple[str, ...]]] = [
    ("duration-nan", edit("duration: 2h", "duration: .nan"), ("spec.duration", "nan")),
    ("duration-inf", edit("duration: 2h", "duration: .inf"),
     ("spec.duration", "must be finite")),
    ("rate-inf", edit("arrivalRate: 20/h", "arrivalRate: inf/h"),
     ("spec.workload[0].arrivalRate", "'inf/h'")),
    ("rate-nan", edit("arrivalRate: 20/h", "arrivalRate: nan/h"),
     ("spec.workload[0].arrivalRate", "'nan/h'")),
    ("rate-overflow", edit("arrivalRate: 20/h", "arrivalRate: 1e999/s"),
     ("spec.workload[0].arrivalRate", "must be finite")),
    ("rate-1e9", edit("arrivalRate: 20/h", "arrivalRate: 1e9/s"),
     ("spec.workload[0].arrivalRate", "7,200,000,000,000 pods expected",
      "MAX_SCENARIO_PODS")),
    ("sample-interval-1ns", edit("sampleInterval: 10m", "sampleInterval: 0.000000001"),
     ("spec.sampleInterval", "MAX_SAMPLES")),
    ("mean-nan", edit("mean: 30m", "mean: .nan"),
     ("spec.workload[0].duration.mean", "nan")),
    ("sigma-nan", edit("distribution: exponential, mean: 30m",
                       "distribution: lognormal, mean: 30m, sigma: .nan"),
     ("spec.workload[0].duration.sigma", "MAX_SIGMA")),
    ("uniform-inf", edit("distribution: exponential, mean: 30m",
                         "distribution: uniform, min: 1m, max: .inf"),
     ("spec.workload[0].duration.max", "must be finite")),
    ("event-at-nan", edit("  workload:", "  events: [{at: .nan, node: l4-01, action: remove}]\n"
                                        "  workload:"),
     ("spec.events[0].at", "nan")),
    ("event-bad-taint", edit("  workload:",
                             "  events: [{at: 1h, node: l4-01, action: taint,\n"
                             "            taint: {key: 'a b', effect: NoSchedule}}]\n"
                             "  workload:"),
     ("spec.events[0].taint.key", "invalid on a Node")),
    ("pools-list-of-lists", edit(FLEET, "  fleet: {spec: {pools: [[1]]}}\n"),
     ("spec.fleet.spec.pools[0]", "Expected object, got array")),
    ("pool-count-million", edit("count: 2,", "count: 1000000,"),
     ("spec.fleet.spec.pools[0].count", "MAX_FLEET_NODES")),
    ("pods-per-job-1e9", edit("    cpu: \"2\"", "    podsPerJob: 1000000000\n    cpu: \"2\""),
     ("spec.workload[0].podsPerJob", "MAX_SCENARIO_PODS")),
    ("kind-name-not-a-label", edit("name: infer", "name: Infer_1"),
     ("spec.workload[0].name", "DNS label")),
    ("priority-too-high", edit("    cpu: \"2\"", "    priority: 2000000000\n    cpu: \"2\""),
     ("spec.workload[0].priority", "1000000000")),
    ("huge-exponent-cpu", edit("cpu: \"2\"", "cpu: \"1e99999999\""),
     ("spec.workload[0].cpu", "quantity too large")),
    ("negative-cpu", edit("cpu: \"2\"", "cpu: \"-2\""),
     ("spec.workload[0].cpu", "must be greater than or equal to 0")),
    ("bad-toleration", edit("    cpu: \"2\"", "    tolerations: [{key: k, operator: Maybe}]\n"
                                            "    cpu: \"2\""),
     ("spec.workload[0].tolerations[0].operator", "Unsupported value")),
    ("bad-device-class", edit("devices: {type: share, memory: 4Gi}",
                              "devices: {type: gpu, class: Not_A_Class}"),
     ("spec.workload[0].devices", "deviceClassName")),
    ("count-over-32", edit("devices: {type: share, memory: 4Gi}",
                           "devices: {type: gpu, count: 1000000000000}"),
     ("spec.workload[0].devices.count", "AllocationResultsMaxSize")),
    ("long-product-name", edit("devices: {type: share, memory: 4Gi}",
                               "devices: {type: gpu, productName: " + "x" * 65 + "}"),
     ("spec.workload[0].devices.productName", "64 characters")),
    ("share-without-memory", edit("memory: 4Gi}", "memory: \"0\"}"),
     ("spec.workload[0].devices.memory", "positive")),
    ("scheduler-config", edit("  workload:",
                              "  scheduler: {apiVersion: kubescheduler.config.k8s.io/v1,"
                              " kind: KubeSchedulerConfiguration, nope: 1}\n  workload:"),
     ("spec.scheduler", "nope: unknown field")),
    ("metadata-name", edit("metadata: {name: small}", "metadata: {name: [1]}"),
     ("metadata.name",)),
]


@pytest.mark.parametrize(("name", "change", "fragments"), SCENARIO_CASES,
                         ids=[c[0] for c in SCENARIO_CASES])
def test_hostile_scenarios_are_refused_at_load(
        name: str, change: Callable[[str], str], fragments: tuple[str, ...],
        tmp_path: Path) -> None:
    path = scenario_file(tmp_path, change(SCENARIO))
    out = tmp_path / "report"
    outcome = simulate(path, "--out", str(out))
    refused(outcome, f"{path}: ", *fragments)
    assert outcome.cpu_seconds < REFUSAL_CPU_SECONDS, outcome.cpu_seconds
    assert not out.exists()
    refused(run("sweep", "scenarios", "-f", str(path), "--workers", "1", "--seeds", "1"),
            *fragments)


def test_product_name_is_quoted_in_cel_not_pasted(tmp_path: Path) -> None:
    # An L4-only job on a fleet of A100s: the quote must not end the CEL string.
    text = (SCENARIO
            .replace("{name: l4, count: 2, cpu: \"48\", memory: 192Gi,\n"
                     "         gpu: {model: l4, count: 4, sharing: {consumableShares: memory}}}",
                     "{name: a100, count: 1, cpu: \"64\", memory: 512Gi,\n"
                     "         gpu: {model: a100-40gb, count: 8}}")
            .replace("devices: {type: share, memory: 4Gi}",
                     "devices: {type: gpu, productName: 'NVIDIA L4\" || \"a\" == \"a'}"))
    out = tmp_path / "report"
    outcome = simulate(scenario_file(tmp_path, text), "--compare", "dra", "--out", str(out))
    assert outcome.code == 0, outcome.stderr
    metrics = (out / "metrics.json").read_text()
    assert '"pods_started": 0' in metrics
    assert "scheduler error" not in metrics          # a valid selector that matches nothing


TEMPLATE = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: "1", memory: 1Gi}}}]
"""


def template_scenario(template: str) -> str:
    return SCENARIO.replace("    devices: {type: share, memory: 4Gi}\n",
                            f"    template: {template}\n")


@pytest.mark.parametrize("where", ["absolute", "dotdot", "directory", "symlink"])
def test_templates_stay_in_the_scenario_directory(where: str, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pod.yaml").write_text(TEMPLATE)
    home = tmp_path / "scenarios"
    home.mkdir()
    (home / "link.yaml").symlink_to(outside / "pod.yaml")
    template = {"absolute": str(outside / "pod.yaml"), "dotdot": "../outside/pod.yaml",
                "directory": str(outside), "symlink": "link.yaml"}[where]
    path = scenario_file(home, template_scenario(template))
    refused(simulate(path, "--out", str(tmp_path / "r")),
            "spec.workload[0].template", "outside the scenario's directory",
            "--allow-outside-files")
    allowed = simulate(path, "--out", str(tmp_path / "r"), "--allow-outside-files")
    assert allowed.code == 0, allowed.stderr


def test_fleet_file_stays_in_the_scenario_directory(tmp_path: Path) -> None:
    text = SCENARIO.replace(FLEET, "  fleet: {file: ../fleet.yaml}\n")
    home = tmp_path / "s"
    home.mkdir()
    refused(simulate(scenario_file(home, text)), "spec.fleet.file",
            "outside the scenario's directory")


def test_a_template_without_a_pod_template_says_so(tmp_path: Path) -> None:
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "class.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {}\n")
    path = scenario_file(tmp_path, template_scenario("manifests"))
    refused(simulate(path), "spec.workload[0].template", "no pod template")


# --- --out, --dask, --config, dralab fleet --------------------------------------------

@pytest.mark.parametrize("verb", ["simulate", "replay", "sweep", "sweep-scenarios"])
def test_out_that_cannot_be_a_directory_is_refused_before_running(
        verb: str, tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("keep me")
    scenario = scenario_file(tmp_path, SCENARIO)
    trace = trace_dir(tmp_path)
    for out, fragment in ((a_file, "is not a directory"),
                          (a_file / "sub", f"is under {a_file}, a file")):
        args = {"simulate": ("simulate", "--scenario", str(scenario), "--quiet"),
                "replay": ("replay", "alibaba-2023", "--trace-dir", str(trace),
                           "--workers", "1", "--seeds", "1", "--policy", "FGD"),
                "sweep": ("sweep", "alibaba-2023", "--trace-dir", str(trace),
                          "--workers", "1", "--seeds", "1", "--policies", "FGD"),
                "sweep-scenarios": ("sweep", "scenarios", "-f", str(scenario),
                                    "--workers", "1", "--seeds", "1")}[verb]
        outcome = run(*args, "--out", str(out))
        refused(outcome, f"--out {out}: {fragment}")
        assert outcome.cpu_seconds < REFUSAL_CPU_SECONDS and outcome.stdout == ""  # nothing ran
    assert a_file.read_text() == "keep me"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_out_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    refused(simulate(scenario_file(tmp_path, SCENARIO), "--out", str(locked / "r")),
            "cannot write in", "Permission denied")


@pytest.mark.parametrize("address", ["not a url", "tcp://host:port", "tcp://h:123456",
                                     "tcp://h:1 ; rm -rf /"])
def test_dask_address_is_checked(address: str, tmp_path: Path) -> None:
    refused(sweep(trace_dir(tmp_path), "--dask", address), "--dask", "not a scheduler address")
    refused(run("sweep", "scenarios", "-f", str(scenario_file(tmp_path, SCENARIO)),
                "--dask", address), "not a scheduler address")


def test_scheduler_config_errors_name_the_file(tmp_path: Path) -> None:
    config = tmp_path / "sched.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                      "kind: KubeSchedulerConfiguration\n"
                      "profiles:\n- schedulerName: default-scheduler\n"
                      "  plugins: {filter: {enabled: [{name: NoSuchPlugin}]}}\n")
    cluster = Path(__file__).parents[2] / "examples" / "scheduling" / "cluster.yaml"
    refused(run("schedule", "-f", str(cluster), "--config", str(config)),
            f"{config}: profiles[0].plugins.filter.enabled[0].name", "NoSuchPlugin")
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                      "kind: KubeSchedulerConfiguration\nbogus: 1\n")
    refused(run("schedule", "-f", str(cluster), "--config", str(config)),
            f"{config}: bogus: unknown field")


@pytest.mark.parametrize(("pools", "fragment"), [
    ("[{name: a, count: 1000000, cpu: '8', memory: 8Gi}]",
     "spec.pools[0].count: 1,000,000 nodes, more than 5,000 (MAX_FLEET_NODES)"),
    ("[{name: a, count: 3000, cpu: '8', memory: 8Gi}, {name: b, count: 3000, cpu: '8', "
     "memory: 8Gi}]", "spec.pools: 6,000 nodes in the first 2 pools"),
])
def test_fleet_node_count_is_capped(pools: str, fragment: str, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(f"apiVersion: dralab.dev/v1alpha1\nkind: Fleet\nspec:\n  pools: {pools}\n")
    refused(run("fleet", "-f", str(fleet)), f"{fleet}: ", fragment)
