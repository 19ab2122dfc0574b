"""Runs a ported KAI Scheduler action-test case against ``dralab.queueing.kai``.

A case (``tables/*.json``, written by ``port_tables.py``) holds upstream's
``test_utils.TestTopologyBasic`` values as written. ``build_state`` turns them into the
``KaiState`` upstream's test utilities build for the session (pkg/scheduler/test_utils:
test_utils_builder.go ``BuildSession``, jobs_fake, nodes_fake, tasks_fake,
resources_fake at the pinned commit), and ``check_case`` runs the case the way its test
function does and compares what ``test_utils.MatchExpectedAndRealTasks`` compares plus
the cache mock's call limits.

What the builders do, and so what this module does:

* queues: GPU quota ``DeservedGPUs``, limit ``MaxAllowedGPUs`` (0: no limit, -1),
  over-quota weight ``GPUOverQuotaWeight`` as given (0 when absent -- Go's zero; only
  CPU and memory get the builder's default weight 1); CPU and memory quota and limit
  -1 (unlimited) unless given; priority 100 unless given; creation one minute apart in
  table order;
* without ``Departments`` and unless ``DisableDefaultDepartment``, every queue's parent
  is a department ``default`` (quota -1, limit -1, GPU weight = its quota, -1); a
  department's GPU weight is its ``DeservedGPUs``;
* jobs are sorted by priority (highest first, stable) and created one minute apart in
  that order, the last one a minute ago; preemptible unless priority >= 100 or a
  preemptibility is given; a job without a ``RootSubGroupSet`` is one gang of all its
  tasks;
* tasks are named ``<job>-<index>``; each asks for ``RequiredGPUsPerTask`` (a fraction
  below 1 is a shared GPU; ``RequiredGpuMemory`` a GPU-memory share), ``task.RequiredGPUs``
  overriding it, CPU ``RequiredCPUsPerTask`` *cores* (the builder writes the number as a
  quantity: 900 is 900 cores, 900,000 millicores; default 1 core) and memory
  ``RequiredMemoryPerTask`` bytes (default 1G); a best-effort job asks for nothing;
  a running fractional task without GPU groups gets a group of its own;
* nodes: ``GPUs`` (0 allocatable with the mixed MIG strategy), CPU ``CPUMillis``
  *cores* (default 20,000), memory ``CPUMemory`` bytes (default 20G), GPU memory
  ``GPUMemory`` MiB (default 100), 110 pods, the labels the builder writes
  (``kai.scheduler/type: <node>`` among them, which ``NodeAffinityNames`` selects on).

Integration cases (``integration_tests_utils.RunTests``) run rounds of all five actions
on a session rebuilt from the previous round's outcome, as upstream's runner does:
binding tasks start running, pipelined and evicted ones go back to pending (an evicted
task of a job deleted in the test stays releasing), then the expectations are matched
on the rebuilt session and again after each of the following rounds.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from dralab.queueing.kai.model import (
    KaiAffinityTerm,
    KaiConfig,
    KaiJob,
    KaiNode,
    KaiPlugin,
    KaiPodAffinity,
    KaiQueue,
    KaiState,
    KaiSubGroup,
    KaiTask,
    QueueResource,
    TopologyConstraint,
)

from . import dra_objects

TABLES = Path(__file__).resolve().parent / "tables"
NOT_BUILT = "not built: "
UNLIMITED = -1.0
PRIORITY_BUILD = 100            # pkg/scheduler/constants PriorityBuildNumber
DEFAULT_GPU_MEMORY_MIB = 100    # node_info.DefaultGpuMemory
NODE_CPU_CORES = 20000          # nodes_fake cpuMilliAllocatable ("20000", a quantity: cores)
NODE_MEMORY = 20e9              # nodes_fake memoryAllocatable "20G"
NODE_PODS = 110
TASK_CPU_CORES = 1              # resources_fake DefaultCPU "1"
TASK_MEMORY = 1e9               # resources_fake DefaultMemory "1G"
NODE_AFFINITY_KEY = "kai.scheduler/type"   # tasks_fake.NodeAffinityKey
DEFAULT_SUBGROUP = "default"               # podgroup_info.DefaultSubGroup
MINUTE = 60.0
NS = 1e-9
ALLOCATED = frozenset({"Allocated", "Bound", "Binding", "Running"})      # AllocatedStatus
ACTIVE_USED = frozenset({"Allocated", "Pipelined", "Binding", "Bound", "Running",
                         "Releasing"})                                     # IsActiveUsedStatus
INTEGRATION_ROUNDS_UNTIL_MATCH = 2   # integration_tests_utils defaultRoundsUntilMatch
INTEGRATION_ROUNDS_AFTER_MATCH = 5   # defaultRoundsAfterMatch


class NotBuilt(Exception):
    """The case needs something ``dralab.queueing.kai`` does not model yet."""


# --- fixtures ----------------------------------------------------------------------------

def load(relative: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TABLES / relative).read_text())
    return data


def case_id(case: Mapping[str, Any]) -> str:
    # Upstream names repeat within a file; the index keeps ids unique.
    return f"{case['index']:03d} {case['name']}".strip()


def params(relative: str) -> list[Any]:
    """One pytest param per upstream case of the file, then its unported tests."""
    data = load(relative)
    out = [pytest.param(case, id=case_id(case)) for case in data["cases"]]
    out += [pytest.param({"unported": u}, id=u["function"]) for u in data["unported"]]
    return out


def cite(case: Mapping[str, Any]) -> str:
    return (f"{case['repo']}@{case['commit'][:12]} {case['file']} {case['function']} "
            f"(table {case.get('table', '')}) case {case.get('index', '')} "
            f"{case.get('name', '')!r}")


# --- the values -> KaiState --------------------------------------------------------------

def _markers(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for key in ("$call", "$ident", "$code"):
            if key in value and not (key == "$call" and value[key] in _SUBGROUP_CALLS):
                yield str(value[key])[:60]
        for v in value.values():
            yield from _markers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _markers(v)


_SUBGROUP_CALLS = frozenset({"subgroup_info.NewSubGroupSet", "subgroup_info.NewPodSet",
                             "jobs_fake.DefaultSubGroup", dra_objects.RANDOM_REFERENCES})


def evenly_distributed_nodes(zones: int, spines_per_zone: int, racks_per_spine: int,
                             nodes_per_rack: int, gpus: int) -> dict[str, dict[str, Any]]:
    """allocateTopology_test.go's buildEvenlyDistributedTopologyNodes, the one node
    generator a table calls: node0, node1, ... numbered across zones, spines and racks,
    each labelled with its k8s.io/zone, k8s.io/spine and k8s.io/rack (spines and racks
    numbered cluster-wide from 1)."""
    out: dict[str, dict[str, Any]] = {}
    for z in range(zones):
        for sp in range(spines_per_zone):
            spine = z * spines_per_zone + sp + 1
            for r in range(racks_per_spine):
                rack = (spine - 1) * racks_per_spine + r + 1
                for _ in range(nodes_per_rack):
                    out[f"node{len(out)}"] = {"GPUs": gpus, "Labels": {
                        "k8s.io/zone": f"zone{z + 1}", "k8s.io/spine": f"spine{spine}",
                        "k8s.io/rack": f"rack{rack}"}}
    return out


def expand_generated(topology: Mapping[str, Any]) -> dict[str, Any]:
    """The case's values with the generators we reproduce replaced by their output."""
    out = dict(topology)
    nodes = out.get("Nodes")
    if isinstance(nodes, dict) and nodes.get("$call") == "buildEvenlyDistributedTopologyNodes":
        out["Nodes"] = evenly_distributed_nodes(*(int(a) for a in nodes["args"]))
    return out


