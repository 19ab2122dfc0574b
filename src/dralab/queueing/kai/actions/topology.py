"""KAI's topology plugin: which sets of nodes a job (or a sub-group) may be placed on
when it has a topology constraint, and how nodes rank under a preferred level
(plugins/topology: topology_plugin.go, job_filtering.go, node_scoring.go, common.go).

A Topology names node labels from the top level down (e.g. zone, rack). Its tree has a
root, one domain per distinct label path at each level (``zone1``, ``zone1.rack2``), and
the nodes with every label. For a job's tasks and the nodes on offer:

1. the lowest domain holding all offered nodes (not below the preferred level);
2. its free resources (idle and releasing, whole GPUs) and, when the tasks are alike, how
   many of the largest task fit node by node; if the job does not fit there, no node set;
3. its subtree is sorted, fullest relative to the job first (bin-packing), down to the
   preferred (else required) level; under a preferred level nodes are scored by their
   domain's place in that order (the later, the higher: up to 10 x 10,000);
4. the candidate domains: from the preferred (or required) level up to the required
   level (or the root), those the job fits in -- under a required level, only domains
   holding the job's running pods if it has any;
5. they are tried deepest level first, in the tree's order, each as a node set.

A constraint naming a topology that does not exist leaves no node set. Node sets of a
sub-group are found inside those of its parent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dralab.queueing.kai.capacity import humanize
from dralab.queueing.kai.framework import (
    ACTIVE_ALLOCATED,
    POD_SCHEDULING_ERRORS,
    Session,
    SessionJob,
    SessionTask,
)
from dralab.queueing.kai.model import KaiTask, TopologyConstraint
from dralab.queueing.kai.placement import NodeUsage, request_kind

__all__ = ["KaiDomain", "KaiTopologyTree", "node_scores_for", "subset_nodes"]

ROOT = "root"
# scores.Topology; node_scoring.go scales a domain's rank to 0..10 first
_TOPOLOGY_SCORE = 10000.0
# job_filtering.go requiredResourceNotInDomainRatio
_MISSING_RATIO = 1000.0
# common_info.UnschedulableWorkloadReason: a TopologyFitError's reason
_NOT_ENOUGH = "Not enough resources for the workload"


@dataclass(slots=True, eq=False)
class KaiDomain:
    id: str
    level: str
    children: list[KaiDomain] = field(default_factory=list)
    nodes: dict[str, NodeUsage] = field(default_factory=dict)
    allocatable_pods: int = -1
    free: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True, eq=False)
class KaiTopologyTree:
    name: str
    levels: tuple[str, ...]
    domains: dict[str, dict[str, KaiDomain]] = field(default_factory=dict)

    @classmethod
    def build(cls, name: str, levels: Sequence[str],
              nodes: Mapping[str, NodeUsage]) -> KaiTopologyTree:
        tree = cls(name, tuple(levels), {ROOT: {ROOT: KaiDomain(ROOT, ROOT)}})
        root = tree.domains[ROOT][ROOT]
        for node_name in sorted(nodes):
            usage = nodes[node_name]
            labels = usage.node.labels
            if not all(level in labels for level in levels):
                continue
            child: KaiDomain | None = None
            for index in range(len(levels) - 1, -1, -1):
                level = levels[index]
                domain_id = ".".join(labels[lv] for lv in levels[:index + 1])
                domain = tree.domains.setdefault(level, {}).get(domain_id)
                if domain is None:
                    domain = KaiDomain(domain_id, level)
                    tree.domains[level][domain_id] = domain
                domain.nodes[node_name] = usage
                if child is not None and all(c.id != child.id for c in domain.children):
                    domain.children.append(child)
                child = domain
            if child is not None and all(c.id != child.id for c in root.children):
                root.children.append(child)
            root.nodes[node_name] = usage
        return tree


def _trees(session: Session) -> dict[str, KaiTopologyTree]:
    trees = session.plugin_state.get("topology")
    if not isinstance(trees, dict):
        trees = {name: KaiTopologyTree.build(name, levels, session.nodes)
                 for name, levels in sorted(session.state.topologies.items())}
        session.plugin_state["topology"] = trees
    return trees


def node_scores_for(session: Session, keys: Sequence[str]) -> Mapping[str, float] | None:
    """The topology node scores of the first of ``keys`` (a pod set, then its ancestor
    sets) that has any this job turn."""
    scores = session.plugin_state.get("topology_scores")
    if not isinstance(scores, dict):
        return None
    for key in keys:
        if key in scores:
            found: Mapping[str, float] = scores[key]
            return found
    return None


def reset_scores(session: Session) -> None:
    """PreJobAllocation: every job starts without sub-group node scores."""
    session.plugin_state["topology_scores"] = {}


# --- resources -----------------------------------------------------------------------

def _task_amounts(task: KaiTask) -> dict[str, float]:
    """A task's ResReq as the topology plugin sums it (GPUs: whole or fraction x devices)."""
    kind = request_kind(task)
    gpus = 0.0
    if kind == "whole":
        gpus = task.gpus
    elif kind == "fraction":
        gpus = task.gpus * (task.fraction_devices or 1)
    amounts = {"cpu": task.cpu_milli, "memory": task.memory_bytes, "gpu": gpus, "pods": 1.0}
    for name, count in task.mig.items():
        amounts[name] = float(count)
    return amounts


