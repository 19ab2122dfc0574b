"""KAI's objects -> KaiState: KAI's own docs examples, the podgrouper's groups, the
shard's configuration and partition, priorities, and the bad-input rule (one line per
problem naming file, document, object and field path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dralab.api.errors import InputError
from dralab.api.io import Document, read_documents
from dralab.queueing.kai.reader import KaiSnapshot, load_kai_snapshot, read_kai_snapshot

DATA = Path(__file__).parent.parent.parent / "data" / "kai"
NODES = "nodes-two-gpu.yaml"
QUEUES = "quickstart-default-queues.yaml"


def _read(*names: str, extra: list[dict[str, Any]] | None = None) -> KaiSnapshot:
    docs = list(read_documents([str(DATA / n) for n in names]))
    docs += [Document("extra.yaml", i + 1, d) for i, d in enumerate(extra or [])]
    objects, problems = load_kai_snapshot(docs)
    assert problems == []
    return read_kai_snapshot(objects)


def _problems(*docs: dict[str, Any]) -> list[str]:
    return load_kai_snapshot([Document("in.yaml", i + 1, d) for i, d in enumerate(docs)])[1]


SHARING = {"apiVersion": "kai.scheduler/v1", "kind": "Config",
           "metadata": {"name": "kai-config"}, "spec": {"admission": {"gpuSharing": True}}}


def test_quickstart_queues_and_pods() -> None:
    snap = _read(QUEUES, NODES, "quickstart-pods-gpu-pod.yaml",
                 "quickstart-pods-cpu-only-pod.yaml")
    state = snap.state
    assert state.queues["default-queue"].parent == "default-parent-queue"
    assert state.queues["default-queue"].gpu.limit == -1
    # the podgrouper: one group per bare pod, queue from its label, priority class train
    (gpu_job,) = [j for j in state.jobs.values() if j.tasks[0].name == "gpu-pod"]
    assert gpu_job.name.startswith("pg-gpu-pod-") and gpu_job.queue == "default-queue"
    assert (gpu_job.priority, gpu_job.priority_class, gpu_job.min_member) == (50, "train", 1)
    assert gpu_job.tasks[0].gpus == 1.0 and gpu_job.tasks[0].status == "Pending"
    (cpu_job,) = [j for j in state.jobs.values() if j.tasks[0].name == "cpu-only-pod"]
    task = cpu_job.tasks[0]
    assert (task.cpu_milli, task.memory_bytes, task.gpus) == (100.0, 250e6, 0.0)
    node = state.nodes["gpu-node-1"]
    # nvidia.com/gpu.memory 81559 MiB floored to 100s, as KAI's NodeInfo does
    assert (node.gpus, node.gpu_memory_mib, node.cpu_milli, node.max_pods) == \
        (1, 81500, 32000.0, 110)
    assert state.config.actions[0] == "allocate" and state.config.k_value == 1.0


def test_priority_examples_use_kais_priority_classes() -> None:
    snap = _read("priority-example-limited-queue.yaml", QUEUES, NODES,
                 "priority-example-train-priority-pod.yaml",
                 "priority-example-build-priority-pod.yaml")
    by_pod = {j.tasks[0].name: j for j in snap.state.jobs.values()}
    assert (by_pod["train-pod"].priority, by_pod["train-pod"].is_preemptible()) == (50, True)
    assert (by_pod["build-pod"].priority, by_pod["build-pod"].is_preemptible()) == (100, False)
    test = snap.state.queues["test"]
    assert (test.gpu.quota, test.gpu.limit, test.cpu.quota) == (1, 1, -1)


def test_batch_job_pods_get_a_group_each() -> None:
    # the Job grouper: pg-<pod>-<job uid>, one per pod (no gang without a PodGroup)
    snap = _read(QUEUES, NODES, "batch-batch-job.yaml")
    jobs = list(snap.state.jobs.values())
    assert len(jobs) == 2 and all(len(j.tasks) == 1 for j in jobs)
    suffixes = {j.name.removeprefix(f"pg-{j.tasks[0].name}-") for j in jobs}
    assert len(suffixes) == 1 and all(j.name != f"pg-{j.tasks[0].name}-" for j in jobs)


def test_gpu_sharing_examples_need_sharing_enabled() -> None:
    docs = list(read_documents([str(DATA / "gpu-sharing-gpu-sharing.yaml")]))
    (problem,) = load_kai_snapshot(docs)[1]
    assert problem.endswith("gpu-sharing-gpu-sharing.yaml Pod gpu-sharing: "
                            "metadata.annotations.gpu-fraction: attempting to create a pod "
                            "default/gpu-sharing with gpu sharing request, while GPU sharing "
                            "is disabled (kai.scheduler/v1 Config spec.admission.gpuSharing, "
                            "false by default)")
    snap = _read(QUEUES, NODES, "gpu-sharing-gpu-sharing.yaml", extra=[SHARING])
    (job,) = snap.state.jobs.values()
    assert job.tasks[0].gpus == 0.5 and job.tasks[0].gpu_memory_mib == 0


def test_gpu_memory_request() -> None:
    snap = _read(QUEUES, NODES, "gpu-sharing-gpu-memory.yaml", extra=[SHARING])
    (job,) = snap.state.jobs.values()
    assert (job.tasks[0].gpus, job.tasks[0].gpu_memory_mib) == (0.0, 2000)


def _pod(name: str, **meta: Any) -> dict[str, Any]:
    spec = meta.pop("spec", {})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", **meta},
            "spec": {"schedulerName": "kai-scheduler",
                     "containers": [{"name": "c", "image": "i", "resources": {
                         "requests": {"cpu": "1", "memory": "1Gi"},
                         "limits": {"nvidia.com/gpu": "1"}}}], **spec}}


POD_GROUP = {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
             "metadata": {"name": "gang", "namespace": "ns"},
             "spec": {"minMember": 2, "queue": "default-queue", "priorityClassName": "inference",
                      "topologyConstraint": {"topology": "cluster-topology",
                                             "requiredTopologyLevel": "rack"}}}


def test_pod_group_annotation_gathers_a_gang() -> None:
    pods = [_pod(f"w{i}", annotations={"pod-group-name": "gang"}) for i in range(2)]
    snap = _read(QUEUES, NODES, "topology-cluster-topology.yaml", extra=[POD_GROUP, *pods])
    job = snap.state.jobs["gang"]
    assert (job.min_member, job.priority, job.is_preemptible()) == (2, 125, False)
    assert [t.name for t in job.tasks] == ["w0", "w1"]
    assert job.topology is not None and job.topology.required_level == "rack"
    assert snap.state.topologies["cluster-topology"][1] == "cloud.provider.com/topology-rack"
    assert snap.pods[("gang", "w0")].metadata.name == "w0"


def test_missing_pod_group_and_missing_queue_wait_with_kais_words() -> None:
    lost = _pod("lost", annotations={"pod-group-name": "nowhere"})
    stray = _pod("stray", labels={"kai.scheduler/queue": "no-such-queue"})
    snap = _read(QUEUES, NODES, extra=[lost, stray])
    assert snap.waiting["ns/lost"].startswith("pod ns/lost: its PodGroup ns/nowhere")
    assert snap.waiting["ns/stray"] == "QueueDoesNotExist: Queue 'no-such-queue' does not exist"
    assert snap.state.jobs == {}


def test_orphan_queues_are_dropped_with_their_children() -> None:
    orphan = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
              "metadata": {"name": "lonely"},
              "spec": {"parentQueue": "gone", "resources": {}}}
    child = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
             "metadata": {"name": "lonely-child"},
             "spec": {"parentQueue": "lonely", "resources": {}}}
    snap = _read(QUEUES, extra=[orphan, child])
    assert set(snap.state.queues) == {"default-parent-queue", "default-queue"}
    assert snap.warnings[0].startswith("Queue lonely: its parent queue gone does not exist")


def test_queue_cycle_is_refused() -> None:
    a = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "a"},
         "spec": {"parentQueue": "b", "resources": {}}}
    b = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "b"},
         "spec": {"parentQueue": "a", "resources": {}}}
    with pytest.raises(InputError, match="form a cycle"):
        _read(extra=[a, b])


def test_shard_configuration_and_partition() -> None:
    shard = {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
             "metadata": {"name": "gpu-shard"},
             "spec": {"partitionLabelValue": "gpu-nodes", "kValue": 0.5,
                      "placementStrategy": {"gpu": "spread"},
                      "args": {"max-consolidation-preemptees": "4"}}}
    pooled = {"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": "pooled", "labels": {"kai.scheduler/node-pool": "gpu-nodes"}},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}
    snap = _read(NODES, extra=[shard, pooled])
    config = snap.state.config
    assert (config.gpu_placement, config.k_value, config.max_consolidation_preemptees) == \
        ("spread", 0.5, 4)
    assert "consolidation" not in config.actions
    # the shard schedules the nodes labelled with its partition only
    assert set(snap.state.nodes) == {"pooled"} and snap.shard == "gpu-shard"


def test_default_shard_skips_pooled_nodes() -> None:
    pooled = {"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": "pooled", "labels": {"kai.scheduler/node-pool": "x"}},
              "status": {"allocatable": {"cpu": "4"}}}
    assert set(_read(NODES, extra=[pooled]).state.nodes) == {"gpu-node-1", "gpu-node-2"}


def test_other_schedulers_pods_take_node_resources() -> None:
    running = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sys", "namespace": "ns"},
               "spec": {"nodeName": "gpu-node-1", "containers": [{
                   "name": "c", "image": "i", "resources": {
                       "requests": {"cpu": "2"}, "limits": {"nvidia.com/gpu": "1"}}}]},
               "status": {"phase": "Running"}}
    waiting = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "other", "namespace": "ns"},
               "spec": {"containers": [{"name": "c", "image": "i"}]}}
    snap = _read(NODES, extra=[running, waiting])
    node = snap.state.nodes["gpu-node-1"]
    assert (node.gpus, node.cpu_milli, node.max_pods) == (0, 30000.0, 109)
    assert snap.not_kai == ["ns/other"] and snap.state.jobs == {}


def test_nominated_node() -> None:
    pod = _pod("nom", labels={"kai.scheduler/queue": "default-queue"})
    pod["status"] = {"phase": "Pending", "nominatedNodeName": "gpu-node-2"}
    (job,) = _read(QUEUES, NODES, extra=[pod]).state.jobs.values()
    assert job.tasks[0].nominated_node == "gpu-node-2"


def test_running_pod_is_a_bound_task() -> None:
    pod = _pod("run", labels={"kai.scheduler/queue": "default-queue",
                              "runai-gpu-group": "g1"},
               spec={"nodeName": "gpu-node-2"})
    pod["status"] = {"phase": "Running"}
    snap = _read(QUEUES, NODES, extra=[pod])
    (job,) = snap.state.jobs.values()
    assert (job.tasks[0].status, job.tasks[0].node, job.tasks[0].gpu_groups) == \
        ("Running", "gpu-node-2", ("g1",))


def test_problems_name_file_document_object_and_field() -> None:
    bad_group = {**POD_GROUP, "spec": {"minMember": 0, "queue": "q"}}
    bad_pod = _pod("p", annotations={"gpu-fraction": "0.5"})
    problems = _problems(SHARING, bad_group, bad_pod,
                         {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
                          "metadata": {"name": "q"}, "spec": {"resourceQuota": {}}})
    assert problems == [
        "in.yaml:2 PodGroup ns/gang: spec.minMember: Invalid value: 0: spec.minMember in "
        "body should be greater than or equal to 1",
        'in.yaml:4 Queue q: strict decoding error: unknown field "spec.resourceQuota"',
        "in.yaml:3 Pod ns/p: metadata.annotations.gpu-fraction: cannot have both GPU "
        "fraction request and whole GPU resource request/limit",
    ]


def test_two_shards_are_refused() -> None:
    shard = {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
             "metadata": {"name": "a"}}
    (problem,) = _problems(shard, {**shard, "metadata": {"name": "b"}})
    assert problem == ("in.yaml:2 SchedulingShard b: a second SchedulingShard (the first is "
                       "in.yaml:1): dralab runs one KAI scheduler")


def test_same_inputs_same_state() -> None:
    names = (QUEUES, NODES, "batch-batch-job.yaml", "quickstart-pods-gpu-pod.yaml")
    assert _read(*names).state == _read(*names).state


def test_stale_and_last_start_annotations() -> None:
    # job_info.go SetPodGroup: the stalegangeviction clock and minruntime's start time
    group = {**POD_GROUP, "metadata": {
        "name": "gang", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z",
        "annotations": {"kai.scheduler/stale-podgroup-timestamp": "2026-01-01T00:01:00Z",
                        "kai.scheduler/last-start-timestamp": "2026-01-01T00:00:30Z"}}}
    pod = _pod("w0", annotations={"pod-group-name": "gang"}, spec={"nodeName": "gpu-node-1"},
               creationTimestamp="2026-01-01T00:00:10Z")
    pod["status"] = {"phase": "Running", "startTime": "2026-01-01T00:00:20Z"}
    objects, problems = load_kai_snapshot(
        [Document("in.yaml", i + 1, d) for i, d in enumerate([group, pod])]
        + list(read_documents([str(DATA / QUEUES), str(DATA / NODES)])))
    assert problems == []
    state = read_kai_snapshot(objects, now=1767225720.0).state   # 2026-01-01T00:02:00Z
    job = state.jobs["gang"]
    assert job.stale_since == 60.0                   # stale for a minute
    assert job.tasks[0].started == 1767225630.0      # the last-start-timestamp


def test_shard_args() -> None:
    shard = {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
             "metadata": {"name": "default"},
             "spec": {"args": {"default-staleness-grace-period": "5m",
                               "allow-consolidating-reclaim": "F"}}}
    config = _read(extra=[shard]).state.config
    assert (config.staleness_grace_period, config.allow_consolidating_reclaim) == (300.0, False)
    bad = {**shard, "spec": {"args": {"default-staleness-grace-period": "soon",
                                      "allow-consolidating-reclaim": "nope",
                                      "max-consolidation-preemptees": "many"}}}
    assert [p.split(": ")[1] for p in _problems(bad)] == [
        "spec.args.max-consolidation-preemptees", "spec.args.allow-consolidating-reclaim",
        "spec.args.default-staleness-grace-period"]


def _config_map(text: str, name: str = "kai-scheduler-default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "kai-scheduler"},
            "data": {"config.yaml": text}}


def test_scheduler_config_map_is_what_runs() -> None:
    # the operator's rendering of a shard (resources_for_shard.go configMapForShard)
    conf = _config_map('actions: "allocate, reclaim"\ntiers:\n- plugins:\n'
                       "  - name: proportion\n    arguments: {kValue: \"2\"}\n"
                       "  - name: nodeplacement\n    arguments: {gpu: spread, cpu: binpack}\n")
    config = _read(extra=[conf]).state.config
    assert (config.actions, config.k_value, config.gpu_placement, config.cpu_placement) == \
        (("allocate", "reclaim"), 2.0, "spread", "binpack")
    # another shard's ConfigMap is not this scheduler's
    other = _read(extra=[_config_map('actions: "allocate"', name="kai-scheduler-gpu")])
    assert other.state.config.actions[:2] == ("allocate", "consolidation")


def test_scheduler_config_map_problems() -> None:
    # conf_util.GetActionsFromConfig fails the load on an action it does not know
    assert _problems(_config_map('actions: "allocate, backfill"')) == [
        "in.yaml:1 ConfigMap kai-scheduler/kai-scheduler-default: data.config.yaml: actions: "
        "failed to find Action backfill as given in the config, ignore it"]
    (problem,) = _problems(_config_map("tiers: [{plugins: [{arguments: {}}]}]"))
    assert "data.config.yaml: tiers[0].plugins[0].name:" in problem
    (problem,) = _problems(_config_map("actions: [unclosed"))
    assert "data.config.yaml: error converting YAML:" in problem


def test_plugins_from_shard_overrides_and_config_map_tiers() -> None:
    assert _read().state.config.plugins is None      # the operator's default set
    shard = {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
             "metadata": {"name": "default"},
             "spec": {"kValue": 0.5, "plugins": {
                 "topology": {"enabled": False},
                 "nodeplacement": {"arguments": {"gpu": "spread"}},
                 "myplugin": {"priority": 1950}}}}
    plugins = _read(extra=[shard]).state.config.plugins
    assert plugins is not None
    names = [p.name for p in plugins]
    # setDefaultPlugins + resolvePlugins: enabled, higher priority first, new ones at 0
    assert names[:3] == ["myplugin", "predicates", "proportion"] and "topology" not in names
    assert names[-3:] == ["gpupack", "nodeplacement", "gpusharingorder"]
    by_name = {p.name: p.arguments for p in plugins}
    assert by_name["nodeplacement"] == {"gpu": "spread"}   # arguments replace the defaults
    assert by_name["proportion"] == {"kValue": "0.5"}
    conf = _config_map("tiers:\n- plugins:\n  - name: predicates\n  - name: proportion\n")
    tiers = _read(extra=[shard, conf]).state.config.plugins
    assert tiers is not None and [p.name for p in tiers] == ["predicates", "proportion"]


_DRA = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
     "metadata": {"name": "gpu.nvidia.com"},
     "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
     "metadata": {"name": "gpu-node-1-gpus"},
     "spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-node-1",
              "pool": {"name": "gpu-node-1", "generation": 1, "resourceSliceCount": 1},
              "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
     "metadata": {"name": "one-gpu", "namespace": "ns"},
     "spec": {"spec": {"devices": {"requests": [
         {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}},
]


def test_dra_claims_templates_slices_and_classes() -> None:
    pod = _pod("dra", labels={"kai.scheduler/queue": "default-queue"},
               spec={"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]})
    pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    state = _read(QUEUES, NODES, extra=[*_DRA, pod]).state
    (job,) = state.jobs.values()
    task = job.tasks[0]
    # the resource-claim controller's claim, made when the pod was created
    (made,) = task.template_claims.values()
    assert list(task.template_claims) == ["gpu"] and task.claims == (made,)
    assert made.startswith("dra-gpu-") and f"ns/{made}" in state.resource_claims
    assert [s.metadata.name for s in state.resource_slices] == ["gpu-node-1-gpus"]
    assert set(state.device_classes) == {"gpu.nvidia.com"}


def test_workload_templates_are_admitted_as_their_pods_will_be() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "ns"},
           "spec": {"template": {
               "metadata": {"annotations": {"gpu-fraction": "1.5"}},
               "spec": {"schedulerName": "kai-scheduler", "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "i"}]}}}}
    assert _problems(SHARING, job) == [
        "in.yaml:2 Job ns/j: spec.template.metadata.annotations.gpu-fraction: gpu-fraction "
        "annotation value must be a positive number smaller than 1.0"]


def test_config_scheduler_name_decides_whose_pods() -> None:
    config = {**SHARING, "spec": {"global": {"schedulerName": "kai"}}}
    pod = _pod("p", labels={"kai.scheduler/queue": "default-queue"})
    snap = _read(QUEUES, NODES, extra=[config, pod])
    assert snap.state.jobs == {} and snap.not_kai == ["ns/p"]
    pod["spec"]["schedulerName"] = "kai"
    assert len(_read(QUEUES, NODES, extra=[config, pod]).state.jobs) == 1


def _node(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "spec": spec, "status": {"allocatable": {"cpu": "8", "nvidia.com/gpu": "1"}}}


def test_node_filters_become_node_names() -> None:
    # KAI's predicates: NodeAffinity, TaintToleration and NodeUnschedulable on the node
    nodes = [_node("h100", {"gpu": "h100"}), _node("a100", {"gpu": "a100"}),
             _node("tainted", {"gpu": "h100"},
                   taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
             _node("cordoned", {"gpu": "h100"}, unschedulable=True)]
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "gpu", "operator": "In", "values": ["h100"]}]}]}}}
    picky = _pod("picky", labels={"kai.scheduler/queue": "default-queue"},
                 spec={"affinity": affinity})
    tolerant = _pod("tolerant", labels={"kai.scheduler/queue": "default-queue"},
                    spec={"tolerations": [{"operator": "Exists"}]})
    nowhere = _pod("nowhere", labels={"kai.scheduler/queue": "default-queue"},
                   spec={"affinity": {**affinity, "nodeAffinity": {
                       "requiredDuringSchedulingIgnoredDuringExecution": {
                           "nodeSelectorTerms": [{"matchFields": [
                               {"key": "metadata.name", "operator": "In",
                                "values": ["gone"]}]}]}}}})
    state = _read(QUEUES, extra=[*nodes, picky, tolerant, nowhere]).state
    names = {j.tasks[0].name: j.tasks[0].node_names for j in state.jobs.values()}
    assert names["picky"] == ("h100",)
    assert names["tolerant"] == ()          # tolerates the taint and the cordon: any node
    assert names["nowhere"] == ("",)        # no node passes


def test_restrict_node_scheduling() -> None:
    shard = {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
             "metadata": {"name": "default"},
             "spec": {"args": {"restrict-node-scheduling": "true"}}}
    marked = _node("marked", {"node-role.kubernetes.io/gpu-worker": ""})
    assert set(_read(NODES, extra=[shard, marked]).state.nodes) == {"marked"}
