"""KAI's topology plugin (pkg/scheduler/plugins/topology): the domain tree of a KAI
Topology, which domains can hold a job's (or a sub-group's) pods, and how nodes rank
under a preferred level. The session glue (trees kept per session, node scores per job
turn, fit errors on the job) is in ``actions/topology.py``.

A Topology names node labels from the top level down (e.g. zone, rack). Its tree has a
root, one domain per distinct label path at each level (``zone1``, ``zone1.rack2``), and
the nodes with every label. For a job's tasks and the nodes on offer
(:func:`subset_node_sets`):

1. the lowest domain holding all offered nodes (not below the preferred level);
2. its free resources (idle and releasing) and, when the tasks are alike, how many of
   the largest task fit node by node; if the job does not fit there, no node set;
3. its subtree is sorted, fullest relative to the job first (bin-packing), down to the
   preferred (else required) level; under a preferred level nodes are scored by their
   domain's place in that order (the later, the higher: up to 10 x 10,000);
4. the candidate domains: from the preferred (or required) level up to the required
   level (or the root), those the job fits in -- under a required level, only domains
   holding the job's running pods if it has any;
5. they are tried deepest level first, in the tree's order, each as a node set.

A constraint naming a topology that does not exist leaves no node set. Errors KAI's
plugin returns (a level the topology does not have, a domain missing from the tree)
are :class:`TopologyError`; the allocation gives up on the job for them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from dralab.queueing.kai.capacity import humanize
from dralab.queueing.kai.framework import ACTIVE_ALLOCATED, POD_SCHEDULING_ERRORS
from dralab.queueing.kai.model import KaiTask, TopologyConstraint
from dralab.queueing.kai.placement import NodeUsage, request_kind

__all__ = [
    "ALLOCATABLE_NOT_SET",
    "ROOT",
    "KaiDomain",
    "KaiTopologyTree",
    "TopologyError",
    "TopologyFitError",
    "calc_free_resources",
    "calc_tree_allocatable",
    "check_domain_fit",
    "job_allocatable_domains",
    "job_ratio",
    "level_domains",
    "lowest_common_domain",
    "node_part_of_topology",
    "node_scores",
    "relevant_levels",
    "reverse_level_order",
    "sort_tree",
    "subset_node_sets",
    "task_amounts",
    "tasks_amounts",
    "use_representor_accounting",
]

ROOT = "root"
ALLOCATABLE_NOT_SET = -1          # allocatablePodsNotSet
DEFAULT_SUBGROUP = "default"      # podgroup_info.DefaultSubGroup
# scores.Topology; node_scoring.go scales a domain's rank to 0..10 first
TOPOLOGY_SCORE = 10000.0
# requiredResourceNotInDomainRatio: the job asks a resource the domain has none of
_MISSING_RATIO = 1000.0
# common_info.UnschedulableWorkloadReason: a TopologyFitError's reason
NOT_ENOUGH = "Not enough resources for the workload"
_MILLI_CPU_PER_CORE = 1000.0
_BYTES_PER_GB = 1e9


class TopologyError(Exception):
    """An error the topology plugin returns (not a fit error): KAI logs it and the job
    is not allocated this turn."""


class PodLike(Protocol):
    """What the plugin reads of a job's pod: its status, node and request."""

    @property
    def status(self) -> str: ...

    @property
    def node(self) -> str | None: ...

    @property
    def spec(self) -> KaiTask: ...


@dataclass(slots=True, eq=False)
class KaiDomain:
    """DomainInfo: a node of the topology tree (``free``: IdleOrReleasingResources,
    ``allocatable_pods``: how many of the job's pods it can take, -1 when not counted)."""

    id: str
    level: str
    children: list[KaiDomain] = field(default_factory=list)
    nodes: dict[str, NodeUsage] = field(default_factory=dict)
    allocatable_pods: int = ALLOCATABLE_NOT_SET
    free: dict[str, float] = field(default_factory=dict)

    def add_node(self, usage: NodeUsage) -> None:
        self.nodes[usage.node.name] = usage

    def add_child(self, child: KaiDomain) -> None:
        if all(c.id != child.id for c in self.children):
            self.children.append(child)


