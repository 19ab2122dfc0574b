"""What NVIDIA's compute-domain controller and kubelet plugin do for a ComputeDomain,
modelled offline (issue 36).

Source: NVIDIA/k8s-dra-driver-gpu at 22407113785e78c7763b4637689a201eb39c6199
(Apache-2.0): ``cmd/compute-domain-controller/{resourceclaimtemplate,daemonset,
computedomain,cdstatus}.go``, ``templates/compute-domain-{workload-claim-template,
daemon-claim-template,daemon}.tmpl.yaml`` and ``cmd/compute-domain-kubelet-plugin/
{device_state,computedomain}.go``. For each ComputeDomain the controller writes

* the workload ResourceClaimTemplate (spec.channel.resourceClaimTemplate.name, in the
  CD's namespace): one request ``channel`` of DeviceClass
  compute-domain-default-channel.nvidia.com, an opaque ComputeDomainChannelConfig with
  the CD's uid as domainID and its allocationMode, labels computeDomain=<uid> and
  computeDomainTarget=Workload, the CD finalizer;
* the daemon ResourceClaimTemplate ``computedomain-daemon-<uid>`` in the driver's
  namespace (request ``daemon``, DeviceClass compute-domain-daemon.nvidia.com,
  ComputeDomainDaemonConfig, target Daemon);
* the DaemonSet ``computedomain-daemon-<uid>`` whose pods select nodes labelled
  resource.nvidia.com/computeDomain=<uid>.

Nothing in this constrains where the workload's pods go: the channel request has no
node selector and the label is written only when the kubelet plugin prepares a channel
claim on a node the scheduler already chose (device_state.go applyComputeDomainChannel
-> AddNodeLabel). The daemons follow the workload, never the reverse. Modelled here:
the objects above (the fields dralab's decisions read: names, labels, requests, opaque
config, nodeSelector, tolerations, claims; not images, probes or env), the node label
at prepare (refused when the node already carries another CD's uid, as AddNodeLabel
refuses), and the status: one node entry per daemon (cliqueID from the node's clique
label, index per clique in order of arrival, -1 and cliqueID "" without one) and the
global status as calculateGlobalStatus gives it. Not modelled: IP addresses, IMEX
daemon start-up time, deletion and finalizer clean-up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dralab.api.base import KubeObject, UnknownObject
from dralab.api.codec import DecodeError, decode
from dralab.api.computedomain import (
    CD_API_VERSION,
    CHANNEL_CONFIG_KIND,
    DAEMON_CONFIG_KIND,
    ComputeDomain,
    ComputeDomainNode,
    ComputeDomainStatus,
    compute_domain_problems,
    compute_domain_uid,
    decode_compute_domain,
)
from dralab.api.resource import ResourceClaimTemplate
from dralab.api.workloads import DaemonSet
from dralab.cluster import ClusterState

__all__ = [
    "CD_LABEL",
    "CHANNEL_DEVICE_CLASS",
    "COMPUTE_DOMAIN_DRIVER",
    "DAEMON_DEVICE_CLASS",
    "DEFAULT_DRIVER_NAMESPACE",
    "FINALIZER",
    "TARGET_LABEL",
    "ComputeDomainRun",
    "LabelConflict",
    "daemon_claim_template",
    "daemon_set",
    "daemon_set_name",
    "global_status",
    "label_node",
    "run_compute_domain",
    "workload_claim_template",
]

# cmd/compute-domain-controller/{main,computedomain}.go
COMPUTE_DOMAIN_DRIVER = "compute-domain.nvidia.com"
CD_LABEL = "resource.nvidia.com/computeDomain"
FINALIZER = CD_LABEL
TARGET_LABEL = "resource.nvidia.com/computeDomainTarget"
CHANNEL_DEVICE_CLASS = "compute-domain-default-channel.nvidia.com"
DAEMON_DEVICE_CLASS = "compute-domain-daemon.nvidia.com"
CLIQUE_LABEL = "nvidia.com/gpu.clique"
# The namespace the driver's demos install it in (demo/specs/imex/README.sh, kind
# install script); the controller's --namespace flag, a parameter here.
DEFAULT_DRIVER_NAMESPACE = "dra-driver-nvidia-gpu"


def _claim_template(namespace: str, name: str, uid: str, target: str, request: str,
                    device_class: str, parameters: dict[str, Any]) -> ResourceClaimTemplate:
    doc = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"namespace": namespace, "name": name, "finalizers": [FINALIZER],
                     "labels": {CD_LABEL: uid, TARGET_LABEL: target}},
        "spec": {"spec": {"devices": {
            "requests": [{"name": request, "exactly": {"deviceClassName": device_class}}],
            "config": [{"requests": [request], "opaque": {
                "driver": COMPUTE_DOMAIN_DRIVER,
                "parameters": {"apiVersion": CD_API_VERSION} | parameters}}],
        }}},
    }
    obj = decode(doc)
    assert isinstance(obj, ResourceClaimTemplate)
    return obj


def workload_claim_template(cd: ComputeDomain) -> ResourceClaimTemplate:
    """The RCT the workload's pods name (compute-domain-workload-claim-template)."""
    uid = compute_domain_uid(cd)
    return _claim_template(cd.namespace or "default", cd.template_name, uid, "Workload",
                           "channel", CHANNEL_DEVICE_CLASS,
                           {"kind": CHANNEL_CONFIG_KIND, "domainID": uid,
                            "allocationMode": cd.allocation_mode})


