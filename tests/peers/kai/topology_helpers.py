"""Builders for the ported tests of KAI's topology plugin (pkg/scheduler/plugins/topology).

Upstream's tests build DomainInfo trees by hand (Go zero values where a field is not
given: AllocatablePods 0, no children), NodeInfos from nodes_fake / jobs_fake (here
through the action-table harness's builders, so the units are the same) and
resource_info.NewResource(milliCPU, memory, GPUs) for free resources and requests.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tests.peers.kai.harness import build_jobs, build_nodes

from dralab.queueing.kai.framework import Session, SessionTask
from dralab.queueing.kai.model import KaiNode, KaiState, KaiTask
from dralab.queueing.kai.placement import NodeUsage
from dralab.queueing.kai.topology import ROOT, KaiDomain, KaiTopologyTree

REPO = "NVIDIA/KAI-Scheduler"
COMMIT = "72de64fc8eca10fa8cca26a20156178f3edbe092"
PLUGIN = "pkg/scheduler/plugins/topology"


@dataclass(frozen=True, slots=True)
class Cite:
    """Where an upstream case is: file (under the plugin), test function, case name and
    the line its table entry starts on."""

    file: str
    function: str
    case: str
    line: int

    def __str__(self) -> str:
        return f"{REPO}@{COMMIT} {PLUGIN}/{self.file}:{self.line} {self.function} / {self.case}"


def R(milli_cpu: float = 0, memory: float = 0, gpus: float = 0) -> dict[str, float]:
    """resource_info.NewResource(milliCPU, memory, gpus) as the plugin's amounts."""
    return {"cpu": float(milli_cpu), "memory": float(memory), "gpu": float(gpus)}


def usage(name: str, labels: Mapping[str, str] | None = None) -> NodeUsage:
    """A NodeInfo with only a name (and labels), as the tests' newNodeInfo."""
    return NodeUsage.of(KaiNode(name=name, labels=dict(labels or {})))


def D(domain_id: str, level: str, children: Sequence[KaiDomain] = (), *,
      pods: int = 0, free: Mapping[str, float] | None = None,
      nodes: Iterable[str] = ()) -> KaiDomain:
    """A DomainInfo literal (``pods``: AllocatablePods, 0 when the literal omits it)."""
    domain = KaiDomain(domain_id, level, list(children), allocatable_pods=pods,
                       free=dict(free or {}))
    for name in nodes:
        domain.add_node(usage(name))
    return domain


def tree(name: str, levels: Sequence[str], domains: Sequence[KaiDomain],
         root: KaiDomain | None) -> KaiTopologyTree:
    """An Info literal: its domains by level and what stands at DomainsByLevel[root]."""
    out = KaiTopologyTree(name, tuple(levels), {})
    for domain in domains:
        out.domains.setdefault(domain.level, {})[domain.id] = domain
    if root is not None:
        out.domains[ROOT] = {ROOT: root}
    return out


def two_racks_one_zone() -> KaiTopologyTree:
    """The tests' two-level tree: zone1 (the root) over rack1.zone1 and rack2.zone1."""
    rack1, rack2 = D("rack1.zone1", "rack"), D("rack2.zone1", "rack")
    zone1 = D("zone1", "zone", [rack1, rack2])
    return tree("test-topology", ("zone", "rack"), [rack1, rack2, zone1], zone1)


def one_zone() -> KaiTopologyTree:
    zone1 = D("zone1", "zone")
    return tree("test-topology", ("zone",), [zone1], zone1)


def session_of(jobs: Sequence[Mapping[str, Any]],
               nodes: Mapping[str, Mapping[str, Any]]) -> Session:
    """jobs_fake.BuildJobsAndTasksMaps + nodes_fake.BuildNodesInfoMap: the nodes with
    the allocated pods of every job on them."""
    return Session(KaiState(nodes=build_nodes(nodes), jobs=build_jobs(list(jobs))))


def place_nodes(topology: KaiTopologyTree, session: Session,
                nodes_to_domains: Mapping[str, str], parent: Mapping[str, str],
                parent_level: Mapping[str, str]) -> None:
    """The tests' nodesToDomains loop: each node joins its leaf-level domain and that
    domain's ancestors as domainParent / domainLevel name them."""
    leaf_level = topology.levels[-1]
    for node_name in sorted(nodes_to_domains):
        node = session.nodes[node_name]
        domain = topology.domains.get(leaf_level, {}).get(nodes_to_domains[node_name])
        while domain is not None:
            domain.add_node(node)
            parent_id = parent.get(domain.id, "")
            domain = topology.domains.get(parent_level.get(parent_id, ""), {}).get(parent_id)


def pending(session: Session, job: str) -> list[SessionTask]:
    """podgroup_info.GetTasksToAllocate for the tests' all-pending gangs."""
    return [p for p in session.jobs[job].pods if p.status == "Pending"]


def pod(name: str, status: str = "Pending", node: str | None = None,
        milli_cpu: float = 0, memory: float = 0, gpus: float = 0) -> SessionTask:
    """A PodInfo literal (a nil ResReq asks nothing)."""
    spec = KaiTask(name=name, job="test-job", status=status,  # type: ignore[arg-type]
                   node=node, gpus=gpus, cpu_milli=milli_cpu, memory_bytes=memory)
    return SessionTask("test-job", spec, spec.status, node, (), 0)