@dataclass(slots=True, eq=False)
class KaiTopologyTree:
    """Info: a Topology's levels (top first) and its domains by level (``root`` too)."""

    name: str
    levels: tuple[str, ...]
    domains: dict[str, dict[str, KaiDomain]] = field(default_factory=dict)

    @property
    def root(self) -> KaiDomain:
        return self.domains[ROOT][ROOT]

    @classmethod
    def build(cls, name: str, levels: Sequence[str],
              nodes: Mapping[str, NodeUsage]) -> KaiTopologyTree:
        """initializeTopologyTree: every node with all the level labels joins the domain
        of each level its labels name, linked bottom-up to the root. Nodes are taken in
        name order (KAI ranges over a map; the children's order is re-sorted before use)."""
        tree = cls(name, tuple(levels), {ROOT: {ROOT: KaiDomain(ROOT, ROOT)}})
        for node_name in sorted(nodes):
            usage = nodes[node_name]
            labels = usage.node.labels
            if not node_part_of_topology(labels, tree.levels):
                continue
            child: KaiDomain | None = None
            for index in range(len(levels) - 1, -1, -1):
                level = levels[index]
                domain_id = ".".join(labels[lv] for lv in levels[:index + 1])
                domain = tree.domains.setdefault(level, {}).get(domain_id)
                if domain is None:
                    domain = KaiDomain(domain_id, level)
                    tree.domains[level][domain_id] = domain
                domain.add_node(usage)
                if child is not None:
                    domain.add_child(child)
                child = domain
            if child is not None:
                tree.root.add_child(child)
            tree.root.add_node(usage)
        return tree

    def cleanup(self) -> None:
        """treeAllocatableCleanup: nothing counted yet for this job."""
        for level_domains in self.domains.values():
            for domain in level_domains.values():
                domain.allocatable_pods = ALLOCATABLE_NOT_SET
                domain.free = {}


@dataclass(frozen=True, slots=True)
class TopologyFitError:
    """common_info's JobFitError / TopologyFitError: short messages, detailed ones, and
    the domain (node group) for a topology error."""

    reason: str
    messages: tuple[str, ...]
    details: tuple[str, ...] = ()
    subgroup: str = ""
    domain: str | None = None

    def detailed_message(self) -> str:
        text = ", ".join(self.details or self.messages)
        if self.subgroup and self.subgroup != DEFAULT_SUBGROUP:
            text = f"subgroup {self.subgroup}: {text}"
        if self.domain is not None:
            text = f"<{self.domain}>: {text}"
        return text


def node_part_of_topology(labels: Mapping[str, str], levels: Iterable[str]) -> bool:
    """isNodePartOfTopology: the node has a label for every level."""
    return all(level in labels for level in levels)


def lowest_common_domain(nodes: Iterable[NodeUsage], levels: Sequence[str],
                         constraint: TopologyConstraint | None,
                         ) -> tuple[str, str, dict[str, NodeUsage]]:
    """lowestCommonDomainID: (domain id, level, nodes in the topology) of the lowest
    domain all the topology's nodes share, not below the preferred level."""
    valid = {u.node.name: u for u in nodes if node_part_of_topology(u.node.labels, levels)}
    preferred = constraint.preferred_level if constraint is not None else ""
    parts: list[str] = []
    for level in levels:
        values = {u.node.labels[level] for u in valid.values()}
        if len(values) != 1 or "" in values:
            break
        parts.append(values.pop())
        if level == preferred:
            break   # no lower level is looked at for the allocation
    if not parts:
        return ROOT, ROOT, valid
    return ".".join(parts), levels[len(parts) - 1], valid


# --- resources -----------------------------------------------------------------------

