"""KAI's topology-aware idle-GPUs scenario filter
(actions/common/solvers/accumulated_scenario_filters/idle_gpus/topology_aware_idle_gpus.go).

Before the solver simulates a victim scenario for a preemptor with required topology
levels, KAI checks that the domains could hold it at all: each sub-group set with a
required level (the root set and parent sub-groups; pod sets are not looked at) needs
its tasks' GPUs in one domain of that level, where a domain has its nodes' idle and
releasing GPUs plus what the scenario's victims free. Requirements of one
(topology, level) are matched largest first, each to the first domain (most GPUs first)
with room left, subtracting as it goes. A victim is counted once per filter, however
many scenarios present it again.

The filter only saves simulations: a scenario it rejects cannot place the preemptor's
topology-constrained sub-groups.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from dralab.queueing.kai.model import KaiJob, TopologyConstraint
from dralab.queueing.kai.placement import NodeUsage
from dralab.queueing.kai.proportion import mig_gpus
from dralab.queueing.kai.topology import PodLike, task_amounts

__all__ = ["TopologyDomainKey", "TopologyIdleGpusFilter", "greedy_match", "required_groups"]


@dataclass(frozen=True, slots=True)
class TopologyDomainKey:
    """One domain of one topology level: (topology, level label, label value)."""

    topology: str
    level: str
    value: str


def node_idle_or_releasing_gpus(usage: NodeUsage) -> float:
    """GetSumOfIdleGPUs + GetSumOfReleasingGPUs: whole GPUs, the free parts of shared
    GPUs in use and MIG slices, idle or releasing."""
    shared = sum(1 - usage.used_portion(name)
                 for name, group in sorted(usage.groups.items()) if group.live())
    whole = usage.idle("gpu") + usage.releasing("gpu")
    mig = sum(mig_gpus({name: 1}) * (usage.idle(name) + usage.releasing(name))
              for name in sorted(usage.node.mig_instances))
    return shared + whole + mig


def required_groups(job: KaiJob) -> list[tuple[TopologyConstraint, float]]:
    """getSubgroupsWithRequiredConstraints + sumGpuRequirements: every sub-group set
    with a required level (the job's root set, then parent sub-groups in order) and the
    GPUs all its tasks ask."""
    parents = {g.parent for g in job.subgroups if g.parent}
    parent_of = {g.name: g.parent for g in job.subgroups}

    def under(task_group: str | None, name: str) -> bool:
        seen: set[str] = set()
        while task_group is not None and task_group not in seen:
            if task_group == name:
                return True
            seen.add(task_group)
            task_group = parent_of.get(task_group)
        return False

    def gpus(name: str | None) -> float:
        return sum(task_amounts(t)["gpu"] for t in job.tasks
                   if name is None or under(t.subgroup, name))

    found: list[tuple[TopologyConstraint, float]] = []
    if job.topology is not None and job.topology.required_level:
        found.append((job.topology, gpus(None)))
    for group in job.subgroups:
        if group.name in parents and group.topology is not None \
                and group.topology.required_level:
            found.append((group.topology, gpus(group.name)))
    return found


def greedy_match(requirements: Sequence[float], holders: Sequence[TopologyDomainKey],
                 capacity: Callable[[TopologyDomainKey], float]) -> bool:
    """greedyMatchRequirements: requirements and holders both largest first; each goes
    to the first holder with room left (a zero requirement ends the check)."""
    taken: dict[TopologyDomainKey, float] = {}
    for required in requirements:
        if required == 0:
            return True
        matched = False
        for holder in holders:
            total = capacity(holder)
            if total < required:
                break   # sorted: no later holder has more
            if total - taken.get(holder, 0.0) >= required:
                taken[holder] = taken.get(holder, 0.0) + required
                matched = True
                break
        if not matched:
            return False
    return True


@dataclass(slots=True)
class TopologyIdleGpusFilter:
    """NewTopologyAwareIdleGpusFilter's state: the domains' GPUs, each node's domains,
    the domains of each (topology, level) most GPUs first, and the victims counted."""

    groups: list[tuple[TopologyConstraint, float]]
    capacity: dict[TopologyDomainKey, float] = field(default_factory=dict)
    node_domains: dict[str, list[TopologyDomainKey]] = field(default_factory=dict)
    by_constraint: dict[tuple[str, str], list[TopologyDomainKey]] = field(default_factory=dict)
    counted: set[tuple[str, str]] = field(default_factory=set)

    @classmethod
    def for_preemptor(cls, job: KaiJob | None,
                      nodes: Mapping[str, NodeUsage]) -> TopologyIdleGpusFilter | None:
        """None when the preemptor has no sub-group set with a required level."""
        if job is None:
            return None
        groups = required_groups(job)
        if not groups:
            return None
        out = cls(groups)
        keys = sorted({(c.topology, c.required_level) for c, _ in groups})
        for node_name in sorted(nodes):
            usage = nodes[node_name]
            free = node_idle_or_releasing_gpus(usage)
            for topology, level in keys:
                value = usage.node.labels.get(level, "")
                if not value:
                    continue
                key = TopologyDomainKey(topology, level, value)
                out.capacity[key] = out.capacity.get(key, 0.0) + free
                out.node_domains.setdefault(node_name, []).append(key)
        for key in sorted(out.capacity, key=lambda k: (k.topology, k.level, k.value)):
            out.by_constraint.setdefault((key.topology, key.level), []).append(key)
        for domains in out.by_constraint.values():
            # most GPUs first; KAI's sort is not stable, ties here by value
            domains.sort(key=lambda k: -out.capacity[k])
        return out

    def filter(self, recorded_victims: Iterable[PodLike],
               potential_victims: Iterable[PodLike]) -> bool:
        """Filter: add the GPUs new victims free to their domains, then match."""
        self._apply(recorded_victims)
        self._apply(potential_victims)
        return self._capacity_exists()

    def _apply(self, victims: Iterable[PodLike]) -> None:
        for victim in victims:
            if not victim.node:
                continue
            key = (victim.spec.job, victim.spec.name)
            if key in self.counted:
                continue
            self.counted.add(key)
            freed = _freed_gpus(victim)
            for domain in self.node_domains.get(victim.node, []):
                self.capacity[domain] += freed
                self._move_up(self.by_constraint[(domain.topology, domain.level)], domain)

    def _move_up(self, domains: list[TopologyDomainKey], domain: TopologyDomainKey) -> None:
        """repositionDomainAfterIncrease: the domain moves ahead of those with less."""
        position = domains.index(domain)
        target = position
        while target > 0 and self.capacity[domains[target - 1]] < self.capacity[domain]:
            target -= 1
        if target != position:
            domains.insert(target, domains.pop(position))

    def _capacity_exists(self) -> bool:
        wanted: dict[tuple[str, str], list[float]] = {}
        for constraint, gpus in self.groups:
            wanted.setdefault((constraint.topology, constraint.required_level), []).append(gpus)
        for key in sorted(wanted):
            requirements = sorted(wanted[key], reverse=True)
            if not greedy_match(requirements, self.by_constraint.get(key, []),
                                lambda d: self.capacity[d]):
                return False
        return True


def _freed_gpus(victim: PodLike) -> float:
    """AcceptedResource.GPUs() (+ DRA GPUs, counted in the task's request here)."""
    accepted = getattr(victim, "accepted_gpus", 0.0)
    if isinstance(accepted, (int, float)) and accepted:
        return float(accepted)
    return task_amounts(victim.spec)["gpu"]
