"""Karpenter's test fixtures as dralab inputs.

Upstream's fake cloud provider (pkg/cloudprovider/fake/instancetype.go) is a list of
instance types; here each is a Fleet pool of the one NodePool (``autoscaling`` with the
type's price), its nodes labelled as Karpenter labels them. ``assorted()`` is
InstanceTypesAssorted restricted to amd64/linux (the other architectures and
operating systems only duplicate sizes and prices for pods that select neither),
with PriceFromResources' prices (0.1 per CPU, 0.1 per GB of memory) and the fake's
default of 5 pods per node. Every fake type reserves 100m CPU and 10Mi memory
(kubeReserved), the pool's ``reserved``. ``defaults()`` is the fake cloud provider's
default list (cloudprovider.go GetInstanceTypes); its two GPU types' fake extended
resources (fake.com/vendor-a, vendor-b) are the pools' ``extendedResources``. A type
offered in several zones is one pool per zone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dralab.api.features import FeatureGates
from dralab.api.io import Document
from dralab.api.workloads import DaemonSet
from dralab.autoscale import LoopDecisions, read_input
from dralab.autoscale.inputs import cluster_objects
from dralab.autoscale.karpenter import Karpenter
from dralab.autoscale.karpenter_claims import read_node_claims
from dralab.autoscale.karpenter_nodepool import NodePoolSettings, parse_nodepool
from dralab.autoscale.karpenter_pdb import read_pdbs
from dralab.autoscale.karpenter_template import nodepools_fleet_document
from dralab.scheduler import Scheduler, build_cluster
from dralab.scheduler.result import REASON_UNSCHEDULABLE

Doc = dict[str, Any]

UPSTREAM = "kubernetes-sigs/karpenter@2266468104f36373ed002241afaee2d3bbc26078"
NODEPOOL = "default"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
ZONE = "topology.kubernetes.io/zone"
# fake.ResourceGPUVendorA and B: PriceFromResources adds 1.0 for either.
VENDOR_A = "fake.com/vendor-a"
VENDOR_B = "fake.com/vendor-b"
FAKE_GPUS = (VENDOR_A, VENDOR_B)


@dataclass(frozen=True, slots=True)
class InstanceType:
    name: str
    cpu: int | float  # "medium" has 4.25
    memory_gi: int
    pods: int = 5
    zone: str = "test-zone-1"
    capacity_type: str = "on-demand"
    price: float | None = None
    arch: str = "amd64"
    os: str = "linux"
    per_zone: bool = False  # the pool's name carries zone and OS (a type offered widely)
    pool_name: str | None = None  # for types the fake names alike
    # More labels of the offering (e.g. a reserved offering's karpenter.sh/reservation-id).
    extra_labels: tuple[tuple[str, str], ...] = ()
    # Extended resources in the type's capacity (fake.ResourceGPUVendorA, ...): the pool's
    # extendedResources.
    extended: tuple[tuple[str, int], ...] = ()
    # The memory overhead (kubeReserved 10Mi; an offering's OverheadOverride may raise it).
    reserved_memory: str = "10Mi"
    # The pool's autoscaling.max (a reserved offering's ReservationCapacity).
    max_nodes: int = 20
    # The NodePool whose type it is (InstanceTypesForNodePool); the default: every
    # NodePool's, when several are run.
    nodepool: str = NODEPOOL

    @property
    def labels(self) -> dict[str, str]:
        """The fake's provider-specific labels: size (large above 4 CPUs and 8Gi, with the
        exotic "special" label), and the CPU count as "integer"."""
        large = self.cpu > 4 and self.memory_gi > 8
        # Quantity.Value(): the CPU count rounded up.
        out = {"size": "large" if large else "small", "integer": str(math.ceil(self.cpu))}
        if large:
            out["special"] = "optional"
        return out

    @property
    def pool(self) -> str:
        if self.pool_name is not None:
            return self.pool_name
        return f"{self.name}-{self.zone}-{self.os}" if self.per_zone else self.name

    @property
    def cost(self) -> float:
        # fake.PriceFromResources: 0.1 per CPU and 0.1 per 1e9 bytes of memory.
        if self.price is not None:
            return self.price
        gpus = sum(1.0 for name, _ in self.extended if name in FAKE_GPUS)
        return round(0.1 * self.cpu + 0.1 * self.memory_gi * 2**30 / 1e9 + gpus, 9)


def ported_ids(namespace: dict[str, Any]) -> set[str]:
    """The pytest ids of a test module's parametrized cases (its ported upstream cases)."""
    ids: set[str] = set()
    for name, fn in namespace.items():
        if not name.startswith("test_") or not callable(fn):
            continue
        for mark in getattr(fn, "pytestmark", []):
            if mark.name == "parametrize":
                ids.update(v.id for v in mark.args[1] if getattr(v, "id", None))
    return ids