def task_amounts(task: KaiTask) -> dict[str, float]:
    """A task's ResReq as Resource.AddResourceRequirements sums it: CPU (millicores),
    memory, GPUs (whole, or fraction x devices; a gpu-memory request counts none), and
    as scalar resources one pod (PodsResourceName) and its MIG profiles."""
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


def tasks_amounts(tasks: Iterable[PodLike]) -> dict[str, float]:
    """getTasksAllocationMetadata's resource sum."""
    total: dict[str, float] = {}
    for task in tasks:
        for name, value in task_amounts(task.spec).items():
            total[name] = total.get(name, 0.0) + value
    return total


def calc_free_resources(domain: KaiDomain | None) -> dict[str, float]:
    """calcSubTreeFreeResources: idle plus releasing of the leaf domains' nodes, summed
    up the subtree (``pods`` too, which the ratio ignores)."""
    if domain is None:
        return {}
    total: dict[str, float] = {}
    if not domain.children:
        for usage in domain.nodes.values():
            for name in ("cpu", "memory", "gpu", "pods", *sorted(usage.node.mig_instances)):
                # a node without a pod cap keeps an infinite "pods" (KAI's node always
                # has one; the ratio ignores pods, the error message finds enough)
                total[name] = total.get(name, 0.0) + usage.non_allocated(name)
    else:
        for child in domain.children:
            for name, value in calc_free_resources(child).items():
                total[name] = total.get(name, 0.0) + value
    domain.free = total
    return total


def _quantity_value(name: str, value: float) -> int:
    """ToResourceList(...)[name].Value(): memory is a quantity of bytes; CPU a
    milli-quantity of millicores and a scalar (MIG profile) a milli-quantity of its
    count, so Value() is the integer over 1000 rounded up (any MIG count reads 1)."""
    if name == "memory":
        return int(value)
    return math.ceil(int(value) / 1000)


def job_ratio(asked: Mapping[str, float], domain: KaiDomain) -> float:
    """getJobRatioToFreeResources: the job's dominant share of the domain's free
    resources (GPUs as numbers, the rest as quantities' Value(); a resource the domain
    has none of counts 1000; pods are left out). Above 1 the job does not fit."""
    if all(value <= 0 for name, value in asked.items() if name != "pods"):
        return 0.0
    ratio = 0.0
    free = domain.free
    gpus = asked.get("gpu", 0.0)
    if gpus > 0:
        have = free.get("gpu", 0.0)
        ratio = max(ratio, gpus / have if have > 0 else math.inf)
    for name in sorted(asked):
        if name in ("gpu", "pods"):
            continue
        amount = _quantity_value(name, asked[name])
        if amount == 0:
            continue
        have = _quantity_value(name, free.get(name, 0.0))
        ratio = max(ratio, _MISSING_RATIO if have == 0 else amount / have)
    return ratio


def use_representor_accounting(tasks: Sequence[PodLike]) -> bool:
    """useRepresentorPodsAccounting: the tasks are alike -- all ask GPUs or none does,
    and every scalar resource (MIG profile) is asked by all or none."""
    with_gpu = sum(1 for t in tasks if task_amounts(t.spec)["gpu"] > 0)
    if with_gpu not in (0, len(tasks)):
        return False
    scalars: dict[str, int] = {}
    for task in tasks:
        for name in task.spec.mig:
            scalars[name] = scalars.get(name, 0) + 1
    return all(count == len(tasks) for count in scalars.values())


def _gpu_requirement(task: KaiTask) -> tuple[int, float]:
    """GpuResourceRequirement's (count, portion): whole GPUs (n, 1), a fraction
    (devices, f), a gpu-memory share (devices, 0), otherwise (0, 0)."""
    kind = request_kind(task)
    if kind == "whole":
        return int(task.gpus), 1.0
    if kind == "fraction":
        return task.fraction_devices or 1, task.gpus
    if kind == "memory":
        return task.fraction_devices or 1, 0.0
    return 0, 0.0