def unsupported(topology: Mapping[str, Any]) -> str | None:
    """Why the case cannot be built yet, or None."""
    code = sorted(set(_markers(topology)))
    if code:
        return "generated by code (" + ", ".join(code) + ")"
    if topology.get("Topologies") and not _has_field(KaiState, "topologies"):
        return "Topology levels in KaiState"
    for node in (topology.get("Nodes") or {}).values():
        if node.get("GpuMemorySynced") is not None:
            return "GpuMemorySynced on KaiNode"
    for q in topology.get("Queues") or []:
        if q.get("V1") or q.get("InteractiveTimeoutInMinutes") or q.get("UseOnlyFreeCPUResources"):
            return "v1 queues / interactive timeout / free-CPU-only queues on KaiQueue"
    return None


def _has_field(cls: type, name: str) -> bool:
    return any(f.name == name for f in dataclasses.fields(cls))


def _limit(value: float | None) -> float:
    return UNLIMITED if not value else float(value)


def build_queues(topology: Mapping[str, Any]) -> dict[str, KaiQueue]:
    queues_in = [dict(q) for q in topology.get("Queues") or []]
    departments = [dict(d) for d in topology.get("Departments") or []]
    if not departments and not topology.get("DisableDefaultDepartment"):
        for q in queues_in:
            q["ParentQueue"] = "default"
        departments = [{"Name": "default", "DeservedGPUs": UNLIMITED,
                        "MaxAllowedGPUs": UNLIMITED}]
    out: dict[str, KaiQueue] = {}
    for index, d in enumerate(departments):
        deserved = float(d.get("DeservedGPUs", 0))
        out[d["Name"]] = KaiQueue(
            name=d["Name"], parent=None,
            gpu=QueueResource(deserved, deserved, _limit(d.get("MaxAllowedGPUs"))),
            cpu=QueueResource(UNLIMITED, 1.0, _limit_given(d, "MaxAllowedCPUs")),
            memory=QueueResource(UNLIMITED, 1.0, _limit_given(d, "MaxAllowedMemory")),
            created=index * MINUTE)
    for index, q in enumerate(queues_in):
        out[q["Name"]] = KaiQueue(
            name=q["Name"], parent=q.get("ParentQueue") or None,
            priority=int(q.get("Priority", 100)),
            gpu=QueueResource(float(q.get("DeservedGPUs", 0)),
                              float(q.get("GPUOverQuotaWeight", 0)),
                              _limit(q.get("MaxAllowedGPUs"))),
            cpu=QueueResource(float(q.get("DeservedCPUs", UNLIMITED)), 1.0,
                              _limit_given(q, "MaxAllowedCPUs")),
            memory=QueueResource(float(q.get("DeservedMemory", UNLIMITED)), 1.0,
                                 _limit_given(q, "MaxAllowedMemory")),
            created=index * MINUTE)
    return out


