"""Multi-node NVLink jobs in a scenario (issue 36): NVL72 fleets, ComputeDomain jobs, and
the objects NVIDIA's compute-domain controller makes for them.

An NVLink scenario (``kind: NVLinkScenario``) describes NVLink domains (a GB200 NVL72 rack
is one: 18 nodes of 4 GPUs) and job kinds that ask for a ComputeDomain: ``podsPerJob``
pods, each taking every GPU of one node plus a channel claim from the ComputeDomain's
ResourceClaimTemplate. GPU Feature Discovery labels each node of a domain with
``nvidia.com/gpu.clique`` = ``<clusterUUID>.<cliqueID>``; that label is how a pod can ask,
through required pod affinity, for its job's domain.

Upstream reference: NVIDIA/k8s-dra-driver-gpu at 22407113785e78c7763b4637689a201eb39c6199
(Apache-2.0): cmd/compute-domain-controller/computedomain.go (label keys, device classes),
resourceclaimtemplate.go (the workload channel template, built by
controllers.computedomain); docs/install.md (the clique label).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dralab.api.computedomain import CD_API_VERSION, ComputeDomain, decode_compute_domain
from dralab.api.errors import LoadError
from dralab.api.io import read_documents
from dralab.api.nvlink import CLIQUE_LABEL, COMPUTE_DOMAIN_KIND, clique_value
from dralab.api.resource import ResourceClaimTemplate
from dralab.controllers.computedomain import workload_claim_template
from dralab.fleet.nvlink import domain_cluster_uuid

from .spec import ScenarioError, parse_duration, parse_rate, short_repr

__all__ = ["CLIQUE_LABEL", "POLICIES", "NvlJobKind", "NvlNode",
           "NvlScenario", "channel_claim_template", "compute_domain", "is_nvlink_scenario",
           "load_nvlink_scenario",
           "nvl_nodes", "parse_nvlink_scenario"]


# The placement policies compared. first-fit and pod-affinity are what kube-scheduler does
# (pods one by one; the second with NVIDIA's recommended required pod affinity on the clique
# label); domain-packing is dralab's opt-in extension NVLinkDomainGang (whole job at once,
# into one domain), not upstream behaviour.
_POOL = "nvl72"   # the pool name the domains' cluster UUIDs are derived from

POLICIES = ("first-fit", "pod-affinity", "domain-packing")


@dataclass(frozen=True)
class NvlNode:
    name: str
    domain: int            # index of the NVLink domain (clique)
    gpus: int
    labels: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class NvlJobKind:
    name: str
    rate: float            # arrivals per second
    pods: int              # podsPerJob: one pod per node, every GPU of it
    mean_duration: float   # seconds, exponential


@dataclass(frozen=True)
class NvlScenario:
    source: str
    name: str
    seed: int
    duration: float
    sample_interval: float
    domains: int
    nodes_per_domain: int
    gpus_per_node: int
    kinds: tuple[NvlJobKind, ...]
    compare: tuple[str, ...]
    namespace: str = "default"
    tie_break: str = "random"   # kube-scheduler's selectHost; "name": first free node


def nvl_nodes(sc: NvlScenario) -> list[NvlNode]:
    """The fleet's nodes in name order, each labelled with its domain's clique as
    ``dralab fleet`` labels a pool with ``nvlink`` (fleet.nvlink: one NVLink fabric, so
    one cluster UUID, per domain; clique ID 0)."""
    return [NvlNode(f"nvl{d:02d}-node{n:02d}", d, sc.gpus_per_node,
                    ((CLIQUE_LABEL, clique_value(domain_cluster_uuid(sc.seed, _POOL, d), 0)),))
            for d in range(sc.domains) for n in range(sc.nodes_per_domain)]


def compute_domain(name: str, namespace: str, num_nodes: int) -> ComputeDomain:
    """The ComputeDomain a job creates (v1beta1): ``numNodes`` its pods, its channel
    template ``<name>-channel``, allocationMode Single (the CRD's default)."""
    obj = decode_compute_domain({
        "apiVersion": CD_API_VERSION, "kind": COMPUTE_DOMAIN_KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"numNodes": num_nodes,
                 "channel": {"resourceClaimTemplate": {"name": f"{name}-channel"},
                             "allocationMode": "Single"}}})
    assert isinstance(obj, ComputeDomain)
    return obj


def channel_claim_template(cd: ComputeDomain) -> ResourceClaimTemplate:
    """The workload ResourceClaimTemplate the compute-domain controller creates for ``cd``
    (controllers.computedomain). It carries no node constraint: nothing in it keeps the
    job's pods in one NVLink domain."""
    return workload_claim_template(cd)


def _positive_int(raw: Any, source: str, path: str, default: int | None = None) -> int:
    if raw is None and default is not None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise ScenarioError(source, path, f"want a positive integer, got {short_repr(raw)}")
    return raw


def _value(parse: Any, raw: Any, source: str, path: str) -> float:
    try:
        return float(parse(raw))
    except ValueError as exc:
        raise ScenarioError(source, path, str(exc)) from None