def _gpus_of(count: int, portion: float) -> float:
    """getExtendedResourceGpus: portion (in hundredths) x count."""
    return round(portion * 100) * count / 100


def _largest(tasks: Sequence[PodLike]) -> KaiTask:
    """initTasksRepresentorMetadataStruct: the representor pod, each resource at the
    largest any task asks (SetMaxResource). Its GPU part is the task's with the most
    GPUs (the first of equals), its GPU memory none (SetMaxResource leaves it at 0, so
    a gpu-memory share asks no GPU here); two different fractions cannot be combined
    and are KAI's error."""
    first = tasks[0].spec
    mig: dict[str, int] = {}
    count, portion = 0, 0.0
    for t in tasks:
        for name, number in t.spec.mig.items():
            mig[name] = max(mig.get(name, 0), number)
        t_count, t_portion = _gpu_requirement(t.spec)
        if portion and t_portion and portion != t_portion:
            raise TopologyError(
                "cannot calculate max resource for GpuResourceRequirements with different "
                f"fractional portions. {_go_number(portion)} vs {_go_number(t_portion)}")
        if _gpus_of(t_count, t_portion) > _gpus_of(count, portion):
            count, portion = t_count, t_portion
    gpus, devices = 0.0, None
    if portion >= 1:
        gpus = float(count)
    elif portion > 0:
        gpus, devices = portion, (count if count > 1 else None)
    return KaiTask(name="representor", job=first.job,
                   cpu_milli=max(t.spec.cpu_milli for t in tasks),
                   memory_bytes=max(t.spec.memory_bytes for t in tasks),
                   gpus=gpus, fraction_devices=devices, mig=mig)


def _go_number(value: float) -> str:
    """Go's %v of a float64 (no '.0' on whole numbers)."""
    return str(int(value)) if value == int(value) else repr(value)