def _sum(tasks: Sequence[SessionTask]) -> dict[str, float]:
    total: dict[str, float] = {}
    for task in tasks:
        for name, value in _task_amounts(task.spec).items():
            total[name] = total.get(name, 0.0) + value
    return total


def _free_resources(domain: KaiDomain) -> dict[str, float]:
    """calcSubTreeFreeResources: idle plus releasing of the leaf domains' nodes."""
    if not domain.children:
        free: dict[str, float] = {}
        for usage in domain.nodes.values():
            names = {"cpu", "memory", "gpu", "pods", *usage.node.mig_instances}
            for name in names:
                value = usage.non_allocated(name)
                if math.isinf(value):
                    value = 0.0   # no pod cap: KAI's node would show its (large) number
                free[name] = free.get(name, 0.0) + value
        domain.free = free
        return free
    total: dict[str, float] = {}
    for child in domain.children:
        for name, value in _free_resources(child).items():
            total[name] = total.get(name, 0.0) + value
    domain.free = total
    return total


def _ratio(asked: Mapping[str, float], domain: KaiDomain) -> float:
    """getJobRatioToFreeResources: the job's dominant share of the domain's free
    resources (a resource the domain has none of counts 1000)."""
    if all(v <= 0 for v in asked.values()):
        return 0.0
    ratio = 0.0
    free = domain.free
    if asked.get("gpu", 0.0) > 0:
        have = free.get("gpu", 0.0)
        ratio = max(ratio, asked["gpu"] / have if have > 0 else math.inf)
    for name, value in asked.items():
        if name == "pods":
            continue
        amount = _quantity_value(name, value)
        if amount == 0:
            continue
        have = _quantity_value(name, free.get(name, 0.0))
        ratio = max(ratio, _MISSING_RATIO if have == 0 else amount / have)
    return ratio


def _quantity_value(name: str, value: float) -> float:
    """resource.Quantity.Value(): CPU in whole cores rounded up, the rest as numbers."""
    if name == "cpu":
        return float(math.ceil(value / 1000.0))
    if name == "gpu":
        return float(math.ceil(value))
    return float(math.ceil(value))


def _representor_accounting(tasks: Sequence[SessionTask]) -> bool:
    """useRepresentorPodsAccounting: all tasks ask GPUs or none does."""
    with_gpu = sum(1 for t in tasks if _task_amounts(t.spec)["gpu"] > 0)
    return with_gpu in (0, len(tasks))


def _largest(tasks: Sequence[SessionTask]) -> KaiTask:
    """The representor pod: each resource at the largest any task asks."""
    first = tasks[0].spec
    cpu = max(t.spec.cpu_milli for t in tasks)
    memory = max(t.spec.memory_bytes for t in tasks)
    gpus = max(t.spec.gpus for t in tasks)
    devices = max((t.spec.fraction_devices or 1) for t in tasks)
    gpu_memory = max(t.spec.gpu_memory_mib for t in tasks)
    mig: dict[str, int] = {}
    for t in tasks:
        for name, count in t.spec.mig.items():
            mig[name] = max(mig.get(name, 0), count)
    return KaiTask(name="representor", job=first.job, cpu_milli=cpu, memory_bytes=memory,
                   gpus=gpus, fraction_devices=devices if devices > 1 else None,
                   gpu_memory_mib=gpu_memory, mig=mig)


def _times(task: KaiTask, k: int) -> KaiTask:
    kind = request_kind(task)
    gpus, devices = task.gpus, task.fraction_devices
    if kind == "whole":
        gpus = task.gpus * k
    elif kind in ("fraction", "memory"):
        devices = (task.fraction_devices or 1) * k
    return KaiTask(name=task.name, job=task.job, cpu_milli=task.cpu_milli * k,
                   memory_bytes=task.memory_bytes * k, gpus=gpus, fraction_devices=devices,
                   gpu_memory_mib=task.gpu_memory_mib,
                   mig={n: c * k for n, c in task.mig.items()})