def _limit_given(values: Mapping[str, Any], key: str) -> float:
    # CPU/memory limits are pointers: absent is -1, a given value is kept as is (0 too).
    return float(values[key]) if key in values and values[key] is not None else UNLIMITED


def _topology_constraint(value: Any) -> TopologyConstraint | None:
    if not isinstance(value, dict):
        return None
    return TopologyConstraint(topology=value.get("Topology", ""),
                              required_level=value.get("RequiredLevel", ""),
                              preferred_level=value.get("PreferredLevel", ""))


def _subgroups(root: Any, task_count: int) -> tuple[int, tuple[KaiSubGroup, ...],
                                                    TopologyConstraint | None, bool]:
    """(min_member, subgroups, the job's topology, has a default pod set) of a
    RootSubGroupSet value as the builder read it."""
    if root is None:
        return task_count, (), None, True
    if root.get("$call") == "jobs_fake.DefaultSubGroup":
        return int(root["args"][0]), (), None, True
    groups: list[KaiSubGroup] = []
    mins = 0
    has_default = False

    def walk(node: Mapping[str, Any], parent: str | None) -> None:
        nonlocal mins, has_default
        for m in node.get("$methods", []):
            child = m["args"][0]
            if m["method"] == "AddPodSet":
                name, minimum, topo = child["args"]
                if name == DEFAULT_SUBGROUP:
                    has_default = True
                groups.append(KaiSubGroup(name, int(minimum), parent, _topology_constraint(topo)))
                mins += int(minimum)
            elif m["method"] == "AddSubGroup":
                name, topo = child["args"]
                groups.append(KaiSubGroup(name, 0, parent, _topology_constraint(topo)))
                walk(child, name)
            else:
                raise NotBuilt(f"subgroup builder method {m['method']}")

    _, topo = root["args"]
    walk(root, None)
    return mins, tuple(groups), _topology_constraint(topo), has_default


def build_jobs(jobs_in: list[Mapping[str, Any]]) -> dict[str, KaiJob]:
    jobs = sorted(jobs_in, key=lambda j: -int(j.get("Priority", 0)))   # stable, as Go's
    out: dict[str, KaiJob] = {}
    auto_group = 0
    for index, job in enumerate(jobs):
        name = job["Name"]
        priority = int(job.get("Priority", 0))
        created = -(len(jobs) - index) * MINUTE
        if job.get("JobAgeInMinutes"):
            created = -float(job["JobAgeInMinutes"]) * MINUTE
        preemptibility = job.get("Preemptibility") or ""
        preemptible = None if not preemptibility else preemptibility == "preemptible"
        tasks_in = job.get("Tasks") or []
        min_member, subgroups, job_topology, has_default = _subgroups(
            job.get("RootSubGroupSet"), len(tasks_in))
        if not has_default and any(not t.get("SubGroupName") for t in tasks_in):
            # The builder puts such tasks in a default pod set of all the job's tasks
            # (jobs_fake: also when the RootSubGroupSet has no pod set of its own, e.g.
            # one made only to carry a topology constraint).
            if subgroups:
                subgroups += (KaiSubGroup(DEFAULT_SUBGROUP, len(tasks_in)),)
            min_member += len(tasks_in)
        allocated = any(t.get("State") in ALLOCATED for t in tasks_in)
        tasks: list[KaiTask] = []
        for t_index, task in enumerate(tasks_in):
            kt, auto_group = _task(job, name, t_index, task, allocated, auto_group)
            if subgroups:
                kt = dataclasses.replace(kt, subgroup=task.get("SubGroupName") or DEFAULT_SUBGROUP)
            tasks.append(kt)
        stale = job.get("StaleDuration")
        out[name] = KaiJob(
            name=name, queue=job.get("QueueName", ""), namespace=job.get("Namespace", ""),
            priority=priority, preemptible=preemptible, min_member=min_member,
            created=created, tasks=tuple(tasks), subgroups=subgroups, topology=job_topology,
            stale_since=None if stale is None else float(stale) * NS)
    return out


