"""What the reader fills for the plugins: a PodGroup's last-start-timestamp (minruntime),
pods' labels and inter-pod affinity, queues' min runtimes and display name, and the
shard's minRuntime as the minruntime plugin's arguments. Objects are shaped as a live
cluster serves them (KAI's annotation keys and CRD fields at
72de64fc8eca10fa8cca26a20156178f3edbe092)."""

from __future__ import annotations

from typing import Any

from dralab.api.io import Document
from dralab.queueing.kai.model import KaiAffinityTerm
from dralab.queueing.kai.plugins.config import plugin_set
from dralab.queueing.kai.proportion import divide_shares
from dralab.queueing.kai.reader import KaiSnapshot, load_kai_snapshot, read_kai_snapshot
from dralab.queueing.kai.session import run_session

CREATED = "2026-01-01T00:00:00Z"
RESOURCES = {r: {"quota": 0, "overQuotaWeight": 1, "limit": -1}
             for r in ("cpu", "gpu", "memory")}


def _node(name: str, gpus: int = 1) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "creationTimestamp": CREATED,
                         "labels": {"kubernetes.io/hostname": name, "zone": "z1"}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110",
                                       "nvidia.com/gpu": str(gpus)}}}


def _queue(name: str, parent: str | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"resources": RESOURCES, **spec}
    if parent:
        body["parentQueue"] = parent
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
            "metadata": {"name": name, "creationTimestamp": CREATED}, "spec": body}


def _group(name: str, queue: str = "team", priority_class: str = "train",
           annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ml", "creationTimestamp": CREATED,
                         "annotations": annotations or {}},
            "spec": {"minMember": 1, "queue": queue, "priorityClassName": priority_class}}