def _accommodation(representor: KaiTask, usage: NodeUsage, count: int) -> int:
    """calcNodeAccommodation: how many of the largest task fit on the node's idle and
    releasing resources (KAI grows the test pod until it does not fit; past the job's
    size the number does not matter)."""
    if (request_kind(representor) == "cpu" and not representor.cpu_milli
            and not representor.memory_bytes):
        return count
    fits = 0
    while fits < count and usage.fits_idle_or_releasing(_times(representor, fits + 1),
                                                        pods=fits + 1):
        fits += 1
    return fits


def _allocatable(domain: KaiDomain, representor: KaiTask, count: int) -> int:
    if not domain.children:
        domain.allocatable_pods = sum(_accommodation(representor, u, count)
                                      for u in domain.nodes.values())
        return domain.allocatable_pods
    domain.allocatable_pods = sum(_allocatable(c, representor, count) for c in domain.children)
    return domain.allocatable_pods


def _fits(domain: KaiDomain, asked: Mapping[str, float], count: int) -> bool:
    """checkJobDomainFit."""
    if domain.allocatable_pods != -1:
        return domain.allocatable_pods >= count
    return _ratio(asked, domain) <= 1.0


# --- the subset function ----------------------------------------------------------------

def _lowest_common(nodes: Sequence[NodeUsage], tree: KaiTopologyTree,
                   constraint: TopologyConstraint) -> tuple[str, str, dict[str, NodeUsage]]:
    valid = {u.node.name: u for u in nodes if all(lv in u.node.labels for lv in tree.levels)}
    parts: list[str] = []
    for level in tree.levels:
        values = {u.node.labels[level] for u in valid.values()}
        if len(values) != 1 or "" in values:
            break
        parts.append(values.pop())
        if level == constraint.preferred_level:
            break
    if not parts:
        return ROOT, ROOT, valid
    return ".".join(parts), tree.levels[len(parts) - 1], valid


def _sort_tree(asked: Mapping[str, float], root: KaiDomain, depth: str) -> None:
    if not depth:
        return
    ratios = {c.id: _ratio(asked, c) for c in root.children}
    root.children.sort(key=lambda c: (-ratios[c.id], c.id))
    if root.level == depth:
        return
    for child in root.children:
        _sort_tree(asked, child, depth)


def _level_domains(root: KaiDomain, level: str) -> list[KaiDomain]:
    if root.level == level:
        return [root]
    found: list[KaiDomain] = []
    for child in root.children:
        found.extend(_level_domains(child, level))
    return found


def _scores(domain: KaiDomain, preferred: str) -> dict[str, float]:
    ordered = _level_domains(domain, preferred)
    scores: dict[str, float] = {}
    for index, leaf in enumerate(ordered):
        score = math.floor((index + 1) / len(ordered) * 10) * _TOPOLOGY_SCORE
        for name in leaf.nodes:
            scores[name] = score
    return scores


def _relevant_levels(tree: KaiTopologyTree, constraint: TopologyConstraint) -> list[str] | None:
    required, preferred = constraint.required_level, constraint.preferred_level
    levels = [*reversed(tree.levels), ROOT]
    relevant: list[str] = []
    found_required = found_preferred = False
    for level in levels:
        if level == preferred:
            found_preferred = True
        if level == required:
            found_required = True
        if found_preferred or found_required:
            relevant.append(level)
        if found_required:
            break
    if (required and not found_required) or (preferred and not found_preferred):
        return None
    return relevant


def _subtree(domain: KaiDomain, into: dict[str, dict[str, KaiDomain]]) -> None:
    for child in domain.children:
        _subtree(child, into)
    into.setdefault(domain.level, {})[domain.id] = domain


def _reverse_level_order(root: KaiDomain) -> list[KaiDomain]:
    levels: list[list[KaiDomain]] = []
    queue = [root]
    while queue:
        levels.append(queue)
        queue = [c for d in queue for c in d.children]
    return [d for level in reversed(levels) for d in level]