def _task(job: Mapping[str, Any], job_name: str, index: int, task: Mapping[str, Any],
          job_allocated: bool, auto_group: int) -> tuple[KaiTask, int]:
    status = task.get("State", "Pending")
    node = task.get("NodeName") or None
    gpus = float(job.get("RequiredGPUsPerTask", 0))
    best_effort = bool(job.get("IsBestEffortJob"))
    fraction = not best_effort and gpus != int(gpus)
    devices = job.get("RequiredMultiFractionDevicesPerTask")
    groups = list(task.get("GPUGroups") or [])
    if fraction and node:
        while len(groups) < int(devices or 1):
            auto_group += 1
            groups.append(f"{node}-group-{auto_group}")
    if task.get("RequiredGPUs") is not None:
        gpus = float(task["RequiredGPUs"])
    cpu_cores = float(job.get("RequiredCPUsPerTask") or TASK_CPU_CORES)
    memory = float(job.get("RequiredMemoryPerTask") or TASK_MEMORY)
    if best_effort:
        gpus, cpu_cores, memory = 0.0, 0.0, 0.0
    return KaiTask(
        name=f"{job_name}-{index}", job=job_name, status=status, node=node,
        gpus=gpus, gpu_memory_mib=int(job.get("RequiredGpuMemory", 0) or 0),
        fraction_devices=int(devices) if devices is not None else None,
        cpu_milli=cpu_cores * 1000, memory_bytes=memory,
        gpu_groups=tuple(groups),
        mig=dict(task.get("RequiredMigInstances") or {}),
        legacy_mig=bool(task.get("IsLegacyMigTask")),
        node_names=tuple(task.get("NodeAffinityNames") or ()),
        priority=task.get("Priority"),
        subgroup=task.get("SubGroupName") or None,
        # tasks_fake: claims by name, then templates (name -> the claim made of it)
        claims=tuple(task.get("ResourceClaimNames") or ()) + tuple(
            (task.get("ResourceClaimTemplates") or {}).values()),
        template_claims=dict(task.get("ResourceClaimTemplates") or {}),
        started=-MINUTE if job_allocated and status in ALLOCATED else None,
        labels={"job-name": f"{job_name}-{index}", **(task.get("PodAffinityLabels") or {})},
        pod_affinity=_pod_affinity(task),
    ), auto_group


def _pod_affinity(task: Mapping[str, Any]) -> KaiPodAffinity | None:
    """tasks_fake.applyPodAffinityLabels: with PodAffinityLabels, a required affinity
    term on PodAffinityTopologyKey and a required anti-affinity term on
    PodAntiAffinityTopologyKey (each when given), both selecting those labels."""
    labels = task.get("PodAffinityLabels")
    if labels is None:
        return None
    required = tuple(KaiAffinityTerm(dict(labels), task["PodAffinityTopologyKey"])
                     for _ in (0,) if task.get("PodAffinityTopologyKey"))
    anti = tuple(KaiAffinityTerm(dict(labels), task["PodAntiAffinityTopologyKey"])
                 for _ in (0,) if task.get("PodAntiAffinityTopologyKey"))
    if not required and not anti:
        return None
    return KaiPodAffinity(required=required, required_anti=anti)