def reason_for(case: str, reasons: list[tuple[str, str]]) -> str:
    """The reason of the first prefix ``case`` starts with (every case must have one)."""
    for prefix, reason in reasons:
        if case.startswith(prefix):
            return reason
    raise KeyError(f"no reason for upstream case {case!r}")


def not_ported(namespace: dict[str, Any], upstream: Sequence[str],
               reasons: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The upstream cases a test module does not port, each with its reason."""
    ported = ported_ids(namespace)
    return [(case, reason_for(case, reasons)) for case in upstream if case not in ported]


def assert_accounted_for(namespace: dict[str, Any], upstream: Sequence[str],
                         skipped: list[tuple[str, str]]) -> None:
    """Every ported case is an upstream case, and ported plus skipped is upstream's list."""
    ported = ported_ids(namespace) - {case for case, _ in skipped}
    assert ported <= set(upstream), sorted(ported - set(upstream))
    assert len(ported) + len(skipped) == len(upstream)


def assorted(zone: str = "test-zone-1", capacity_type: str = "on-demand"
             ) -> list[InstanceType]:
    return [InstanceType(f"{cpu}-cpu-{mem}-mem-amd64-linux-{zone}-{capacity_type}", cpu, mem,
                         zone=zone, capacity_type=capacity_type)
            for cpu in (1, 2, 4, 8, 16, 32, 64) for mem in (1, 2, 4, 8, 16, 32, 64, 128)]


ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")


OSES = ("linux", "windows", "darwin")


def defaults() -> list[InstanceType]:
    """fake.NewInstanceType's defaults: 4 CPUs, 4Gi, 5 pods, amd64, zones 1-3, operating
    systems linux, windows and darwin (a node has one: one pool per zone and OS)."""
    shapes = [("default-instance-type", 4, 4, 5, "amd64", OSES, ()),
              ("small-instance-type", 2, 2, 5, "amd64", OSES, ()),
              ("gpu-vendor-instance-type", 4, 4, 5, "amd64", OSES, ((VENDOR_A, 2),)),
              ("gpu-vendor-b-instance-type", 4, 4, 5, "amd64", OSES, ((VENDOR_B, 2),)),
              ("arm-instance-type", 16, 128, 5, "arm64", ("ios", *OSES), ()),
              ("single-pod-instance-type", 4, 4, 1, "amd64", OSES, ())]
    return [InstanceType(name, cpu, mem, pods, zone, arch=arch, os=os, per_zone=True,
                         extended=extended)
            for name, cpu, mem, pods, arch, oses, extended in shapes
            for zone in ZONES for os in oses]


def numbered(total: int) -> list[InstanceType]:
    """fake.InstanceTypes(total): fake-it-i with i+1 CPUs, 2(i+1)Gi and 10(i+1) pods."""
    return [InstanceType(f"fake-it-{i}", i + 1, 2 * (i + 1), 10 * (i + 1))
            for i in range(total)]


def by_price(types: list[InstanceType]) -> list[InstanceType]:
    return sorted(types, key=lambda t: (t.cost, t.name))


def fleet(types: list[InstanceType], taints: list[Doc] | None = None,
          labels: dict[str, str] | None = None, pool_extra: Doc | None = None) -> Doc:
    """One pool per type; ``taints`` and ``labels``: the NodePool template's, on every
    pool; ``pool_extra``: more pool fields (e.g. GPUs) on every pool."""
    pools = []
    for t in types:
        pools.append({**({"taints": taints} if taints else {}), **(pool_extra or {}),
            "name": t.pool, "count": 0, "cpu": str(t.cpu), "memory": f"{t.memory_gi}Gi",
            "pods": t.pods, "topology": {"zone": t.zone},
            **({"extendedResources": dict(t.extended)} if t.extended else {}),
            "reserved": {"cpu": "100m", "memory": t.reserved_memory},
            # The deprecated instance-type label too, as cloud kubelets set it (Karpenter
            # reads it as an alias of the stable one).
            "labels": {INSTANCE_TYPE: t.name, "beta.kubernetes.io/instance-type": t.name,
                       CAPACITY_TYPE: t.capacity_type, **t.labels, **dict(t.extra_labels),
                       **(labels or {}),
                       "karpenter.sh/nodepool": t.nodepool,
                       "kubernetes.io/arch": t.arch, "kubernetes.io/os": t.os},
            "autoscaling": {"min": 0, "max": t.max_nodes, "pricePerHour": t.cost}})
    return {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
            "metadata": {"name": "karpenter"}, "spec": {"pools": pools}}


def node(name: str, itype: InstanceType | None, cpu: str = "32", pods: str = "100",
         memory: str | None = None, annotations: dict[str, str] | None = None,
         labels: dict[str, str] | None = None, taints: list[Doc] | None = None,
         initialized: bool = True) -> Doc:
    """A node as test.NodeClaimAndNode makes it (allocatable from the NodeClaim's
    status); ``itype`` None: a node Karpenter does not manage. ``initialized`` False:
    as it is before ExpectMakeNodesInitialized (Karpenter's karpenter.sh/unregistered
    taint still on it)."""
    meta_labels: dict[str, str] = {"kubernetes.io/hostname": name}
    if itype is not None:
        meta_labels.update({"dralab.dev/pool": itype.pool, "karpenter.sh/nodepool": NODEPOOL,
                            INSTANCE_TYPE: itype.name, CAPACITY_TYPE: itype.capacity_type,
                            ZONE: itype.zone, **dict(itype.extra_labels)})
    meta_labels.update(labels or {})
    resources = {"cpu": cpu, "pods": pods}
    if memory is not None:
        resources["memory"] = memory
    meta: Doc = {"name": name, "labels": meta_labels}
    if annotations:
        meta["annotations"] = annotations
    if not initialized:
        taints = [*(taints or []), {"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]
    body: Doc = {"taints": taints} if taints else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": body,
            "status": {"capacity": dict(resources), "allocatable": dict(resources),
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, on: str | None = None, cpu: str | None = None, memory: str | None = None,
        owner: str | None = "ReplicaSet", annotations: dict[str, str] | None = None,
        labels: dict[str, str] | None = None, spec: Doc | None = None,
        limits: Doc | None = None, init: Doc | None = None, host_port: int | None = None
        ) -> Doc:
    """test.Pod: ``owner`` None for a pod without ownerReferences; ``limits``, an init
    container's requests (``init``) and a host port as test.PodOptions gives them."""
    requests: Doc = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    container: Doc = {"name": "main", "image": "busybox"}
    if host_port is not None:
        container["ports"] = [{"containerPort": host_port, "hostPort": host_port}]
    if requests or limits:
        container["resources"] = {k: v for k, v in (("requests", requests),
                                                     ("limits", limits)) if v}
    body: Doc = {"containers": [container], **(spec or {})}
    if init is not None:
        body["initContainers"] = [{"name": "init", "image": "busybox",
                                   "resources": {"requests": init}}]
    if on is not None:
        body["nodeName"] = on
    meta: Doc = {"name": name, "namespace": "default", "labels": labels or {"app": "test"}}
    if owner is not None:
        api = "apps/v1" if owner in ("ReplicaSet", "DaemonSet", "StatefulSet") else "v1"
        meta["ownerReferences"] = [{"apiVersion": api, "kind": owner, "name": f"{owner.lower()}-x",
                                    "uid": f"uid-{owner.lower()}-x", "controller": True}]
    if annotations:
        meta["annotations"] = annotations
    doc: Doc = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}
    if on is not None:
        doc["status"] = {"phase": "Running"}
    return doc


def daemonset(name: str, requests: Doc | None = None, limits: Doc | None = None,
              spec: Doc | None = None, init: Doc | None = None, host_port: int | None = None
              ) -> Doc:
    """test.DaemonSet: its pod template with ``requests``/``limits`` on one container."""
    template = pod(f"{name}-template", cpu=None, owner=None, spec=spec, limits=limits,
                   init=init, labels={"ds": name}, host_port=host_port)
    if requests:
        template["spec"]["containers"][0].setdefault("resources", {})["requests"] = requests
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"selector": {"matchLabels": {"ds": name}},
                     "template": {"metadata": {"labels": {"ds": name}},
                                  "spec": template["spec"]}}}