def _pod(name: str, group: str, node: str | None = None, gpus: int = 1,
         labels: dict[str, str] | None = None, affinity: dict[str, Any] | None = None,
         namespace: str = "ml") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": "kai-scheduler",
        "containers": [{"name": "main", "image": "trainer:1",
                        "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}
    if node:
        spec["nodeName"] = node
    if affinity:
        spec["affinity"] = affinity
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": CREATED,
                         "labels": {"kai.scheduler/queue": "team", **(labels or {})},
                         "annotations": {"pod-group-name": group}},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def _read(*docs: dict[str, Any], now: float | None = None) -> KaiSnapshot:
    objects, problems = load_kai_snapshot(
        [Document("in.yaml", i + 1, d) for i, d in enumerate(docs)])
    assert problems == []
    return read_kai_snapshot(objects, now=now)


def _problems(*docs: dict[str, Any]) -> list[str]:
    return load_kai_snapshot([Document("in.yaml", i + 1, d) for i, d in enumerate(docs)])[1]


# --- last-start-timestamp -> KaiJob.last_start ----------------------------------------

LAST_START = "kai.scheduler/last-start-timestamp"


def _preempt_scene(annotations: dict[str, str], **queue: Any) -> list[dict[str, Any]]:
    # a running train job (preemptible, 50) on the only GPU and a pending build job
    # (100, non-preemptible: within the queue's quota of 1 GPU) of the same queue:
    # preempt takes the GPU unless minruntime protects it
    quota = {**RESOURCES, "gpu": {"quota": 1, "overQuotaWeight": 1, "limit": -1}}
    return [_node("gpu-1"), _queue("dept", resources=quota),
            _queue("team", "dept", resources=quota, **queue),
            _group("old", annotations=annotations), _pod("old-0", "old", node="gpu-1"),
            _group("new", priority_class="build"), _pod("new-0", "new")]


def test_last_start_timestamp_is_the_jobs_and_the_sessions_moment_follows_it() -> None:
    snap = _read(*_preempt_scene({LAST_START: "2026-01-01T00:05:00Z"}))
    start = snap.state.jobs["old"].last_start
    assert start is not None and start == snap.state.jobs["old"].tasks[0].started
    # the snapshot was taken after the start it records (the newest creation is earlier)
    assert snap.state.now == start
    assert snap.state.jobs["new"].last_start is None


def test_minruntime_protects_a_job_only_once_it_has_a_last_start() -> None:
    protected = _read(*_preempt_scene({LAST_START: "2026-01-01T00:05:00Z"},
                                      preemptMinRuntime="10m"))
    assert protected.state.queues["team"].preempt_min_runtime == 600.0
    result = run_session(protected.state)
    assert result.count("evict") == 0
    assert result.task("old", "old-0").node == "gpu-1"
    # ten minutes later the same job may be preempted
    later = _read(*_preempt_scene({LAST_START: "2026-01-01T00:05:00Z"},
                                  preemptMinRuntime="10m"), now=protected.state.now + 601)
    assert run_session(later.state).count("evict") == 1
    # no annotation: KAI never protects it (as before the reader read it)
    unstarted = _read(*_preempt_scene({}, preemptMinRuntime="10m"))
    assert unstarted.state.jobs["old"].last_start is None
    assert run_session(unstarted.state).count("evict") == 1


def test_an_unparsable_last_start_is_absent_with_a_warning() -> None:
    snap = _read(*_preempt_scene({LAST_START: "2026-01-01 00:05:00"}))
    assert snap.state.jobs["old"].last_start is None
    (warning,) = snap.warnings
    assert warning.startswith(f"PodGroup ml/old: metadata.annotations.{LAST_START}: ")
    assert "not an RFC 3339 time" in warning


# --- queues: min runtimes, display name; the shard's minRuntime ------------------------

def test_queue_min_runtimes_and_display_name() -> None:
    snap = _read(_queue("dept", displayName="Research", reclaimMinRuntime="1h30m"),
                 _queue("team", "dept", preemptMinRuntime="90s"))
    dept, team = snap.state.queues["dept"], snap.state.queues["team"]
    assert (dept.reclaim_min_runtime, dept.preempt_min_runtime) == (5400.0, None)
    assert (team.preempt_min_runtime, team.reclaim_min_runtime) == (90.0, None)
    shares = divide_shares(snap.state)
    # KAI's QueueInfo.Name is the display name when set; messages call the queue by it
    assert (shares["dept"].display, shares["team"].display) == ("Research", "team")


SHARD = {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
         "metadata": {"name": "default"}}


def test_shard_min_runtime_becomes_the_minruntime_plugins_defaults() -> None:
    # the operator writes every plugin's tiers (setDefaultPlugins) with minRuntime copied
    # into minruntime's arguments, even when the shard overrides no plugin
    shard = {**SHARD, "spec": {"minRuntime": {"preemptMinRuntime": "5m",
                                              "reclaimMinRuntime": "2d"}}}
    config = _read(shard).state.config
    args = plugin_set(config).args("minruntime")
    assert dict(args) == {"defaultPreemptMinRuntime": "5m", "defaultReclaimMinRuntime": "2d"}
    assert plugin_set(config).on("gpupack") and not plugin_set(config).on("gpuspread")
    # no minRuntime, no plugin override: the default set, without arguments
    assert _read({**SHARD, "spec": {}}).state.config.plugins is None


def test_shard_min_runtime_default_protects_a_started_job() -> None:
    shard = {**SHARD, "spec": {"minRuntime": {"preemptMinRuntime": "1w"}}}
    snap = _read(shard, *_preempt_scene({LAST_START: "2026-01-01T00:05:00Z"}))
    assert run_session(snap.state).count("evict") == 0
    unset = _read(*_preempt_scene({LAST_START: "2026-01-01T00:05:00Z"}))
    assert run_session(unset.state).count("evict") == 1


def test_shard_min_runtime_syntax_is_str2durations() -> None:
    bad = {**SHARD, "spec": {"minRuntime": {"reclaimMinRuntime": "ten minutes"}}}
    assert _problems(bad) == [
        'in.yaml:1 SchedulingShard default: spec.minRuntime.reclaimMinRuntime: '
        'time: invalid duration "ten minutes"']
    # a queue's runtimes are metav1.Duration (Go's syntax: no days)
    assert _problems(_queue("q", preemptMinRuntime="1d")) == [
        'in.yaml:1 Queue q: spec.preemptMinRuntime: time: invalid duration "1d"']


# --- pods: labels and inter-pod affinity -------------------------------------------

def _affinity_scene(affinity: dict[str, Any], *extra: dict[str, Any]) -> KaiSnapshot:
    return _read(_node("gpu-1"), _queue("dept"), _queue("team", "dept"),
                 _group("web"), _pod("web-0", "web", gpus=0, labels={"app": "web"},
                                     affinity=affinity), *extra)


def _term(key: str = "zone", **selector: Any) -> dict[str, Any]:
    return {"labelSelector": selector, "topologyKey": key}


def test_pod_labels_are_the_tasks() -> None:
    snap = _affinity_scene({})
    task = snap.state.jobs["web"].tasks[0]
    assert task.labels == {"kai.scheduler/queue": "team", "app": "web"}
    assert task.pod_affinity is None


def test_pod_affinity_terms_as_match_labels() -> None:
    affinity = {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            _term(matchLabels={"app": "db"},
                  matchExpressions=[{"key": "tier", "operator": "In", "values": ["1"]}])]},
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {**_term("kubernetes.io/hostname", matchLabels={"app": "web"}),
                 "namespaces": ["ml", "prod"]}],
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 30, "podAffinityTerm": {
                    **_term(matchLabels={"role": "x"}), "matchLabelKeys": ["app"]}}]}}
    found = _affinity_scene(affinity).state.jobs["web"].tasks[0].pod_affinity
    assert found is not None
    assert found.required == (KaiAffinityTerm({"app": "db", "tier": "1"}, "zone", ("ml",)),)
    assert found.required_anti == (
        KaiAffinityTerm({"app": "web"}, "kubernetes.io/hostname", ("ml", "prod")),)
    # matchLabelKeys: the API server's merge, key In (the pod's own value)
    assert found.preferred_anti == (
        KaiAffinityTerm({"role": "x", "app": "web"}, "zone", ("ml",), 30),)
    assert found.preferred == ()


