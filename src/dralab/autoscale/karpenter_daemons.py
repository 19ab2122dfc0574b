"""The DaemonSet pods Karpenter counts as a new node's overhead.

As the provisioner's getDaemonSetPods (sigs.k8s.io/karpenter
pkg/controllers/provisioning/provisioner.go): a DaemonSet that already has a pod
is sized from that pod's spec (webhooks may have changed its requests), with the
DaemonSet template's required node affinity put back (the DaemonSet controller
replaces it on the pods it creates); otherwise from its template.

A new node is taken to carry ``karpenter.sh/registered: "true"`` and
``karpenter.sh/initialized: "true"`` for the overhead (NodeClaimTemplate's
simulation-only requirements, schedulingSimulationKeys): a DaemonSet selecting them
counts, one that excludes them does not (``on_new_nodes``); the NodeClaim and its
node's labels do not get them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.api.workloads import DaemonSet

__all__ = ["daemon_set_owner", "on_new_nodes", "sized_from_pods", "without_node_selection"]

# NodeClaimTemplate's schedulingSimulationKeys, each In ["true"] on every new NodeClaim.
SIMULATION_KEYS = ("karpenter.sh/registered", "karpenter.sh/initialized")


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


def _admits_true(expression: Any) -> bool:
    """Whether a node selector requirement holds for the value "true"."""
    op, values = expression.get("operator"), expression.get("values") or []
    if op == "In":
        return "true" in values
    if op == "NotIn":
        return "true" not in values
    return bool(op == "Exists")


def _settled(expression: Any) -> Any:
    """A requirement on a simulation key as a new node answers it: None when "true"
    meets it, else one that no template node (which lacks the label) meets."""
    if not isinstance(expression, dict) or expression.get("key") not in SIMULATION_KEYS:
        return expression
    if _admits_true(expression):
        return None
    return {"key": expression["key"], "operator": "In", "values": ["true"]}


def on_new_nodes(daemon_sets: Sequence[DaemonSet]) -> tuple[DaemonSet, ...]:
    """``daemon_sets`` with their requirements on karpenter.sh/registered and
    karpenter.sh/initialized answered as on a new NodeClaim (both "true"), for the
    template nodes' DaemonSet pods. A DaemonSet built in code is kept as it is."""
    out = []
    for ds in daemon_sets:
        spec = ds.raw.get("spec") if isinstance(ds.raw, dict) else None
        template = spec.get("template") if isinstance(spec, dict) else None
        pod_spec = template.get("spec") if isinstance(template, dict) else None
        if not isinstance(pod_spec, dict) or not _mentions_keys(pod_spec):
            out.append(ds)
            continue
        raw: dict[str, Any] = copy.deepcopy(ds.raw) if isinstance(ds.raw, dict) else {}
        pod_spec = raw["spec"]["template"]["spec"]
        selector = pod_spec.get("nodeSelector")
        if isinstance(selector, dict):
            for key in SIMULATION_KEYS:
                if selector.get(key) == "true":
                    del selector[key]
        required = _required_affinity(pod_spec)
        terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
        for term in terms if isinstance(terms, list) else []:
            if isinstance(term, dict) and isinstance(term.get("matchExpressions"), list):
                term["matchExpressions"] = [e for e in map(_settled, term["matchExpressions"])
                                            if e is not None]
                if not term["matchExpressions"] and not term.get("matchFields"):
                    # The term held only requirements a new node meets: the terms are
                    # ORed, so the pod's required node affinity is met (an empty term
                    # would match nothing).
                    del pod_spec["affinity"]["nodeAffinity"][
                        "requiredDuringSchedulingIgnoredDuringExecution"]
                    break
        made = decode(raw)
        out.append(made if isinstance(made, DaemonSet) else ds)
    return tuple(out)


def _mentions_keys(pod_spec: dict[str, Any]) -> bool:
    selector = pod_spec.get("nodeSelector")
    if isinstance(selector, dict) and any(k in selector for k in SIMULATION_KEYS):
        return True
    required = _required_affinity(pod_spec)
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    return any(isinstance(e, dict) and e.get("key") in SIMULATION_KEYS
               for t in (terms if isinstance(terms, list) else []) if isinstance(t, dict)
               for e in (t.get("matchExpressions") or []))