def nodepool(disruption: Doc | None = None, limits: Doc | None = None,
             template: Doc | None = None, name: str | None = None,
             spec_extra: Doc | None = None, meta_extra: Doc | None = None,
             status: Doc | None = None) -> NodePoolSettings:
    """test.NodePool with the consolidation suite's disruption block unless given;
    ``template``: its spec.template (labels, requirements, taints); ``name``, more spec
    fields (weight, replicas), metadata (deletionTimestamp) and a status as given."""
    block = disruption if disruption is not None else {
        "consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s",
        "budgets": [{"nodes": "100%"}]}
    spec: Doc = {"disruption": block}
    if limits is not None:
        spec["limits"] = limits
    if template is not None:
        spec["template"] = template
    spec.update(spec_extra or {})
    doc: Doc = {"metadata": {**({"name": name} if name else {}), **(meta_extra or {})},
                "spec": spec}
    if status is not None:
        doc["status"] = status
    return parse_nodepool(doc, "nodepool.yaml")


@dataclass(slots=True)
class Run:
    karpenter: Karpenter
    decisions: LoopDecisions

    @property
    def deleted(self) -> list[str]:
        return sorted(d.node for d in self.decisions.scale_downs)

    @property
    def launched(self) -> list[tuple[str, int]]:
        return [(u.pool, u.add) for u in self.decisions.scale_ups]

    @property
    def placed(self) -> list[str]:
        """The pods the launched nodes are for."""
        return sorted(p for u in self.decisions.scale_ups for p in u.pods)

    def node_labels(self, pod_key: str) -> dict[str, str]:
        """The labels of the node launched for ``pod_key`` (its type's template node)."""
        [pool] = [u.pool for u in self.decisions.scale_ups if pod_key in u.pods]
        return dict(self.karpenter.templates().node(pool, 0)[0].metadata.labels or {})

    @property
    def node_claims(self) -> list[Doc]:
        """The NodeClaims the launches are (run with ``node_claims=True``): Karpenter's
        CreateCalls."""
        return [c.to_document() for c in self.karpenter.last_node_claims]

    @property
    def pending(self) -> list[str]:
        return sorted(p.pod for p in self.decisions.pending)