def daemon_set_name(cd: ComputeDomain) -> str:
    return f"computedomain-daemon-{compute_domain_uid(cd)}"


def daemon_claim_template(cd: ComputeDomain,
                          driver_namespace: str = DEFAULT_DRIVER_NAMESPACE
                          ) -> ResourceClaimTemplate:
    """The RCT of the IMEX daemon pods (compute-domain-daemon-claim-template)."""
    uid = compute_domain_uid(cd)
    return _claim_template(driver_namespace, daemon_set_name(cd), uid, "Daemon", "daemon",
                           DAEMON_DEVICE_CLASS,
                           {"kind": DAEMON_CONFIG_KIND, "domainID": uid})


def daemon_set(cd: ComputeDomain, driver_namespace: str = DEFAULT_DRIVER_NAMESPACE
               ) -> DaemonSet:
    """The IMEX daemons' DaemonSet (compute-domain-daemon.tmpl.yaml), the fields that
    decide where its pods run and what they claim."""
    uid = compute_domain_uid(cd)
    labels = {CD_LABEL: uid}
    doc = {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"namespace": driver_namespace, "name": daemon_set_name(cd),
                     "finalizers": [FINALIZER], "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {
                "nodeSelector": labels,
                "containers": [{"name": "compute-domain-daemon",
                                "resources": {"claims": [{"name": "compute-domain-daemon"}]}}],
                # "Repel all node taints" (the template's comment, driver issue 305).
                "tolerations": [{"operator": "Exists", "effect": effect}
                                for effect in ("NoSchedule", "NoExecute",
                                               "PreferNoSchedule")],
                "resourceClaims": [{"name": "compute-domain-daemon",
                                    "resourceClaimTemplateName": daemon_set_name(cd)}],
            }},
        },
    }
    obj = decode(doc)
    assert isinstance(obj, DaemonSet)
    return obj


class LabelConflict(Exception):
    """A node already labelled for another ComputeDomain (AddNodeLabel's error)."""


def label_node(labels: Mapping[str, str], uid: str) -> dict[str, str]:
    """The node's labels after the kubelet plugin prepared a channel of CD ``uid`` on it."""
    current = labels.get(CD_LABEL)
    if current is not None and current != uid:
        raise LabelConflict("label already exists for a different ComputeDomain")
    return dict(labels) | {CD_LABEL: uid}


def global_status(num_nodes: int, nodes: Iterable[ComputeDomainNode]) -> str:
    """calculateGlobalStatus: NotReady while fewer nodes than numNodes are listed or any
    listed node is NotReady; Ready otherwise (so also with numNodes 0 and no node)."""
    listed = list(nodes)
    if len(listed) < num_nodes or any(n.status == "NotReady" for n in listed):
        return "NotReady"
    return "Ready"


@dataclass
class ComputeDomainRun:
    """One ComputeDomain after its workload's pods were placed and prepared."""

    uid: str
    workload_template: ResourceClaimTemplate
    daemon_template: ResourceClaimTemplate
    daemon_set: DaemonSet
    node_labels: dict[str, dict[str, str]]  # the nodes' labels after prepare
    daemon_nodes: list[str]  # where the DaemonSet's pods run, in node-name order
    status: ComputeDomainStatus
    refused: dict[str, str] = field(default_factory=dict)  # node -> why prepare failed

    @property
    def cliques(self) -> list[str]:
        """The NVLink domains the CD's daemons span ("" for nodes without a clique)."""
        return sorted({n.clique_id or "" for n in self.status.nodes})