def build_nodes(nodes_in: Mapping[str, Mapping[str, Any]]) -> dict[str, KaiNode]:
    out: dict[str, KaiNode] = {}
    for name in sorted(nodes_in):
        n = nodes_in[name]
        strategy = n.get("MigStrategy") or ""
        gpus = int(n.get("GPUs", 0))
        labels = {
            "nvidia.com/gpu.count": str(gpus),
            "nvidia.com/gpu.memory": str(n.get("GPUMemory") or DEFAULT_GPU_MEMORY_MIB),
            "node-role.kubernetes.io/mig-enabled": "true" if strategy else "false",
            "nvidia.com/mig.strategy": strategy,
            NODE_AFFINITY_KEY: name,
        }
        labels.update(n.get("Labels") or {})
        out[name] = KaiNode(
            name=name, gpus=0 if strategy == "mixed" else gpus,
            gpu_memory_mib=int(n.get("GPUMemory") or DEFAULT_GPU_MEMORY_MIB),
            cpu_milli=float(n.get("CPUMillis") or NODE_CPU_CORES) * 1000,
            memory_bytes=float(n.get("CPUMemory") or NODE_MEMORY),
            labels=labels, mig_instances=dict(n.get("MigInstances") or {}),
            max_pods=int(n["MaxTaskNum"]) if n.get("MaxTaskNum") else NODE_PODS,
            gpu_name=n.get("GPUName", ""))
    return out


def _affinity_to_node_names(jobs: dict[str, KaiJob], nodes: Mapping[str, KaiNode],
                            ) -> dict[str, KaiJob]:
    """tasks_fake turns NodeAffinityNames into a required node affinity ``In`` on the
    ``kai.scheduler/type`` label, which nodes_fake sets to the node's name unless the
    table's Labels override it: the nodes whose label value is listed."""
    def names(values: tuple[str, ...]) -> tuple[str, ...]:
        matched = tuple(sorted(n for n, node in nodes.items()
                               if node.labels.get(NODE_AFFINITY_KEY, n) in values))
        # An affinity no node satisfies still restricts the pod (to no node): names
        # that cannot be a node's ('=' is not allowed in a node name).
        return matched or tuple(f"{NODE_AFFINITY_KEY}={v}" for v in values)
    return {name: dataclasses.replace(job, tasks=tuple(
                dataclasses.replace(t, node_names=names(t.node_names)) if t.node_names else t
                for t in job.tasks))
            for name, job in jobs.items()}


def build_state(case: Mapping[str, Any], topology: Mapping[str, Any] | None = None) -> KaiState:
    """The session snapshot upstream's BuildSession makes of the case's values."""
    topology = expand_generated(case["topology"] if topology is None else topology)
    reason = unsupported(topology)
    if reason:
        raise NotBuilt(reason)
    config_changes: dict[str, Any] = {
        # CreateFakeSession: no cap on consolidation preemptees, consolidating reclaim on.
        "max_consolidation_preemptees": -1, "allow_consolidating_reclaim": True,
        # CreateFakeSession leaves SchedulerParams.UseSchedulingSignatures false.
        "use_scheduling_signatures": False,
    }
    # The session's staleness grace period (seconds): the test's override, else Go's
    # zero -- CreateFakeSession leaves SchedulerParams' period unset, so the integration
    # runner's sessions evict a stale gang at once (the scheduler's flag defaults to 60 s).
    grace = float(case.get("session", {}).get("staleness_grace_period_seconds", 0))
    grace_field = next((f for f in ("staleness_grace_period", "stale_grace_period")
                        if _has_field(KaiConfig, f)), None)
    if grace_field:
        config_changes[grace_field] = grace
    elif "staleness_grace_period_seconds" in case.get("session", {}):
        raise NotBuilt("a staleness grace period in KaiConfig (the test sets 60 s)")
    conf = (topology.get("Mocks") or {}).get("SchedulerConf")
    if conf and conf.get("Tiers"):
        # BuildPlugins: a configuration's own tiers replace the default set whole.
        config_changes["plugins"] = tuple(
            KaiPlugin(p["Name"], {str(k): str(v) for k, v in (p.get("Arguments") or {}).items()})
            for t in conf["Tiers"] for p in t.get("Plugins", []))
    nodes = build_nodes(topology.get("Nodes") or {})
    state = KaiState(
        nodes=nodes,
        queues=build_queues(topology),
        jobs=_affinity_to_node_names(build_jobs(list(topology.get("Jobs") or [])), nodes),
        config=dataclasses.replace(KaiConfig(), **config_changes),
        now=0.0,
    )
    if topology.get("TestDRAObjects"):
        (state.resource_claims, state.resource_slices,
         state.device_classes) = dra_objects.build_dra(topology["TestDRAObjects"])
        # nodes_fake never sets NodeInfo.HasDRAGPUs (only the real cluster snapshot does)
        state.dra_nodes_refuse_device_plugin_gpus = False
    if topology.get("Topologies"):
        levels = {t["ObjectMeta"]["Name"]: tuple(level["NodeLabel"] for level in
                                                 t["Spec"]["Levels"])
                  for t in topology["Topologies"]}
        setattr(state, "topologies", levels)  # noqa: B010 -- the field exists (checked)
    return state