def run(types: list[InstanceType], *objects: Doc, settings: NodePoolSettings | None = None,
        consolidation: bool = True, now: float = 0.0, taints: list[Doc] | None = None,
        labels: dict[str, str] | None = None, ignore_dra_requests: bool = True,
        pool_extra: Doc | None = None, preference_policy: str = "Respect",
        spot_to_spot_consolidation: bool = False, clock_epoch: float | None = None,
        nodepools: list[NodePoolSettings] | None = None, node_claims: bool = False,
        default_termination_grace_period: str | None = None,
        min_values_policy: str = "Strict", claims: Sequence[Doc] = ()) -> Run:
    """Schedule the pending pods on the nodes, then one loop of the Karpenter model
    (with --ignore-dra-requests on and --preference-policy Respect, as upstream's test
    options default them). ``claims``: karpenter.sh/v1 NodeClaim documents."""
    settings = settings or (nodepools[0] if nodepools else nodepool())
    # The NodePools' template labels and taints on the pools, as dralab autoscale does.
    fleet_doc = nodepools_fleet_document(fleet(types, taints, labels, pool_extra),
                                         nodepools or [settings])
    docs = [Document("karpenter.yaml", i + 1, d)
            for i, d in enumerate((fleet_doc, *objects))]
    data = read_input(docs, FeatureGates())
    cluster, pending = build_cluster(cluster_objects(data), None, 0)
    scheduler = Scheduler.build(cluster, None, 0)
    result = scheduler.run(pending)
    waiting = []
    for item in result.unplaced:
        key = f"{item.pod.metadata.namespace or 'default'}/{item.pod.metadata.name}"
        info = cluster.pods.get(key)
        if item.reason == REASON_UNSCHEDULABLE and info is not None:
            waiting.append(info)
    daemon_sets = tuple(o for o in data.objects if isinstance(o, DaemonSet))
    model = Karpenter(scheduler, data.fleet, nodepool=settings,
                      consolidation=consolidation, daemon_sets=daemon_sets,
                      ignore_dra_requests=ignore_dra_requests,
                      preference_policy=preference_policy,
                      spot_to_spot_consolidation=spot_to_spot_consolidation,
                      pdbs=read_pdbs(data.objects), clock_epoch=clock_epoch,
                      nodepools=tuple(nodepools or ()), report_node_claims=node_claims,
                      default_termination_grace_period=default_termination_grace_period,
                      min_values_policy=min_values_policy,
                      node_claims=read_node_claims([Document("claims.yaml", i + 1, c)
                                                    for i, c in enumerate(claims)]))
    return Run(model, model.loop(waiting, now))
