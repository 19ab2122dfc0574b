"""The DaemonSet pods Karpenter counts as a new node's overhead.

As the provisioner's getDaemonSetPods (sigs.k8s.io/karpenter
pkg/controllers/provisioning/provisioner.go): a DaemonSet that already has a pod
is sized from that pod's spec (webhooks may have changed its requests), with the
DaemonSet template's required node affinity put back (the DaemonSet controller
replaces it on the pods it creates); otherwise from its template.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.api.workloads import DaemonSet

__all__ = ["daemon_set_owner", "sized_from_pods", "without_node_selection"]


def daemon_set_owner(pod: Pod) -> str | None:
    """The name of the DaemonSet controlling ``pod`` (None: not a DaemonSet's pod)."""
    for ref in pod.metadata.owner_references:
        if ref.kind == "DaemonSet" and ref.api_version == "apps/v1":
            return ref.name
    return None


def _required_affinity(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return None
    affinity = spec.get("affinity")
    node = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    return node.get("requiredDuringSchedulingIgnoredDuringExecution") \
        if isinstance(node, dict) else None


def _from_pod(ds: DaemonSet, pod: Pod) -> DaemonSet:
    raw_pod = pod.raw.get("spec") if isinstance(pod.raw, dict) else None
    if not isinstance(raw_pod, dict) or not isinstance(ds.raw, dict):
        return ds  # objects built in code carry no document to re-make from
    spec = copy.deepcopy(raw_pod)
    spec.pop("nodeName", None)
    raw = copy.deepcopy(ds.raw)
    template = raw.setdefault("spec", {}).setdefault("template", {})
    required = _required_affinity(template.get("spec"))
    if required is not None:
        affinity = spec.setdefault("affinity", {})
        affinity.setdefault("nodeAffinity", {})[
            "requiredDuringSchedulingIgnoredDuringExecution"] = copy.deepcopy(required)
    template["spec"] = spec
    # The typed DaemonSet anew from the document, so that both agree.
    made = decode(raw)
    return made if isinstance(made, DaemonSet) else ds


def sized_from_pods(daemon_sets: Sequence[DaemonSet], pods: Iterable[Pod]
                    ) -> tuple[DaemonSet, ...]:
    """``daemon_sets``, each sized from its first pod (by name) when it has one."""
    first: dict[tuple[str, str], Pod] = {}
    for pod in sorted(pods, key=lambda p: p.metadata.name or ""):
        owner = daemon_set_owner(pod)
        if owner is not None:
            first.setdefault((pod.metadata.namespace or "default", owner), pod)
    out = []
    for ds in daemon_sets:
        found = first.get((ds.metadata.namespace or "default", ds.metadata.name or ""))
        out.append(ds if found is None else _from_pod(ds, found))
    return tuple(out)


def without_node_selection(pod: Pod) -> Pod:
    """``pod`` without its nodeSelector and node affinity (its requests, tolerations and
    pod (anti-)affinity kept): a DaemonSet pod as overhead on a node it does not select.
    A pod built in code (no document) is returned as it is."""
    if not isinstance(pod.raw, dict):
        return pod
    raw = copy.deepcopy(pod.raw)
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        return pod
    spec.pop("nodeSelector", None)
    affinity = spec.get("affinity")
    if isinstance(affinity, dict):
        affinity.pop("nodeAffinity", None)
    made = decode(raw)
    return made if isinstance(made, Pod) else pod