# --- the session's answer ----------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """What MatchExpectedAndRealTasks reads of one session, by task name."""

    status: dict[str, str]
    node: dict[str, str]
    gpu_groups: dict[str, tuple[str, ...]]
    accepted_gpus: dict[str, float] | None
    events: Counter[str]
    messages: dict[str, str] | None
    node_gpus: dict[str, tuple[float, float]] | None   # node -> (releasing, idle)
    claims: Mapping[str, Any] | None = None   # DRA claims as the session left them


def _get(obj: Any, *names: str) -> Any:
    for name in names:
        if isinstance(obj, Mapping) and name in obj:
            return obj[name]
        if hasattr(obj, name):
            return getattr(obj, name)
    return None


def read_result(result: Any) -> Outcome:
    """Reads run_session's SessionResult (fields by the names the session uses)."""
    tasks = _get(result, "tasks", "task_outcomes", "outcomes")
    if tasks is None:
        raise NotBuilt("per-task outcomes in SessionResult")
    items = tasks.items() if isinstance(tasks, Mapping) else \
        ((_get(t, "name", "task"), t) for t in tasks)
    status: dict[str, str] = {}
    node: dict[str, str] = {}
    groups: dict[str, tuple[str, ...]] = {}
    accepted: dict[str, float] | None = {}
    for name, t in items:
        key = name[1] if isinstance(name, tuple) else str(name)
        status[key] = str(_get(t, "status"))
        node[key] = _get(t, "node") or ""
        groups[key] = tuple(_get(t, "gpu_groups") or ())
        acc = _get(t, "accepted_gpus")
        if acc is None or accepted is None:
            accepted = None
        else:
            accepted[key] = float(acc)
    events: Counter[str] = Counter()
    for e in _get(result, "events") or ():
        kind = str(_get(e, "kind", "action", "type") or "").lower()
        events[{"bound": "bind", "binding": "bind", "pipelined": "pipeline",
                "evicted": "evict", "eviction": "evict"}.get(kind, kind)] += 1
    messages = _get(result, "unschedulable", "messages", "job_messages")
    nodes = _get(result, "nodes", "node_resources")
    node_gpus: dict[str, tuple[float, float]] | None = None
    if isinstance(nodes, Mapping):
        pairs = {str(n): (_get(v, "releasing_gpus"), _get(v, "idle_gpus"))
                 for n, v in nodes.items()}
        if all(rel is not None and idle is not None for rel, idle in pairs.values()):
            node_gpus = {n: (float(rel), float(idle)) for n, (rel, idle) in pairs.items()}
    claims = _get(result, "resource_claims")
    return Outcome(status, node, groups, accepted, events,
                   dict(messages) if isinstance(messages, Mapping) else None, node_gpus,
                   claims if isinstance(claims, Mapping) else None)


def state_outcome(state: KaiState) -> Outcome:
    """The outcome a freshly built session shows (no action run)."""
    status: dict[str, str] = {}
    node: dict[str, str] = {}
    groups: dict[str, tuple[str, ...]] = {}
    for job in state.jobs.values():
        for t in job.tasks:
            status[t.name], node[t.name], groups[t.name] = t.status, t.node or "", t.gpu_groups
    # The nodes' releasing and idle GPUs as the rebuilt snapshot has them: a session
    # that runs no action (upstream reads them off the rebuilt NodeInfos).
    node_gpus = read_result(_run_session(state, ())).node_gpus
    return Outcome(status, node, groups, None, Counter(), None, node_gpus)


# --- the comparison (MatchExpectedAndRealTasks) -------------------------------------------

def _requested_gpus(task: KaiTask) -> float:
    # ResReq.GPUs(): whole devices, or the fraction times its devices; a GPU-memory
    # share and MIG instances count 0 here.
    if task.gpu_memory_mib and not task.gpus:
        return 0.0
    if 0 < task.gpus < 1:
        return task.gpus * (task.fraction_devices or 1)
    return task.gpus