def _times(task: KaiTask, k: int) -> KaiTask:
    """calcNextAllocationTestPodResources: k of the representor pod as one request
    (whole GPUs and MIG profiles add up, a shared GPU adds devices)."""
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
    releasing resources; a pod asking nothing fits as many times as there are tasks.
    KAI grows the test pod until it no longer fits; counting stops at the job's size
    here (only "at least the job" matters to every use of the number)."""
    if (request_kind(representor) == "cpu" and not representor.cpu_milli
            and not representor.memory_bytes):
        return count
    fits = 0
    while fits < count and usage.fits_idle_or_releasing(_times(representor, fits + 1),
                                                        pods=fits + 1):
        fits += 1
    return fits


def calc_tree_allocatable(tasks: Sequence[PodLike], domain: KaiDomain | None) -> int:
    """calcTreeAllocatable: every domain of the subtree counts how many of the job's
    largest task its leaf domains' nodes can take. Raises :class:`TopologyError` for
    tasks whose fractions differ."""
    if domain is None or not tasks:
        return 0
    return _allocatable(domain, _largest(tasks), len(tasks))


def _allocatable(domain: KaiDomain, representor: KaiTask, count: int) -> int:
    if not domain.children:
        domain.allocatable_pods = sum(_accommodation(representor, domain.nodes[n], count)
                                      for n in sorted(domain.nodes))
    else:
        domain.allocatable_pods = sum(_allocatable(c, representor, count)
                                      for c in domain.children)
    return domain.allocatable_pods


def _g3(value: float) -> str:
    """strconv.FormatFloat(v, 'g', 3, 64)."""
    text = f"{value:.3g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{exponent[0]}{int(exponent[1:]):02d}"
    return text


def check_domain_fit(job: str, namespace: str, subgroup: str, asked: Mapping[str, float],
                     count: int, domain: KaiDomain) -> TopologyFitError | None:
    """checkJobDomainFit: by the counted pods when the domain has them, else by the
    job's ratio to the domain's free resources."""
    del job, namespace   # in KAI's error, not in its messages
    if domain.allocatable_pods != ALLOCATABLE_NOT_SET:
        if domain.allocatable_pods < count:
            return TopologyFitError(
                NOT_ENOUGH, (f"node-group {domain.id} can allocate only "
                             f"{domain.allocatable_pods} of {count} required pods",),
                subgroup=subgroup, domain=domain.id)
        return None
    if job_ratio(asked, domain) > 1.0:
        return _insufficient(subgroup, domain, asked)
    return None


def _insufficient(subgroup: str, domain: KaiDomain,
                  asked: Mapping[str, float]) -> TopologyFitError:
    """NewTopologyInsufficientResourcesError."""
    short: list[str] = []
    details: list[str] = []
    free = domain.free
    migs = sorted(n for n in asked if n not in ("cpu", "memory", "gpu", "pods"))
    if migs:
        for name in migs:
            have = int(free.get(name, 0.0))
            if have < int(asked[name]):
                details.append(f"{domain.id} didn't have enough resource: {name}, "
                               f"requested: {int(asked[name])}, available: {have}")
                short.append(f"node-group(s) didn't have enough of mig profile: {name}")
    elif asked.get("gpu", 0.0) > free.get("gpu", 0.0):
        details.append(f"{domain.id} didn't have enough resource: GPUs, requested: "
                       f"{_g3(asked['gpu'])}, available: {_g3(free.get('gpu', 0.0))}")
        short.append("node-group(s) didn't have enough resources: GPUs")
    if int(asked.get("cpu", 0.0)) > int(free.get("cpu", 0.0)):
        details.append(f"{domain.id} didn't have enough resources: CPU cores, requested: "
                       f"{humanize(asked.get('cpu', 0.0), _MILLI_CPU_PER_CORE)}, available: "
                       f"{humanize(free.get('cpu', 0.0), _MILLI_CPU_PER_CORE)}")
        short.append("node-group(s) didn't have enough resources: CPU cores")
    if asked.get("memory", 0.0) > free.get("memory", 0.0):
        details.append(f"{domain.id} didn't have enough resources: memory, requested: "
                       f"{humanize(asked['memory'], _BYTES_PER_GB)}, available: "
                       f"{humanize(free.get('memory', 0.0), _BYTES_PER_GB)}")
        short.append("node-group(s) didn't have enough resources: memory")
    # every scalar resource, pods and MIG profiles alike (so a short MIG profile is
    # named twice, as KAI does; Go ranges over a map, here by name)
    for name in sorted(n for n in asked if n not in ("cpu", "memory", "gpu")):
        available = free.get(name, 0.0)
        if available < asked[name]:
            details.append(f"{domain.id} didn't have enough resource: {name}, "
                           f"requested: {int(asked[name])}, available: {int(available)}")
            short.append(f"node-group(s) didn't have enough resources: {name}")
    return TopologyFitError(NOT_ENOUGH, tuple(short), tuple(details), subgroup, domain.id)


# --- order and scores ------------------------------------------------------------------

def sort_tree(asked: Mapping[str, float], root: KaiDomain | None, max_depth: str) -> None:
    """sortTree: children fullest-first (the job's ratio to their free resources,
    descending; ties by id), down to ``max_depth``'s level (bin-packing)."""
    if root is None or not max_depth:
        return
    ratios = {c.id: job_ratio(asked, c) for c in root.children}
    root.children.sort(key=lambda c: (-ratios[c.id], c.id))
    if root.level == max_depth:
        return
    for child in root.children:
        sort_tree(asked, child, max_depth)


def level_domains(root: KaiDomain, level: str) -> list[KaiDomain]:
    """getLevelDomains: the subtree's domains at ``level``, in tree order."""
    if root.level == level:
        return [root]
    found: list[KaiDomain] = []
    for child in root.children:
        found.extend(level_domains(child, level))
    return found


