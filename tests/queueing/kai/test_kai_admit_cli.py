"""``dralab admit --policy kai``: one KAI session over KAI's docs examples, reported in
KAI's terms (bound / pipelined / evicted and for whom / pending with KAI's message, and
the queues' fair shares); bad input in one line per problem, exit 2; Kueue's admit
unchanged (its own tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from dralab.cli.main import cli

try:
    from dralab.queueing.kai.session import run_session  # noqa: F401 -- built yet?
except ImportError:  # pragma: no cover -- kai-actions' module not there yet
    pytest.skip("not built: run_session", allow_module_level=True)

DATA = Path(__file__).parent.parent.parent / "data" / "kai"

# dralab's: the docs' priority example on one 1-GPU node, train-pod running there
_TRAIN_RUNNING = """
apiVersion: v1
kind: Node
metadata: {name: gpu-node-1, labels: {nvidia.com/gpu.memory: "81559"}}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "1"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "1"}
---
apiVersion: v1
kind: Pod
metadata:
  name: train-pod
  creationTimestamp: "2026-01-01T00:00:00Z"
  labels: {kai.scheduler/queue: QUEUE, priorityClassName: train}
spec:
  schedulerName: kai-scheduler
  nodeName: gpu-node-1
  containers:
  - {name: main, image: ubuntu, resources: {limits: {nvidia.com/gpu: "1"}}}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata:
  name: build-pod
  creationTimestamp: "2026-01-01T00:05:00Z"
  labels: {kai.scheduler/queue: QUEUE, priorityClassName: build}
spec:
  schedulerName: kai-scheduler
  containers:
  - {name: main, image: ubuntu, resources: {limits: {nvidia.com/gpu: "1"}}}
"""


def _admit(tmp_path: Path, *names: str, text: str = "", args: tuple[str, ...] = ()
           ) -> Result:
    files = [str(DATA / n) for n in names]
    if text:
        (tmp_path / "in.yaml").write_text(text)
        files.append(str(tmp_path / "in.yaml"))
    argv = ["admit", "--policy", "kai", *[a for f in files for a in ("-f", f)], *args]
    return CliRunner().invoke(cli, argv)


def _pods(result: Result) -> dict[str, dict[str, Any]]:
    report = yaml.safe_load(result.stdout)
    assert (report["apiVersion"], report["kind"]) == ("dralab.dev/v1alpha1", "KaiSessionReport")
    return {p["pod"]: p for p in report["pods"]}


def test_build_preempts_train_in_a_limited_queue(tmp_path: Path) -> None:
    # docs/priority/README.md: build (100) preempts the running train pod (50) when the
    # queue's limit of 1 GPU leaves room for one of them
    result = _admit(tmp_path, "priority-example-limited-queue.yaml",
                    text=_TRAIN_RUNNING.replace("QUEUE", "test"))
    assert result.exit_code == 0, result.output
    pods = _pods(result)
    train, build = pods["default/train-pod"], pods["default/build-pod"]
    assert (train["result"], train["action"], train["node"]) == ("evicted", "preempt",
                                                                 "gpu-node-1")
    assert train["for"] == build["podGroup"]
    assert "was preempted by higher priority workload" in train["reason"]
    assert (build["result"], build["node"]) == ("pipelined", "gpu-node-1")
    queues = {q["queue"]: q for q in yaml.safe_load(result.stdout)["queues"]}
    assert queues["test"]["gpu"] == {"deserved": 1, "fairShare": 1, "allocated": 1, "limit": 1}
    assert queues["test"]["parent"] == "default"


def test_non_preemptible_over_quota_waits_with_kais_message(tmp_path: Path) -> None:
    # the quickstart queues have no GPU quota: a build (non-preemptible) pod may not go
    # over it, and cannot preempt
    result = _admit(tmp_path, "quickstart-default-queues.yaml",
                    text=_TRAIN_RUNNING.replace("QUEUE", "default-queue"))
    assert result.exit_code == 1, result.output
    build = _pods(result)["default/build-pod"]
    assert build["result"] == "pending"
    assert build["message"].startswith("NonPreemptibleOverQuota.")


def test_text_tables(tmp_path: Path) -> None:
    result = _admit(tmp_path, "quickstart-default-queues.yaml", "nodes-two-gpu.yaml",
                    "batch-batch-job.yaml", "quickstart-pods-cpu-only-pod.yaml",
                    args=("-o", "text"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == ("KAI Scheduler session, shard default: allocate, consolidation, "
                        "reclaim, preempt, stalegangeviction")
    assert lines[2].split() == ["POD", "POD", "GROUP", "QUEUE", "RESULT", "NODE", "ACTION",
                                "DETAIL"]
    bound = [line.split() for line in lines[3:6]]
    assert sorted(row[0] for row in bound) == ["default/batch-job-lb9ht",
                                              "default/batch-job-v6k5n",
                                              "default/cpu-only-pod"]
    assert all(row[3] == "bound" and row[5] == "allocate" for row in bound)
    assert lines[7].startswith("QUEUE") and "GPU (devices) DESERVED" in lines[7]
    assert lines[9].split()[:3] == ["default-queue", "default-parent-queue", "0"]


def test_same_input_same_output(tmp_path: Path) -> None:
    names = ("quickstart-default-queues.yaml", "nodes-two-gpu.yaml", "batch-batch-job.yaml")
    assert _admit(tmp_path, *names).stdout == _admit(tmp_path, *names).stdout


def test_bad_input_one_line_each_exit_2(tmp_path: Path) -> None:
    result = _admit(tmp_path, "quickstart-default-queues.yaml", "gpu-sharing-gpu-sharing.yaml",
                    text="apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\n"
                         "spec: {resourceQuota: {}}\n")
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and all(line.startswith("error: ") for line in lines)
    assert "gpu-sharing.yaml Pod gpu-sharing: metadata.annotations.gpu-fraction: attempting " \
           "to create a pod default/gpu-sharing with gpu sharing request" in result.stderr
    assert 'in.yaml Queue q: strict decoding error: unknown field "spec.resourceQuota"' \
        in result.stderr


@pytest.mark.parametrize("args", [("--cycles", "2"), ("-o", "text", "--policy", "kueue")])
def test_options_of_the_other_policy_are_refused(tmp_path: Path, args: tuple[str, ...]) -> None:
    result = _admit(tmp_path, "quickstart-default-queues.yaml", args=args)
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_dra_gpus_bind_until_the_slice_is_used_up(tmp_path: Path) -> None:
    # KAI counts a node's GPU-driver slice devices as GPUs and a pod's GPU-class claims
    # as its GPUs: two of the three pods fit
    result = _admit(tmp_path, "quickstart-default-queues.yaml", "dra-two-gpu-node-job.yaml")
    assert result.exit_code == 1, result.output
    results = sorted(p["result"] for p in _pods(result).values())
    assert results == ["bound", "bound", "pending"]


_NAMED_QUEUES = """
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: research}
spec:
  displayName: Research Team
  resources:
    gpu: {quota: 0, limit: -1, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: ml}