def _domain_error(job: SessionJob, group: str, domain: KaiDomain, asked: Mapping[str, float],
                  count: int) -> tuple[str, str]:
    """The TopologyFitError of a domain the job does not fit in."""
    prefix = f"<{domain.id}>: "
    if group and group != "default":
        prefix += f"subgroup {group}: "
    if domain.allocatable_pods != -1:
        return (_NOT_ENOUGH, f"{prefix}node-group {domain.id} can allocate only "
                             f"{domain.allocatable_pods} of {count} required pods")
    parts: list[str] = []
    free = domain.free
    if asked.get("gpu", 0.0) > free.get("gpu", 0.0):
        parts.append(f"{domain.id} didn't have enough resource: GPUs, requested: "
                     f"{_g3(asked['gpu'])}, available: {_g3(free.get('gpu', 0.0))}")
    if int(asked.get("cpu", 0.0)) > int(free.get("cpu", 0.0)):
        parts.append(f"{domain.id} didn't have enough resources: CPU cores, requested: "
                     f"{humanize(asked['cpu'], 1000)}, available: "
                     f"{humanize(free.get('cpu', 0.0), 1000)}")
    if asked.get("memory", 0.0) > free.get("memory", 0.0):
        parts.append(f"{domain.id} didn't have enough resources: memory, requested: "
                     f"{humanize(asked['memory'], 1e9)}, available: "
                     f"{humanize(free.get('memory', 0.0), 1e9)}")
    return (_NOT_ENOUGH, prefix + ", ".join(parts))


def _g3(value: float) -> str:
    """strconv.FormatFloat(v, 'g', 3, 64)."""
    text = f"{value:.3g}"
    return text


def _no_match(job: SessionJob, group: str, tree: KaiTopologyTree, constraint: TopologyConstraint,
              suffix: str = "") -> str:
    what = f"job <{job.spec.namespace}/{job.name}>"
    if group and group != "default":
        what += f", subgroup {group}"
    tail = f": {suffix}" if suffix else ""
    return (f"topology {tree.name}, requirement {constraint.required_level} couldn't be "
            f"satisfied for {what}{tail}")


def subset_nodes(session: Session, job: SessionJob, group: str, key: str,
                 constraint: TopologyConstraint | None, podset_pods: Sequence[SessionTask],
                 tasks: Sequence[SessionTask], nodes: list[NodeUsage]) -> list[list[NodeUsage]]:
    """subSetNodesFn: the node sets to try, best first. ``group``: the sub-group's name
    (messages), ``key``: where its node scores are kept, ``podset_pods``: the pods of
    the pod sets it covers (for the running-pods rule)."""
    if constraint is None or not constraint.topology:
        return [nodes]
    tree = _trees(session).get(constraint.topology)
    if tree is None:
        job.fit_errors.append((POD_SCHEDULING_ERRORS,
                               f"Requested topology {constraint.topology} does not exist"))
        return []
    if not tasks:
        return [nodes]
    domain_id, level, valid = _lowest_common(nodes, tree, constraint)
    domain = tree.domains.get(level, {}).get(domain_id)
    if domain is None:
        return []
    for level_domains in tree.domains.values():
        for d in level_domains.values():
            d.allocatable_pods = -1
            d.free = {}
    _free_resources(domain)
    count = len(tasks)
    if _representor_accounting(tasks):
        _allocatable(domain, _largest(tasks), count)
    asked = _sum(tasks)
    if not _fits(domain, asked, count):
        where = ("the cluster" if domain.id == ROOT else domain.id)
        job.fit_errors.append((POD_SCHEDULING_ERRORS, _no_match(
            job, group, tree, constraint, f"not enough resources in {where} to allocate the job")))
        return []
    preferred, required = constraint.preferred_level, constraint.required_level
    _sort_tree(asked, domain, preferred or required)
    if preferred:
        scores = session.plugin_state.setdefault("topology_scores", {})
        if isinstance(scores, dict):
            scores[key] = _scores(domain, preferred)
    levels = _relevant_levels(tree, constraint)
    if levels is None:
        return []
    running = [p for p in podset_pods if p.status in ACTIVE_ALLOCATED and p.node]
    candidates_by_level: dict[str, dict[str, KaiDomain]]
    if running and required:
        candidates_by_level = {}
        for d in tree.domains.get(required, {}).values():
            if any(p.node in d.nodes for p in running):
                _subtree(d, candidates_by_level)
    else:
        candidates_by_level = tree.domains
    chosen: list[KaiDomain] = []
    top_errors: list[tuple[str, str]] = []
    for index, lv in enumerate(levels):
        for domain_id in sorted(candidates_by_level.get(lv, {})):
            d = candidates_by_level[lv][domain_id]
            if _fits(d, asked, count):
                chosen.append(d)
            elif index == len(levels) - 1:
                top_errors.append(_domain_error(job, group, d, asked, count))
    if not chosen:
        job.fit_errors.extend(top_errors)
        job.fit_errors.append((POD_SCHEDULING_ERRORS, _no_match(job, group, tree, constraint)))
        return []
    ordered = [d for d in _reverse_level_order(tree.domains[ROOT][ROOT]) if d in chosen]
    return [[valid[n] for n in sorted(d.nodes) if n in valid] for d in ordered]
