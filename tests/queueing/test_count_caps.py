"""Every count that creates pods is capped where it is expanded (issue 29).

The placement check (the Kueue Configuration's ``KueueDRADeviceFeasibility``) and
``dralab explain workload`` with Nodes in the input build a workload's pods to run them
through the scheduler. A valid int32 ``podSets[].count`` or a Job's parallelism of
10^6 is refused there with ``MAX_CREATED_PODS`` named, before a pod is built; at the
limit the set is placed until its first pod that does not fit. Without the gate (and
without Nodes for explain) nothing is expanded, and the same count is only quota.

Budgets are CPU seconds (``tests/cputime.py``); memory is measured in a forked child
under an address-space limit.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable

import pytest
import yaml
from click.testing import CliRunner

from cputime import cpu_budget, limit_child_cpu
from dralab.api.limits import MAX_CREATED_PODS
from dralab.cli.main import cli
from dralab.queueing.feasibility import check_pod_counts, pod_count_field, pod_set_pods
from dralab.queueing.reader import PodSetSource, WorkloadSource
from kueueinputs import one_queue

LIMIT_TEXT = "more than 100,000 (dralab's limit on pods created from workloads in one run)"

KUEUE = one_queue(quota="100000000000")
GATE = """---
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
featureGates: {KueueDRADeviceFeasibility: true}
"""
NODE = """---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '1000', memory: 100Gi, pods: '110'}}
"""


def pod_spec(indent: int, restart: str = "Never") -> str:
    """A one-CPU pod spec (``spec:`` and below) indented by ``indent`` spaces."""
    lines = ["spec:", f"  restartPolicy: {restart}", "  containers:", "  - name: c", "    image: x",
             '    resources: {requests: {cpu: "1"}}']
    return "".join(" " * indent + line + "\n" for line in lines)


def workload(count: int, name: str = "wl") -> str:
    return f"""---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {{name: {name}, namespace: default}}
spec:
  queueName: lq
  podSets:
  - name: main
    count: {count}
    template:
{pod_spec(6)}"""


def job(parallelism: int, completions: int | None = None, name: str = "big") -> str:
    done = f"\n  completions: {completions}" if completions is not None else ""
    return f"""---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: default
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec:
  parallelism: {parallelism}{done}
  suspend: true
  template:
{pod_spec(4)}"""


def carrier(kind: str, replicas: int) -> str:
    api = "apps/v1"
    return f"""---
apiVersion: {api}
kind: {kind}
metadata:
  name: app
  namespace: default
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: a}}}}
  template:
    metadata: {{labels: {{app: a}}}}
{pod_spec(4, "Always")}"""


def run(args: list[str], text: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [*args, "-f", "-"], input=text)
    return result.exit_code, result.stdout, result.stderr


ADMIT = ["admit"]
EXPLAIN = ["explain", "workload", "default/wl"]
EXPLAIN_JOB = ["explain", "workload", "default/big"]

# (id, verb, input, the error's start: object and field path, then the count).
REFUSED = [
    ("admit-workload-int32-count", ADMIT, KUEUE + workload(2147483647) + NODE + GATE,
     "Workload default/wl: spec.podSets[0].count: 2,147,483,647 pods to create"),
    ("admit-workload-just-past", ADMIT, KUEUE + workload(MAX_CREATED_PODS + 1) + GATE,
     "Workload default/wl: spec.podSets[0].count: 100,001 pods to create"),
    ("admit-job-parallelism", ADMIT, KUEUE + job(1_000_000) + NODE + GATE,
     "Job default/big: spec.parallelism: 1,000,000 pods to create"),
    ("admit-job-completions-fewer", ADMIT, KUEUE + job(1_000_000, 200_000) + GATE,
     "Job default/big: spec.completions: 200,000 pods to create"),
    ("admit-deployment-replicas", ADMIT, KUEUE + carrier("Deployment", 150_000) + GATE,
     "Deployment default/app: spec.replicas: 150,000 pods to create"),
    ("admit-statefulset-replicas", ADMIT, KUEUE + carrier("StatefulSet", 150_000) + GATE,
     "StatefulSet default/app: spec.replicas: 150,000 pods to create"),
    ("admit-two-workloads-together", ADMIT,
     KUEUE + workload(60_000, "a") + workload(60_000, "b") + GATE,
     "Workload default/b: spec.podSets[0].count: 60,000 pods to create (120,000 with the "
     "workloads before it)"),
    ("explain-workload-int32-count", EXPLAIN, KUEUE + workload(2147483647) + NODE,
     "Workload default/wl: spec.podSets[0].count: 2,147,483,647 pods to create"),
    ("explain-job-parallelism", EXPLAIN_JOB, KUEUE + job(1_000_000) + NODE,
     "Job default/big: spec.parallelism: 1,000,000 pods to create"),
]


@pytest.mark.parametrize(("args", "text", "start"), [r[1:] for r in REFUSED],
                         ids=[r[0] for r in REFUSED])
def test_a_count_past_the_limit_is_refused_before_a_pod_is_built(
        args: list[str], text: str, start: str) -> None:
    with cpu_budget(5.0):
        code, out, err = run(args, text)
    assert (code, out) == (2, "")
    # The CLI puts the object's document in front (it is read from stdin, "-").
    assert err == f"error: -:{_document_of(text, start)} {start}, {LIMIT_TEXT}\n"


def _document_of(text: str, start: str) -> int:
    """The 1-based position of the document ``start``'s ``Kind namespace/name`` names."""
    kind, ref = start.split(":")[0].split(" ")
    namespace, name = ref.split("/")
    for i, doc in enumerate(yaml.safe_load_all(text), start=1):
        meta = (doc or {}).get("metadata") or {}
        if (doc.get("kind"), meta.get("namespace"), meta.get("name")) == (kind, namespace, name):
            return i
    raise AssertionError(f"no document holds {start}")