def _mapping(raw: Any, source: str, path: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ScenarioError(source, path, f"want a mapping, got {short_repr(raw)}")
    return raw


def _kind(raw: Any, source: str, path: str, nodes: int) -> NvlJobKind:
    job = _mapping(raw, source, path)
    unknown = sorted(set(job) - {"name", "arrivalRate", "podsPerJob", "duration",
                                 "computeDomain"})
    if unknown:
        raise ScenarioError(source, f"{path}.{unknown[0]}", "unknown field")
    if job.get("computeDomain", True) is not True:
        raise ScenarioError(source, f"{path}.computeDomain",
                            "an NVLink scenario's jobs each ask for a ComputeDomain (true)")
    name = job.get("name")
    if not isinstance(name, str) or not name:
        raise ScenarioError(source, f"{path}.name", "want a name")
    pods = _positive_int(job.get("podsPerJob"), source, f"{path}.podsPerJob", 1)
    if pods > nodes:
        raise ScenarioError(source, f"{path}.podsPerJob",
                            f"{pods} pods need {pods} nodes; the fleet has {nodes}")
    return NvlJobKind(name, _value(parse_rate, job.get("arrivalRate"), source,
                                   f"{path}.arrivalRate"),
                      pods, _value(parse_duration, job.get("duration"), source,
                                   f"{path}.duration"))


def parse_nvlink_scenario(doc: Any, source: str) -> NvlScenario:
    """An NVLinkScenario document; ScenarioError naming the field otherwise."""
    top = _mapping(doc, source, "")
    if top.get("kind") != "NVLinkScenario":
        raise ScenarioError(source, "kind", "want NVLinkScenario")
    meta = _mapping(top.get("metadata", {}), source, "metadata")
    spec = _mapping(top.get("spec"), source, "spec")
    fleet = _mapping(spec.get("fleet"), source, "spec.fleet")
    domains = _positive_int(fleet.get("domains"), source, "spec.fleet.domains")
    per = _positive_int(fleet.get("nodesPerDomain"), source, "spec.fleet.nodesPerDomain", 18)
    gpus = _positive_int(fleet.get("gpusPerNode"), source, "spec.fleet.gpusPerNode", 4)
    workload = spec.get("workload")
    if not isinstance(workload, list) or not workload:
        raise ScenarioError(source, "spec.workload", "want a list of job kinds")
    kinds = tuple(_kind(k, source, f"spec.workload[{i}]", domains * per)
                  for i, k in enumerate(workload))
    compare = spec.get("compare", list(POLICIES))
    if not isinstance(compare, list) or not compare or \
            any(p not in POLICIES for p in compare):
        raise ScenarioError(source, "spec.compare",
                            f"want a list of {', '.join(POLICIES)}")
    if "domain-packing" in compare:
        for i, k in enumerate(kinds):
            if k.pods > per:
                raise ScenarioError(source, f"spec.workload[{i}].podsPerJob", (
                    f"{k.pods} nodes do not fit one NVLink domain of {per}: "
                    "domain-packing could never place it"))
    tie_break = spec.get("tieBreak", "random")
    if tie_break not in ("random", "name"):
        raise ScenarioError(source, "spec.tieBreak",
                            f"want random (kube-scheduler) or name, got {short_repr(tie_break)}")
    seed = spec.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ScenarioError(source, "spec.seed", f"want an integer, got {short_repr(seed)}")
    return NvlScenario(
        source=source, name=str(meta.get("name", "nvlink")), seed=seed,
        duration=_value(parse_duration, spec.get("duration"), source, "spec.duration"),
        sample_interval=_value(parse_duration, spec.get("sampleInterval", "5m"), source,
                               "spec.sampleInterval") or 300.0,
        domains=domains, nodes_per_domain=per, gpus_per_node=gpus, kinds=kinds,
        compare=tuple(compare), tie_break=tie_break)


def _single_document(path: str) -> Any:
    """The one document of ``path``, read as every dralab input is (regular files only,
    size-limited, UTF-8): a FIFO, device or directory is refused, never read."""
    docs = read_documents([path])
    if len(docs) != 1:
        raise ScenarioError(path, "", f"expected one NVLinkScenario document, found {len(docs)}")
    return docs[0].data


def is_nvlink_scenario(path: str) -> bool:
    """Whether the file is an NVLinkScenario (False when it cannot be read: the Scenario
    loader then says why)."""
    try:
        doc = _single_document(path)
    except (LoadError, ScenarioError):
        return False
    return isinstance(doc, dict) and doc.get("kind") == "NVLinkScenario"


def load_nvlink_scenario(path: str) -> NvlScenario:
    """Read an NVLinkScenario file; ScenarioError (one line) for anything unusable."""
    try:
        doc = _single_document(path)
    except LoadError as exc:
        raise ScenarioError(path, "", f"cannot read: {str(exc).splitlines()[0]}") from None
    return parse_nvlink_scenario(doc, path)