def check_inputs(case: Mapping[str, Any], state: KaiState) -> None:
    """The request sums upstream compares come from the inputs alone: checking them
    here checks this harness's reading of the builders, not the session."""
    topology = case["topology"]
    by_task = {t.name: t for j in state.jobs.values() for t in j.tasks}
    for job_name, exp in (topology.get("JobExpectedResults") or {}).items():
        job = state.jobs.get(job_name)
        if job is None:
            continue
        _check_requests(exp, list(job.tasks), f"job {job_name}")
    for task_name, exp in (topology.get("TaskExpectedResults") or {}).items():
        if task_name in by_task:
            _check_requests(exp, [by_task[task_name]], f"task {task_name}")


def _check_requests(exp: Mapping[str, Any], tasks: list[KaiTask], what: str) -> None:
    gpus = sum(_requested_gpus(t) for t in tasks)
    assert abs(gpus - float(exp.get("GPUsRequired", 0))) < 1e-9, \
        f"harness: {what} requests {gpus} GPUs, upstream's builder {exp.get('GPUsRequired', 0)}"
    if exp.get("MilliCpuRequired"):
        cpu = sum(t.cpu_milli for t in tasks)
        assert cpu == float(exp["MilliCpuRequired"]), f"harness: {what} CPU {cpu}"
    if exp.get("MemoryRequired"):
        mem = sum(t.memory_bytes for t in tasks)
        assert mem == float(exp["MemoryRequired"]), f"harness: {what} memory {mem}"


def match(case: Mapping[str, Any], state: KaiState, out: Outcome, round_label: str) -> list[str]:
    """Upstream's MatchExpectedAndRealTasks: the differences, empty when it passes."""
    topology = case["topology"]
    errors: list[str] = []
    tasks_of = {name: [t.name for t in job.tasks] for name, job in state.jobs.items()}

    def one(task: str, exp: Mapping[str, Any]) -> None:
        want = exp.get("Status", "Pending")
        got = out.status.get(task)
        if got != want:
            errors.append(f"{round_label}{task}: status {got}, want {want}")
        if exp.get("NodeName") and out.node.get(task, "") != exp["NodeName"]:
            errors.append(f"{round_label}{task}: node {out.node.get(task)!r}, "
                          f"want {exp['NodeName']!r}")
        # Upstream checks GPU groups only where the task's groups equal the expected
        # ones already (slices.Equal guards the check), so a different group never
        # fails there and does not here.

    for job_name, exp in (topology.get("JobExpectedResults") or {}).items():
        if job_name not in tasks_of:
            errors.append(f"{round_label}job {job_name} not found")
            continue
        for task in tasks_of[job_name]:
            one(task, exp)
        accepted = float(exp.get("GPUsAccepted", 0))
        if accepted:
            if out.accepted_gpus is None:
                raise NotBuilt("accepted GPUs per task in SessionResult")
            got = sum(out.accepted_gpus.get(t, 0.0) for t in tasks_of[job_name])
            if abs(got - accepted) > 1e-9:
                errors.append(f"{round_label}job {job_name}: accepted GPUs {got}, want {accepted}")
        message = exp.get("ExpectedErrorMessage")
        if message:
            if out.messages is None:
                raise NotBuilt("per-job unschedulable messages in SessionResult")
            if out.messages.get(job_name) != message:
                errors.append(f"{round_label}job {job_name}: message "
                              f"{out.messages.get(job_name)!r}, want {message!r}")
    expected_tasks = topology.get("TaskExpectedResults") or {}
    for task, exp in expected_tasks.items():
        if task in out.status:
            one(task, exp)
            accepted = float(exp.get("GPUsAccepted", 0))
            if accepted:
                if out.accepted_gpus is None:
                    raise NotBuilt("accepted GPUs per task in SessionResult")
                if abs(out.accepted_gpus.get(task, 0.0) - accepted) > 1e-9:
                    errors.append(f"{round_label}{task}: accepted GPUs "
                                  f"{out.accepted_gpus.get(task)}, want {accepted}")
    for node, exp in (topology.get("ExpectedNodesResources") or {}).items():
        if out.node_gpus is None:
            raise NotBuilt("node releasing/idle GPUs in SessionResult")
        releasing, idle = out.node_gpus.get(node, (None, None))
        if releasing != float(exp.get("ReleasingGPUs", 0)) or idle != float(exp.get("IdleGPUs", 0)):
            errors.append(f"{round_label}node {node}: releasing {releasing} idle {idle}, want "
                          f"{exp.get('ReleasingGPUs', 0)} / {exp.get('IdleGPUs', 0)}")
    return errors