# (id, verb, input, exit code, a line the output holds): at the limit, or not expanded.
HANDLED = [
    # At the limit: placed until the first pod that does not fit (110 pods per node).
    ("admit-workload-at-limit", ADMIT, KUEUE + workload(MAX_CREATED_PODS) + NODE + GATE, 1,
     "pod set main cannot be placed on the nodes now (110 of 100000 pods fit)"),
    ("admit-job-at-limit", ADMIT, KUEUE + job(MAX_CREATED_PODS) + NODE + GATE, 1,
     "pod set main cannot be placed on the nodes now (110 of 100000 pods fit)"),
    ("explain-at-limit", EXPLAIN, KUEUE + workload(MAX_CREATED_PODS) + NODE, 0,
     "pod set main does not fit: 110 of 100000 pods placed"),
    # Not expanded: quota only (no gate), or no Nodes to place on.
    ("admit-without-gate", ADMIT, KUEUE + workload(2147483647) + NODE, 0,
     "count: 2147483647"),
    ("explain-without-nodes", EXPLAIN, KUEUE + workload(2147483647), 0,
     "Workload default/wl (Workload default/wl): Admitted"),
]


@pytest.mark.parametrize(("args", "text", "code", "line"), [r[1:] for r in HANDLED],
                         ids=[r[0] for r in HANDLED])
def test_a_count_at_the_limit_or_not_expanded_is_handled(
        args: list[str], text: str, code: int, line: str) -> None:
    with cpu_budget(5.0):
        got, out, err = run(args, text)
    assert (got, err) == (code, "")
    assert line in out


def _in_child(body: Callable[[], None], address_space: int, cpu_seconds: float) -> int:
    """Run ``body`` in a forked child limited to ``address_space`` more bytes of memory
    than the parent maps now and ``cpu_seconds`` of CPU; its exit status (0: done)."""
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        status = 1
        try:
            limit_child_cpu(cpu_seconds)
            resource.setrlimit(resource.RLIMIT_AS, (mapped + address_space,) * 2)
            body()
            status = 0
        except MemoryError:
            status = 3
        except BaseException:
            status = 4
        finally:
            os._exit(status)
    _, status, _ = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_the_refused_and_at_limit_runs_stay_within_a_memory_bound() -> None:
    # Before the fix the int32 count built pods until memory ran out (~60 MB per CPU
    # second). 256 MiB more than the parent maps is ample for either run.
    def refused() -> None:
        code, _, err = run(ADMIT, KUEUE + workload(2147483647) + NODE + GATE)
        assert code == 2 and LIMIT_TEXT in err

    def at_limit() -> None:
        code, out, _ = run(ADMIT, KUEUE + workload(MAX_CREATED_PODS) + NODE + GATE)
        assert code == 1 and "110 of 100000 pods fit" in out

    for body in (refused, at_limit):
        assert _in_child(body, 256 << 20, 10.0) == 0


def test_pod_set_pods_builds_a_pod_only_when_it_is_read() -> None:
    pods = pod_set_pods("ns", "wl-main", MAX_CREATED_PODS,
                        {"spec": {"containers": [{"name": "c", "image": "x"}]}},
                        {"zone": "a"})
    assert len(pods) == MAX_CREATED_PODS
    assert not pods._built  # type: ignore[attr-defined]
    last = pods[-1]
    assert (last.metadata.name, last.metadata.namespace) == ("wl-main-99999", "ns")
    assert last.spec.node_selector == {"zone": "a"}
    assert pods[MAX_CREATED_PODS - 1] is last  # read twice, built once
    assert [p.metadata.name for p in pods[:2]] == ["wl-main-0", "wl-main-1"]
    assert len(pods._built) == 3  # type: ignore[attr-defined]
    with pytest.raises(IndexError):
        pods[MAX_CREATED_PODS]
    assert [p.metadata.name for p in pod_set_pods("ns", "x", 2, {}, {})] == ["x-0", "x-1"]


def test_pod_set_pods_refuses_a_count_past_the_limit() -> None:
    from dralab.api.errors import InputError

    with pytest.raises(InputError, match=r"pod set wl-main: 100,001 pods to create, more"):
        pod_set_pods("ns", "wl-main", MAX_CREATED_PODS + 1, {}, {})


def _source(counts: list[int], name: str = "wl") -> WorkloadSource:
    return WorkloadSource(
        key=f"default/{name}", name=name, namespace="default", queue_name="lq", owner=None,
        existing=None, pod_sets=tuple(PodSetSource(f"ps{i}", c, {}, {})
                                      for i, c in enumerate(counts)),
        priority=0, priority_class=None, priority_class_source=None, created=0.0)


def test_check_pod_counts_adds_up_pod_sets_and_workloads_and_names_the_crossing_one() -> None:
    assert check_pod_counts([_source([MAX_CREATED_PODS])]) == MAX_CREATED_PODS
    assert check_pod_counts([_source([-5, 3])]) == 3  # a negative count builds nothing
    with pytest.raises(Exception, match=r"^Workload default/b: spec.podSets\[1\].count: "
                                        r"2 pods to create \(100,001 with"):
        check_pod_counts([_source([99_999]), _source([0, 2], "b")])
    assert pod_count_field(_source([1]), 0) == (
        "Workload", "default", "wl", "spec.podSets[0].count")