def test_namespace_selectors_resolve_in_the_snapshot() -> None:
    namespaces = [{"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": n, "labels": {"team": t}}}
                  for n, t in (("ml", "a"), ("prod", "b"), ("dev", "b"))]
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {**_term(matchLabels={"app": "db"}), "namespaceSelector": {"matchLabels": {"team": "b"}}},
        {**_term(matchLabels={"app": "db"}), "namespaceSelector": {}},
        {**_term(matchLabels={"app": "db"}),
         "namespaceSelector": {"matchLabels": {"team": "none"}}},
    ]}}
    found = _affinity_scene(affinity, *namespaces).state.jobs["web"].tasks[0].pod_affinity
    assert found is not None
    assert [t.namespaces for t in found.required] == [
        ("dev", "prod"), ("dev", "ml", "prod"), ("",)]   # ("",): no namespace, no pod


def test_a_term_not_modelled_is_left_out_with_a_warning() -> None:
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        _term(matchExpressions=[{"key": "app", "operator": "In", "values": ["web"]},
                                {"key": "app", "operator": "NotIn", "values": ["db"]}]),
        _term(matchLabels={"app": "web"}),
    ]}}
    snap = _affinity_scene(affinity)
    found = snap.state.jobs["web"].tasks[0].pod_affinity
    assert found is not None and found.required_anti == (
        KaiAffinityTerm({"app": "web"}, "zone", ("ml",)),)
    (warning,) = snap.warnings
    assert warning.startswith(
        "pod ml/web-0: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnored"
        "DuringExecution[0].labelSelector.matchExpressions[1]: operator NotIn"
        ": not modelled")


def test_required_anti_affinity_keeps_replicas_apart_in_the_session() -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        _term("kubernetes.io/hostname", matchLabels={"app": "web"})]}}
    def placed(affinity: dict[str, Any] | None) -> set[str | None]:
        pods = [_pod(f"web-{i}", "web", gpus=0, labels={"app": "web"}, affinity=affinity)
                for i in range(2)]
        snap = _read(_node("gpu-1", 2), _node("gpu-2", 2), _queue("dept"),
                     _queue("team", "dept"), _group("web"), *pods)
        result = run_session(snap.state)
        return {result.task("web", f"web-{i}").node for i in range(2)}

    assert len(placed(None)) == 1   # binpack puts both on one node
    assert placed(anti) == {"gpu-1", "gpu-2"}