def node_scores(domain: KaiDomain, preferred: str) -> dict[str, float]:
    """calculateNodeScores: nodes of the i-th of n preferred-level domains (tree order)
    score floor((i+1)/n x 10) x 10,000 -- whole steps so lower plugins cannot outweigh."""
    ordered = level_domains(domain, preferred)
    scores: dict[str, float] = {}
    for index, leaf in enumerate(ordered):
        score = math.floor((index + 1) / len(ordered) * 10) * TOPOLOGY_SCORE
        for name in leaf.nodes:
            scores[name] = score
    return scores


def reverse_level_order(root: KaiDomain | None) -> list[KaiDomain]:
    """reverseLevelOrder: breadth-first levels, deepest first, left to right in each."""
    if root is None:
        return []
    levels: list[list[KaiDomain]] = []
    queue = [root]
    while queue:
        levels.append(queue)
        queue = [c for d in queue for c in d.children]
    return [d for level in reversed(levels) for d in level]


# --- candidate domains ---------------------------------------------------------------------

def _constraint_owner(subgroup: str) -> str:
    return "workload" if subgroup == DEFAULT_SUBGROUP else f"sub-group {subgroup}"


def relevant_levels(tree: KaiTopologyTree, constraint: TopologyConstraint,
                    subgroup: str) -> list[str]:
    """calculateRelevantDomainLevels: the levels from the preferred (else required) one
    up to the required one (else the root), bottom first."""
    required, preferred = constraint.required_level, constraint.preferred_level
    if not required and not preferred:
        raise TopologyError(f"no topology constraints were found for subgroup {subgroup}, "
                            f"with topology name {tree.name}")
    relevant: list[str] = []
    found_required = found_preferred = False
    for level in [*reversed(tree.levels), ROOT]:
        if level == preferred:
            found_preferred = True
        if level == required:
            found_required = True
        if found_preferred or found_required:
            relevant.append(level)
        if found_required:
            break
    for kind, name, found in (("required", required, found_required),
                              ("preferred", preferred, found_preferred)):
        if name and not found:
            raise TopologyError(
                f"topology constraint error: {_constraint_owner(subgroup)} specified "
                f"'{name}' as the {kind} topology constraint level, but the topology tree "
                f"'{tree.name}' does not contain a level with this name")
    return relevant


def _subtree(domain: KaiDomain, into: dict[str, dict[str, KaiDomain]]) -> None:
    into.setdefault(domain.level, {})
    for child in domain.children:
        _subtree(child, into)
    into[domain.level][domain.id] = domain


def no_match_message(tree: KaiTopologyTree, constraint: TopologyConstraint, job: str,
                     namespace: str, subgroup: str, suffix: str = "") -> str:
    """getNoTopologyMatchError."""
    what = f"job <{namespace}/{job}>"
    if subgroup and subgroup != DEFAULT_SUBGROUP:
        what += f", subgroup {subgroup}"
    tail = f": {suffix}" if suffix else ""
    return (f"topology {tree.name}, requirement {constraint.required_level} couldn't be "
            f"satisfied for {what}{tail}")


def job_allocatable_domains(tree: KaiTopologyTree, constraint: TopologyConstraint,
                            job: str, namespace: str, subgroup: str,
                            podset_pods: Iterable[PodLike], asked: Mapping[str, float],
                            count: int) -> tuple[list[KaiDomain], list[TopologyFitError]]:
    """getJobAllocatableDomains: the domains of the relevant levels the job fits in
    (under a required level, only the subtrees of required-level domains that hold an
    active pod of the job, when it has any); if none, the fit errors of the top
    relevant level's domains (TopologyFitErrors) and the no-match error (a simple job
    fit error, as AddSimpleJobFitError makes it)."""
    levels = relevant_levels(tree, constraint, subgroup)
    running = [p.node for p in podset_pods if p.status in ACTIVE_ALLOCATED]
    by_level: dict[str, dict[str, KaiDomain]]
    if running and constraint.required_level:
        by_level = {}
        for domain in tree.domains.get(constraint.required_level, {}).values():
            if any(node in domain.nodes for node in running if node):
                _subtree(domain, by_level)
    else:
        by_level = tree.domains
    chosen: list[KaiDomain] = []
    top_errors: list[TopologyFitError] = []
    for index, level in enumerate(levels):
        for domain_id in sorted(by_level.get(level, {})):
            domain = by_level[level][domain_id]
            error = check_domain_fit(job, namespace, subgroup, asked, count, domain)
            if error is None:
                chosen.append(domain)
            elif index == len(levels) - 1:
                top_errors.append(error)
    if chosen:
        return chosen, []
    message = no_match_message(tree, constraint, job, namespace, subgroup)
    return [], [*top_errors, TopologyFitError(POD_SCHEDULING_ERRORS, (message,))]