spec:
  displayName: ML Team
  parentQueue: research
  resources:
    gpu: {quota: 0, limit: -1, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
---
"""


def test_a_queues_display_name_is_what_kais_messages_and_the_table_call_it(
        tmp_path: Path) -> None:
    # docs/queues/README.md's displayName; KAI's QueueInfo.Name is it when set
    text = _NAMED_QUEUES + _TRAIN_RUNNING.replace("QUEUE", "ml")
    result = _admit(tmp_path, text=text)
    assert result.exit_code == 1, result.output
    build = _pods(result)["default/build-pod"]
    assert "but ML Team quota is 0 GPUs" in build["message"]
    queues = {q["queue"]: q for q in yaml.safe_load(result.stdout)["queues"]}
    assert (queues["ml"]["displayName"], queues["research"]["displayName"]) == \
        ("ML Team", "Research Team")
    table = _admit(tmp_path, text=text, args=("-o", "text")).stdout.splitlines()
    assert [line.split()[:4] for line in table if line.startswith(("ml ", "research "))] == \
        [["ml", "(ML", "Team)", "research"], ["research", "(Research", "Team)", "0"]]


_STARTED_GROUP = """
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata:
  name: train
  namespace: default
  creationTimestamp: "2026-01-01T00:00:00Z"
  annotations: {kai.scheduler/last-start-timestamp: "2026-01-01T00:01:00Z"}
spec: {minMember: 1, queue: test, priorityClassName: train}
"""


def test_a_started_train_job_within_its_queues_min_runtime_is_not_preempted(
        tmp_path: Path) -> None:
    # the priority example again, with train-pod's PodGroup started at 00:01 and the
    # queue's preemptMinRuntime 10m: at 00:05 (the newest timestamp) it is protected
    text = _TRAIN_RUNNING.replace("QUEUE", "test").replace(
        "  labels: {kai.scheduler/queue: test, priorityClassName: train}",
        "  labels: {kai.scheduler/queue: test, priorityClassName: train}\n"
        "  annotations: {pod-group-name: train}", 1) + _STARTED_GROUP
    queues = (DATA / "priority-example-limited-queue.yaml").read_text().replace(
        "  parentQueue: default\n", "  parentQueue: default\n  preemptMinRuntime: 10m\n")
    (tmp_path / "queues.yaml").write_text(queues)
    argv = ["admit", "--policy", "kai", "-f", str(tmp_path / "queues.yaml")]
    (tmp_path / "in.yaml").write_text(text)
    result = CliRunner().invoke(cli, [*argv, "-f", str(tmp_path / "in.yaml")])
    assert result.exit_code == 1, result.output
    pods = _pods(result)
    assert pods["default/train-pod"]["result"] == "unchanged"
    assert pods["default/build-pod"]["result"] == "pending"
    # without the runtime the build pod preempts it, as in the docs' example
    (tmp_path / "queues.yaml").write_text(
        (DATA / "priority-example-limited-queue.yaml").read_text())
    result = CliRunner().invoke(cli, [*argv, "-f", str(tmp_path / "in.yaml")])
    assert _pods(result)["default/train-pod"]["result"] == "evicted"