def check_mocks(case: Mapping[str, Any], out: Outcome, round_label: str) -> list[str]:
    """The cache mock allows at most N binds / evictions / pipelines per session, and
    none when the table gives no number (gomock fails an unexpected call)."""
    limits = ((case["topology"].get("Mocks") or {}).get("CacheRequirements")) or {}
    errors = []
    for kind, field in (("bind", "NumberOfCacheBinds"), ("evict", "NumberOfCacheEvictions"),
                        ("pipeline", "NumberOfPipelineActions")):
        allowed = int(limits.get(field, 0))
        if out.events[kind] > allowed:
            errors.append(f"{round_label}{out.events[kind]} {kind} calls, "
                          f"the mock allows {allowed}")
    return errors


# --- running a case ----------------------------------------------------------------------

def _run_session(state: KaiState, actions: tuple[str, ...]) -> Any:
    try:
        from dralab.queueing.kai import session
    except ImportError as err:
        raise NotBuilt(f"dralab.queueing.kai.session.run_session ({err})") from err
    unknown = getattr(session, "UnknownAction", NotImplementedError)
    try:
        return session.run_session(state, actions=actions)
    except (NotImplementedError, unknown) as err:
        raise NotBuilt(str(err) or "run_session raised NotImplementedError") from err


def run_case(case: Mapping[str, Any]) -> list[str]:
    """Runs the case as its upstream test function does; the differences found."""
    if case["mode"] == "integration":
        return _run_integration(case)
    state = build_state(case)
    check_inputs(case, state)
    out = read_result(_run_session(state, tuple(case["actions"])))
    return match(case, state, out, "") + check_mocks(case, out, "")


def _run_integration(case: Mapping[str, Any]) -> list[str]:
    topology = copy.deepcopy(case["topology"])
    settings = case.get("settings") or {}
    # settings["SchedulingDuration"] (1 ms in the DRA tables) is a wall-clock pause
    # between rounds for informers to sync; every session is rebuilt relative to its
    # own now, so the pause changes nothing a round decides.
    until = int(settings.get("RoundsUntilMatch") or INTEGRATION_ROUNDS_UNTIL_MATCH)
    after = int(settings.get("RoundsAfterMatch") or INTEGRATION_ROUNDS_AFTER_MATCH)
    actions = tuple(case["actions"])
    errors: list[str] = []
    messages: dict[str, str] | None = None
    for r in range(until):
        state = build_state(case, topology)
        out = read_result(_run_session(state, actions))
        errors += check_mocks(case, out, f"round {r + 1}: ")
        messages = out.messages
        _advance(topology, out)
    # Matched on a session rebuilt from the last round, keeping its fit errors.
    state = build_state(case, topology)
    check_inputs(case, state)
    rebuilt = dataclasses.replace(state_outcome(state), messages=messages)
    errors += match(case, state, rebuilt, "after the first rounds: ")
    for r in range(after):
        state = build_state(case, topology)
        out = read_result(_run_session(state, actions))
        label = f"round {until + r + 1}: "
        errors += match(case, state, out, label) + check_mocks(case, out, label)
        _advance(topology, out)
    return errors


def _advance(topology: dict[str, Any], out: Outcome) -> None:
    """integration_tests_utils.runSchedulerOneRound: the next round's task states."""
    for job in topology.get("Jobs") or []:
        for index, task in enumerate(job.get("Tasks") or []):
            name = f"{job['Name']}-{index}"
            status = out.status.get(name, task.get("State"))
            if status == "Releasing":
                if job.get("DeleteJobInTest"):
                    task.update(NodeName=out.node.get(name, ""),
                                GPUGroups=list(out.gpu_groups.get(name, ())), State="Releasing")
                else:
                    task.update(NodeName="", State="Pending")
            elif status == "Pipelined":
                task.update(NodeName="", State="Pending")
            elif status == "Binding":
                task.update(State="Running", NodeName=out.node.get(name, ""),
                            GPUGroups=list(out.gpu_groups.get(name, ())))
            else:
                task.update(State=status, NodeName=out.node.get(name, ""),
                            GPUGroups=list(out.gpu_groups.get(name, ())))
    dra_objects.advance_claims(topology, out.claims)


def check_case(case: Mapping[str, Any]) -> None:
    """The body of every ported test: skip honestly or compare."""
    if "unported" in case:
        pytest.skip(case["unported"]["reason"])
    try:
        errors = run_case(case)
    except NotBuilt as err:
        pytest.skip(NOT_BUILT + str(err))
    assert not errors, cite(case) + "\n" + "\n".join(errors)