def sort_domains(tree: KaiTopologyTree, domains: Sequence[KaiDomain]) -> list[KaiDomain]:
    """sortDomainInfos: the domains in the (sorted) tree's reverse level order."""
    wanted = {(d.id, d.level) for d in domains}
    order = [d for d in reverse_level_order(tree.root) if (d.id, d.level) in wanted]
    by_key = {(d.id, d.level): d for d in domains}
    return [by_key[(d.id, d.level)] for d in order]


@dataclass(slots=True)
class SubsetResult:
    """subSetNodesFn's answer: the node sets (best first), the fit errors it added to the
    job, and the preferred-level node scores it set for the sub-group, if any."""

    node_sets: list[list[NodeUsage]]
    fit_errors: list[TopologyFitError] = field(default_factory=list)
    scores: dict[str, float] | None = None


def subset_node_sets(trees: Mapping[str, KaiTopologyTree], constraint: TopologyConstraint | None,
                     job: str, namespace: str, subgroup: str,
                     podset_pods: Sequence[PodLike], tasks: Sequence[PodLike],
                     nodes: Sequence[NodeUsage]) -> SubsetResult:
    """subSetNodesFn for one sub-group (``subgroup``: its name, "" for the root set,
    ``default`` for the default pod set). Raises :class:`TopologyError` where KAI's
    plugin returns an error."""
    if constraint is None or not constraint.topology:
        return SubsetResult([list(nodes)])
    tree = trees.get(constraint.topology)
    if tree is None:
        return SubsetResult([], [TopologyFitError(
            POD_SCHEDULING_ERRORS, (f"Requested topology {constraint.topology} does not exist",))])
    if not tasks:
        return SubsetResult([list(nodes)])
    domain_id, level, valid = lowest_common_domain(nodes, tree.levels, constraint)
    domain = tree.domains.get(level, {}).get(domain_id)
    if domain is None:
        raise TopologyError(f"domain not found for node set in topology {tree.name}")
    tree.cleanup()
    calc_free_resources(domain)
    count = len(tasks)
    if use_representor_accounting(tasks):
        calc_tree_allocatable(tasks, domain)
    asked = tasks_amounts(tasks)
    if check_domain_fit(job, namespace, subgroup, asked, count, domain) is not None:
        where = "the cluster" if domain.id == ROOT else domain.id
        return SubsetResult([], [TopologyFitError(POD_SCHEDULING_ERRORS, (no_match_message(
            tree, constraint, job, namespace, subgroup,
            f"not enough resources in {where} to allocate the job"),))])
    preferred, required = constraint.preferred_level, constraint.required_level
    sort_tree(asked, domain, preferred or required)
    scores = node_scores(domain, preferred) if preferred else None
    chosen, errors = job_allocatable_domains(tree, constraint, job, namespace, subgroup,
                                             podset_pods, asked, count)
    if not chosen:
        return SubsetResult([], errors, scores)
    node_sets = [[valid[n] for n in sorted(d.nodes) if n in valid]
                 for d in sort_domains(tree, chosen)]
    return SubsetResult(node_sets, [], scores)