def run_compute_domain(cd: ComputeDomain, nodes: Mapping[str, Mapping[str, str]],
                       placed: Iterable[str], ready: bool = True,
                       driver_namespace: str = DEFAULT_DRIVER_NAMESPACE
                       ) -> ComputeDomainRun:
    """The controller's objects, the node labels and the CD status once the workload's
    channel claims were prepared on the ``placed`` nodes (in preparation order).

    ``nodes`` maps each node's name to its labels. ``ready`` says whether the IMEX
    daemons passed their readiness probe (dralab does not time their start-up).
    """
    uid = compute_domain_uid(cd)
    labels = {name: dict(node_labels) for name, node_labels in nodes.items()}
    refused: dict[str, str] = {}
    for name in placed:
        if name not in labels:
            refused[name] = "no such node"
            continue
        try:
            labels[name] = label_node(labels[name], uid)
        except LabelConflict as exc:
            refused[name] = str(exc)
    # The DaemonSet controller runs one daemon on every node its nodeSelector matches.
    daemon_nodes = sorted(n for n, lab in labels.items() if lab.get(CD_LABEL) == uid)
    order = [n for n in dict.fromkeys(placed) if n in daemon_nodes]
    order += [n for n in daemon_nodes if n not in order]
    next_index: dict[str, int] = {}
    entries = []
    for name in order:
        clique = labels[name].get(CLIQUE_LABEL, "")
        if clique:
            # Each daemon takes the next free index of its clique (cliqueID, index unique).
            index = next_index.get(clique, 0)
            next_index[clique] = index + 1
        else:
            index = -1  # cdstatus.go buildNodesFromPods: a non-fabric node
        entries.append(ComputeDomainNode(name=name, ip_address="", clique_id=clique,
                                         index=index,
                                         status="Ready" if ready else "NotReady"))
    status = ComputeDomainStatus(status=global_status(cd.num_nodes, entries), nodes=entries)
    return ComputeDomainRun(uid=uid, workload_template=workload_claim_template(cd),
                            daemon_template=daemon_claim_template(cd, driver_namespace),
                            daemon_set=daemon_set(cd, driver_namespace), node_labels=labels,
                            daemon_nodes=daemon_nodes, status=status, refused=refused)


def compute_domains(objects: Iterable[KubeObject]) -> list[ComputeDomain]:
    """The valid ComputeDomains among loaded objects (the Kubernetes codec leaves NVIDIA's
    kinds as UnknownObject; invalid ones were reported by validation and create nothing,
    as the API server would not have stored them)."""
    out: list[ComputeDomain] = []
    for obj in objects:
        if isinstance(obj, ComputeDomain):
            cd: KubeObject = obj
        elif isinstance(obj, UnknownObject) and obj.kind == "ComputeDomain" \
                and obj.api_version == CD_API_VERSION and obj.raw is not None:
            try:
                cd = decode_compute_domain(obj.raw)
            except DecodeError:
                continue
        else:
            continue
        if isinstance(cd, ComputeDomain) and not compute_domain_problems(cd):
            out.append(cd)
    return out


def placed_nodes(cluster: ClusterState, cd: ComputeDomain) -> list[str]:
    """The nodes where the CD's channel claims are prepared: those of the bound pods of
    the CD's namespace whose claims come from its workload template, in the pods'
    arrival order (each node once). The kubelet plugin prepares a claim once its pod is
    bound there; a finished pod's node keeps the label until the claim is unprepared,
    which dralab does not time, so finished pods count too."""
    namespace = cd.namespace or "default"
    out: dict[str, None] = {}
    for info in cluster.pods.values():
        pod = info.pod
        node = pod.spec.node_name
        if not node or (pod.metadata.namespace or "default") != namespace:
            continue
        if any(entry.resource_claim_template_name == cd.template_name
               for entry in pod.spec.resource_claims):
            out.setdefault(node, None)
    return list(out)


def run_in_cluster(cluster: ClusterState, cd: ComputeDomain, ready: bool = True,
                   driver_namespace: str = DEFAULT_DRIVER_NAMESPACE) -> ComputeDomainRun:
    """:func:`run_compute_domain` for a cluster after scheduling: the nodes' labels as
    the cluster holds them, the placed nodes as :func:`placed_nodes` finds them."""
    labels = {name: dict(info.node.metadata.labels) for name, info in cluster.nodes.items()}
    return run_compute_domain(cd, labels, placed_nodes(cluster, cd), ready=ready,
                              driver_namespace=driver_namespace)
